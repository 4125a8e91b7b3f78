//! The columns that collect a sweep's cells (`export::cells`) until a row group is written:
//! the writer thread reads them back into one buffer per column, so a row group holds whole
//! rows.

use std::io;
use std::mem;

use bytes::Bytes;
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::errors::ParquetError;

use crate::export::cells::{found, word, FALSE, INTEGER, NULL, NUMBER, TEXT, TRUE};
use crate::export::rows::ColumnType;

/// The non-null values of one column in the row group being collected.
#[derive(Debug)]
enum Values {
    Number(Vec<f64>),
    Integer(Vec<i64>),
    Boolean(Vec<bool>),
    /// Every text one after the other, and where each ends.
    Text {
        bytes: Vec<u8>,
        ends: Vec<usize>,
    },
}

/// One column of the row group being collected.
#[derive(Debug)]
pub(super) struct Column {
    name: String,
    kind: ColumnType,
    /// Parquet's definition level of each row: 1 for a value, 0 for a null.
    defined: Vec<i16>,
    values: Values,
}

impl Column {
    /// An empty column that holds `rows` rows without growing (so that no buffer doubles
    /// past what a row group needs).
    pub(super) fn new(name: String, kind: ColumnType, rows: usize) -> Column {
        let values = match kind {
            ColumnType::Number => Values::Number(Vec::with_capacity(rows)),
            ColumnType::Integer => Values::Integer(Vec::with_capacity(rows)),
            ColumnType::Boolean => Values::Boolean(Vec::with_capacity(rows)),
            ColumnType::Text => Values::Text {
                bytes: Vec::new(),
                ends: Vec::with_capacity(rows),
            },
        };
        Column {
            name,
            kind,
            defined: Vec::with_capacity(rows),
            values,
        }
    }

    /// Reads one cell from the front of `cells` into the column and returns the bytes it took,
    /// or `None` when `cells` ends inside it (the rest comes with the next bytes written).
    /// A cell of another type than the column's is an error.
    pub(super) fn push(&mut self, cells: &[u8]) -> io::Result<Option<usize>> {
        let Some(&tag) = cells.first() else {
            return Ok(None);
        };
        let word = |at: usize| word(cells, at);
        let taken = match (tag, &mut self.values) {
            (NULL, _) => 1,
            (NUMBER, Values::Number(v)) => match word(1) {
                Some(w) => {
                    v.push(f64::from_le_bytes(w));
                    9
                }
                None => return Ok(None),
            },
            (INTEGER, Values::Integer(v)) => match word(1) {
                Some(w) => {
                    let n = u64::from_le_bytes(w);
                    v.push(
                        i64::try_from(n)
                            .map_err(|_| wrong(&self.name, self.kind, "an integer past 2^63"))?,
                    );
                    9
                }
                None => return Ok(None),
            },
            (FALSE | TRUE, Values::Boolean(v)) => {
                v.push(tag == TRUE);
                1
            }
            (TEXT, Values::Text { bytes, ends }) => {
                let Some(len) = word(1).and_then(|w| usize::try_from(u64::from_le_bytes(w)).ok())
                else {
                    return Ok(None);
                };
                let Some(text) = cells.get(9..9 + len) else {
                    return Ok(None);
                };
                bytes.extend_from_slice(text);
                ends.push(bytes.len());
                9 + len
            }
            _ => return Err(wrong(&self.name, self.kind, found(tag))),
        };
        self.defined.push(i16::from(tag != NULL));
        Ok(Some(taken))
    }

    /// Forgets the last cell pushed (of a row whose end has not arrived yet).
    pub(super) fn pop(&mut self) {
        if self.defined.pop() == Some(1) {
            match &mut self.values {
                Values::Number(v) => drop(v.pop()),
                Values::Integer(v) => drop(v.pop()),
                Values::Boolean(v) => drop(v.pop()),
                Values::Text { bytes, ends } => {
                    ends.pop();
                    bytes.truncate(ends.last().copied().unwrap_or(0));
                }
            }
        }
    }

    /// Writes the values collected into `writer` (the column's, in the row group being
    /// written) and empties the column for the next row group.
    pub(super) fn write(&mut self, writer: &mut ColumnWriter<'_>) -> Result<(), ParquetError> {
        let defined = Some(&self.defined[..]);
        match (&mut self.values, writer) {
            (Values::Number(v), ColumnWriter::DoubleColumnWriter(w)) => {
                w.write_batch(v, defined, None)?;
                v.clear();
            }
            (Values::Integer(v), ColumnWriter::Int64ColumnWriter(w)) => {
                w.write_batch(v, defined, None)?;
                v.clear();
            }
            (Values::Boolean(v), ColumnWriter::BoolColumnWriter(w)) => {
                w.write_batch(v, defined, None)?;
                v.clear();
            }
            (Values::Text { bytes, ends }, ColumnWriter::ByteArrayColumnWriter(w)) => {
                // One buffer for the group's texts; each value is a slice of it. The next
                // group's starts as large.
                let all = Bytes::from(mem::replace(bytes, Vec::with_capacity(bytes.len())));
                let mut start = 0;
                let texts: Vec<ByteArray> = (ends.iter())
                    .map(|&end| ByteArray::from(all.slice(mem::replace(&mut start, end)..end)))
                    .collect();
                w.write_batch(&texts, defined, None)?;
                ends.clear();
            }
            _ => {
                return Err(ParquetError::General(format!(
                    "column `{}`: its writer is not of its type",
                    self.name
                )))
            }
        }
        self.defined.clear();
        Ok(())
    }
}

/// A cell that does not fit its column: a row kind and the column table disagree.
fn wrong(column: &str, kind: ColumnType, found: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "Parquet column `{column}` is declared {}, but a row has {found} in it",
            kind.name()
        ),
    )
}
