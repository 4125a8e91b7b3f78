//! The roofline picture: each chip's memory slope and compute roofs (ridge points labelled,
//! the cache slope faint, the achievable roofs dashed in expected mode), every kernel of each
//! chip's report as a marker at its intensity and attained rate, the kernels that take most
//! of the time named, and a legend in the lower right corner that labels keep clear of.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    dash, format_tick, kernel_label_offsets, kind_colour, legend_kind, log_axis, place, plot_error,
    text_width, Placed, CHIP_COLOURS, KINDS, LEGEND_BACKGROUND, LEGEND_BORDER, LEGEND_FONT,
    MARKER_OPACITY, SIZE,
};
use crate::base::dtype::DType;
use crate::base::error::Error;
use crate::core::chip::Chip;
use crate::core::scenario::Mode;
use crate::core::timing::{Bound, Price, StepReport};
use crate::core::workload::KernelKind;

/// Space between the legend and the plot's edges, in pixels.
const LEGEND_MARGIN: u32 = 12;

/// The roofline of each chip (memory slope, compute roof of every matrix type the step uses,
/// cache slope where the chip has one, ridge points labelled; in expected mode the achievable
/// roofs dashed beside them) with every kernel of each chip's report placed at its intensity
/// and attained rate, marker area proportional to its share of the step.
pub fn roofline(reports: &[(&Chip, &StepReport)]) -> Result<String, Error> {
    let scene = Scene::new(reports);
    let range = scene.range()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let mut canvas = Canvas::new(&root, &scene, range)?;
        for (i, (chip, report)) in reports.iter().enumerate() {
            let roofs = Roofs::new(&scene, chip, CHIP_COLOURS[i % CHIP_COLOURS.len()], range);
            canvas.memory_slope(&roofs)?;
            canvas.compute_roofs(&roofs)?;
            canvas.cache_slope(&roofs)?;
            canvas.achievable_roofs(&roofs, report.mode)?;
            canvas.kernels(report, roofs.colour)?;
        }
        canvas.top_kernel_labels(reports)?;
        canvas.legend(&scene)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Whether a kernel has a place on the roofline: FLOPs to put on a log axis, and not a
/// collective (which runs on the interconnect, not on these roofs).
fn plotted(p: &Price) -> bool {
    p.cost.flops > 0.0 && p.cost.bound != Bound::Interconnect
}

/// Radius in pixels of a kernel's marker: its area grows with its share of the step.
fn radius(share: f64) -> i32 {
    (4.0 + 26.0 * share.sqrt()).round() as i32
}

/// Where a kernel sits on the picture: intensity (FLOP/byte), attained rate (TFLOP/s).
fn position(p: &Price) -> (f64, f64) {
    (p.intensity_flop_per_byte, p.attainable_flop_per_s / 1e12)
}

/// What the picture shows: each chip with its report, and the matrix types whose roofs are
/// drawn (those the plotted kernels compute in, other than elementwise ones; bf16 when none).
struct Scene<'a> {
    reports: &'a [(&'a Chip, &'a StepReport)],
    dtypes: Vec<DType>,
}

impl<'a> Scene<'a> {
    fn new(reports: &'a [(&'a Chip, &'a StepReport)]) -> Scene<'a> {
        let mut scene = Scene {
            reports,
            dtypes: Vec::new(),
        };
        let mut dtypes: Vec<DType> = scene
            .kernels()
            .filter(|p| p.kind != KernelKind::Elementwise)
            .map(|p| p.cost.compute_dtype)
            .collect();
        if dtypes.is_empty() {
            dtypes.push(DType::Bf16);
        }
        dtypes.sort();
        dtypes.dedup();
        scene.dtypes = dtypes;
        scene
    }

    /// Every plotted kernel of every report.
    fn kernels(&self) -> impl Iterator<Item = &'a Price> {
        self.reports
            .iter()
            .flat_map(|(_, r)| r.prices.iter().filter(|p| plotted(p)))
    }

    /// A chip's matrix peak in each of the scene's types it has, in TFLOP/s.
    fn peaks(&self, chip: &Chip) -> Vec<(DType, f64)> {
        self.dtypes
            .iter()
            .filter_map(|d| chip.matrix_peak(*d).ok().map(|p| (*d, p / 1e12)))
            .collect()
    }

    /// The axes' ranges: every kernel and every ridge point, with room around them; an error
    /// when they span more than a log axis can draw (a kernel at 1e-305 TFLOP/s).
    fn range(&self) -> Result<Range, Error> {
        let mut x_min = f64::INFINITY;
        let mut x_max: f64 = 1.0;
        let mut y_min = f64::INFINITY;
        let mut y_max: f64 = 1.0;
        for p in self.kernels() {
            x_min = x_min.min(p.intensity_flop_per_byte);
            x_max = x_max.max(p.intensity_flop_per_byte);
            y_min = y_min.min(p.attainable_flop_per_s / 1e12);
        }
        for (chip, _) in self.reports {
            for (_, peak) in self.peaks(chip) {
                y_max = y_max.max(peak);
                x_max = x_max.max(peak * 1e12 / chip.bandwidth_bytes_per_s);
            }
        }
        let x_min = if x_min.is_finite() { x_min } else { 1.0 };
        let y_min = if y_min.is_finite() { y_min } else { 1.0 };
        let x = ((x_min / 3.0).min(1.0), x_max * 4.0);
        let (x_min, x_max) = log_axis((x_min, x_max), x, "arithmetic intensity (FLOP/byte)")?;
        let y = ((y_min / 3.0).min(1.0), y_max * 2.5);
        let (y_min, y_max) = log_axis((y_min, y_max), y, "attainable rate (TFLOP/s)")?;
        Ok(Range {
            x_min,
            x_max,
            y_min,
            y_max,
        })
    }

    /// The picture's caption: workload, chips and mode.
    fn title(&self) -> String {
        let names: Vec<&str> = self.reports.iter().map(|(c, _)| c.id.as_str()).collect();
        match self.reports.first() {
            Some((_, r)) => format!(
                "{} on {} ({} mode)",
                r.workload_name,
                names.join(", "),
                r.mode
            ),
            None => "roofline".to_owned(),
        }
    }
}

/// The axes' ranges: intensity in FLOP/byte along x, rate in TFLOP/s up y.
#[derive(Clone, Copy)]
struct Range {
    x_min: f64,
    x_max: f64,
    y_min: f64,
    y_max: f64,
}

/// One chip's lines, in TFLOP/s against FLOP/byte.
struct Roofs<'c> {
    chip: &'c Chip,
    colour: RGBColor,
    /// Memory bandwidth in TB/s: TFLOP/s per FLOP/B, the memory slope.
    bandwidth: f64,
    /// The compute roof of each of the scene's types the chip has.
    peaks: Vec<(DType, f64)>,
    /// Where the memory slope ends: at the highest roof, or across the picture when the chip
    /// has no roof in the step's types.
    end: (f64, f64),
}

impl<'c> Roofs<'c> {
    fn new(scene: &Scene<'_>, chip: &'c Chip, colour: RGBColor, range: Range) -> Roofs<'c> {
        let bandwidth = chip.bandwidth_bytes_per_s / 1e12;
        let peaks = scene.peaks(chip);
        let top = peaks.iter().map(|(_, p)| *p).fold(0.0f64, f64::max);
        let end = if top > 0.0 {
            (top / bandwidth, top)
        } else {
            (range.x_max, range.x_max * bandwidth)
        };
        Roofs {
            chip,
            colour,
            bandwidth,
            peaks,
            end,
        }
    }
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// The picture being drawn: the chart on its log axes, and the boxes already taken, which
/// labels must keep clear of.
struct Canvas<'a, 'b> {
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    chart: Chart<'a, 'b>,
    range: Range,
    placed: Vec<Placed>,
}

impl<'a, 'b> Canvas<'a, 'b> {
    /// The captioned chart with its mesh drawn, and the legend's corner (lower right, one
    /// entry per chip, kind and dashed line) already taken.
    fn new(
        root: &'a DrawingArea<SVGBackend<'b>, Shift>,
        scene: &Scene<'_>,
        range: Range,
    ) -> Result<Canvas<'a, 'b>, Error> {
        let mut chart = ChartBuilder::on(root)
            .caption(scene.title(), ("sans-serif", 20))
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (range.x_min..range.x_max).log_scale(),
                (range.y_min..range.y_max).log_scale(),
            )
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc("arithmetic intensity (FLOP/byte)")
            .y_desc("attainable (TFLOP/s)")
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 13))
            .x_label_formatter(&|v| format_tick(*v))
            .y_label_formatter(&|v| format_tick(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(plot_error)?;
        let legend_entries = scene.reports.len() + KINDS.len() + 2;
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        let legend_w = 260;
        let legend_h = 20 * legend_entries as i32 + 2 * LEGEND_MARGIN as i32;
        let corner = Placed {
            x: xs.end - legend_w - LEGEND_MARGIN as i32,
            y: ys.end - legend_h - LEGEND_MARGIN as i32,
            w: legend_w + LEGEND_MARGIN as i32,
            h: legend_h + LEGEND_MARGIN as i32,
        };
        Ok(Canvas {
            root,
            chart,
            range,
            placed: vec![corner],
        })
    }

    /// Draws `text` in `colour` at the first free place of `offsets` around `at` (pixels);
    /// a label with no free place is left out rather than drawn over another.
    fn label(
        &mut self,
        at: (i32, i32),
        text: String,
        offsets: &[(i32, i32)],
        colour: RGBColor,
    ) -> Result<(), Error> {
        if let Some(label) = place(&mut self.placed, at, &text, offsets) {
            self.root
                .draw(&Text::new(
                    text,
                    (label.x, label.y),
                    ("sans-serif", 13).into_font().color(&colour),
                ))
                .map_err(plot_error)?;
        }
        Ok(())
    }

    /// The memory slope, from the left edge up to the highest roof, with its legend entry.
    fn memory_slope(&mut self, roofs: &Roofs<'_>) -> Result<(), Error> {
        let (x_min, colour, bandwidth) = (self.range.x_min, roofs.colour, roofs.bandwidth);
        self.chart
            .draw_series(LineSeries::new(
                [(x_min, x_min * bandwidth), roofs.end],
                colour.stroke_width(2),
            ))
            .map_err(plot_error)?
            .label(format!(
                "{} ({} TB/s)",
                roofs.chip.id,
                crate::base::units::three_significant(bandwidth)
            ))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2)));
        Ok(())
    }

    /// Each compute roof from its ridge point to the right edge, the ridge point marked and
    /// labelled.
    fn compute_roofs(&mut self, roofs: &Roofs<'_>) -> Result<(), Error> {
        let colour = roofs.colour;
        for &(dtype, peak) in &roofs.peaks {
            let ridge = peak / roofs.bandwidth;
            self.chart
                .draw_series(LineSeries::new(
                    [(ridge, peak), (self.range.x_max, peak)],
                    colour.stroke_width(2),
                ))
                .map_err(plot_error)?;
            self.chart
                .draw_series([Circle::new((ridge, peak), 4, colour.filled())])
                .map_err(plot_error)?;
            let text = format!("{dtype} ridge {:.0}", ridge);
            let at = self.chart.backend_coord(&(ridge, peak));
            let w = text_width(&text);
            let offsets = [
                (6, -20),
                (-w - 6, -20),
                (-w / 2, -36),
                (6, -36),
                (-w - 6, -36),
                (6, 6),
            ];
            self.label(at, text, &offsets, colour)?;
        }
        Ok(())
    }

    /// The cache slope, faint and dashed, where the chip's cache has a bandwidth.
    fn cache_slope(&mut self, roofs: &Roofs<'_>) -> Result<(), Error> {
        let cache = roofs.chip.cache.as_ref();
        let Some(cache_bw) = cache.and_then(|c| c.bandwidth_bytes_per_s) else {
            return Ok(());
        };
        let cache_bw = cache_bw / 1e12;
        let (x_min, top) = (self.range.x_min, roofs.end.1);
        let end = top / cache_bw;
        self.chart
            .draw_series(DashedLineSeries::new(
                [(x_min, x_min * cache_bw), (end, top)],
                4,
                4,
                roofs.colour.mix(0.5).stroke_width(1),
            ))
            .map_err(plot_error)?;
        Ok(())
    }

    /// In expected mode, the roofs real kernels achieve, dashed beside the datasheet's.
    fn achievable_roofs(&mut self, roofs: &Roofs<'_>, mode: Mode) -> Result<(), Error> {
        let (Mode::Expected, Some(a)) = (mode, roofs.chip.expected.as_ref()) else {
            return Ok(());
        };
        let Range { x_min, x_max, .. } = self.range;
        let bw = roofs.bandwidth * a.memory;
        for &(dtype, peak) in &roofs.peaks {
            let achievable = peak * a.matrix(dtype);
            self.chart
                .draw_series(DashedLineSeries::new(
                    [
                        (x_min, x_min * bw),
                        (achievable / bw, achievable),
                        (x_max, achievable),
                    ],
                    7,
                    5,
                    roofs.colour.mix(0.8).stroke_width(1),
                ))
                .map_err(plot_error)?;
        }
        Ok(())
    }

    /// A report's kernels, largest share last so small ones stay visible, ringed in the
    /// chip's colour; their markers become obstacles for the labels that follow.
    fn kernels(&mut self, report: &StepReport, colour: RGBColor) -> Result<(), Error> {
        let mut prices: Vec<_> = report.prices.iter().filter(|p| plotted(p)).collect();
        prices.sort_by(|a, b| b.share.total_cmp(&a.share));
        for p in prices.iter().rev() {
            let at = position(p);
            let r = radius(p.share);
            self.chart
                .draw_series([
                    Circle::new(at, r, kind_colour(p.kind).mix(MARKER_OPACITY).filled()),
                    Circle::new(at, r, colour.stroke_width(1)),
                ])
                .map_err(plot_error)?;
        }
        for p in &prices {
            let (x, y) = self.chart.backend_coord(&position(p));
            let r = radius(p.share);
            self.placed.push(Placed {
                x: x - r,
                y: y - r,
                w: 2 * r,
                h: 2 * r,
            });
        }
        Ok(())
    }

    /// The kernels that take most of the time, each named once beside its marker on the
    /// first chip with its share on every chip, in chip order.
    fn top_kernel_labels(&mut self, reports: &[(&Chip, &StepReport)]) -> Result<(), Error> {
        let Some((_, first)) = reports.first() else {
            return Ok(());
        };
        let mut top: Vec<_> = first
            .prices
            .iter()
            .filter(|p| plotted(p) && p.share >= 0.02)
            .collect();
        top.sort_by(|a, b| b.share.total_cmp(&a.share));
        for p in top.into_iter().take(6) {
            let shares: Vec<String> = reports
                .iter()
                .filter_map(|(_, r)| {
                    r.prices
                        .iter()
                        .find(|q| q.name == p.name && q.block == p.block)
                })
                .map(|q| format!("{:.0}%", q.share * 100.0))
                .collect();
            let text = format!("{} {}", p.name, shares.join(" / "));
            let at = self.chart.backend_coord(&position(p));
            let offsets = kernel_label_offsets(radius(p.share), text_width(&text));
            self.label(at, text, &offsets, BLACK)?;
        }
        Ok(())
    }

    /// The legend: the chips' slopes (entered as they were drawn), the kernel kinds present,
    /// and the dashed lines drawn.
    fn legend(&mut self, scene: &Scene<'_>) -> Result<(), Error> {
        let kinds: Vec<KernelKind> = scene.kernels().map(|p| legend_kind(p.kind)).collect();
        for (kind, name) in KINDS.into_iter().filter(|(k, _)| kinds.contains(k)) {
            let colour = kind_colour(kind);
            self.legend_entry(name, move |(x, y)| {
                Rectangle::new(
                    [(x + 4, y - 6), (x + 16, y + 6)],
                    colour.mix(MARKER_OPACITY).filled(),
                )
            })?;
        }
        let grey = RGBColor(110, 110, 110);
        if scene.reports.iter().any(|(_, r)| r.mode == Mode::Expected) {
            self.legend_entry("achievable roofs (dashed)", move |(x, y)| {
                dash(x, y, grey.stroke_width(1))
            })?;
        }
        if scene.reports.iter().any(|(c, _)| {
            c.cache
                .as_ref()
                .is_some_and(|c| c.bandwidth_bytes_per_s.is_some())
        }) {
            self.legend_entry("cache slope (faint dashed)", move |(x, y)| {
                dash(x, y, grey.mix(0.5).stroke_width(1))
            })?;
        }
        self.chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .margin(LEGEND_MARGIN)
            .background_style(LEGEND_BACKGROUND)
            .border_style(LEGEND_BORDER)
            .label_font(LEGEND_FONT)
            .draw()
            .map_err(plot_error)?;
        Ok(())
    }

    /// A legend entry with no line of its own: `glyph` drawn beside `name`.
    fn legend_entry<E>(
        &mut self,
        name: &str,
        glyph: impl Fn((i32, i32)) -> E + 'a,
    ) -> Result<(), Error>
    where
        E: IntoDynElement<'a, SVGBackend<'b>, (i32, i32)>,
    {
        self.chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(plot_error)?
            .label(name)
            .legend(glyph);
        Ok(())
    }
}
