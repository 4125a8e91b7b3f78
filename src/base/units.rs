//! Human-written quantities (`989 TFLOPS`, `3.35 TB/s`, `80 GB`, `2.5 us`) and the one place
//! they are parsed. Every quantity becomes a plain SI value (FLOP/s, bytes/s, bytes, seconds,
//! watts, US dollars per hour); the kind of a field decides which units it accepts.

use std::fmt;

/// What a chip-file field measures, and so which units it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantityKind {
    /// Operations per second: `FLOPS`, `FLOP/s`, `OPS` with an SI prefix (`TFLOPS`, `TOPS`).
    Rate,
    /// Bytes per second: `B/s` with an SI or binary prefix (`TB/s`, `GiB/s`), or bits per
    /// second as networks are quoted (`400 Gb/s` is 50e9 bytes per second).
    Bandwidth,
    /// Bytes: `B` with an SI or binary prefix (`80 GB` is 80e9 bytes, `80 GiB` is 80 x 2^30).
    Bytes,
    /// Seconds: `s`, `ms`, `us` (or `µs`), `ns`.
    Time,
    /// Watts: `W`, `kW`.
    Power,
    /// US dollars per hour: `USD/h`.
    Price,
    /// US dollars: `USD`, with an SI prefix (`3.1 MUSD`).
    Money,
}

impl QuantityKind {
    pub(crate) fn examples(self) -> &'static str {
        match self {
            QuantityKind::Rate => "a rate such as `989 TFLOPS` or `1979 TOPS`",
            QuantityKind::Bandwidth => "a bandwidth such as `3.35 TB/s` or `900 GB/s`",
            QuantityKind::Bytes => "a size such as `80 GB`, `50 MB` or `141 GiB`",
            QuantityKind::Time => "a time such as `2.5 us`, `10 ns` or `1 ms`",
            QuantityKind::Power => "a power such as `700 W` or `1.2 kW`",
            QuantityKind::Price => "a price such as `3.78 USD/h`",
            QuantityKind::Money => "an amount such as `35000 USD` or `3.1 MUSD`",
        }
    }
}

impl fmt::Display for QuantityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            QuantityKind::Rate => "rate",
            QuantityKind::Bandwidth => "bandwidth",
            QuantityKind::Bytes => "size",
            QuantityKind::Time => "time",
            QuantityKind::Power => "power",
            QuantityKind::Price => "price",
            QuantityKind::Money => "amount of money",
        };
        f.write_str(name)
    }
}

/// Why a quantity did not parse; the message says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct QuantityError(String);

fn si_prefix(c: &str) -> Option<f64> {
    Some(match c {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        _ => return None,
    })
}

fn binary_prefix(c: &str) -> Option<f64> {
    Some(match c {
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// Multiplier of `unit` for `kind` (a negative number `-d` means "divide by d"), or `None`
/// when the unit does not measure that kind.
fn unit_factor(kind: QuantityKind, unit: &str) -> Option<f64> {
    let with_prefix = |base: &str, binary: bool| -> Option<f64> {
        let prefix = unit.strip_suffix(base)?;
        si_prefix(prefix).or_else(|| binary.then(|| binary_prefix(prefix)).flatten())
    };
    match kind {
        QuantityKind::Rate => ["FLOPS", "FLOP/s", "OPS", "OP/s"]
            .iter()
            .find_map(|base| with_prefix(base, false)),
        QuantityKind::Bandwidth => with_prefix("B/s", true)
            .or_else(|| with_prefix("b/s", false).map(|f| f / 8.0))
            .or_else(|| with_prefix("bps", false).map(|f| f / 8.0)),
        QuantityKind::Bytes => with_prefix("B", true),
        // Negative powers are divisors (see `parse_quantity`), so `2.5 us` is exactly 2.5e-6.
        QuantityKind::Time => match unit {
            "s" => Some(1.0),
            "ms" => Some(-1e3),
            "us" | "µs" | "μs" => Some(-1e6),
            "ns" => Some(-1e9),
            _ => None,
        },
        QuantityKind::Power => with_prefix("W", false),
        QuantityKind::Price => (unit == "USD/h" || unit == "$/h").then_some(1.0),
        QuantityKind::Money => with_prefix("USD", false),
    }
}

/// Parses `text` as a quantity of `kind` and returns its SI value, which is finite and > 0.
///
/// The number and the unit may be separated by spaces; thousands separators (`1,979`) are
/// accepted. A bare number, a unit of another kind or a non-positive value is an error.
pub fn parse_quantity(text: &str, kind: QuantityKind) -> Result<f64, QuantityError> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '+' | '-' | 'e' | 'E')))
        .unwrap_or(trimmed.len());
    // `1e3 GB` has an exponent; `3.35 EB/s` would be cut inside the unit, so back off an `E`
    // that is not followed by a digit.
    let (mut number, mut unit) = trimmed.split_at(split);
    while let Some(stripped) = number.strip_suffix(['e', 'E']) {
        unit = &trimmed[stripped.len()..];
        number = stripped;
    }
    let number = number.replace(',', "");
    let unit = unit.trim();
    let expected = || QuantityError(format!("expected {}, found `{trimmed}`", kind.examples()));
    if unit.is_empty() {
        return Err(QuantityError(format!(
            "`{trimmed}` has no unit; expected {}",
            kind.examples()
        )));
    }
    let value: f64 = number.parse().map_err(|_| expected())?;
    let factor = match unit_factor(kind, unit) {
        Some(f) => f,
        None => {
            let other = [
                QuantityKind::Rate,
                QuantityKind::Bandwidth,
                QuantityKind::Bytes,
                QuantityKind::Time,
                QuantityKind::Power,
                QuantityKind::Price,
                QuantityKind::Money,
            ]
            .into_iter()
            .find(|k| unit_factor(*k, unit).is_some());
            return Err(QuantityError(match other {
                Some(other) => format!(
                    "`{unit}` is a unit of {other}, but this field is a {kind}: expected {}",
                    kind.examples()
                ),
                None => format!("unknown unit `{unit}`; expected {}", kind.examples()),
            }));
        }
    };
    let si = if factor < 0.0 {
        value / -factor
    } else {
        value * factor
    };
    if !si.is_finite() || si <= 0.0 {
        return Err(QuantityError(format!(
            "`{trimmed}` must be a finite number greater than zero"
        )));
    }
    Ok(si)
}

/// SI prefixes from exa to pico, largest first, with their scale.
pub(crate) const PREFIXES: [(f64, &str); 11] = [
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "u"),
    (1e-9, "n"),
    (1e-12, "p"),
];

/// Formats `value` with an SI prefix and three significant digits: `1.11 ms`, `403 MB`.
pub fn human(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return format!("{value} {unit}");
    }
    if value == 0.0 {
        return format!("0 {unit}");
    }
    let (scale, prefix) = prefix_of(value);
    format!("{} {prefix}{unit}", three_significant(value / scale))
}

/// The SI prefix [`human`] writes `value` with, and its scale.
pub fn prefix_of(value: f64) -> (f64, &'static str) {
    let magnitude = value.abs();
    PREFIXES
        .iter()
        .copied()
        .find(|(scale, _)| magnitude >= *scale * 0.9995)
        .unwrap_or(PREFIXES[PREFIXES.len() - 1])
}

/// Three significant digits without a trailing `.0`: `1.11`, `40.1`, `403`, `2730`.
pub fn three_significant(x: f64) -> String {
    let magnitude = x.abs();
    let decimals = if magnitude >= 100.0 {
        0
    } else if magnitude >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.decimals$}")
}

/// A fraction as a percentage, three significant digits: 0.0139 is `1.39%`, 0.532 `53.2%`.
/// Every table, report and document writes percentages through this one function (and its
/// signed twin), so one figure prints alike everywhere.
pub fn percent(fraction: f64) -> String {
    format!("{}%", three_significant(fraction * 100.0))
}

/// A signed fraction as a percentage with its sign, three significant digits: `+4.12%`,
/// `-0.70%`, `+12.3%`.
pub fn signed_percent(fraction: f64) -> String {
    let text = percent(fraction);
    if text.starts_with('-') {
        text
    } else {
        format!("+{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_datasheet_figures() {
        assert_eq!(parse_quantity("989 TFLOPS", QuantityKind::Rate), Ok(989e12));
        assert_eq!(
            parse_quantity("1,979 TOPS", QuantityKind::Rate),
            Ok(1979e12)
        );
        assert_eq!(
            parse_quantity("3.35 TB/s", QuantityKind::Bandwidth),
            Ok(3.35e12)
        );
        assert_eq!(parse_quantity("80 GB", QuantityKind::Bytes), Ok(80e9));
        assert_eq!(
            parse_quantity("141 GiB", QuantityKind::Bytes),
            Ok(141.0 * 1024.0 * 1024.0 * 1024.0)
        );
        assert_eq!(parse_quantity("2.5 us", QuantityKind::Time), Ok(2.5e-6));
        assert_eq!(parse_quantity("700W", QuantityKind::Power), Ok(700.0));
        assert_eq!(parse_quantity("3.78 USD/h", QuantityKind::Price), Ok(3.78));
        assert_eq!(parse_quantity("1e3 GB", QuantityKind::Bytes), Ok(1e12));
        assert_eq!(parse_quantity("1 EB/s", QuantityKind::Bandwidth), Ok(1e18));
        assert_eq!(
            parse_quantity("400 Gb/s", QuantityKind::Bandwidth),
            Ok(50e9)
        );
    }

    #[test]
    fn rejects_bad_quantities() {
        let err = parse_quantity("3.35 TB/s", QuantityKind::Bytes).unwrap_err();
        assert!(err.0.contains("unit of bandwidth"), "{err}");
        let err = parse_quantity("80", QuantityKind::Bytes).unwrap_err();
        assert!(err.0.contains("no unit"), "{err}");
        assert!(parse_quantity("0 TFLOPS", QuantityKind::Rate).is_err());
        assert!(parse_quantity("-1 TFLOPS", QuantityKind::Rate).is_err());
        assert!(parse_quantity("NaN TFLOPS", QuantityKind::Rate).is_err());
        assert!(parse_quantity("1e400 TFLOPS", QuantityKind::Rate).is_err());
        assert!(parse_quantity("5 furlongs", QuantityKind::Time).is_err());
    }

    #[test]
    fn human_scales() {
        assert_eq!(human(1.1117e-3, "s"), "1.11 ms");
        assert_eq!(human(402.65e6, "B"), "403 MB");
        assert_eq!(human(40.07e-6, "s"), "40.1 us");
        assert_eq!(human(0.8375e12, "FLOP/s"), "838 GFLOP/s");
        assert_eq!(human(999.9e6, "B"), "1.00 GB");
    }
}
