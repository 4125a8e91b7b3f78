//! What-if chips: axes over a chip's own fields (`--chip-set memory.bandwidth=3.35TB/s,8TB/s`),
//! each value written with a unit the field takes, and the chips they derive from each base
//! chip, named by their derivation (`h200{memory.bandwidth=8TB/s}`).
//!
//! The values are read with the sweep's axis syntax ([`AxisValues`]): each range carries one
//! unit (`80GB..=288GB:+16GB`; `:x2` is a plain factor), is counted before it is made, and its
//! values are rounded to 12 significant digits, so that `0.1TB/s` steps name and price
//! `0.3TB/s`, not `0.30000000000000004TB/s`.

use crate::base::chip_field::ChipField;
use crate::base::error::Error;
use crate::base::parse::AxisValues;
use crate::base::units::parse_quantity;
use crate::core::chip::Chip;

/// Most chips the what-if axes may derive, from all base chips together: they are made before
/// the sweep starts (about a kilobyte each), so their number is bounded well below a grid's.
pub const MAX_WHAT_IF_CHIPS: usize = 10_000;

/// One value of a what-if axis.
#[derive(Debug, Clone, PartialEq)]
struct FieldValue {
    /// SI units.
    si: f64,
    /// As the chip id writes it: the number and the unit given (`9.6TB/s`).
    shown: String,
}

/// A what-if axis: a chip field and the values it takes, in the order written.
#[derive(Debug, Clone, PartialEq)]
pub struct ChipAxis {
    field: ChipField,
    values: Vec<FieldValue>,
    /// The list as written, for a scenario file that writes the axis back.
    text: String,
}

impl ChipAxis {
    /// Reads `FIELD=LIST`: a chip field ([`ChipField`]) and comma-separated values and ranges
    /// with units (`memory.capacity=80GB..=288GB:+16GB`). An unknown field, a unit the field
    /// does not take, a range with two units or a value outside the field's physical range
    /// is an error that says so.
    pub fn parse(text: &str) -> Result<ChipAxis, String> {
        let (field, list) = text.split_once('=').ok_or_else(|| {
            format!("expected FIELD=LIST (e.g. memory.bandwidth=3.35TB/s,8TB/s), found `{text}`")
        })?;
        let field: ChipField = field.parse()?;
        let mut values = Vec::new();
        for item in list.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(format!("empty value in `{list}`"));
            }
            let (numbers, unit) = without_unit(item)?;
            let axis = AxisValues::parse(&numbers).map_err(|e| format!("`{item}`: {e}"))?;
            if values.len() + axis.len() > MAX_WHAT_IF_CHIPS {
                return Err(format!(
                    "`{list}` lists more than {MAX_WHAT_IF_CHIPS} values, the most what-if chips a sweep may make"
                ));
            }
            for number in axis.expand() {
                values.push(value(field, round(number), unit)?);
            }
        }
        Ok(ChipAxis {
            field,
            values,
            text: list.trim().to_owned(),
        })
    }

    /// The chip field the axis sets (`memory.bandwidth`).
    pub fn field(&self) -> ChipField {
        self.field
    }

    /// How many values the axis lists.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the axis lists no value (never, once read).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The list as written.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// How many chips `axes` derive from `chips` base chips (`chips` without an axis); `None` past
/// [`MAX_WHAT_IF_CHIPS`] when there is an axis.
pub fn what_if_len(chips: usize, axes: &[ChipAxis]) -> Option<usize> {
    let derived = axes.iter().try_fold(chips, |n, a| n.checked_mul(a.len()));
    derived.filter(|n| axes.is_empty() || *n <= MAX_WHAT_IF_CHIPS)
}

/// Why the axes derive too many chips.
pub fn too_many_what_if_chips(chips: usize) -> String {
    format!(
        "the --chip-set axes derive more than {MAX_WHAT_IF_CHIPS} chips from {chips} base chip(s); narrow an axis"
    )
}

/// The chips `axes` derive from each of `chips`, base chip outermost, then the axes in the
/// order given (the first outermost), each axis's values in order; `chips` as they are when
/// there is no axis. A field set twice, too many chips, or a derived chip the engine refuses
/// (a value outside its range, a cache bandwidth without a cache) is an error.
pub fn what_if_chips(chips: Vec<Chip>, axes: &[ChipAxis]) -> Result<Vec<Chip>, Error> {
    if axes.is_empty() {
        return Ok(chips);
    }
    for (i, axis) in axes.iter().enumerate() {
        if axes[..i].iter().any(|a| a.field == axis.field) {
            return Err(Error::value(format!(
                "chip field `{}` is set twice; give all its values in one --chip-set",
                axis.field
            )));
        }
    }
    let total = what_if_len(chips.len(), axes)
        .ok_or_else(|| Error::value(too_many_what_if_chips(chips.len())))?;
    let per_chip = total / chips.len().max(1);
    let mut derived = Vec::with_capacity(total);
    for base in chips {
        for index in 0..per_chip {
            derived.push(derive(&base, axes, index)?);
        }
    }
    Ok(derived)
}

/// Derived chip `index` of `base`: the axes' values picked in mixed radix, the last axis
/// least significant.
fn derive(base: &Chip, axes: &[ChipAxis], mut index: usize) -> Result<Chip, Error> {
    let mut picks = vec![0; axes.len()];
    for (pick, axis) in picks.iter_mut().zip(axes).rev() {
        *pick = index % axis.len();
        index /= axis.len();
    }
    let mut chip = base.clone();
    let mut names = Vec::with_capacity(axes.len());
    for (pick, axis) in picks.iter().zip(axes) {
        let value = &axis.values[*pick];
        chip = chip.with_field(axis.field, value.si)?;
        names.push(format!("{}={}", axis.field, value.shown));
    }
    let id = format!("{}{{{}}}", base.id(), names.join(","));
    Ok(chip.with_id(id))
}

/// A value of `field`: `number` in `unit`, checked against the field's range.
fn value(field: ChipField, number: f64, unit: &str) -> Result<FieldValue, String> {
    let shown = format!("{number}{unit}");
    let si = parse_quantity(&format!("{number} {unit}"), field.kind())
        .map_err(|e| format!("{field}: {e}"))?;
    let range = field.range();
    range
        .check(si)
        .map_err(|e| format!("{field}={shown} is {e}"))?;
    Ok(FieldValue { si, shown })
}

/// `x` to 12 significant digits, so that sums of decimal steps come out as written.
fn round(x: f64) -> f64 {
    format!("{x:.11e}").parse().unwrap_or(x)
}

/// An item (`80GB..=288GB:+16GB`, `3.35TB/s`) as the axis syntax reads it (`80..=288:+16`),
/// and its one unit. Each bound and an additive step may carry the unit; those that do must
/// agree, and one must.
fn without_unit(item: &str) -> Result<(String, &str), String> {
    let mut unit: Option<&str> = None;
    let mut strip = |part, plain| strip_unit(item, part, plain, &mut unit);
    let numbers = match item.split_once("..") {
        None => strip(item, false)?,
        Some((start, rest)) => {
            let (dots, rest) = match rest.strip_prefix('=') {
                Some(r) => ("..=", r),
                None => ("..", rest),
            };
            let (end, step) = match rest.split_once(':') {
                Some((end, step)) => (end, Some(step.trim())),
                None => (rest, None),
            };
            let mut text = format!("{}{dots}{}", strip(start, false)?, strip(end, false)?);
            if let Some(step) = step {
                let (sign, by) = step.split_at(step.chars().next().map_or(0, char::len_utf8));
                let geometric = matches!(sign, "x" | "*");
                text = format!("{text}:{sign}{}", strip(by, geometric)?);
            }
            text
        }
    };
    let unit = unit.ok_or_else(|| {
        format!("`{item}` has no unit; write one the field takes, as a chip file does (`80GB`, `3.35TB/s`, `989TFLOPS`)")
    })?;
    Ok((numbers, unit))
}

/// The number of `part` of `item`; its unit, if it has one, is the item's `unit` (which
/// must agree with any seen before); a geometric factor (`plain`) has none.
fn strip_unit<'a>(
    item: &str,
    part: &'a str,
    plain: bool,
    unit: &mut Option<&'a str>,
) -> Result<String, String> {
    let (number, u) = split_unit(part);
    if u.is_empty() {
        return Ok(number.to_owned());
    }
    if plain {
        return Err(format!(
            "`{item}`: a geometric step is a plain factor (`:x2`), without a unit"
        ));
    }
    match *unit {
        Some(seen) if seen != u => Err(format!(
            "`{item}` mixes the units `{seen}` and `{u}`; write a range in one unit"
        )),
        _ => {
            *unit = Some(u);
            Ok(number.to_owned())
        }
    }
}

/// `3.35 TB/s` as `("3.35", "TB/s")`: the number is digits, `.`, `_`, signs and an exponent
/// (an `e` followed by a digit or a sign), the rest is the unit.
fn split_unit(part: &str) -> (&str, &str) {
    let part = part.trim();
    let bytes = part.as_bytes();
    let mut end = 0;
    while end < bytes.len() {
        let c = bytes[end];
        let exponent = matches!(c, b'e' | b'E')
            && end > 0
            && bytes
                .get(end + 1)
                .is_some_and(|n| n.is_ascii_digit() || matches!(n, b'+' | b'-'));
        if c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'+' | b'-') || exponent {
            end += 1;
        } else {
            break;
        }
    }
    (part[..end].trim(), part[end..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Vec<String> {
        let axis = ChipAxis::parse(text).unwrap();
        axis.values.iter().map(|v| v.shown.clone()).collect()
    }

    #[test]
    fn lists_and_ranges_with_units() {
        assert_eq!(
            shown("memory.bandwidth=3.35TB/s, 4.8 TB/s,8TB/s"),
            ["3.35TB/s", "4.8TB/s", "8TB/s"]
        );
        let capacity = shown("memory.capacity=80GB..=288GB:+16GB");
        assert_eq!(capacity.len(), 14); // (288 - 80) / 16 + 1
        assert_eq!(
            (capacity[1].as_str(), capacity[13].as_str()),
            ("96GB", "288GB")
        );
        assert_eq!(
            shown("memory.capacity=80..=320GB:x2"),
            ["80GB", "160GB", "320GB"]
        );
        assert_eq!(
            shown("memory.bandwidth=0.1TB/s..=0.3TB/s:+0.1TB/s"),
            ["0.1TB/s", "0.2TB/s", "0.3TB/s"]
        );
        let axis = ChipAxis::parse("launch=1.5us").unwrap();
        assert_eq!(axis.values[0].si, 1.5e-6);
        let axis = ChipAxis::parse("memory.capacity=141GiB").unwrap();
        assert_eq!(axis.values[0].si, 141.0 * 1024.0 * 1024.0 * 1024.0);
    }

    #[test]
    fn bad_axes_say_why() {
        let refused = |text: &str| ChipAxis::parse(text).unwrap_err();
        assert!(refused("memory.bandwidth=3.35TB").contains("unit of size"));
        assert!(refused("memory.bandwidth=3.35").contains("no unit"));
        assert!(refused("memory.capacity=80GB..=1TB").contains("mixes the units"));
        assert!(refused("memory.capacity=80GB..=320GB:x2GB").contains("plain factor"));
        assert!(refused("memory.bandwidth=2000TB/s").contains("out of range"));
        assert!(refused("memory.bandwith=8TB/s").contains("`memory.bandwidth`?"));
        assert!(refused("memory.bandwidth").contains("FIELD=LIST"));
        assert!(refused("memory.capacity=1GB..=100000GB:+1GB").contains("more than 10000"));
    }
}
