//! How a sweep chart tells its lines apart: by colour while the palette lasts, then by the
//! marker on each point and the line's dash as well, so that no two of the first
//! 72 lines (six colours times twelve marker and dash pairs) are drawn alike.

use std::iter::{once, Once};

use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

use super::{plot_error, CHIP_COLOURS};
use crate::base::error::Error;

/// The marker drawn on each point of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    Circle,
    Square,
    Triangle,
    Cross,
}

/// The stroke of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dash {
    Solid,
    Dashed,
    Dotted,
}

const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Cross,
];
const DASHES: [Dash; 3] = [Dash::Solid, Dash::Dashed, Dash::Dotted];

/// Lines drawn with pairwise different (colour, marker, dash): the palette's colours times
/// the marker and dash pairs a round of the palette steps through (4 markers and 3 dashes
/// step together and repeat after 12 rounds).
#[cfg(test)]
pub(super) const DISTINCT_SERIES: usize = CHIP_COLOURS.len() * 12;

/// The look of one line of a chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SeriesStyle {
    pub(super) colour: RGBColor,
    pub(super) marker: Marker,
    pub(super) dash: Dash,
}

impl SeriesStyle {
    /// The look of the chart's `i`-th line: the palette's colours in turn (a circle on each
    /// point, a solid stroke), and each later round of the palette with the next marker and
    /// the next dash.
    pub(super) fn nth(i: usize) -> SeriesStyle {
        let round = i / CHIP_COLOURS.len();
        SeriesStyle {
            colour: CHIP_COLOURS[i % CHIP_COLOURS.len()],
            marker: MARKERS[round % MARKERS.len()],
            dash: DASHES[round % DASHES.len()],
        }
    }

    /// The line through `points` in this style, named `label` in the legend.
    pub(super) fn draw_line<X, Y>(
        &self,
        chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
        points: &[(f64, f64)],
        label: Option<String>,
    ) -> Result<(), Error>
    where
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        let stroke = self.colour.stroke_width(2);
        let points = points.iter().copied();
        let series = match self.dash {
            Dash::Solid => chart.draw_series(LineSeries::new(points, stroke)),
            Dash::Dashed => chart.draw_series(DashedLineSeries::new(points, 9, 5, stroke)),
            Dash::Dotted => chart.draw_series(DashedLineSeries::new(points, 2, 4, stroke)),
        }
        .map_err(plot_error)?;
        if let Some(label) = label {
            let style = *self;
            (series.label(label)).legend(move |at| Mark {
                at,
                style,
                swatch: true,
            });
        }
        Ok(())
    }

    /// This style's marker on each of `points`.
    pub(super) fn draw_markers<X, Y>(
        &self,
        chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
        points: &[(f64, f64)],
    ) -> Result<(), Error>
    where
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        let style = *self;
        let marks = points.iter().map(|&at| Mark {
            at,
            style,
            swatch: false,
        });
        chart.draw_series(marks).map_err(plot_error)?;
        Ok(())
    }
}

/// A style's marker at `at` (a point of the chart), or with `swatch` its legend entry: 20 px
/// of the stroke from `at` (in pixels), the marker in its middle unless it is the palette's
/// plain circle, which every line of the first round shares.
struct Mark<C> {
    at: C,
    style: SeriesStyle,
    swatch: bool,
}

impl<'a, C> PointCollection<'a, C> for &'a Mark<C> {
    type Point = &'a C;
    type IntoIter = Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Mark<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = points.next() else {
            return Ok(());
        };
        let style = self.style;
        let stroke = style.colour.stroke_width(2);
        let fill = style.colour.filled();
        let centre = match self.swatch {
            true => {
                let segments: &[(i32, i32)] = match style.dash {
                    Dash::Solid => &[(0, 20)],
                    Dash::Dashed => &[(0, 7), (13, 20)],
                    Dash::Dotted => &[(0, 2), (6, 8), (12, 14), (18, 20)],
                };
                for &(a, b) in segments {
                    backend.draw_path([(x + a, y), (x + b, y)], &stroke)?;
                }
                if style.marker == Marker::Circle {
                    return Ok(());
                }
                (x + 10, y)
            }
            false => (x, y),
        };
        let (x, y) = centre;
        match style.marker {
            Marker::Circle => backend.draw_circle(centre, 3, &fill, true),
            Marker::Square => backend.fill_polygon(
                [
                    (x - 3, y - 3),
                    (x + 3, y - 3),
                    (x + 3, y + 3),
                    (x - 3, y + 3),
                ],
                &fill,
            ),
            Marker::Triangle => {
                backend.fill_polygon([(x, y - 4), (x - 4, y + 3), (x + 4, y + 3)], &fill)
            }
            Marker::Cross => {
                backend.draw_path([(x - 4, y - 4), (x + 4, y + 4)], &stroke)?;
                backend.draw_path([(x - 4, y + 4), (x + 4, y - 4)], &stroke)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_distinct_series_are_pairwise_different() {
        let styles: Vec<SeriesStyle> = (0..DISTINCT_SERIES).map(SeriesStyle::nth).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert!(a != b, "{a:?} twice");
            }
        }
        // The palette first: six lines differ by colour alone, as before.
        assert!(styles[..6]
            .iter()
            .all(|s| s.marker == Marker::Circle && s.dash == Dash::Solid));
        assert_eq!(SeriesStyle::nth(6).marker, Marker::Square);
        assert_eq!(SeriesStyle::nth(6).dash, Dash::Dashed);
    }
}
