//! Rows a spreadsheet likes: the columns a person names (`--columns`), in the order named, or
//! the brief set, each number to a number of significant digits (`--digits`).
//!
//! A [`Selection`] is resolved once against a row kind's columns (an unknown one is an error
//! naming the closest); [`Selected`] then shows any row of that kind through it. Reordering
//! needs a row's cells at hand at once: they are copied into a per-thread [`Captured`], so a
//! sweep's rows cost no allocation each.

use std::cell::RefCell;
use std::fmt;

use super::{Captured, Row, Value};
use crate::base::suggest::did_you_mean;

/// Which columns a command writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Columns {
    /// Every column of the row.
    #[default]
    All,
    /// [`BRIEF`]: what a buyer reads first.
    Brief,
    /// These columns, in this order.
    List(Vec<String>),
}

/// `--columns brief`, in order; the row's data-type columns (those ending in `_dtype`) take
/// the place of `types`; a column the row lacks is passed over.
pub(super) const BRIEF: [&str; 12] = [
    "workload",
    "chip",
    "types",
    "batch",
    "context",
    "step_time_us",
    "ms_per_token",
    "tokens_per_s",
    "fits",
    "max_batch",
    "usd_per_million_tokens",
    "mfu",
];

/// Significant digits `--columns brief` writes unless told otherwise.
pub(super) const BRIEF_DIGITS: u8 = 4;

/// How rows are cut: which columns, and to how many significant digits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    pub columns: Columns,
    /// Significant digits of a number that is not whole; `None`: every digit.
    pub digits: Option<u8>,
}

impl Shape {
    /// Whether the rows are written as they are.
    pub fn is_whole(&self) -> bool {
        self.columns == Columns::All && self.digits.is_none()
    }

    /// The digits numbers get: those asked for, else brief's.
    fn effective_digits(&self) -> Option<u8> {
        match (&self.columns, self.digits) {
            (_, Some(d)) => Some(d),
            (Columns::Brief, None) => Some(BRIEF_DIGITS),
            _ => None,
        }
    }
}

/// A column asked for that the rows do not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownColumn(String);

impl fmt::Display for UnknownColumn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnknownColumn {}

/// A [`Shape`] resolved against one kind of row.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    /// For each column written, its name and its position in the row; `None`: all, as they are.
    picks: Option<Vec<(String, usize)>>,
    digits: Option<u8>,
}

impl Selection {
    /// `shape` against the columns of `sample` (any row of the kind: only names are read).
    pub(crate) fn new(shape: &Shape, sample: &dyn Row) -> Result<Selection, UnknownColumn> {
        let mut names: Vec<String> = Vec::new();
        sample.visit(&mut |name, _| names.push(name.to_owned()));
        let position = |name: &str| names.iter().position(|n| n == name);
        let picks = match &shape.columns {
            Columns::All => None,
            Columns::Brief => Some(
                (BRIEF.iter())
                    .flat_map(|&b| match b {
                        "types" => (names.iter())
                            .filter(|n| n.ends_with("_dtype") || *n == "dtype")
                            .map(String::as_str)
                            .collect(),
                        _ => vec![b],
                    })
                    .filter_map(|n| Some((n.to_owned(), position(n)?)))
                    .collect(),
            ),
            Columns::List(list) => Some(
                (list.iter())
                    .map(|n| match position(n) {
                        Some(i) => Ok((n.clone(), i)),
                        None => Err(UnknownColumn(format!(
                            "--columns: no column `{n}`{}; the columns: {}",
                            did_you_mean(n, names.iter().map(String::as_str)),
                            names.join(", ")
                        ))),
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        Ok(Selection {
            picks,
            digits: shape.effective_digits(),
        })
    }

    /// `row` (of the kind this was resolved against) as the selection shows it.
    pub(crate) fn of<'r>(&'r self, row: &'r dyn Row) -> Selected<'r> {
        Selected {
            row,
            selection: self,
        }
    }

    fn round<'v>(&self, value: Value<'v>) -> Value<'v> {
        match (value, self.digits) {
            (Value::Num(x), Some(digits)) => Value::Num(significant(x, digits)),
            _ => value,
        }
    }
}

thread_local! {
    /// The cells of the row being reordered, kept from row to row for their capacity.
    static CAPTURED: RefCell<Captured> = RefCell::new(Captured::default());
}

/// A row seen through a [`Selection`].
pub(crate) struct Selected<'r> {
    row: &'r dyn Row,
    selection: &'r Selection,
}

impl Row for Selected<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let selection = self.selection;
        let Some(picks) = &selection.picks else {
            return self
                .row
                .visit(&mut |name, value| f(name, selection.round(value)));
        };
        CAPTURED.with(|cell| {
            // A row whose visit shows another selected row would find the buffer taken: it
            // gets a buffer of its own.
            let mut own = Captured::default();
            let mut held = cell.try_borrow_mut();
            let captured = held.as_deref_mut().unwrap_or(&mut own);
            captured.capture(self.row);
            for (name, i) in picks {
                f(name, selection.round(captured.value(*i)));
            }
        });
    }
}

/// `x` to `digits` significant digits, as the nearest double to that decimal (so the
/// shortest form prints no more digits). A whole number is a count or a size and is kept
/// whole: `--digits 2` never turns a context of 8192 into 8200.
pub(super) fn significant(x: f64, digits: u8) -> f64 {
    if !x.is_finite() || x == 0.0 || x.fract() == 0.0 {
        return x;
    }
    let digits = i32::from(digits.max(1));
    let shift = digits - 1 - x.abs().log10().floor() as i32;
    // Dividing or multiplying a whole number by an exact power of ten rounds once, to the
    // double nearest the decimal; past 10^22 a power is inexact, and the value is left be.
    if !(-22..=22).contains(&shift) {
        return x;
    }
    let scaled = if shift >= 0 {
        (x * 10f64.powi(shift)).round() / 10f64.powi(shift)
    } else {
        (x / 10f64.powi(-shift)).round() * 10f64.powi(-shift)
    };
    if scaled.is_finite() {
        scaled
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Example;

    impl Row for Example {
        fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
            f("workload", Value::Text("w"));
            f("chip", Value::Text("c"));
            f("weight_dtype", Value::Text("fp8"));
            f("kv_dtype", Value::Text("bf16"));
            f("step_time_us", Value::Num(12345.678));
            f("mfu", Value::Num(0.123456));
            f("kernels", Value::Int(12345));
            f("batch", Value::Num(8192.0));
        }
    }

    fn shown(shape: &Shape) -> Vec<(String, String)> {
        let selection = Selection::new(shape, &Example).unwrap();
        let mut out = Vec::new();
        selection
            .of(&Example)
            .visit(&mut |n, v| out.push((n.to_owned(), format!("{v:?}"))));
        out
    }

    #[test]
    fn significant_digits_by_hand() {
        assert_eq!(significant(12345.678, 4), 12350.0);
        assert_eq!(significant(0.123456, 3), 0.123);
        assert_eq!(significant(-0.0004567, 2), -0.00046);
        assert_eq!(significant(2.5e-9, 1), 3e-9);
        assert_eq!(significant(8192.0, 2), 8192.0);
        assert_eq!(significant(1.0 / 3.0, 4), 0.3333);
    }

    #[test]
    fn brief_keeps_its_order_and_types_and_rounds_to_four() {
        let brief = shown(&Shape {
            columns: Columns::Brief,
            digits: None,
        });
        let names: Vec<&str> = brief.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "workload",
                "chip",
                "weight_dtype",
                "kv_dtype",
                "batch",
                "step_time_us",
                "mfu"
            ]
        );
        assert_eq!(brief[5].1, "Num(12350.0)");
        assert_eq!(brief[6].1, "Num(0.1235)");
    }

    #[test]
    fn a_list_in_its_own_order_and_an_unknown_column_named() {
        let list = Columns::List(vec!["kernels".into(), "chip".into()]);
        let shape = Shape {
            columns: list,
            digits: Some(2),
        };
        assert_eq!(
            shown(&shape),
            [
                ("kernels".to_owned(), "Int(12345)".to_owned()),
                ("chip".into(), "Text(\"c\")".into())
            ]
        );
        let typo = Shape {
            columns: Columns::List(vec!["step_time".into()]),
            digits: None,
        };
        let err = Selection::new(&typo, &Example).unwrap_err().to_string();
        assert!(
            err.contains("no column `step_time` (did you mean `step_time_us`?)"),
            "{err}"
        );
    }
}
