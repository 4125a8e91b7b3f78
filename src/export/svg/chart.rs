//! The sweep line chart: any two numeric columns of a sweep CSV against each other, one line
//! per value of the series columns, either axis linear or logarithmic, the rows narrowed by a
//! filter (`export::filter`), and the chart titled with its scenario: the columns that name a
//! scenario (workload, chip, mode, fusion, data types, tokens, context, parallel degrees) and
//! hold one value across the plotted rows.

use std::collections::HashMap;
use std::io::Read;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::point_labels::{self, LabelTable, Line};
use super::series::SeriesStyle;
use super::title::Scenario;
use super::whiskers;
use super::{axis_title, csv_error, format_tick, linear_axis, log_axis, log_ticks, plot_error};
use super::{LEGEND_BACKGROUND, LEGEND_BORDER, LEGEND_FONT, SIZE};
use crate::base::error::Error;
use crate::export::filter::{Filter, Kind};

/// Options of a sweep chart.
#[derive(Debug, Clone, Default)]
pub struct SweepChart {
    /// The column on the x axis, by name.
    pub x: String,
    /// The column on the y axis, by name.
    pub y: String,
    /// Columns whose values split the rows into lines (`chip`, `weight_dtype`): one line per
    /// combination, labelled with the values joined by `, `.
    pub series: Vec<String>,
    /// A filter on the rows (`fits && context == 4096`), in `export::filter`'s language.
    pub filter: Option<String>,
    /// Also the rows whose scenario does not fit its chip's memory (`fits` false); without
    /// it a curve stops where memory ends. A CSV without a `fits` column is drawn whole, and
    /// the chart says so.
    pub include_unfit: bool,
    /// A logarithmic x axis; points whose x is not above 0 are left out.
    pub log_x: bool,
    /// A logarithmic y axis; points whose y is not above 0 are left out.
    pub log_y: bool,
    /// A column whose value is written beside each point where it differs from the previous
    /// point's along the line (and at each line's first point): the layout of a serving
    /// frontier, say.
    pub label: Option<String>,
}

/// The chart's lines, in the order each series value first appears.
type Lines = Vec<Line>;

/// What the CSV gives the chart: its lines, the scenario they share (`llama-3.1-70b, h200,
/// context=4096`), and the label column's values (none without one).
struct Drawn {
    lines: Lines,
    scenario: String,
    labels: LabelTable,
}

/// One line per value of the series column (or one line), `y` against `x`, from a sweep CSV
/// read from `csv` (named `name` in messages) as a stream: only the plotted columns of each
/// row are kept. Rows whose `x` or `y` is empty (error rows) are left out.
pub fn sweep(csv: impl Read, name: &str, options: &SweepChart) -> Result<String, Error> {
    let Drawn {
        lines,
        scenario,
        labels,
    } = read_lines(csv, name, options)?;
    let ((x0, x1), (y0, y1)) = ranges(&lines, options)?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let frame = Frame {
            root: &root,
            options,
            lines: &lines,
            scenario: &scenario,
            labels: &labels,
        };
        match (options.log_x, options.log_y) {
            (true, true) => frame.draw(
                (x0..x1).log_scale().with_key_points(log_ticks(x0, x1)),
                (y0..y1).log_scale().with_key_points(log_ticks(y0, y1)),
            )?,
            (true, false) => frame.draw(
                (x0..x1).log_scale().with_key_points(log_ticks(x0, x1)),
                y0..y1,
            )?,
            (false, true) => frame.draw(
                x0..x1,
                (y0..y1).log_scale().with_key_points(log_ticks(y0, y1)),
            )?,
            (false, false) => frame.draw(x0..x1, y0..y1)?,
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Where the chart's columns sit in the CSV header.
struct Columns {
    x: usize,
    y: usize,
    series: Vec<usize>,
    label: Option<usize>,
    /// The columns that may name the scenario in the title (none of x, y and the series).
    scenario: Vec<usize>,
}

/// The columns that name a scenario, as the title shows them when they hold one value.
const SCENARIO_COLUMNS: [&str; 12] = [
    "workload",
    "chip",
    "mode",
    "fusion",
    "weight_dtype",
    "activation_dtype",
    "kv_dtype",
    "tokens",
    "context",
    "tp",
    "pp",
    "ep",
];

impl Columns {
    /// The positions of the options' columns, or which one `name` lacks. The header is listed
    /// back only when it is a row of column names: a file that is not a sweep CSV (say, a
    /// secret named by mistake) has its first line quoted by no message.
    fn find(header: &[String], name: &str, options: &SweepChart) -> Result<Columns, Error> {
        let names = header.iter().all(|h| is_column_name(h));
        let column = |c: &str| {
            header.iter().position(|h| h == c).ok_or_else(|| {
                let message = match names {
                    true => format!(
                        "{name} has no column `{c}`{}; its columns: {}",
                        crate::base::diagnostic::did_you_mean(c, header.iter().map(String::as_str)),
                        header.join(", ")
                    ),
                    false => format!(
                        "{name} has no column `{c}`, and its first line is not a row of column \
                         names (is it a sweep CSV?)"
                    ),
                };
                Error::Plot(message.into())
            })
        };
        let (x, y) = (column(&options.x)?, column(&options.y)?);
        let series = (options.series.iter())
            .map(|s| column(s))
            .collect::<Result<Vec<_>, _>>()?;
        let label = options.label.as_deref().map(column).transpose()?;
        let scenario = (SCENARIO_COLUMNS.iter())
            .filter_map(|c| header.iter().position(|h| h == c))
            .filter(|i| *i != x && *i != y && !series.contains(i))
            .collect();
        Ok(Columns {
            x,
            y,
            series,
            label,
            scenario,
        })
    }
}

/// A column name as a sweep writes them: letters, digits, `_`, `.` and `-`.
fn is_column_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 128
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// `--where`'s filter, compiled against the CSV's columns.
fn row_filter(
    header: &[String],
    name: &str,
    options: &SweepChart,
) -> Result<Option<Filter>, Error> {
    (options.filter.as_deref())
        .map(|text| {
            Filter::compile(text, header.iter().map(|h| (h.as_str(), Kind::Any)))
                .map_err(|e| match header.iter().all(|h| is_column_name(h)) {
                    true => Error::Plot(format!("--where: {e}").into()),
                    // The message would list the first line: not a sweep's, so not quoted.
                    false => Error::Plot(format!(
                        "--where: {name}'s first line is not a row of column names (is it a sweep CSV?)"
                    ).into()),
                })
        })
        .transpose()
}

/// The lines of the CSV, each sorted by `x`, and their shared scenario; rows the filter
/// refuses, or without numbers in both columns (or with a number a log axis cannot show), are
/// left out. The CSV is read a row at a time, and of each row only the plotted columns are
/// kept.
fn read_lines(csv: impl Read, name: &str, options: &SweepChart) -> Result<Drawn, Error> {
    let mut reader = csv::Reader::from_reader(csv);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| csv_error(name, e, "not a CSV file: "))?
        .iter()
        .map(str::to_owned)
        .collect();
    let columns = Columns::find(&header, name, options)?;
    let filter = row_filter(&header, name, options)?;
    // Unless `--include-unfit`, a row must fit, where the CSV says.
    let fits = header.iter().position(|h| h == "fits");
    let fits_only = fits.filter(|_| !options.include_unfit);
    let band = whiskers::band_columns(&header, &options.y);
    let mut lines: Lines = Vec::new();
    let mut line_of: HashMap<String, usize> = HashMap::new();
    let mut scenario = Scenario::default();
    let (mut record, mut key) = (csv::StringRecord::new(), String::new());
    let mut labels = LabelTable::default();
    for row in 2.. {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(name, e, &format!("row {row}: "))),
        }
        if fits_only.is_some_and(|i| record.get(i) != Some("true")) {
            continue;
        }
        if let Some(filter) = &filter {
            let pass = (filter.matches(&record))
                .map_err(|e| Error::Plot(format!("{name}: row {row}: --where {e}").into()))?;
            if !pass {
                continue;
            }
        }
        let Some((x, y)) = point(&record, &columns, options) else {
            continue;
        };
        series_key(&mut key, &record, &columns.series);
        scenario.see(&record, &columns.scenario);
        // looked up before inserting: the key is cloned once per line, not once per row
        let i = match line_of.get(key.as_str()) {
            Some(&i) => i,
            None => {
                line_of.insert(key.clone(), lines.len());
                lines.push(Line {
                    key: key.clone(),
                    points: Vec::new(),
                    labels: Vec::new(),
                    whiskers: Vec::new(),
                });
                lines.len() - 1
            }
        };
        lines[i].points.push((x, y));
        if let Some(w) = band.and_then(|b| whiskers::of(&record, b, x, options.log_y)) {
            lines[i].whiskers.push(w);
        }
        if let Some(column) = columns.label {
            let label = labels.intern(record.get(column).unwrap_or(""))?;
            lines[i].labels.push(label);
        }
    }
    if lines.is_empty() {
        return Err(no_rows(name, options, fits_only.is_some()));
    }
    lines.iter_mut().for_each(Line::sort);
    let mut scenario = scenario.title(&header, &columns.scenario);
    if !options.include_unfit && fits.is_none() {
        let sep = if scenario.is_empty() { "" } else { "; " };
        scenario.push_str(&format!("{sep}every row drawn: no `fits` column"));
    }
    Ok(Drawn {
        lines,
        scenario,
        labels,
    })
}

/// The error of a CSV with no row to draw, saying which rows were looked at.
fn no_rows(name: &str, options: &SweepChart, fits_only: bool) -> Error {
    let filtered = match (&options.filter, fits_only) {
        (Some(_), true) => " that fits and passes --where",
        (Some(_), false) => " that passes --where",
        (None, true) => " that fits (--include-unfit draws the others)",
        (None, false) => "",
    };
    Error::Plot(
        format!(
            "{name} has no row{filtered} with numbers in both `{}` and `{}`",
            options.x, options.y
        )
        .into(),
    )
}

/// The row's point, if it has numbers in both columns that its axes can show.
fn point(
    record: &csv::StringRecord,
    columns: &Columns,
    options: &SweepChart,
) -> Option<(f64, f64)> {
    let value = |i: usize| {
        record
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite())
    };
    let (x, y) = (value(columns.x)?, value(columns.y)?);
    if (options.log_x && x <= 0.0) || (options.log_y && y <= 0.0) {
        return None;
    }
    Some((x, y))
}

/// The row's series values joined by `, ` into `key` (whose buffer is reused row to row).
fn series_key(key: &mut String, record: &csv::StringRecord, series: &[usize]) {
    key.clear();
    for (n, &i) in series.iter().enumerate() {
        if n > 0 {
            key.push_str(", ");
        }
        key.push_str(record.get(i).unwrap_or(""));
    }
}

/// An axis's lowest and highest value.
type Span = (f64, f64);

/// The axes' ranges: every point, with a margin (a factor on a log axis); an error naming the
/// column when its values make a range no axis can draw (values near 1e308, whose margin
/// overflows, or more decades than a log axis counts).
fn ranges(lines: &Lines, options: &SweepChart) -> Result<(Span, Span), Error> {
    let all = lines.iter().flat_map(|l| l.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in all {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    for &(_, lo, hi) in lines.iter().flat_map(|l| l.whiskers.iter()) {
        (y0, y1) = (y0.min(lo), y1.max(hi));
    }
    let pad = |lo: f64, hi: f64, log: bool, column: &str| {
        let what = format!("column `{column}`");
        if log {
            log_axis((lo, hi), (lo / 1.3, hi * 1.3), &what)
        } else {
            let span = (hi - lo).max(hi.abs() * 0.1).max(1e-12);
            linear_axis((lo, hi), (lo - 0.05 * span, hi + 0.05 * span), &what)
        }
    };
    Ok((
        pad(x0, x1, options.log_x, &options.x)?,
        pad(y0, y1, options.log_y, &options.y)?,
    ))
}

/// What a sweep chart draws, whichever scale each axis has.
struct Frame<'a, 'b> {
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    options: &'a SweepChart,
    lines: &'a Lines,
    /// The scenario the lines share, under the title.
    scenario: &'a str,
    labels: &'a LabelTable,
}

impl Frame<'_, '_> {
    /// The chart on axes `x` and `y`: caption, mesh, lines, and a legend when the lines are a
    /// series.
    fn draw<X, Y>(&self, x: X, y: Y) -> Result<(), Error>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let options = self.options;
        let caption = format!(
            "{} against {}",
            axis_title(&options.y),
            axis_title(&options.x)
        );
        let area = self
            .root
            .titled(&caption, ("sans-serif", 20))
            .map_err(plot_error)?;
        let mut builder = ChartBuilder::on(&area);
        if !self.scenario.is_empty() {
            builder.caption(self.scenario, ("sans-serif", 14));
        }
        let mut chart = builder
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(x, y)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc(axis_title(&options.x))
            .y_desc(axis_title(&options.y))
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 13))
            .x_label_formatter(&|v| format_tick(*v))
            .y_label_formatter(&|v| format_tick(*v))
            // plotters' minor lines crowd a log axis into a grey band
            .light_line_style(WHITE)
            .x_labels(12)
            .y_labels(12)
            .draw()
            .map_err(plot_error)?;
        self.draw_lines(&mut chart)?;
        let dropped = point_labels::draw(&mut chart, self.lines, self.labels)?;
        if dropped > 0 {
            let note = format!(
                "{dropped} label{} left out: no free place beside {}",
                if dropped == 1 { "" } else { "s" },
                if dropped == 1 {
                    "its point"
                } else {
                    "their points"
                }
            );
            let at = (10, SIZE.1 as i32 - 16);
            (self.root)
                .draw(&Text::new(
                    note,
                    at,
                    ("sans-serif", 11).into_font().color(&BLACK),
                ))
                .map_err(plot_error)?;
        }
        if !options.series.is_empty() {
            chart
                .configure_series_labels()
                .position(point_labels::legend_corner(
                    self.lines,
                    options.log_x,
                    options.log_y,
                ))
                .background_style(LEGEND_BACKGROUND)
                .border_style(LEGEND_BORDER)
                .label_font(LEGEND_FONT)
                .draw()
                .map_err(plot_error)?;
        }
        Ok(())
    }

    /// Each line in its style (`svg::series`: its colour, and past the palette a marker and a
    /// dash of its own) with a marker on every point, named in the legend when it has a series
    /// value.
    fn draw_lines<X, Y>(
        &self,
        chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    ) -> Result<(), Error>
    where
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        for (i, line) in self.lines.iter().enumerate() {
            let style = SeriesStyle::nth(i);
            whiskers::draw(chart, &line.whiskers, style.colour)?;
            let key = (!line.key.is_empty()).then(|| line.key.clone());
            style.draw_line(chart, &line.points, key)?;
            style.draw_markers(chart, &line.points)?;
        }
        Ok(())
    }
}
