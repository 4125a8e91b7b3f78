//! A sweep's rows as a Parquet file: one typed column per row column, in the CSV's order
//! (integers as INT64, numbers as DOUBLE, booleans as BOOLEAN, text as UTF-8 strings), every
//! column nullable (an empty CSV cell is a null), LZ4-compressed (`LZ4_RAW`).
//!
//! [`ParquetFile`] is the `io::Write` a sweep streams into: the rows arrive in grid order as
//! the cells `export::cells` wrote, and every [`ROWS_PER_GROUP`] rows (fewer for wide rows)
//! become a row group, so a sweep holds one row group's values whatever the size of its
//! grid. The file is valid only once [`ParquetFile::finish`] has written its footer.

mod cells;

use std::io::{self, Write};
use std::sync::Arc;

use parquet::basic::{Compression, Encoding, LogicalType, Repetition, Type as Physical};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};

use cells::Column;

use crate::export::rows::ColumnType;

/// Most rows per row group.
pub(crate) const ROWS_PER_GROUP: usize = 65_536;

/// Bytes of values a row group is cut at before [`ROWS_PER_GROUP`] rows, counting 10 a cell
/// (a double and its definition level): they are what the writer holds, so a wide row (67
/// columns: 25,040 rows a group) costs no more memory than a narrow one. Fewest rows: 4,096.
const GROUP_BYTES: usize = 16 << 20;

/// Bytes a column's dictionary may reach before the column falls back to values written
/// out for the rest of the row group: a column of few distinct values (an id, a swept param,
/// a constant) stays a dictionary, a column of measurements gives up after 2,048 doubles.
const DICTIONARY_BYTES: usize = 16 << 10;

/// A Parquet file being written from a sweep's rows.
pub struct ParquetFile<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    columns: Vec<Column>,
    /// Rows collected for the next row group.
    rows: usize,
    /// Rows a row group holds.
    rows_per_group: usize,
    /// The start of a row whose end has not arrived yet.
    pending: Vec<u8>,
}

impl<W: Write + Send> ParquetFile<W> {
    /// Starts a file of `columns` (names and types, in order) on `out`.
    pub fn new(out: W, columns: Vec<(String, ColumnType)>) -> io::Result<ParquetFile<W>> {
        let schema = schema(&columns).map_err(io_error)?;
        let properties = Arc::new(properties(&columns));
        let rows_per_group =
            (GROUP_BYTES / (10 * columns.len().max(1))).clamp(4_096, ROWS_PER_GROUP);
        let writer =
            SerializedFileWriter::new(out, Arc::new(schema), properties).map_err(io_error)?;
        Ok(ParquetFile {
            writer,
            columns: (columns.into_iter())
                .map(|(name, kind)| Column::new(name, kind, rows_per_group))
                .collect(),
            rows: 0,
            rows_per_group,
            pending: Vec::new(),
        })
    }

    /// Writes the last row group and the footer, then flushes. Without this the file is not
    /// Parquet (as it must not be, when the sweep fails or is interrupted).
    pub fn finish(mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the rows ended inside a row",
            ));
        }
        self.write_group()?;
        self.writer.close().map_err(io_error)?;
        Ok(())
    }

    /// Reads the whole rows at the front of `cells` into the columns, writing a row group
    /// each time one is full; returns the bytes read (the rest starts a row not yet whole).
    fn take_rows(&mut self, cells: &[u8]) -> io::Result<usize> {
        let mut at = 0;
        'rows: while at < cells.len() {
            let mut end = at;
            for (i, column) in self.columns.iter_mut().enumerate() {
                match column.push(&cells[end..])? {
                    Some(taken) => end += taken,
                    None => {
                        self.columns[..i].iter_mut().for_each(Column::pop);
                        break 'rows;
                    }
                }
            }
            at = end;
            self.rows += 1;
            if self.rows == self.rows_per_group {
                self.write_group()?;
            }
        }
        Ok(at)
    }

    /// Writes the rows collected as one row group (none when there are none).
    fn write_group(&mut self) -> io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.writer.next_row_group().map_err(io_error)?;
        for column in &mut self.columns {
            let mut out = (group.next_column().map_err(io_error)?)
                .ok_or_else(|| io_error(ParquetError::General("fewer columns".into())))?;
            column.write(out.untyped()).map_err(io_error)?;
            out.close().map_err(io_error)?;
        }
        group.close().map_err(io_error)?;
        self.rows = 0;
        Ok(())
    }
}

impl<W: Write + Send> Write for ParquetFile<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut pending = std::mem::take(&mut self.pending);
        let fed = crate::export::cells::feed(&mut pending, bytes, |rows| self.take_rows(rows));
        self.pending = pending;
        fed.map(|()| bytes.len())
    }

    /// Nothing: a row group is written when it is full, the footer by `finish`.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How the columns are encoded: a dictionary while a column has few distinct values, then
/// doubles split by byte place; LZ4 over all; each column chunk's minimum and maximum (so a
/// reader skips row groups a filter rules out).
fn properties(columns: &[(String, ColumnType)]) -> WriterProperties {
    let mut properties = WriterProperties::builder()
        .set_compression(Compression::LZ4_RAW)
        .set_dictionary_page_size_limit(DICTIONARY_BYTES)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_created_by(format!("stepcost {}", env!("CARGO_PKG_VERSION")));
    for (name, kind) in columns {
        if *kind == ColumnType::Number {
            // The bytes of each place of a double together: the sign and exponent bytes,
            // alike from row to row, compress; a double's eight bytes in turn do not.
            let path = ColumnPath::new(vec![name.clone()]);
            properties = properties.set_column_encoding(path, Encoding::BYTE_STREAM_SPLIT);
        }
    }
    properties.build()
}

/// The message type of `columns`: each an optional field of its type.
fn schema(columns: &[(String, ColumnType)]) -> Result<Type, ParquetError> {
    let fields = (columns.iter())
        .map(|(name, kind)| {
            let (physical, logical) = match kind {
                ColumnType::Number => (Physical::DOUBLE, None),
                ColumnType::Integer => (Physical::INT64, None),
                ColumnType::Boolean => (Physical::BOOLEAN, None),
                ColumnType::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Type::group_type_builder("sweep")
        .with_fields(fields)
        .build()
}

fn io_error(e: ParquetError) -> io::Error {
    match e {
        ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(e) => *e,
            Err(inner) => io::Error::other(inner),
        },
        e => io::Error::other(e),
    }
}

#[cfg(test)]
mod tests;
