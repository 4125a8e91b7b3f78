//! The sweep chart's lines with, under `--label COLUMN`, each point's value of that column,
//! and the small text drawn beside a point where that value changes along its line.
//!
//! Labels are interned: a point carries a `u32` into the chart's table of distinct values, and
//! a chart without a label column carries nothing beside its points.

use std::collections::HashMap;

use plotters::prelude::*;

use super::{plot_error, CHIP_COLOURS};
use crate::base::error::Error;

/// One line of the chart: its series values joined by `, ` (empty without series), its points
/// and, with a label column, each point's label as an index into [`LabelTable`] (empty
/// without one).
pub(super) struct Line {
    pub(super) key: String,
    pub(super) points: Vec<(f64, f64)>,
    pub(super) labels: Vec<u32>,
    /// The 80 % band at each point that has one, as `(x, low, high)` (`svg::whiskers`).
    pub(super) whiskers: Vec<(f64, f64, f64)>,
}

impl Line {
    /// Sorts the points by `x`, each label staying with its point; stable, so rows with the
    /// same `x` keep the CSV's order.
    pub(super) fn sort(&mut self) {
        if self.labels.is_empty() {
            self.points.sort_by(|a, b| a.0.total_cmp(&b.0));
            return;
        }
        let mut both: Vec<((f64, f64), u32)> = (self.points.iter().copied())
            .zip(self.labels.iter().copied())
            .collect();
        both.sort_by(|a, b| a.0 .0.total_cmp(&b.0 .0));
        (self.points, self.labels) = both.into_iter().unzip();
    }

    /// The points whose label differs from the previous point's along the line, the first
    /// point always among them, with their label.
    pub(super) fn changes(&self) -> impl Iterator<Item = ((f64, f64), u32)> + '_ {
        let mut previous = None;
        (self.points.iter().copied())
            .zip(self.labels.iter().copied())
            .filter(move |&(_, label)| previous.replace(label) != Some(label))
    }
}

/// The distinct values of the label column, each stored once.
#[derive(Default)]
pub(super) struct LabelTable {
    texts: Vec<String>,
    index: HashMap<String, u32>,
}

impl LabelTable {
    /// The index of `text`, added on first sight; an error past 2^32 distinct values (more
    /// than a CSV under the size limit can hold, but never a silent wrap).
    pub(super) fn intern(&mut self, text: &str) -> Result<u32, Error> {
        if let Some(&i) = self.index.get(text) {
            return Ok(i);
        }
        let i = u32::try_from(self.texts.len()).map_err(|_| {
            Error::Plot("--label: more distinct values than a chart can hold".into())
        })?;
        self.texts.push(text.to_owned());
        self.index.insert(text.to_owned(), i);
        Ok(i)
    }

    fn text(&self, i: u32) -> &str {
        self.texts.get(i as usize).map_or("", String::as_str)
    }
}

/// Size of a point's label: a little under the legend's 13 px, so it reads as an annotation.
const LABEL_FONT: (&str, u32) = ("sans-serif", 11);

/// Offset of a label's top-left corner from its point, in pixels: up and to the right, clear
/// of the 3 px marker.
const LABEL_OFFSET: (i32, i32) = (5, -15);

/// Each line's labels at its changes, in the line's colour; an empty value draws nothing
/// (it still counts as a change, so the next value along the line is drawn).
pub(super) fn draw<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    lines: &[Line],
    table: &LabelTable,
) -> Result<(), Error>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, line) in lines.iter().enumerate() {
        let colour = CHIP_COLOURS[i % CHIP_COLOURS.len()];
        let style = TextStyle::from(LABEL_FONT.into_font()).color(&colour);
        let texts = (line.changes())
            .map(|(p, label)| (p, table.text(label).to_owned()))
            .filter(|(_, text)| !text.is_empty())
            .map(|(p, text)| EmptyElement::at(p) + Text::new(text, LABEL_OFFSET, style.clone()));
        chart.draw_series(texts).map_err(plot_error)?;
    }
    Ok(())
}

/// The corner of the plot the legend covers fewest points in: of the four boxes a third of
/// each axis wide at the corners (a log axis measured in logs), the emptiest; upper left on a
/// tie, then upper right, lower right, lower left.
pub(super) fn legend_corner(
    lines: &[Line],
    log_x: bool,
    log_y: bool,
) -> plotters::chart::SeriesLabelPosition {
    use plotters::chart::SeriesLabelPosition as At;
    let scale = |v: f64, log: bool| if log { v.ln() } else { v };
    let points = || {
        (lines.iter().flat_map(|l| l.points.iter()))
            .map(|&(x, y)| (scale(x, log_x), scale(y, log_y)))
    };
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in points() {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    let unit = |v: f64, lo: f64, hi: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let mut counts = [0usize; 4];
    for (x, y) in points() {
        let (left, right) = (unit(x, x0, x1) < 1.0 / 3.0, unit(x, x0, x1) > 2.0 / 3.0);
        let (low, high) = (unit(y, y0, y1) < 1.0 / 3.0, unit(y, y0, y1) > 2.0 / 3.0);
        for (i, inside) in [left && high, right && high, right && low, left && low]
            .into_iter()
            .enumerate()
        {
            counts[i] += usize::from(inside);
        }
    }
    let corners = [At::UpperLeft, At::UpperRight, At::LowerRight, At::LowerLeft];
    let best = (0..4).min_by_key(|&i| (counts[i], i)).unwrap_or(0);
    corners.into_iter().nth(best).unwrap_or(At::UpperLeft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_goes_to_the_emptiest_corner() {
        use plotters::chart::SeriesLabelPosition as At;
        let line = |points: Vec<(f64, f64)>| Line {
            whiskers: Vec::new(),
            key: String::new(),
            points,
            labels: Vec::new(),
        };
        // Falling from the upper left to the lower right: both other corners are empty, and
        // upper right comes first.
        let falling = [line(vec![(0.0, 10.0), (5.0, 5.0), (10.0, 0.0)])];
        assert!(matches!(
            legend_corner(&falling, false, false),
            At::UpperRight
        ));
        // Rising, as tokens/s against batch: upper left is empty.
        let rising = [line(vec![(0.0, 0.0), (5.0, 5.0), (10.0, 10.0)])];
        assert!(matches!(
            legend_corner(&rising, false, false),
            At::UpperLeft
        ));
        // A frontier on a log axis: points along the top and down the right side.
        let frontier = [line(vec![
            (1.0, 1000.0),
            (5.0, 900.0),
            (9.0, 500.0),
            (10.0, 1.0),
        ])];
        assert!(matches!(
            legend_corner(&frontier, false, true),
            At::LowerLeft
        ));
    }

    #[test]
    fn labels_follow_their_points_and_show_at_changes() {
        let mut table = LabelTable::default();
        let ids: Vec<u32> = ["b", "a", "a", "b", "a"]
            .iter()
            .map(|t| table.intern(t).unwrap())
            .collect();
        // x out of order: sorted, the labels read a a b b a
        let mut line = Line {
            whiskers: Vec::new(),
            key: String::new(),
            points: vec![(3.0, 0.0), (1.0, 0.0), (2.0, 0.0), (4.0, 0.0), (5.0, 0.0)],
            labels: ids,
        };
        line.sort();
        let xs: Vec<f64> = line.points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 3.0, 4.0, 5.0]);
        let shown: Vec<(f64, &str)> = line.changes().map(|(p, l)| (p.0, table.text(l))).collect();
        assert_eq!(shown, [(1.0, "a"), (3.0, "b"), (5.0, "a")]);
    }
}
