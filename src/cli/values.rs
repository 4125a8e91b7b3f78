//! Parsers of option values: numbers within their physical ranges, request shapes, sweep axes.

use crate::base::format::Format as DataFormat;
use crate::base::ranges::{self, Range};
use crate::base::types::TypeKey;
use crate::study::sweep::AxisValues;

/// A number from the command line: finite and inside `range` (`base::ranges`), or why not.
pub(crate) fn number_in(text: &str, range: &Range) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a number: {}", range.expected()))?;
    if !value.is_finite() {
        return Err(format!(
            "`{text}` is not a finite number: {}",
            range.expected()
        ));
    }
    range.check(value).map_err(|e| format!("`{text}` is {e}"))?;
    Ok(value)
}

/// A count from the command line (`1000`, `1e9`): a whole number inside `range`, never
/// rounded or saturated.
pub(crate) fn whole_in(text: &str, range: &Range) -> Result<u64, String> {
    let value: f64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number: {}", range.expected()))?;
    ranges::whole(value, range, "the count")
}

/// `--request in=I,out=O`, each count inside [`ranges::REQUEST_TOKENS`] (as in a case file).
pub(crate) fn parse_request(text: &str) -> Result<(u64, u64), String> {
    crate::study::validate::parse_request(text)
}

/// A sweep's `--set NAME=LIST`: the values counted, not made (the sweep's size is checked
/// first).
pub(crate) fn parse_axis(text: &str) -> Result<(String, AxisValues), String> {
    let (name, list) = text
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=LIST (e.g. batch=1..=64:x2), found `{text}`"))?;
    Ok((name.trim().to_owned(), AxisValues::parse(list)?))
}

pub(crate) fn parse_dtype_axis(text: &str) -> Result<(TypeKey, Vec<DataFormat>), String> {
    let (key, list) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=LIST (e.g. weight=bf16,fp8), found `{text}`"))?;
    let types = list
        .split(',')
        .map(|d| d.parse::<DataFormat>())
        .collect::<Result<Vec<_>, _>>()?;
    Ok((key.parse()?, types))
}
