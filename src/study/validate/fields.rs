//! The fields a step row and a serving row of a case file share, each parsed with the column
//! it came from and what is wrong with it.

use crate::base::format::Format;
use crate::base::ranges;
use crate::base::types::{parse_type, TypeKey};

/// Why a field of a row is wrong: the column, and what is wrong with it.
pub(super) type FieldError = (&'static str, String);

/// The non-empty items of a `;`-separated list.
pub(super) fn list(text: &str) -> impl Iterator<Item = &str> {
    text.split(';').map(str::trim).filter(|s| !s.is_empty())
}

/// The `dtypes` column: `key=type;key=type` (`weight=fp8;embed.weight=bf16`).
pub(super) fn parse_dtypes(text: &str) -> Result<Vec<(TypeKey, Format)>, FieldError> {
    list(text)
        .map(parse_type)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ("dtypes", format!("{e}; expected key=type;key=type")))
}

/// The `tp` column: a chip count, 1 when empty.
pub(super) fn parse_tp(text: &str) -> Result<u64, FieldError> {
    match text {
        "" => Ok(1),
        text => text
            .parse::<u64>()
            .ok()
            .filter(|t| ranges::WORKLOAD_CHIPS.contains(*t as f64))
            .ok_or((
                "tp",
                format!(
                    "`{text}` is not a chip count (1, 2, 4, ...): {}",
                    ranges::WORKLOAD_CHIPS.expected()
                ),
            )),
    }
}

/// The `measured` column: a finite number above 0.
pub(super) fn parse_measured(text: &str) -> Result<f64, FieldError> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or(("measured", format!("`{text}` is not a number above 0")))
}

/// Parses `in=I,out=O` (also `in=I;out=O`).
pub fn parse_request(text: &str) -> Result<(u64, u64), String> {
    let (mut input, mut output) = (None, None);
    for part in text
        .split([',', ';'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("expected in=I,out=O, found `{text}`"))?;
        let value: u64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v| *v >= 1)
            .ok_or_else(|| format!("`{value}` is not a token count of at least 1 (in `{text}`)"))?;
        let key = key.trim();
        ranges::REQUEST_TOKENS
            .check(value as f64)
            .map_err(|e| format!("`{key}={value}` (in `{text}`) is {e}"))?;
        match key {
            "in" => input = Some(value),
            "out" => output = Some(value),
            other => {
                return Err(format!(
                    "unknown key `{other}` in `{text}`; expected in and out"
                ))
            }
        }
    }
    match (input, output) {
        (Some(i), Some(o)) => Ok((i, o)),
        _ => Err(format!("expected in=I,out=O, found `{text}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests() {
        assert_eq!(parse_request("in=2048,out=128"), Ok((2048, 128)));
        assert_eq!(parse_request("in=1; out=1"), Ok((1, 1)));
        assert!(parse_request("in=0,out=1").is_err());
        assert!(parse_request("in=5").is_err());
        assert!(parse_request("prompt=5,out=1").is_err());
    }
}
