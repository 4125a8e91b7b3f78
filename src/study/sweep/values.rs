//! Axis values as a person writes them: comma-separated numbers and ranges (`1..=256:x2`,
//! `128..=4096:+128`), expanded into the list a sweep steps through.

/// Most values one axis may list.
pub const MAX_AXIS_VALUES: usize = 10_000_000;

/// Parses an axis: comma-separated numbers and ranges. A range is `a..=b` (inclusive) or
/// `a..b` (exclusive), stepping by 1, or by `:+s` (arithmetic, `128..=4096:+128`) or `:xf`
/// (geometric, `1..=256:x2`).
pub fn parse_values(text: &str) -> Result<Vec<f64>, String> {
    let mut values = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!("empty value in `{text}`"));
        }
        match item.split_once("..") {
            None => values.push(number(item)?),
            Some((start, rest)) => range(item, start, rest, &mut values)?,
        }
        if values.len() > MAX_AXIS_VALUES {
            return Err(format!("`{text}` lists more than {MAX_AXIS_VALUES} values"));
        }
    }
    Ok(values)
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

fn range(item: &str, start: &str, rest: &str, values: &mut Vec<f64>) -> Result<(), String> {
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
    // Steps are taken from the start (start + i x step, start x factor^i), not accumulated,
    // so long ranges do not drift; the end is compared with a relative tolerance.
    let past = |v: f64| {
        let slack = 1e-9 * end.abs().max(1.0);
        if inclusive {
            v > end + slack
        } else {
            v >= end - slack
        }
    };
    let bad_step = || format!("`{item}`: a step is `:+N` (add N > 0) or `:xF` (multiply by F > 1)");
    let next: Box<dyn Fn(usize) -> f64> = match step {
        None => Box::new(move |i| start + i as f64),
        Some(s) if s.starts_with('+') => {
            let step = number(&s[1..]).map_err(|_| bad_step())?;
            if step <= 0.0 {
                return Err(bad_step());
            }
            Box::new(move |i| start + i as f64 * step)
        }
        Some(s) if s.starts_with(['x', '*']) => {
            let factor = number(&s[1..]).map_err(|_| bad_step())?;
            if factor <= 1.0 || start <= 0.0 {
                return Err(format!(
                    "{}; a geometric range needs a start above 0",
                    bad_step()
                ));
            }
            Box::new(move |i| start * factor.powi(i as i32))
        }
        Some(_) => return Err(bad_step()),
    };
    for i in 0.. {
        let v = next(i);
        if past(v) {
            break;
        }
        values.push(v);
        if values.len() > MAX_AXIS_VALUES {
            return Err(format!("`{item}` lists more than {MAX_AXIS_VALUES} values"));
        }
    }
    Ok(())
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
}
