use std::io::Write;

use bytes::Bytes;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

use super::{ParquetFile, ROWS_PER_GROUP};
use crate::export::cells::made::{columns, Made};
use crate::export::cells::push_cells;
use crate::export::rows::ColumnType;

/// What row `i` must read back as, worked out from its definition above.
fn expected(i: u64) -> Vec<Field> {
    vec![
        match i % 5 {
            0 => Field::Null,
            _ => Field::Str(format!("chip-{}", i % 3)),
        },
        Field::Double(i as f64 / 7.0),
        Field::Long(i as i64 * 3),
        match i % 4 {
            0 => Field::Null,
            _ => Field::Bool(i % 2 == 1),
        },
        Field::Null,
    ]
}

#[test]
fn rows_read_back_in_order_across_row_groups_and_split_writes() {
    let total = 2 * ROWS_PER_GROUP as u64 + 1_000;
    let mut cells = Vec::new();
    for i in 0..total {
        push_cells(&mut cells, &Made(i, f64::NAN));
    }
    let mut bytes = Vec::new();
    let mut file = ParquetFile::new(&mut bytes, columns()).unwrap();
    // Pieces that end inside rows and inside cells.
    for piece in cells.chunks(997) {
        file.write_all(piece).unwrap();
    }
    file.finish().unwrap();
    let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
    let meta = reader.metadata();
    assert_eq!(meta.num_row_groups(), 3);
    assert_eq!(meta.file_metadata().num_rows(), total as i64);
    for (i, row) in reader.get_row_iter(None).unwrap().enumerate() {
        let fields: Vec<Field> = row
            .unwrap()
            .into_columns()
            .into_iter()
            .map(|(_, f)| f)
            .collect();
        assert_eq!(fields, expected(i as u64), "row {i}");
    }
}

#[test]
fn a_cell_of_another_type_than_its_column_is_an_error_naming_it() {
    let mut types = columns();
    types[2].1 = ColumnType::Number; // `kernels` holds integers
    let mut cells = Vec::new();
    push_cells(&mut cells, &Made(1, f64::NAN));
    let mut file = ParquetFile::new(Vec::new(), types).unwrap();
    let e = file.write_all(&cells).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Parquet column `kernels` is declared number, but a row has an integer in it"
    );
}

#[test]
fn a_file_ended_inside_a_row_is_an_error() {
    let mut cells = Vec::new();
    push_cells(&mut cells, &Made(1, f64::NAN));
    let mut file = ParquetFile::new(Vec::new(), columns()).unwrap();
    file.write_all(&cells[..cells.len() - 1]).unwrap();
    assert!(file.finish().is_err());
}
