//! `NAME=VALUE` pairs: a param's value (`--set batch=32`) or its axis (`--set
//! batch=1..=256:x2`), a type key's formats (`--dtype weight=bf16,fp8`) and a buyer's quote
//! (`--price h200=3.10`). Around `=` and each value, spaces are dropped.

use super::{number_in, AxisValues};
use crate::base::format::Format;
use crate::base::ranges;
use crate::base::types::TypeKey;

/// `NAME=VALUE` as `--set batch=32` writes it: the param's name and a finite number.
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
