//! Flat rows for CSV and JSON: each row kind lists its columns once, in order, as a visitor,
//! so the header, the CSV line and the JSON object can never disagree, and `run` and `sweep`
//! print the same row for the same scenario.
//!
//! This module owns what every row is made of ([`Value`], [`Row`]); the row kinds live in a
//! module per question (a priced scenario, a plan, a validation, the chip list), and `encode`
//! turns any row into CSV or JSON.

mod captured;
mod chips;
mod encode;
mod plan;
mod scenario;
mod select;
mod validate;

pub use captured::Captured;
pub use chips::ChipRow;
pub use encode::{csv_header, csv_line, json_line, json_value, push_number, write_rows, CsvText};
pub use plan::PlanRow;
pub use scenario::{param_columns, CompareRow, KernelName, KernelRow, ScenarioLabel, SummaryRow};
pub use select::{Columns, Selected, Selection, Shape, UnknownColumn};
pub use validate::{CaseRow, StatsRow};

/// One value of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Text(&'a str),
    Num(f64),
    Int(u64),
    Bool(bool),
    /// No value (a step without `tokens_per_step` has no tokens per second).
    Empty,
}

impl From<Option<f64>> for Value<'_> {
    fn from(v: Option<f64>) -> Self {
        v.map_or(Value::Empty, Value::Num)
    }
}

/// A row: calls `f(column, value)` for each column, always in the same order.
pub trait Row {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>));
}
