//! The command line's parsers of flag values that the library keeps beside its clap types
//! and does not export: `number_in` and `whole_in` (`cli::values`) and `parse_set`
//! (`core::scenario`). Each here is a thin call on what the library does export (the range
//! table and its `whole`) that words a refusal as the command line does; each gives way to
//! the library's own once that is exported, and nothing else in the binding reads a value.

use stepcost::internals::ranges::{self, Range};

/// `cli::values::number_in`: a finite number inside `range`.
pub fn number_in(text: &str, range: &Range) -> Result<f64, String> {
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

/// `cli::values::whole_in`: a whole number inside `range`, never rounded or saturated.
pub fn whole_in(text: &str, range: &Range) -> Result<u64, String> {
    let value: f64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number: {}", range.expected()))?;
    ranges::whole(value, range, "the count")
}

/// `core::scenario::parse_set`: `NAME=VALUE`, the value a finite number.
pub fn parse_set(text: &str) -> Result<(String, f64), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE (e.g. batch=32), found `{text}`"))?;
    let value: f64 = value
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{value}` is not a number (in `{text}`)"))?;
    if !value.is_finite() {
        return Err(format!("`{text}`: the value must be a finite number"));
    }
    Ok((name.trim().to_owned(), value))
}
