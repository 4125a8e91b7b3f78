use std::io::Write;

use super::{Cell, TypedRows, ROWS_PER_BATCH};
use crate::export::cells::made::{columns, Made};
use crate::export::cells::push_cells;
use crate::export::rows::ColumnType;

/// The cells row `i` must read back as, worked out from its definition above.
fn expected(i: u64, name: &str) -> Vec<Cell<'_>> {
    vec![
        if i.is_multiple_of(5) {
            Cell::Null
        } else {
            Cell::Text(name)
        },
        Cell::Number(i as f64 / 7.0),
        Cell::Integer(i as i64 * 3),
        if i.is_multiple_of(4) {
            Cell::Null
        } else {
            Cell::Boolean(i % 2 == 1)
        },
        Cell::Null,
    ]
}

#[test]
fn cells_written_in_any_pieces_read_back_as_their_rows() {
    let mut cells = Vec::new();
    for i in 0..40 {
        push_cells(&mut cells, &Made(i, f64::INFINITY));
    }
    for piece in [1, 2, 7, 9, 100, cells.len()] {
        let mut rows = TypedRows::new(columns());
        for part in cells.chunks(piece) {
            rows.write_all(part).unwrap();
        }
        let table = rows.finish().unwrap();
        assert_eq!(table.rows(), 40);
        for i in 0..40 {
            let name = format!("chip-{}", i % 3);
            assert_eq!(
                table.row(i as usize).unwrap(),
                expected(i, &name),
                "row {i}"
            );
        }
        assert_eq!(table.row(40), None);
    }
}

#[test]
fn batches_are_cut_at_their_size_and_a_cut_row_is_refused() {
    let mut cells = Vec::new();
    let n = ROWS_PER_BATCH as u64 + 3;
    for i in 0..n {
        push_cells(&mut cells, &Made(i, f64::INFINITY));
    }
    let mut rows = TypedRows::new(columns());
    rows.write_all(&cells).unwrap();
    let table = rows.finish().unwrap();
    let sizes: Vec<usize> = table.batches().iter().map(|b| b.rows()).collect();
    assert_eq!(sizes, [ROWS_PER_BATCH, 3]);
    let name = format!("chip-{}", (n - 1) % 3);
    assert_eq!(table.row(n as usize - 1).unwrap(), expected(n - 1, &name));

    let mut rows = TypedRows::new(columns());
    rows.write_all(&cells[..cells.len() - 1]).unwrap();
    assert!(rows
        .finish()
        .unwrap_err()
        .to_string()
        .contains("inside a row"));
    // A column whose type the cells do not have.
    let mut wrong = columns();
    wrong[1].1 = ColumnType::Text;
    let mut rows = TypedRows::new(wrong);
    let e = rows.write_all(&cells).unwrap_err().to_string();
    assert!(
        e.contains("`time_us` is declared text, but a row has a number"),
        "{e}"
    );
}
