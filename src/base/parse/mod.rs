//! Values as a person types them, read into typed values: numbers inside their physical
//! ranges, counts, sweep axes (`1..=256:x2`) and the `NAME=VALUE` pairs of `--set`, `--dtype`
//! and `--price`. Each parser is a pure function from text to a value, or to a sentence
//! saying what was expected. The command line's flags, the scenario files' keys and the web
//! page's fields all read through them, so a bad value gets the same message wherever it was
//! typed. (`KEY=TYPE` is `base::types::parse_type`, beside the type keys it reads;
//! numbers with units, `3.35 TB/s`, are [`crate::base::units`].)

mod axis;

pub use axis::{parse_values, AxisValues, MAX_AXIS_VALUES};

use crate::base::format::Format;
use crate::base::param::ScenarioParam;
use crate::base::ranges::{self, Range};
use crate::base::types::TypeKey;

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

// `NAME=VALUE` pairs: a param's value (`--set batch=32`) or its axis (`--set batch=1..=256:x2`),
// a type key's formats (`--dtype weight=bf16,fp8`) and a buyer's quote (`--price h200=3.10`).
// Spaces around `=` and each value are dropped.

/// `NAME=VALUE` as `--set batch=32` writes it: the param's name and a finite number (for
/// `context`, a whole number of tokens inside [`ranges::CONTEXT`], as `--context` takes it).
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
    let name = name.trim();
    if name == ScenarioParam::Context.name() {
        ranges::whole(
            value,
            &ranges::CONTEXT,
            format_args!("`{text}`: the context"),
        )?;
    }
    Ok((name.to_owned(), value))
}

/// A sweep's `NAME=LIST` (`batch=1..=64:x2`): the values counted, not made (the sweep's size
/// is checked first).
pub fn parse_axis(text: &str) -> Result<(String, AxisValues), String> {
    let (name, list) = text
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=LIST (e.g. batch=1..=64:x2), found `{text}`"))?;
    Ok((name.trim().to_owned(), AxisValues::parse(list)?))
}

/// `KEY=LIST` of formats (`weight=bf16,fp8`), as a sweep's or a plan's `--dtype` takes it.
pub fn parse_dtype_axis(text: &str) -> Result<(TypeKey, Vec<Format>), String> {
    let (key, list) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=LIST (e.g. weight=bf16,fp8), found `{text}`"))?;
    let types = list
        .split(',')
        .map(|d| d.parse::<Format>())
        .collect::<Result<Vec<_>, _>>()?;
    Ok((key.parse()?, types))
}

/// `CHIP=USD/h` (`h200=3.10`, `h200=3.10USD/h`): a chip and its price per hour inside
/// [`ranges::COST_QUOTE`].
pub fn parse_quote(text: &str) -> Result<(String, f64), String> {
    let (chip, price) = text
        .split_once('=')
        .ok_or_else(|| format!("expected CHIP=USD/h (e.g. h200=3.10), found `{text}`"))?;
    let price = price.trim();
    let number = price.strip_suffix("USD/h").unwrap_or(price);
    Ok((
        chip.trim().to_owned(),
        number_in(number, &ranges::COST_QUOTE)?,
    ))
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

    #[test]
    fn parses_sets() {
        assert_eq!(parse_set("batch=32"), Ok(("batch".into(), 32.0)));
        assert_eq!(parse_set("tokens = 2_048"), Ok(("tokens".into(), 2048.0)));
        assert!(parse_set("batch").is_err());
        assert!(parse_set("batch=lots").is_err());
        assert!(parse_set("batch=inf").is_err());
    }

    #[test]
    fn parses_axes_by_name() {
        let (name, axis) = parse_axis(" batch = 1..=64:x2").unwrap();
        assert_eq!(name, "batch");
        assert_eq!(axis.expand(), vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
        assert_eq!(axis.text(), "1..=64:x2");
        assert_eq!(
            parse_axis("batch").unwrap_err(),
            "expected NAME=LIST (e.g. batch=1..=64:x2), found `batch`"
        );
        assert!(parse_axis("batch=1..=8:x1").is_err());
    }

    #[test]
    fn parses_type_lists() {
        let (key, formats) = parse_dtype_axis("weight=bf16,fp8").unwrap();
        assert_eq!(key, "weight".parse::<TypeKey>().unwrap());
        assert_eq!(formats, vec![Format::Bf16, Format::Fp8]);
        let (key, formats) = parse_dtype_axis("experts.weight=mxfp4").unwrap();
        assert_eq!(key.name(), "experts.weight");
        assert_eq!(formats, vec![Format::Mxfp4]);
        assert_eq!(
            parse_dtype_axis("weight").unwrap_err(),
            "expected KEY=LIST (e.g. weight=bf16,fp8), found `weight`"
        );
        assert!(parse_dtype_axis("weight=bf16,fp9").is_err());
        assert!(parse_dtype_axis("wait=bf16").is_err());
    }

    #[test]
    fn parses_quotes_with_or_without_the_unit() {
        assert_eq!(parse_quote("h200=3.10"), Ok(("h200".into(), 3.10)));
        assert_eq!(parse_quote(" h200 = 3.10USD/h"), Ok(("h200".into(), 3.10)));
        assert_eq!(
            parse_quote("h200").unwrap_err(),
            "expected CHIP=USD/h (e.g. h200=3.10), found `h200`"
        );
        let refused = parse_quote("h200=abcUSD/h").unwrap_err();
        assert!(refused.starts_with("`abc` is not a number"), "{refused}");
        // Below a tenth of a cent an hour: out of the quote's range.
        assert!(parse_quote("h200=0.0001").is_err());
    }
}
