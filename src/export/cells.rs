//! A row's cells as typed bytes: what a sweep's tasks write for a typed output (Parquet,
//! the typed columns of `export::typed`) instead of text. A task only copies each cell into
//! its buffer (a tag byte, then the value's bytes); the reader on the writer thread turns them
//! back into typed columns. So the sweep's threads do no columnar work, and its chunks arrive
//! in order as for CSV.

use crate::export::rows::{Row, Value};

/// An empty cell: a null.
pub(crate) const NULL: u8 = 0;
/// Followed by an `f64`'s 8 bytes, little-endian.
pub(crate) const NUMBER: u8 = 1;
/// Followed by a `u64`'s 8 bytes, little-endian.
pub(crate) const INTEGER: u8 = 2;
pub(crate) const FALSE: u8 = 3;
pub(crate) const TRUE: u8 = 4;
/// Followed by the text's length in bytes (8, little-endian), then the text.
pub(crate) const TEXT: u8 = 5;

/// Appends `row`'s cells. As in CSV, a number that is not finite and an empty text are empty
/// cells: nulls.
pub(crate) fn push_cells(out: &mut Vec<u8>, row: &dyn Row) {
    row.visit(&mut |_, value| match value {
        Value::Num(x) if x.is_finite() => {
            out.push(NUMBER);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Value::Int(n) => {
            out.push(INTEGER);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Value::Bool(b) => out.push(if b { TRUE } else { FALSE }),
        Value::Text(s) if !s.is_empty() => {
            out.push(TEXT);
            out.extend_from_slice(&(s.len() as u64).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Value::Num(_) | Value::Text(_) | Value::Empty => out.push(NULL),
    });
}

/// The 8 bytes at `at` of `cells`, where they have arrived.
pub(crate) fn word(cells: &[u8], at: usize) -> Option<[u8; 8]> {
    cells.get(at..at + 8)?.try_into().ok()
}

/// What a cell of `tag` holds, for an error.
pub(crate) fn found(tag: u8) -> &'static str {
    match tag {
        NUMBER => "a number",
        INTEGER => "an integer",
        FALSE | TRUE => "a boolean",
        TEXT => "a text",
        _ => "a cell of no known type",
    }
}

/// Feeds `bytes` (cells as [`push_cells`] writes them, cut anywhere) to `take`, which takes
/// the whole rows at the start of what it is given and says how many bytes they were; what
/// follows the last whole row waits in `pending` for the next bytes.
pub(crate) fn feed(
    pending: &mut Vec<u8>,
    bytes: &[u8],
    mut take: impl FnMut(&[u8]) -> std::io::Result<usize>,
) -> std::io::Result<()> {
    if pending.is_empty() {
        let taken = take(bytes)?;
        pending.extend_from_slice(&bytes[taken..]);
    } else {
        pending.extend_from_slice(bytes);
        let taken = take(pending)?;
        pending.drain(..taken);
    }
    Ok(())
}

/// A made-up sweep's rows for the typed outputs' tests: each column's type, a null every few
/// rows, and a last column whose number (`.1`, not finite) is always null.
#[cfg(test)]
pub(crate) mod made {
    use crate::export::rows::{ColumnType, Row, Value};

    /// Row `i` of a made-up sweep: each column's type, and a null every few rows.
    pub(crate) struct Made(pub(crate) u64, pub(crate) f64);

    impl Row for Made {
        fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
            let i = self.0;
            let name = format!("chip-{}", i % 3);
            f(
                "chip",
                Value::Text(if i.is_multiple_of(5) { "" } else { &name }),
            );
            f("time_us", Value::Num(i as f64 / 7.0));
            f("kernels", Value::Int(i * 3));
            f(
                "fits",
                if i.is_multiple_of(4) {
                    Value::Empty
                } else {
                    Value::Bool(i % 2 == 1)
                },
            );
            f("bad", Value::Num(self.1));
        }
    }

    pub(crate) fn columns() -> Vec<(String, ColumnType)> {
        [
            ("chip", ColumnType::Text),
            ("time_us", ColumnType::Number),
            ("kernels", ColumnType::Integer),
            ("fits", ColumnType::Boolean),
            ("bad", ColumnType::Number),
        ]
        .map(|(n, t)| (n.to_owned(), t))
        .to_vec()
    }
}
