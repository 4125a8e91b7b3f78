//! Values as a person types them, read into typed values: numbers inside their physical
//! ranges, counts, sweep axes (`1..=256:x2`) and the `NAME=VALUE` pairs of `--set`, `--dtype`
//! and `--price`. Each parser is a pure function from text to a value, or to a sentence
//! saying what was expected. The command line's flags, the scenario files' keys and the web
//! page's fields all read through them, so a bad value gets the same message wherever it was
//! typed. (`KEY=TYPE` is [`crate::base::types::parse_type`], beside the type keys it reads;
//! numbers with units, `3.35 TB/s`, are [`crate::base::units`].)

mod axis;
mod pairs;

pub use axis::{parse_values, AxisValues, MAX_AXIS_VALUES};
pub use pairs::{parse_axis, parse_dtype_axis, parse_quote, parse_set};

use crate::base::ranges::{self, Range};

/// A number as typed (`0.9`, `1_000`, `1e-3`): finite and inside `range`, or why not.
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

/// A count as typed (`1000`, `1e9`): a whole number inside `range`, never rounded or
/// saturated.
pub fn whole_in(text: &str, range: &Range) -> Result<u64, String> {
    let value: f64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number: {}", range.expected()))?;
    ranges::whole(value, range, "the count")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_finite_and_inside_their_range() {
        let range = &ranges::MEMORY_UTILIZATION;
        assert_eq!(number_in("0.9", range), Ok(0.9));
        assert_eq!(number_in(" 0.5 ", range), Ok(0.5));
        assert_eq!(number_in("1", range), Ok(1.0));
        let refused = number_in("abc", range).unwrap_err();
        assert!(
            refused.starts_with("`abc` is not a number: expected "),
            "{refused}"
        );
        let refused = number_in("1.5", range).unwrap_err();
        assert!(refused.starts_with("`1.5` is out of range"), "{refused}");
        let refused = number_in("NaN", range).unwrap_err();
        assert!(
            refused.starts_with("`NaN` is not a finite number"),
            "{refused}"
        );
        assert!(number_in("inf", range).is_err());
    }

    #[test]
    fn counts_are_whole_never_rounded() {
        let range = &ranges::MAX_SCENARIOS;
        assert_eq!(whole_in("1000", range), Ok(1000));
        assert_eq!(whole_in("1_000", range), Ok(1000));
        assert_eq!(whole_in("1e9", range), Ok(1_000_000_000));
        let refused = whole_in("1.5", range).unwrap_err();
        assert!(refused.contains("not a whole number"), "{refused}");
        let refused = whole_in("lots", range).unwrap_err();
        assert!(
            refused.starts_with("`lots` is not a whole number"),
            "{refused}"
        );
        let refused = whole_in("0", range).unwrap_err();
        assert!(refused.contains("a count too small"), "{refused}");
    }
}
