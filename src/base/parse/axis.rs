//! Axis values as a person writes them: comma-separated numbers and ranges (`1..=256:x2`,
//! `128..=4096:+128`), read into an [`AxisValues`] whose length is known before any value is
//! made, so that a sweep's size is checked before its axes take memory.

/// Most values one axis may list.
pub const MAX_AXIS_VALUES: usize = 10_000_000;

/// An axis as written: numbers and ranges, each counted when read but expanded only by
/// [`AxisValues::expand`].
#[derive(Debug, Clone, PartialEq)]
pub struct AxisValues {
    items: Vec<Item>,
    len: usize,
    /// As written, for a scenario file that writes the axis back.
    text: String,
}

/// One comma-separated item of an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Item {
    Value(f64),
    /// `start + i x step` for `i` in `0..count`.
    Arithmetic {
        start: f64,
        step: f64,
        count: usize,
    },
    /// `start x factor^i` for `i` in `0..count`.
    Geometric {
        start: f64,
        factor: f64,
        count: usize,
    },
}

impl Item {
    fn len(&self) -> usize {
        match *self {
            Item::Value(_) => 1,
            Item::Arithmetic { count, .. } | Item::Geometric { count, .. } => count,
        }
    }

    /// Value `i` (below `len`). Steps are taken from the start, not accumulated, so long
    /// ranges do not drift.
    fn value(&self, i: usize) -> f64 {
        match *self {
            Item::Value(v) => v,
            Item::Arithmetic { start, step, .. } => arithmetic(start, step, i),
            Item::Geometric { start, factor, .. } => geometric(start, factor, i),
        }
    }
}

fn arithmetic(start: f64, step: f64, i: usize) -> f64 {
    start + i as f64 * step
}

fn geometric(start: f64, factor: f64, i: usize) -> f64 {
    // `i` is at most MAX_AXIS_VALUES, well inside i32.
    start * factor.powi(i as i32)
}

impl AxisValues {
    /// Reads an axis: comma-separated numbers and ranges. A range is `a..=b` (inclusive) or
    /// `a..b` (exclusive), stepping by 1, or by `:+s` (arithmetic, `128..=4096:+128`) or `:xf`
    /// (geometric, `1..=256:x2`). An axis of more than [`MAX_AXIS_VALUES`] values is refused
    /// without making them.
    pub fn parse(text: &str) -> Result<AxisValues, String> {
        let mut items = Vec::new();
        let mut len = 0;
        for item in text.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(format!("empty value in `{text}`"));
            }
            let read = match item.split_once("..") {
                None => Item::Value(number(item)?),
                Some((start, rest)) => range(item, start, rest, MAX_AXIS_VALUES - len)?,
            };
            len += read.len();
            if len > MAX_AXIS_VALUES {
                return Err(format!("`{text}` lists more than {MAX_AXIS_VALUES} values"));
            }
            items.push(read);
        }
        Ok(AxisValues {
            items,
            len,
            text: text.trim().to_owned(),
        })
    }

    /// The axis as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How many values the axis lists.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the axis lists no value (never, once read).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The values, in the order written.
    pub fn expand(&self) -> Vec<f64> {
        let mut values = Vec::with_capacity(self.len);
        for item in &self.items {
            values.extend((0..item.len()).map(|i| item.value(i)));
        }
        values
    }
}

/// Parses and expands an axis (see [`AxisValues::parse`]).
pub fn parse_values(text: &str) -> Result<Vec<f64>, String> {
    AxisValues::parse(text).map(|axis| axis.expand())
}

fn number(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("`{text}` is not a finite number"))
    }
}

/// Reads the range `item` (`start..rest`), counting its values; more than `room` is an error.
fn range(item: &str, start: &str, rest: &str, room: usize) -> Result<Item, String> {
    let (inclusive, rest) = match rest.strip_prefix('=') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let (end, step) = match rest.split_once(':') {
        Some((end, step)) => (end, Some(step.trim())),
        None => (rest, None),
    };
    let (start, end) = (number(start)?, number(end)?);
    if end < start {
        return Err(format!("`{item}`: the range ends before it starts"));
    }
    // The end is compared with a relative tolerance.
    let past = |v: f64| {
        let slack = 1e-9 * end.abs().max(1.0);
        if inclusive {
            v > end + slack
        } else {
            v >= end - slack
        }
    };
    let bad_step = || format!("`{item}`: a step is `:+N` (add N > 0) or `:xF` (multiply by F > 1)");
    let too_many = || format!("`{item}` lists more than {MAX_AXIS_VALUES} values");
    let range = match step {
        None => Item::Arithmetic {
            start,
            step: 1.0,
            count: count(|i| past(arithmetic(start, 1.0, i)), room).ok_or_else(too_many)?,
        },
        Some(s) if s.starts_with('+') => {
            let step = number(&s[1..]).map_err(|_| bad_step())?;
            if step <= 0.0 {
                return Err(bad_step());
            }
            let count = count(|i| past(arithmetic(start, step, i)), room);
            Item::Arithmetic {
                start,
                step,
                count: count.ok_or_else(too_many)?,
            }
        }
        Some(s) if s.starts_with(['x', '*']) => {
            let factor = number(&s[1..]).map_err(|_| bad_step())?;
            if factor <= 1.0 || start <= 0.0 {
                return Err(format!(
                    "{}; a geometric range needs a start above 0",
                    bad_step()
                ));
            }
            let count = count(|i| past(geometric(start, factor, i)), room);
            Item::Geometric {
                start,
                factor,
                count: count.ok_or_else(too_many)?,
            }
        }
        Some(_) => return Err(bad_step()),
    };
    Ok(range)
}

/// The values of a range before the first one `past` its end, found by bisection (the
/// values grow with `i`, so `past` is false then true); `None` when that is more than `room`.
fn count(past: impl Fn(usize) -> bool, room: usize) -> Option<usize> {
    if !past(room) {
        return None;
    }
    // past(hi) holds; find the first such index in 0..=hi.
    let (mut lo, mut hi) = (0, room);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if past(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_ranges() {
        assert_eq!(parse_values("1,2,4"), Ok(vec![1.0, 2.0, 4.0]));
        assert_eq!(parse_values("1..=256:x2").unwrap().len(), 9);
        assert_eq!(parse_values("1..=256:x2").unwrap()[8], 256.0);
        assert_eq!(parse_values("1..=4"), Ok(vec![1.0, 2.0, 3.0, 4.0]));
        assert_eq!(parse_values("1..4"), Ok(vec![1.0, 2.0, 3.0]));
        let arithmetic = parse_values("128..=4096:+128").unwrap();
        assert_eq!(arithmetic.len(), 32);
        assert_eq!(arithmetic[31], 4096.0);
        assert_eq!(parse_values("0.1..=0.3:+0.1").unwrap().len(), 3);
        assert_eq!(
            parse_values("1, 8..=32:x2, 100"),
            Ok(vec![1.0, 8.0, 16.0, 32.0, 100.0])
        );
    }

    #[test]
    fn rejects_bad_axes() {
        for bad in [
            "", "1,,2", "a", "4..=1", "1..=8:x1", "1..=8:+0", "0..=8:x2", "1..=8:/2", "1..=1e9",
        ] {
            assert!(parse_values(bad).is_err(), "{bad}");
        }
    }

    /// The values one by one from the start until one is past the end: what the count must
    /// agree with.
    fn stepped(start: f64, end: f64, inclusive: bool, next: impl Fn(f64, usize) -> f64) -> usize {
        let slack = 1e-9 * end.abs().max(1.0);
        (0..)
            .take_while(|&i| {
                let v = next(start, i);
                if inclusive {
                    v <= end + slack
                } else {
                    v < end - slack
                }
            })
            .count()
    }

    #[test]
    fn counts_agree_with_stepping_one_by_one() {
        for (start, end, step) in [
            (0.1, 0.3, 0.1),
            (0.0, 1.0, 0.1),
            (1.0, 1.0, 1.0),
            (128.0, 4096.0, 128.0),
            (1e-9, 1e-6, 1e-9),
            (-5.0, 5.0, 0.3),
            (1e15, 1e15 + 1000.0, 7.0),
        ] {
            for inclusive in [true, false] {
                let dots = if inclusive { "..=" } else { ".." };
                let text = format!("{start}{dots}{end}:+{step}");
                let expected = stepped(start, end, inclusive, |s, i| arithmetic(s, step, i));
                let axis = AxisValues::parse(&text).unwrap();
                assert_eq!(axis.len(), expected, "{text}");
                assert_eq!(axis.expand().len(), expected, "{text}");
            }
        }
        for (start, end, factor) in [(1.0, 256.0, 2.0), (3.0, 1e300, 1.5), (0.5, 0.5, 10.0)] {
            let text = format!("{start}..={end}:x{factor}");
            let expected = stepped(start, end, true, |s, i| geometric(s, factor, i));
            assert_eq!(AxisValues::parse(&text).unwrap().len(), expected, "{text}");
        }
    }

    #[test]
    fn long_axes_are_counted_not_made() {
        let axis = AxisValues::parse("1..=10000000").unwrap();
        assert_eq!(axis.len(), MAX_AXIS_VALUES);
        for huge in [
            "1..=1e9:+1",
            "1..=1e300:x1.0000001",
            "0..=1:+1e-300",
            "1e20..=1e20:+1",
        ] {
            let refused = AxisValues::parse(huge).unwrap_err();
            assert!(refused.contains("more than 10000000 values"), "{refused}");
        }
        let refused = AxisValues::parse("1..=9999999, 5, 6").unwrap_err();
        assert!(
            refused.starts_with("`1..=9999999, 5, 6` lists more than"),
            "{refused}"
        );
    }
}
