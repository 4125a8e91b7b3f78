//! Python's arguments read as the command line reads its flags. The package's Python layer
//! writes each value as the text its flag takes (`request=(512, 128)` is `in=512,out=128`,
//! `context=4096` is `4096`, `set={"batch": range(1, 65)}` is `batch=1..65:+1`, `shard=(0,
//! 4)` is `0/4`), and this module reads that text with the flag's own parser and range (the
//! library's one table of them), so that what the command line refuses Python refuses, in
//! the command line's words: `invalid value '1.5' for `context`: the count is 1.5 tokens, not
//! a whole number: ...`, an `InputError` (a `ValueError`).

use pyo3::prelude::*;

use stepcost::internals::ranges::Range;
use stepcost::internals::sweep::AxisValues;
use stepcost::internals::validate::parse_request;
use stepcost::sweep::Shard;

use crate::errors::input;
use stepcost::internals::parse::{number_in, parse_set, whole_in};

/// The most characters of a refused value a message repeats (a list of a million values
/// would make a message of megabytes).
const SHOWN_CHARS: usize = 200;

/// `text`, cut to [`SHOWN_CHARS`] characters.
fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

/// `text` given for the argument `arg`, read by `parse`. A refusal is worded as the
/// command line's (clap's `invalid value 'TEXT' for '--flag <V>': WHY`), the argument in the
/// flag's place.
fn read<T>(arg: &str, text: &str, parse: impl FnOnce(&str) -> Result<T, String>) -> PyResult<T> {
    parse(text).map_err(|why| {
        input(format!(
            "invalid value '{}' for `{arg}`: {}",
            shown(text),
            shown(&why)
        ))
    })
}

/// A number inside `range`, as `--memory-utilization` or `--max-ms-per-token` reads it.
pub fn number(arg: &str, text: Option<&str>, range: &Range) -> PyResult<Option<f64>> {
    text.map(|t| read(arg, t, |t| number_in(t, range)))
        .transpose()
}

/// A whole number inside `range`, as `--context` or `--max-scenarios` reads it.
pub fn count(arg: &str, text: &str, range: &Range) -> PyResult<u64> {
    read(arg, text, |t| whole_in(t, range))
}

/// `in=I,out=O`, as `--request` reads it.
pub fn request(text: Option<&str>) -> PyResult<Option<(u64, u64)>> {
    text.map(|t| read("request", t, parse_request)).transpose()
}

/// `I/N`, as `--shard` reads it.
pub fn shard(text: &str) -> PyResult<Shard> {
    read("shard", text, |t| {
        t.parse().map_err(|e: stepcost::Error| e.to_string())
    })
}

/// Params and their values, `(name, value)`, as `--set NAME=VALUE` reads each.
pub fn sets(pairs: &[(String, String)]) -> PyResult<Vec<(String, f64)>> {
    (pairs.iter())
        .map(|(name, value)| read("set", &format!("{name}={value}"), parse_set))
        .collect()
}

/// A sweep's params and their values, `(name, list)`, as `sweep --set NAME=LIST` reads each:
/// counted, not yet made.
pub fn axes(pairs: &[(String, String)]) -> PyResult<Vec<(String, AxisValues)>> {
    (pairs.iter())
        .map(|(name, list)| {
            let values = read("set", &format!("{name}={list}"), |_| {
                AxisValues::parse(list)
            })?;
            Ok((name.trim().to_owned(), values))
        })
        .collect()
}
