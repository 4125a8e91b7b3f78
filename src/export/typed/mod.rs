//! Rows as typed columns in memory, for a program that takes tables rather than text (a
//! language binding's data frames): one column per row column, in the CSV's order, of the
//! type the column table gives it, each cell a value or a null (an empty CSV cell).
//!
//! [`TypedRows`] is the `io::Write` a sweep streams its cells into (`StreamFormat::Cells`,
//! written by `export::cells`): the rows arrive in grid order and are cut into batches of at
//! most [`ROWS_PER_BATCH`] rows, so that a text column's offsets stay 32-bit and an Arrow
//! reader gets them as record batches. With the `arrow` cargo feature a [`TypedTable`]
//! becomes Arrow record batches without copying its numbers.

#[cfg(feature = "arrow")]
mod arrow;
mod lists;
mod values;

use std::io::{self, Write};

pub use values::{Cell, TypedValues};

use crate::export::cells;
use crate::export::rows::{scenario_column_type, ColumnType, Row, Value};

/// Most rows per batch.
pub(crate) const ROWS_PER_BATCH: usize = 65_536;

/// Bytes of text a batch's column may hold before the batch is cut early: far below the
/// 2 GiB that 32-bit offsets reach.
const TEXT_BYTES: usize = 1 << 30;

/// Rows as typed columns, in batches.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedTable {
    columns: Vec<(String, ColumnType)>,
    batches: Vec<TypedBatch>,
}

/// Consecutive rows of a [`TypedTable`]: one [`TypedValues`] per column, each as long.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedBatch {
    rows: usize,
    columns: Vec<TypedValues>,
}

impl TypedTable {
    /// The columns' names and types, in order.
    pub fn columns(&self) -> &[(String, ColumnType)] {
        &self.columns
    }

    /// The batches, in row order.
    pub fn batches(&self) -> &[TypedBatch] {
        &self.batches
    }

    /// Rows in all batches.
    pub fn rows(&self) -> usize {
        self.batches.iter().map(|b| b.rows).sum()
    }

    /// The cells of row `row` (counted over all batches), in column order; `None` past the
    /// last row.
    pub fn row(&self, mut row: usize) -> Option<Vec<Cell<'_>>> {
        for batch in &self.batches {
            if row < batch.rows {
                return Some(batch.columns.iter().map(|c| c.cell(row)).collect());
            }
            row -= batch.rows;
        }
        None
    }

    /// `rows` as a table; each column's type is that of its first cell that is not empty (in
    /// a column of empty cells, the column table's).
    pub(crate) fn from_rows<'r>(
        rows: impl IntoIterator<Item = &'r dyn Row> + Clone,
    ) -> io::Result<TypedTable> {
        let mut columns: Vec<(String, Option<ColumnType>)> = Vec::new();
        for row in rows.clone() {
            let mut at = 0;
            row.visit(&mut |name, value| {
                if columns.len() == at {
                    columns.push((name.to_owned(), None));
                }
                if columns[at].1.is_none() {
                    columns[at].1 = match value {
                        Value::Num(_) => Some(ColumnType::Number),
                        Value::Int(_) => Some(ColumnType::Integer),
                        Value::Bool(_) => Some(ColumnType::Boolean),
                        Value::Text(t) if !t.is_empty() => Some(ColumnType::Text),
                        Value::Text(_) | Value::Empty => None,
                    };
                }
                at += 1;
            });
        }
        let columns = (columns.into_iter())
            .map(|(name, kind)| {
                let kind = kind.unwrap_or_else(|| scenario_column_type(&name));
                (name, kind)
            })
            .collect();
        let mut typed = TypedRows::new(columns);
        let mut buffer = Vec::new();
        for row in rows {
            cells::push_cells(&mut buffer, row);
        }
        typed.write_all(&buffer)?;
        typed.finish()
    }
}

impl TypedBatch {
    /// Rows in the batch: the length of each of its columns.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The columns' values, in the table's column order.
    pub fn columns(&self) -> &[TypedValues] {
        &self.columns
    }

    #[cfg(feature = "arrow")]
    fn into_columns(self) -> Vec<TypedValues> {
        self.columns
    }
}

/// A table being filled from a stream of cells: the `io::Write` a sweep writes its rows into
/// with `StreamFormat::Cells`. The table is whole once [`TypedRows::finish`] returns it.
#[derive(Debug)]
pub struct TypedRows {
    table: TypedTable,
    batch: TypedBatch,
    /// The start of a row whose end has not arrived yet.
    pending: Vec<u8>,
}

impl TypedRows {
    /// An empty table of `columns` (names and types, in order), such as
    /// [`SweepRows::column_types`](crate::sweep::SweepRows::column_types) gives.
    pub fn new(columns: Vec<(String, ColumnType)>) -> TypedRows {
        let batch = TypedBatch::empty(&columns);
        TypedRows {
            table: TypedTable {
                columns,
                batches: Vec::new(),
            },
            batch,
            pending: Vec::new(),
        }
    }

    /// The table of every row written; an error if the bytes ended inside a row.
    pub fn finish(mut self) -> io::Result<TypedTable> {
        if !self.pending.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the rows ended inside a row",
            ));
        }
        if self.batch.rows > 0 {
            self.table.batches.push(self.batch);
        }
        Ok(self.table)
    }

    /// Ends the batch being filled, if it has rows.
    fn cut(&mut self) {
        if self.batch.rows > 0 {
            let next = self.batch.next(&self.table.columns);
            self.table
                .batches
                .push(std::mem::replace(&mut self.batch, next));
        }
    }

    /// Reads the whole rows at the front of `cells`; returns the bytes read (the rest starts
    /// a row not yet whole).
    fn take_rows(&mut self, cells: &[u8]) -> io::Result<usize> {
        let mut at = 0;
        'rows: while at < cells.len() {
            let mut end = at;
            for (i, (column, (name, _))) in (self.batch.columns.iter_mut())
                .zip(&self.table.columns)
                .enumerate()
            {
                match column.push(&cells[end..], name)? {
                    Some(taken) => end += taken,
                    None => {
                        self.batch.columns[..i]
                            .iter_mut()
                            .for_each(TypedValues::pop);
                        break 'rows;
                    }
                }
            }
            at = end;
            self.batch.rows += 1;
            let text = self.batch.columns.iter().map(TypedValues::text_bytes).max();
            if self.batch.rows == ROWS_PER_BATCH || text.unwrap_or(0) >= TEXT_BYTES {
                self.cut();
            }
        }
        Ok(at)
    }
}

impl TypedBatch {
    fn empty(columns: &[(String, ColumnType)]) -> TypedBatch {
        TypedBatch {
            rows: 0,
            columns: columns
                .iter()
                .map(|(_, t)| TypedValues::new(*t, 0, 0))
                .collect(),
        }
    }

    /// The batch to fill after this one: after a full batch, one that holds as many rows and
    /// as much text without growing (a long stream goes on), else an empty one.
    fn next(&self, columns: &[(String, ColumnType)]) -> TypedBatch {
        let rows = if self.rows == ROWS_PER_BATCH {
            self.rows
        } else {
            0
        };
        let columns = (columns.iter().zip(&self.columns))
            .map(|((_, t), before)| TypedValues::new(*t, rows, before.text_bytes()))
            .collect();
        TypedBatch { rows: 0, columns }
    }
}

impl Write for TypedRows {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut pending = std::mem::take(&mut self.pending);
        let fed = crate::export::cells::feed(&mut pending, bytes, |rows| self.take_rows(rows));
        self.pending = pending;
        fed.map(|()| bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
