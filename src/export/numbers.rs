//! Numbers as tables show them: a count or a rate to three significant digits, and a time or
//! a rate with its 80 % band's ends beside it, in the scale the value is shown in
//! (`80.2 ms (72-95)`).

use crate::base::units::{human, prefix_of, three_significant};
use crate::study::band::Band;

/// A number as a table shows it: whole numbers as they are, others to three significant
/// digits, and from 10,000 up with an SI prefix (`12.3 k`).
pub(super) fn number(x: f64) -> String {
    if x >= 1e4 {
        human(x, "").trim_end().to_owned()
    } else if x.fract() == 0.0 {
        format!("{x}")
    } else {
        three_significant(x)
    }
}

/// A band's ends for a table, in the scale its value is shown in, to two significant digits
/// (whole numbers from 10 up): `(72-95)` beside `80.2 ms`.
pub(super) fn ends(scale: f64, (low, high): (f64, f64)) -> String {
    let two = |x: f64| {
        let x = x / scale;
        if x >= 10.0 {
            format!("{x:.0}")
        } else if x >= 1.0 {
            format!("{x:.1}")
        } else {
            format!("{x:.2}")
        }
    };
    format!("({}-{})", two(low), two(high))
}

/// A time in seconds with its band, as a table shows it: `80.2 ms (72-95)`.
pub(super) fn banded_time(t_s: f64, band: Option<Band>) -> String {
    let shown = human(t_s, "s");
    match band {
        Some(b) => format!("{shown} {}", ends(prefix_of(t_s).0, b.time(t_s))),
        None => shown,
    }
}

/// A time in seconds with its band's ends given in seconds: `80.2 ms (72-95)`.
pub(super) fn banded_time_ends(t_s: f64, (low_s, high_s): (f64, f64)) -> String {
    format!(
        "{} {}",
        human(t_s, "s"),
        ends(prefix_of(t_s).0, (low_s, high_s))
    )
}

/// A rate shown by `number` with its band: `1.23 k (0.98-1.3)`, `123 (98-134)`.
pub(super) fn banded_rate(rate: f64, shown: String, band: Option<Band>) -> String {
    match band {
        Some(b) => banded_rate_ends(rate, shown, b.rate(rate)),
        None => shown,
    }
}

/// A rate shown by `number` with its band's ends given as rates.
pub(super) fn banded_rate_ends(rate: f64, shown: String, (low, high): (f64, f64)) -> String {
    let scale = if rate >= 1e4 { prefix_of(rate).0 } else { 1.0 };
    format!("{shown} {}", ends(scale, (low, high)))
}

/// A rate shown with an SI prefix from 1000 up (`1.23 k`), with its band in that scale.
pub(super) fn banded_human_rate(rate: f64, band: Option<Band>) -> String {
    let shown = human(rate, "").trim().to_owned();
    match band {
        Some(b) => format!("{shown} {}", ends(prefix_of(rate).0, b.rate(rate))),
        None => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_shows_the_band_in_the_value_s_unit() {
        let band = Some(Band {
            low: 0.9,
            high: 1.2,
        });
        // 80.2 ms: 72.18 and 96.24 ms.
        assert_eq!(banded_time(0.0802, band), "80.2 ms (72-96)");
        assert_eq!(banded_time(0.0802, None), "80.2 ms");
        // 5 us: 4.5 and 6.0 us.
        assert_eq!(banded_time(5e-6, band), "5.00 us (4.5-6.0)");
        // 120 tokens/s: a step 1.2 times as long is 100 tokens/s, 0.9 times 133.3.
        assert_eq!(banded_rate(120.0, "120".into(), band), "120 (100-133)");
        // 12,300 tokens/s shown as 12.3 k: 10.25 k and 13.67 k.
        assert_eq!(
            banded_rate(12300.0, "12.3 k".into(), band),
            "12.3 k (10-14)"
        );
        // 1,200 tokens/s as a report shows it, 1.20 k: 1.0 k and 1.33 k.
        assert_eq!(banded_human_rate(1200.0, band), "1.20 k (1.0-1.3)");
    }
}
