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
mod engines;
mod lines;
mod plan;
mod report;
mod scenario;
mod select;
mod serving;
mod short;
mod text;
mod types;
mod validate;
mod what_if;
mod workloads;

pub(crate) use captured::Captured;
pub(crate) use chips::ChipRow;
pub(crate) use encode::{csv_header, json_line, json_value, write_rows};
pub(crate) use engines::EngineRow;
pub(crate) use lines::{csv_line, csv_line_inline};
pub(crate) use plan::PlanRow;
pub(crate) use report::{
    band_of, compare_rows, kernel_rows, plan_rows, request_band_of, summary_row, ParamCells,
};
pub(crate) use scenario::{
    constant_value, param_columns, CompareRow, KernelName, KernelRow, ScenarioLabel, SummaryRow,
};
#[cfg(feature = "cli")]
pub(crate) use select::Columns;
pub(crate) use select::{Selected, Selection, Shape, UnknownColumn};
pub(crate) use serving::{FleetCsvRow, ServingCsvRow};
pub(crate) use text::{push_number, CsvText};
pub(crate) use types::scenario_column_type;
pub use types::ColumnType;
pub(crate) use validate::{CaseRow, StatsRow};
pub(crate) use what_if::{ChipColumn, WhatIfCells};
pub(crate) use workloads::WorkloadRow;

use crate::base::dtype::Role;
use crate::base::format::Scheme;
use crate::base::types::Types;

/// The type columns every scenario row has: `weight_dtype` (the `weight` key's format),
/// `weight_groups` (the groups typed apart from it, as `--dtype` writes them; empty when none
/// is), `activation_dtype`, `kv_dtype`.
pub(crate) fn visit_types<F: FnMut(&str, Value<'_>) + ?Sized>(types: &Types, f: &mut F) {
    f("weight_dtype", Value::Text(types.role(Role::Weight).name()));
    let groups = match types.uniform_weight() {
        Some(_) => String::new(),
        None => {
            let keys = types.keys();
            let apart: Vec<String> = keys[1..keys.len() - 2]
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            apart.join(" ")
        }
    };
    f("weight_groups", Value::Text(&groups));
    f(
        "activation_dtype",
        Value::Text(types.role(Role::Activation).name()),
    );
    f("kv_dtype", Value::Text(types.role(Role::Kv).name()));
}

/// A scheme's name (`W4A16`) written on the stack, so a sweep's row allocates nothing for it.
#[derive(Default)]
pub(crate) struct SchemeText {
    buf: [u8; 24],
}

impl SchemeText {
    /// The name as `Scheme`'s `Display` writes it, without the formatting machinery (a
    /// sweep writes one per row).
    pub(crate) fn of(&mut self, scheme: Scheme) -> &str {
        let (weight, compute) = scheme.bits();
        // The schemes a sweep meets row after row, without formatting.
        let named = match (weight, compute) {
            (16, 16) => Some("W16A16"),
            (8, 16) => Some("W8A16"),
            (8, 8) => Some("W8A8"),
            (4, 16) => Some("W4A16"),
            (4, 8) => Some("W4A8"),
            (4, 4) => Some("W4A4"),
            _ => None,
        };
        if let Some(name) = named {
            return name;
        }
        let (mut w, mut c) = (itoa::Buffer::new(), itoa::Buffer::new());
        let mut n = 0;
        // At most 1 + 10 + 1 + 10 bytes.
        for part in ["W", w.format(weight), "A", c.format(compute)] {
            self.buf[n..n + part.len()].copy_from_slice(part.as_bytes());
            n += part.len();
        }
        std::str::from_utf8(&self.buf[..n]).unwrap_or("")
    }
}

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

/// A row a sweep writes by the million: [`Row::visit`] for a visitor the compiler sees, so
/// that the call per column is inlined rather than made through a pointer.
pub(crate) trait RowInline: Row {
    /// The same columns, values and order as [`Row::visit`].
    fn visit_inline<F: FnMut(&str, Value<'_>) + ?Sized>(&self, f: &mut F);
}

#[cfg(test)]
mod scheme_tests {
    use super::SchemeText;
    use crate::base::dtype::DType;
    use crate::base::format::{Format, Scheme};

    #[test]
    fn a_scheme_is_named_as_its_display_writes_it() {
        let mut text = SchemeText::default();
        for weight in Format::ALL {
            for compute in DType::ALL {
                let scheme = Scheme { weight, compute };
                assert_eq!(text.of(scheme), scheme.to_string(), "{scheme:?}");
            }
        }
    }
}
