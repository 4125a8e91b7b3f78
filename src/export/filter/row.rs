//! A row of our own ([`Row`]) as a filter reads it: its cells copied in one visit into buffers
//! that keep their capacity, so filtering a sweep's millions of rows allocates nothing after
//! the first.

use std::ops::Range;

use super::{Cell, Cells, Kind};
use crate::export::rows::{Row, Value};

/// The kind of each of a row's columns, as a sample of the row shows it (an empty cell: any).
pub fn kinds(row: &dyn Row) -> Vec<(String, Kind)> {
    let mut kinds = Vec::new();
    row.visit(&mut |name, value| {
        let kind = match value {
            Value::Text(_) => Kind::Text,
            Value::Num(_) | Value::Int(_) => Kind::Num,
            Value::Bool(_) => Kind::Bool,
            Value::Empty => Kind::Any,
        };
        kinds.push((name.to_owned(), kind));
    });
    kinds
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Empty,
    Num(f64),
    Bool(bool),
    Text(usize, usize),
}

/// The cells of the last row captured.
#[derive(Debug, Default)]
pub struct Captured {
    cells: Vec<Slot>,
    text: String,
}

impl Captured {
    /// Replaces the cells with `row`'s.
    pub fn capture(&mut self, row: &dyn Row) {
        self.cells.clear();
        self.text.clear();
        let (cells, text) = (&mut self.cells, &mut self.text);
        row.visit(&mut |_, value| {
            cells.push(match value {
                Value::Empty => Slot::Empty,
                Value::Num(x) if x.is_finite() => Slot::Num(x),
                Value::Num(_) => Slot::Empty, // written as an empty cell
                Value::Int(n) => Slot::Num(n as f64),
                Value::Bool(b) => Slot::Bool(b),
                Value::Text(s) => {
                    let start = text.len();
                    text.push_str(s);
                    Slot::Text(start, text.len())
                }
            });
        });
    }
}

impl Cells for Captured {
    fn cell(&self, column: usize, _: Kind) -> Cell<'_> {
        match self.cells.get(column) {
            Some(Slot::Num(x)) => Cell::Num(*x),
            Some(Slot::Bool(b)) => Cell::Bool(*b),
            Some(&Slot::Text(start, end)) => Cell::Text(&self.text[Range { start, end }]),
            Some(Slot::Empty) | None => Cell::Empty,
        }
    }
}
