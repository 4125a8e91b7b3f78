//! Whiskers on a sweep chart: where the CSV holds the 80 % band of the plotted column
//! (`step_time_low_us` and `step_time_high_us` beside `step_time_us`, `tokens_per_s_low` and
//! `tokens_per_s_high` beside `tokens_per_s`: expected-mode rows), a vertical bar from the
//! band's low end to its high end at each point. Roofline rows leave those cells empty and get
//! none.

use plotters::prelude::*;

use super::plot_error;
use crate::base::error::Error;

/// The columns of `y`'s band in `header`, where it has both.
pub(super) fn band_columns(header: &[String], y: &str) -> Option<(usize, usize)> {
    let (low, high) = match y.strip_suffix("_us") {
        Some(stem) => (format!("{stem}_low_us"), format!("{stem}_high_us")),
        None => (format!("{y}_low"), format!("{y}_high")),
    };
    let at = |name: &str| header.iter().position(|h| h == name);
    at(&low).zip(at(&high))
}

/// A row's whisker at `x`: its band's ends, where both are numbers a `log` axis can show.
pub(super) fn of(
    record: &csv::StringRecord,
    (low, high): (usize, usize),
    x: f64,
    log: bool,
) -> Option<(f64, f64, f64)> {
    let value = |i: usize| {
        let v = record.get(i)?.parse::<f64>().ok()?;
        (v.is_finite() && (!log || v > 0.0)).then_some(v)
    };
    Some((x, value(low)?, value(high)?))
}

/// Each whisker of a line, in its colour, with short caps.
pub(super) fn draw<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    whiskers: &[(f64, f64, f64)],
    colour: RGBColor,
) -> Result<(), Error>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let style = colour.stroke_width(1);
    chart
        .draw_series(
            (whiskers.iter()).map(|&(x, lo, hi)| PathElement::new([(x, lo), (x, hi)], style)),
        )
        .map_err(plot_error)?;
    for end in [1, 2] {
        let cap = |w: &(f64, f64, f64)| {
            let y = if end == 1 { w.1 } else { w.2 };
            EmptyElement::at((w.0, y)) + PathElement::new([(-4, 0), (4, 0)], style)
        };
        chart
            .draw_series(whiskers.iter().map(cap))
            .map_err(plot_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_s_band_is_named_after_it() {
        let header: Vec<String> = ["step_time_us", "step_time_low_us", "step_time_high_us"]
            .map(str::to_owned)
            .to_vec();
        assert_eq!(band_columns(&header, "step_time_us"), Some((1, 2)));
        assert_eq!(band_columns(&header, "tokens_per_s"), None);
        let record = csv::StringRecord::from(vec!["10", "9", "12"]);
        assert_eq!(of(&record, (1, 2), 4.0, true), Some((4.0, 9.0, 12.0)));
        let roofline = csv::StringRecord::from(vec!["10", "", ""]);
        assert_eq!(of(&roofline, (1, 2), 4.0, false), None);
    }
}
