//! The 80 % band as `validate --cross-validate` reports it (each group's band and the nested
//! coverage per kind) and the residual file it is calibrated from (`validation/band.csv`).

use std::fmt::Write as _;
use std::io::{self, Write};

use super::table::{align_right, new_table};
use crate::base::units::{human, percent, prefix_of};
use crate::study::band::{Band, Calibration, Coverage, Residual, Scope, MIN_SOURCES};

/// The bands of `calibration`, then how many held-out rows fell inside the band calibrated
/// without their source.
pub fn write_band_report(
    out: &mut dyn Write,
    calibration: &Calibration,
    coverage: &[Coverage],
) -> io::Result<()> {
    writeln!(
        out,
        "80% band: the 10th and 90th percentiles of the held-out ln(measured / predicted step time), each source weighing as one, per kind, and per family within a kind, with {MIN_SOURCES} sources or more"
    )?;
    let mut bands = new_table(&["band", "sources", "rows", "low", "high"]);
    for g in &calibration.groups {
        let scope = match &g.scope {
            Scope::All => "all".to_owned(),
            Scope::Kind(k) => format!("kind {}", k.name()),
            Scope::KindFamily(k, f) => format!("kind {} family {f}", k.name()),
        };
        bands.add_row(vec![
            scope,
            g.sources.to_string(),
            g.rows.to_string(),
            format!("x{:.3}", g.band.low),
            format!("x{:.3}", g.band.high),
        ]);
    }
    align_right(&mut bands, 1);
    writeln!(out, "{bands}")?;
    let mut table = new_table(&[
        "nested coverage",
        "rows",
        "inside",
        "share",
        "above",
        "below",
    ]);
    for c in coverage {
        table.add_row(vec![
            c.kind
                .map_or("all".to_owned(), |k| format!("kind {}", k.name())),
            c.rows.to_string(),
            c.inside.to_string(),
            percent(c.share()),
            c.above.to_string(),
            (c.rows - c.inside - c.above).to_string(),
        ]);
    }
    align_right(&mut table, 1);
    writeln!(out, "{table}")?;
    writeln!(
        out,
        "each source's rows against the band calibrated on the other sources' residuals; above: measured slower than the band"
    )
}

/// The residual file: a comment saying what it is, the header, a line per row.
pub fn residuals_csv(residuals: &[Residual], cases_name: &str) -> String {
    let mut text = format!(
        "# Cross-validated residuals of {cases_name}, written by `stepcost validate {cases_name} --cross-validate --residuals FILE`:\n\
         # each row predicted with constants fitted without its source; ln_time_ratio is ln(measured / predicted)\n\
         # of the step's time (a rate's ratio inverted). The 80% band of every expected-mode number is taken from them.\n\
         id,kind,family,ln_time_ratio\n"
    );
    for r in residuals {
        let _ = writeln!(
            text,
            "{},{},{},{}",
            r.id,
            r.kind.name(),
            r.family,
            r.ln_time_ratio
        );
    }
    text
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
