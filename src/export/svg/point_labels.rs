//! The sweep chart's lines with, under `--label COLUMN`, each point's value of that column,
//! and the small text drawn beside a point where that value changes along its line: placed
//! where it overlaps no other label and no point's marker, near its point first, then
//! further out with a leader line back to the point, and left out (the count said in the
//! chart's note) where no place is free.
//!
//! Labels are interned: a point carries a `u32` into the chart's table of distinct values, and
//! a chart without a label column carries nothing beside its points.

use std::collections::HashMap;

use plotters::prelude::*;

use super::series::SeriesStyle;
use super::{plot_error, Placed};
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

/// A label's box in pixels: a whole font size per character (wider than any common face
/// draws them), a little taller than the font, so that boxes apart are labels apart whatever
/// the reader's font.
pub(super) fn label_box(text: &str) -> (i32, i32) {
    let size = LABEL_FONT.1 as i32;
    (size * text.chars().count() as i32, size + 2)
}

/// Offsets of a label's top-left corner from its point, in order of preference, for a box
/// `w` by `h`: up and to the right, clear of the marker, then the other three corners, then
/// rings further out (reached by a leader line).
fn label_offsets(w: i32, h: i32) -> Vec<(i32, i32)> {
    let mut offsets = vec![(5, -h - 4), (-w - 5, -h - 4), (5, 4), (-w - 5, 4)];
    for gap in [18, 36, 60, 90] {
        offsets.extend([
            (gap, -h - gap),
            (gap, gap),
            (-w - gap, -h - gap),
            (-w - gap, gap),
            (-w / 2, -h - gap),
            (-w / 2, gap),
            (gap, -h / 2),
            (-w - gap, -h / 2),
        ]);
    }
    offsets
}

/// Offsets past this many pixels from the point get a leader line.
const LEADER_FROM: i32 = 12;

/// Each line's labels at its changes, in the line's colour, each where it overlaps no label
/// and no marker (an empty value draws nothing; it still counts as a change, so the next
/// value along the line is drawn). Returns how many labels found no free place.
pub(super) fn draw<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    lines: &[Line],
    table: &LabelTable,
) -> Result<usize, Error>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let inside = |b: &Placed| {
        b.x >= xs.start && b.y >= ys.start && b.x + b.w <= xs.end && b.y + b.h <= ys.end
    };
    // Every marker is an obstacle: a label never hides a point.
    let mut taken: Vec<Placed> = (lines.iter().flat_map(|l| l.points.iter()))
        .map(|p| chart.backend_coord(p))
        .map(|(x, y)| Placed {
            x: x - 4,
            y: y - 4,
            w: 9,
            h: 9,
        })
        .collect();
    let mut dropped = 0;
    for (i, line) in lines.iter().enumerate() {
        let colour = SeriesStyle::nth(i).colour;
        let style = TextStyle::from(LABEL_FONT.into_font()).color(&colour);
        for (p, label) in line.changes() {
            let text = table.text(label);
            if text.is_empty() {
                continue;
            }
            let (w, h) = label_box(text);
            let (px, py) = chart.backend_coord(&p);
            let free = label_offsets(w, h)
                .into_iter()
                .map(|(dx, dy)| Placed {
                    x: px + dx,
                    y: py + dy,
                    w,
                    h,
                })
                .find(|b| inside(b) && taken.iter().all(|t| !t.overlaps(b)));
            let Some(b) = free else {
                dropped += 1;
                continue;
            };
            taken.push(b);
            let (dx, dy) = (b.x - px, b.y - py);
            // The box's nearest point to the marker's centre: a leader line runs to it when
            // the box is not beside the marker.
            let near = (0.clamp(dx, dx + w), 0.clamp(dy, dy + h));
            if near.0.abs().max(near.1.abs()) > LEADER_FROM {
                let leader = PathElement::new([(0, 0), near], colour.mix(0.6).stroke_width(1));
                chart
                    .draw_series([EmptyElement::at(p) + leader])
                    .map_err(plot_error)?;
            }
            chart
                .draw_series([
                    EmptyElement::at(p) + Text::new(text.to_owned(), (dx, dy), style.clone())
                ])
                .map_err(plot_error)?;
        }
    }
    Ok(dropped)
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
