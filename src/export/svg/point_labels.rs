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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_their_points_and_show_at_changes() {
        let mut table = LabelTable::default();
        let ids: Vec<u32> = ["b", "a", "a", "b", "a"]
            .iter()
            .map(|t| table.intern(t).unwrap())
            .collect();
        // x out of order: sorted, the labels read a a b b a
        let mut line = Line {
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
