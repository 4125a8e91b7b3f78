//! One column's values in a batch, dense as Arrow lays them out: a value in every row (0 or
//! nothing where the cell is a null) and whether each row holds one.

use std::io;

use crate::export::cells::{found, word, FALSE, INTEGER, NULL, NUMBER, TEXT, TRUE};
use crate::export::rows::ColumnType;

/// The values of one column of a batch. `valid[i]` says whether row `i` holds a value; where
/// it does not, the value in its place is 0, `false` or an empty text.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedValues {
    /// Real numbers (`f64`).
    Number {
        /// Each row's value, 0 where it holds none.
        values: Vec<f64>,
        /// Whether each row holds a value.
        valid: Vec<bool>,
    },
    /// Counts, stored signed as Parquet and Arrow store them (a count past 2^63 is refused).
    Integer {
        /// Each row's count, 0 where it holds none.
        values: Vec<i64>,
        /// Whether each row holds a value.
        valid: Vec<bool>,
    },
    /// Booleans.
    Boolean {
        /// Each row's value, `false` where it holds none.
        values: Vec<bool>,
        /// Whether each row holds a value.
        valid: Vec<bool>,
    },
    /// Every row's text one after the other; row `i` is `text[offsets[i]..offsets[i + 1]]`.
    Text {
        /// Every row's text, concatenated; empty for a row that holds none.
        text: String,
        /// Where each row's text starts in `text`, one more than the rows: the last is its length.
        offsets: Vec<i32>,
        /// Whether each row holds a value.
        valid: Vec<bool>,
    },
}

/// One cell of a [`TypedTable`](super::TypedTable).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// An empty cell.
    Null,
    /// A real number.
    Number(f64),
    /// A count.
    Integer(i64),
    /// A boolean.
    Boolean(bool),
    /// Text.
    Text(&'a str),
}

impl TypedValues {
    /// An empty column of `kind` that holds `rows` rows and `text` bytes of text without
    /// growing.
    pub(super) fn new(kind: ColumnType, rows: usize, text: usize) -> TypedValues {
        let valid = Vec::with_capacity(rows);
        match kind {
            ColumnType::Number => TypedValues::Number {
                values: Vec::with_capacity(rows),
                valid,
            },
            ColumnType::Integer => TypedValues::Integer {
                values: Vec::with_capacity(rows),
                valid,
            },
            ColumnType::Boolean => TypedValues::Boolean {
                values: Vec::with_capacity(rows),
                valid,
            },
            ColumnType::Text => {
                let mut offsets = Vec::with_capacity(rows + 1);
                offsets.push(0);
                TypedValues::Text {
                    text: String::with_capacity(text),
                    offsets,
                    valid,
                }
            }
        }
    }

    /// Whether each row holds a value.
    pub fn valid(&self) -> &[bool] {
        match self {
            TypedValues::Number { valid, .. }
            | TypedValues::Integer { valid, .. }
            | TypedValues::Boolean { valid, .. }
            | TypedValues::Text { valid, .. } => valid,
        }
    }

    /// The cell of row `row` (of this batch); a null past the end.
    pub fn cell(&self, row: usize) -> Cell<'_> {
        if !self.valid().get(row).copied().unwrap_or(false) {
            return Cell::Null;
        }
        match self {
            TypedValues::Number { values, .. } => Cell::Number(values[row]),
            TypedValues::Integer { values, .. } => Cell::Integer(values[row]),
            TypedValues::Boolean { values, .. } => Cell::Boolean(values[row]),
            TypedValues::Text { text, offsets, .. } => {
                let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                Cell::Text(&text[start..end])
            }
        }
    }

    /// Bytes of text held (0 for other columns).
    pub(super) fn text_bytes(&self) -> usize {
        match self {
            TypedValues::Text { text, .. } => text.len(),
            _ => 0,
        }
    }

    /// Reads one cell from the front of `cells` into the column `name` and returns the bytes
    /// it took, or `None` when `cells` ends inside it. A cell of another type than the
    /// column's is an error.
    pub(super) fn push(&mut self, cells: &[u8], name: &str) -> io::Result<Option<usize>> {
        let Some(&tag) = cells.first() else {
            return Ok(None);
        };
        let defined = tag != NULL;
        let taken = match (tag, &mut *self) {
            (NULL, TypedValues::Number { values, .. }) => push_one(values, 0.0, 1),
            (NULL, TypedValues::Integer { values, .. }) => push_one(values, 0, 1),
            (NULL, TypedValues::Boolean { values, .. }) => push_one(values, false, 1),
            (NULL, TypedValues::Text { text, offsets, .. }) => push_text(text, offsets, "")?,
            (NUMBER, TypedValues::Number { values, .. }) => match word(cells, 1) {
                Some(w) => push_one(values, f64::from_le_bytes(w), 9),
                None => return Ok(None),
            },
            (INTEGER, TypedValues::Integer { values, .. }) => match word(cells, 1) {
                Some(w) => {
                    let n = i64::try_from(u64::from_le_bytes(w))
                        .map_err(|_| wrong(name, ColumnType::Integer, "an integer past 2^63"))?;
                    push_one(values, n, 9)
                }
                None => return Ok(None),
            },
            (FALSE | TRUE, TypedValues::Boolean { values, .. }) => push_one(values, tag == TRUE, 1),
            (TEXT, TypedValues::Text { text, offsets, .. }) => {
                let Some(len) =
                    word(cells, 1).and_then(|w| usize::try_from(u64::from_le_bytes(w)).ok())
                else {
                    return Ok(None);
                };
                let Some(bytes) = cells.get(9..9 + len) else {
                    return Ok(None);
                };
                let s = std::str::from_utf8(bytes).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("column `{name}`: a text that is not UTF-8"),
                    )
                })?;
                push_text(text, offsets, s)?;
                9 + len
            }
            (tag, values) => return Err(wrong(name, values.kind(), found(tag))),
        };
        match self {
            TypedValues::Number { valid, .. }
            | TypedValues::Integer { valid, .. }
            | TypedValues::Boolean { valid, .. }
            | TypedValues::Text { valid, .. } => valid.push(defined),
        }
        Ok(Some(taken))
    }

    /// Forgets the last cell pushed (of a row whose end has not arrived yet).
    pub(super) fn pop(&mut self) {
        match self {
            TypedValues::Number { values, valid } => drop((values.pop(), valid.pop())),
            TypedValues::Integer { values, valid } => drop((values.pop(), valid.pop())),
            TypedValues::Boolean { values, valid } => drop((values.pop(), valid.pop())),
            TypedValues::Text {
                text,
                offsets,
                valid,
            } => {
                if valid.pop().is_some() {
                    offsets.pop();
                    text.truncate(offsets.last().copied().unwrap_or(0) as usize);
                }
            }
        }
    }

    fn kind(&self) -> ColumnType {
        match self {
            TypedValues::Number { .. } => ColumnType::Number,
            TypedValues::Integer { .. } => ColumnType::Integer,
            TypedValues::Boolean { .. } => ColumnType::Boolean,
            TypedValues::Text { .. } => ColumnType::Text,
        }
    }
}

/// Pushes `value` and returns `taken`, the bytes its cell took.
fn push_one<T>(values: &mut Vec<T>, value: T, taken: usize) -> usize {
    values.push(value);
    taken
}

/// Appends a row's text; returns the bytes a null cell takes (1) when `s` is empty, for the
/// caller that pushes a null. A batch's text past 2^31 bytes cannot be told by 32-bit offsets.
fn push_text(text: &mut String, offsets: &mut Vec<i32>, s: &str) -> io::Result<usize> {
    text.push_str(s);
    let end = i32::try_from(text.len()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "a batch's text column passed 2 GiB",
        )
    })?;
    offsets.push(end);
    Ok(1)
}

/// A cell that does not fit its column: a row kind and the column table disagree.
fn wrong(column: &str, kind: ColumnType, found: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "column `{column}` is declared {}, but a row has {found} in it",
            kind.name()
        ),
    )
}
