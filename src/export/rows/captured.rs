//! A row's cells copied in one visit into buffers that keep their capacity, so that a sweep's
//! millions of rows can be filtered, or their columns reordered, without an allocation per
//! row after the first.

use super::{Row, Value};

#[derive(Debug, Clone, Copy)]
enum Slot {
    Empty,
    Num(f64),
    Int(u64),
    Bool(bool),
    Text(usize, usize),
}

/// The cells of the last row captured.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    cells: Vec<Slot>,
    text: String,
}

impl Captured {
    /// Replaces the cells with `row`'s.
    pub(crate) fn capture(&mut self, row: &dyn Row) {
        self.cells.clear();
        self.text.clear();
        let (cells, text) = (&mut self.cells, &mut self.text);
        row.visit(&mut |_, value| {
            cells.push(match value {
                Value::Empty => Slot::Empty,
                Value::Num(x) if x.is_finite() => Slot::Num(x),
                Value::Num(_) => Slot::Empty, // written as an empty cell
                Value::Int(n) => Slot::Int(n),
                Value::Bool(b) => Slot::Bool(b),
                Value::Text(s) => {
                    let start = text.len();
                    text.push_str(s);
                    Slot::Text(start, text.len())
                }
            });
        });
    }

    /// The cell in `column` of the row captured last (empty past its end).
    pub(crate) fn value(&self, column: usize) -> Value<'_> {
        match self.cells.get(column) {
            Some(Slot::Num(x)) => Value::Num(*x),
            Some(Slot::Int(n)) => Value::Int(*n),
            Some(Slot::Bool(b)) => Value::Bool(*b),
            Some(&Slot::Text(start, end)) => Value::Text(&self.text[start..end]),
            Some(Slot::Empty) | None => Value::Empty,
        }
    }
}
