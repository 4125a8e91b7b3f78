//! Pictures as SVG text: the roofline of one or more chips with a step's kernels placed on it,
//! and line charts of any sweep CSV. Drawn with plotters' SVG backend; text is plain SVG
//! `<text>`, so a file needs no font installed to open.

use plotters::prelude::*;

use crate::base::dtype::DType;
use crate::base::error::Error;
use crate::engine::chip::Chip;
use crate::engine::price::{Bound, Price, StepReport};
use crate::engine::scenario::Mode;
use crate::engine::workload::KernelKind;

/// Width and height of every picture, in pixels.
const SIZE: (u32, u32) = (1100, 720);

/// Colours of the chips' roofs, in order.
const CHIP_COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// Colour of a kernel's marker, by kind.
fn kind_colour(kind: KernelKind) -> RGBColor {
    match kind {
        KernelKind::Gemm | KernelKind::Gemv => RGBColor(70, 130, 180),
        KernelKind::Fused => RGBColor(218, 112, 214),
        KernelKind::KvRead => RGBColor(60, 179, 113),
        KernelKind::Elementwise | KernelKind::Collective(_) => RGBColor(160, 160, 160),
    }
}

/// The legend entry a kernel kind falls under (collectives are drawn with the vector work).
fn legend_kind(kind: KernelKind) -> KernelKind {
    match kind {
        KernelKind::Gemm | KernelKind::Gemv => KernelKind::Gemm,
        KernelKind::Fused | KernelKind::KvRead | KernelKind::Elementwise => kind,
        KernelKind::Collective(_) => KernelKind::Elementwise,
    }
}

/// A short dashed stroke for a legend entry.
fn dash<'a, DB: DrawingBackend + 'a>(
    x: i32,
    y: i32,
    style: ShapeStyle,
) -> impl IntoDynElement<'a, DB, (i32, i32)> {
    EmptyElement::at((x, y))
        + PathElement::new([(0, 0), (7, 0)], style)
        + PathElement::new([(12, 0), (19, 0)], style)
}

const LEGEND_MARGIN: u32 = 12;

const KINDS: [(KernelKind, &str); 4] = [
    (KernelKind::Gemm, "GEMM / GEMV"),
    (KernelKind::Fused, "fused group"),
    (KernelKind::KvRead, "KV read"),
    (KernelKind::Elementwise, "elementwise"),
];

fn plot_error(e: impl std::fmt::Display) -> Error {
    Error::Plot(format!("cannot draw the picture: {e}").into())
}

/// A text box already drawn, in pixels, so labels can avoid each other.
#[derive(Clone, Copy)]
struct Placed {
    x: i32,
    y: i32,
    w: i32,
    h: i32,
}

impl Placed {
    fn overlaps(&self, o: &Placed) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

/// Width of a label at 13 px, generous enough for the wider common sans-serif faces
/// (DejaVu Sans averages about 0.6 em a character).
fn text_width(text: &str) -> i32 {
    (text.chars().count() as f64 * 8.0).ceil() as i32
}

/// Fill opacity of a kernel's marker (and only of kernel markers, so a reader of the SVG can
/// tell them apart from the legend's swatches and the ridge points).
pub const MARKER_OPACITY: f64 = 0.55;

/// The roofline of each chip (memory slope, compute roof of every matrix type the step uses,
/// cache slope where the chip has one, ridge points labelled; in expected mode the achievable
/// roofs dashed beside them) with every kernel of each chip's report placed at its intensity
/// and attained rate, marker area proportional to its share of the step.
pub fn roofline(reports: &[(&Chip, &StepReport)]) -> Result<String, Error> {
    let kernels = || {
        reports
            .iter()
            .flat_map(|(_, r)| r.prices.iter().filter(|p| plotted(p)))
    };
    let dtypes: Vec<DType> = {
        let mut d: Vec<DType> = kernels()
            .filter(|p| p.kind != KernelKind::Elementwise)
            .map(|p| p.cost.compute_dtype)
            .collect();
        if d.is_empty() {
            d.push(DType::Bf16);
        }
        d.sort();
        d.dedup();
        d
    };
    let peaks = |chip: &Chip| -> Vec<(DType, f64)> {
        dtypes
            .iter()
            .filter_map(|d| chip.matrix_peak(*d).ok().map(|p| (*d, p / 1e12)))
            .collect()
    };
    let mut x_min = f64::INFINITY;
    let mut x_max: f64 = 1.0;
    let mut y_min = f64::INFINITY;
    let mut y_max: f64 = 1.0;
    for p in kernels() {
        x_min = x_min.min(p.intensity_flop_per_byte);
        x_max = x_max.max(p.intensity_flop_per_byte);
        y_min = y_min.min(p.attainable_flop_per_s / 1e12);
    }
    for (chip, _) in reports {
        for (_, peak) in peaks(chip) {
            y_max = y_max.max(peak);
            x_max = x_max.max(peak * 1e12 / chip.bandwidth_bytes_per_s);
        }
    }
    let x_min = (if x_min.is_finite() { x_min } else { 1.0 } / 3.0).min(1.0);
    let x_max = x_max * 4.0;
    let y_min = (if y_min.is_finite() { y_min } else { 1.0 } / 3.0).min(1.0);
    let y_max = y_max * 2.5;

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let names: Vec<&str> = reports.iter().map(|(c, _)| c.id.as_str()).collect();
        let title = match reports.first() {
            Some((_, r)) => format!(
                "{} on {} ({} mode)",
                r.workload_name,
                names.join(", "),
                r.mode
            ),
            None => "roofline".to_owned(),
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((x_min..x_max).log_scale(), (y_min..y_max).log_scale())
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

        // Keep the legend's corner (lower right) free of labels.
        let legend_entries = reports.len() + KINDS.len() + 2;
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        let legend_w = 260;
        let legend_h = 20 * legend_entries as i32 + 2 * LEGEND_MARGIN as i32;
        let mut placed = vec![Placed {
            x: xs.end - legend_w - LEGEND_MARGIN as i32,
            y: ys.end - legend_h - LEGEND_MARGIN as i32,
            w: legend_w + LEGEND_MARGIN as i32,
            h: legend_h + LEGEND_MARGIN as i32,
        }];
        for (i, (chip, report)) in reports.iter().enumerate() {
            let colour = CHIP_COLOURS[i % CHIP_COLOURS.len()];
            let bandwidth = chip.bandwidth_bytes_per_s / 1e12; // TB/s: TFLOP/s per FLOP/B
            let top = peaks(chip).iter().map(|(_, p)| *p).fold(0.0f64, f64::max);
            // memory slope up to the highest roof (across the picture when the chip has no
            // roof in the step's types)
            let (ridge_top, top) = if top > 0.0 {
                (top / bandwidth, top)
            } else {
                (x_max, x_max * bandwidth)
            };
            chart
                .draw_series(LineSeries::new(
                    [(x_min, x_min * bandwidth), (ridge_top, top)],
                    colour.stroke_width(2),
                ))
                .map_err(plot_error)?
                .label(format!(
                    "{} ({} TB/s)",
                    chip.id,
                    crate::base::units::three_significant(bandwidth)
                ))
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            for (dtype, peak) in peaks(chip) {
                let ridge = peak / bandwidth;
                chart
                    .draw_series(LineSeries::new(
                        [(ridge, peak), (x_max, peak)],
                        colour.stroke_width(2),
                    ))
                    .map_err(plot_error)?;
                chart
                    .draw_series([Circle::new((ridge, peak), 4, colour.filled())])
                    .map_err(plot_error)?;
                let text = format!("{dtype} ridge {:.0}", ridge);
                let at = chart.backend_coord(&(ridge, peak));
                let w = text_width(&text);
                let offsets = [
                    (6, -20),
                    (-w - 6, -20),
                    (-w / 2, -36),
                    (6, -36),
                    (-w - 6, -36),
                    (6, 6),
                ];
                if let Some(label) = place(&mut placed, at, &text, &offsets) {
                    root.draw(&Text::new(
                        text,
                        (label.x, label.y),
                        ("sans-serif", 13).into_font().color(&colour),
                    ))
                    .map_err(plot_error)?;
                }
            }
            if let Some(cache_bw) = chip.cache.as_ref().and_then(|c| c.bandwidth_bytes_per_s) {
                let cache_bw = cache_bw / 1e12;
                let end = top / cache_bw;
                chart
                    .draw_series(DashedLineSeries::new(
                        [(x_min, x_min * cache_bw), (end, top)],
                        4,
                        4,
                        colour.mix(0.5).stroke_width(1),
                    ))
                    .map_err(plot_error)?;
            }
            if let (Mode::Expected, Some(a)) = (report.mode, chip.expected.as_ref()) {
                let bw = bandwidth * a.memory;
                for (dtype, peak) in peaks(chip) {
                    let achievable = peak * a.matrix(dtype);
                    chart
                        .draw_series(DashedLineSeries::new(
                            [
                                (x_min, x_min * bw),
                                (achievable / bw, achievable),
                                (x_max, achievable),
                            ],
                            7,
                            5,
                            colour.mix(0.8).stroke_width(1),
                        ))
                        .map_err(plot_error)?;
                }
            }
            // the kernels, largest share last so small ones stay visible
            let mut prices: Vec<_> = report.prices.iter().filter(|p| plotted(p)).collect();
            prices.sort_by(|a, b| b.share.total_cmp(&a.share));
            for p in prices.iter().rev() {
                let at = (p.intensity_flop_per_byte, p.attainable_flop_per_s / 1e12);
                let r = radius(p.share);
                chart
                    .draw_series([
                        Circle::new(at, r, kind_colour(p.kind).mix(MARKER_OPACITY).filled()),
                        Circle::new(at, r, colour.stroke_width(1)),
                    ])
                    .map_err(plot_error)?;
            }
            // markers are obstacles for the labels that follow
            for p in &prices {
                let (x, y) = chart
                    .backend_coord(&(p.intensity_flop_per_byte, p.attainable_flop_per_s / 1e12));
                let r = radius(p.share);
                placed.push(Placed {
                    x: x - r,
                    y: y - r,
                    w: 2 * r,
                    h: 2 * r,
                });
            }
        }
        // The kernels that take most of the time, each named once beside its marker on the
        // first chip with its share on every chip, in chip order.
        if let Some((_, first)) = reports.first() {
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
                let at = chart
                    .backend_coord(&(p.intensity_flop_per_byte, p.attainable_flop_per_s / 1e12));
                let r = radius(p.share);
                let w = text_width(&text);
                let mut offsets = Vec::new();
                for gap in [4, 24, 48] {
                    offsets.push((-w / 2, -r - 16 - gap));
                    offsets.push((-w / 2, r + gap));
                    for step in [0, -1, 1, -2, 2] {
                        offsets.push((r + gap, -8 + 16 * step));
                        offsets.push((-r - gap - w, -8 + 16 * step));
                    }
                }
                // A label with no free place is left out rather than drawn over another.
                if let Some(label) = place(&mut placed, at, &text, &offsets) {
                    root.draw(&Text::new(
                        text,
                        (label.x, label.y),
                        ("sans-serif", 13).into_font().color(&BLACK),
                    ))
                    .map_err(plot_error)?;
                }
            }
        }
        // kinds present in the legend, as empty series
        let kinds: Vec<KernelKind> = kernels().map(|p| legend_kind(p.kind)).collect();
        for (kind, name) in KINDS.into_iter().filter(|(k, _)| kinds.contains(k)) {
            let colour = kind_colour(kind);
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(plot_error)?
                .label(name)
                .legend(move |(x, y)| {
                    Rectangle::new(
                        [(x + 4, y - 6), (x + 16, y + 6)],
                        colour.mix(MARKER_OPACITY).filled(),
                    )
                });
        }
        let grey = RGBColor(110, 110, 110);
        if reports.iter().any(|(_, r)| r.mode == Mode::Expected) {
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(plot_error)?
                .label("achievable roofs (dashed)")
                .legend(move |(x, y)| dash(x, y, grey.stroke_width(1)));
        }
        if reports.iter().any(|(c, _)| {
            c.cache
                .as_ref()
                .is_some_and(|c| c.bandwidth_bytes_per_s.is_some())
        }) {
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(plot_error)?
                .label("cache slope (faint dashed)")
                .legend(move |(x, y)| dash(x, y, grey.mix(0.5).stroke_width(1)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .margin(LEGEND_MARGIN)
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(200, 200, 200))
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(plot_error)?;
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

/// Puts a label near `at` at the first of `offsets` that lies inside the picture and overlaps
/// no box already placed, and records it; `None` when there is no such place.
fn place(
    placed: &mut Vec<Placed>,
    at: (i32, i32),
    text: &str,
    offsets: &[(i32, i32)],
) -> Option<Placed> {
    let (w, h) = (text_width(text), 16);
    let chosen = offsets
        .iter()
        .map(|(dx, dy)| Placed {
            x: at.0 + dx,
            y: at.1 + dy,
            w,
            h,
        })
        .filter(|c| {
            c.x >= 2 && c.y >= 2 && c.x + w <= SIZE.0 as i32 - 2 && c.y + h <= SIZE.1 as i32 - 2
        })
        .find(|c| placed.iter().all(|p| !p.overlaps(c)))?;
    placed.push(chosen);
    Some(chosen)
}

/// Ticks of a log axis over `lo..hi`: 1, 2 and 5 times each power of ten, or only the
/// powers of ten when those make more than a dozen.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = (lo.log10().floor() as i32)..=(hi.log10().ceil() as i32);
    let multiples: &[f64] = if decades.clone().count() > 5 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    decades
        .flat_map(|d| multiples.iter().map(move |m| m * 10f64.powi(d)))
        .filter(|v| (lo..=hi).contains(v))
        .collect()
}

/// Tick labels: 0.01, 0.1, 1, 10, 100, 1k, 10k, 2.5M...
fn format_tick(v: f64) -> String {
    fn short(x: f64) -> String {
        // three significant digits, trailing zeros dropped
        let decimals = (2.0 - x.abs().max(1e-12).log10().floor()).max(0.0) as usize;
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    }
    match v.abs() {
        a if a >= 1e9 => format!("{}G", short(v / 1e9)),
        a if a >= 1e6 => format!("{}M", short(v / 1e6)),
        a if a >= 1e3 => format!("{}k", short(v / 1e3)),
        _ => short(v),
    }
}

/// An axis title from a column name: `tokens_per_s` becomes `tokens per s`,
/// `step_time_us` becomes `step time (us)`.
pub fn axis_title(column: &str) -> String {
    const UNITS: [(&str, &str); 7] = [
        ("_us", "us"),
        ("_ms", "ms"),
        ("_tflops", "TFLOP/s"),
        ("_tb_s", "TB/s"),
        ("_bytes", "bytes"),
        ("_gb", "GB"),
        ("_flop_per_byte", "FLOP/byte"),
    ];
    if column == "usd_per_million_tokens" {
        return "USD per million tokens".into();
    }
    if let Some(stem) = column.strip_suffix("_per_s") {
        return format!("{} per second", stem.replace('_', " "));
    }
    for (suffix, unit) in UNITS {
        match column.strip_suffix(suffix) {
            Some(stem) if !stem.is_empty() => {
                return format!("{} ({unit})", stem.replace('_', " "))
            }
            _ => {}
        }
    }
    column.replace("_per_s_", " per second ").replace('_', " ")
}

/// Options of a sweep chart.
#[derive(Debug, Clone, Default)]
pub struct SweepChart {
    pub x: String,
    pub y: String,
    /// A column whose values split the rows into lines (`chip`).
    pub series: Option<String>,
    pub log_x: bool,
    pub log_y: bool,
}

/// One line per value of the series column (or one line), `y` against `x`, from sweep CSV text.
/// Rows whose `x` or `y` is empty (error rows) are left out.
pub fn sweep(csv_text: &str, name: &str, options: &SweepChart) -> Result<String, Error> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| Error::Plot(format!("{name}: not a CSV file: {e}").into()))?
        .iter()
        .map(str::to_owned)
        .collect();
    let column = |c: &str| {
        header.iter().position(|h| h == c).ok_or_else(|| {
            Error::Plot(
                format!(
                    "{name} has no column `{c}`{}; its columns: {}",
                    crate::base::diagnostic::did_you_mean(c, header.iter().map(String::as_str)),
                    header.join(", ")
                )
                .into(),
            )
        })
    };
    let (xi, yi) = (column(&options.x)?, column(&options.y)?);
    let si = options.series.as_deref().map(column).transpose()?;
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for (row, record) in reader.records().enumerate() {
        let record =
            record.map_err(|e| Error::Plot(format!("{name}: row {}: {e}", row + 2).into()))?;
        let value = |i: usize| {
            record
                .get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite())
        };
        let (Some(x), Some(y)) = (value(xi), value(yi)) else {
            continue;
        };
        if (options.log_x && x <= 0.0) || (options.log_y && y <= 0.0) {
            continue;
        }
        let key = si.and_then(|i| record.get(i)).unwrap_or("").to_owned();
        match lines.iter_mut().find(|(k, _)| *k == key) {
            Some((_, points)) => points.push((x, y)),
            None => lines.push((key, vec![(x, y)])),
        }
    }
    if lines.is_empty() {
        return Err(Error::Plot(
            format!(
                "{name} has no row with numbers in both `{}` and `{}`",
                options.x, options.y
            )
            .into(),
        ));
    }
    for (_, points) in &mut lines {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let all = lines.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in all {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    let pad = |lo: f64, hi: f64, log: bool| {
        if log {
            (lo / 1.3, hi * 1.3)
        } else {
            let span = (hi - lo).max(hi.abs() * 0.1).max(1e-12);
            (lo - 0.05 * span, hi + 0.05 * span)
        }
    };
    let (x0, x1) = pad(x0, x1, options.log_x);
    let (y0, y1) = pad(y0, y1, options.log_y);

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let caption = format!(
            "{} against {}",
            axis_title(&options.y),
            axis_title(&options.x)
        );
        macro_rules! draw {
            ($xr:expr, $yr:expr) => {{
                let mut chart = ChartBuilder::on(&root)
                    .caption(&caption, ("sans-serif", 20))
                    .margin(20)
                    .x_label_area_size(50)
                    .y_label_area_size(80)
                    .build_cartesian_2d($xr, $yr)
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
                for (i, (key, points)) in lines.iter().enumerate() {
                    let colour = CHIP_COLOURS[i % CHIP_COLOURS.len()];
                    let series = chart
                        .draw_series(LineSeries::new(
                            points.iter().copied(),
                            colour.stroke_width(2),
                        ))
                        .map_err(plot_error)?;
                    if !key.is_empty() {
                        series.label(key.clone()).legend(move |(x, y)| {
                            PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2))
                        });
                    }
                    chart
                        .draw_series(points.iter().map(|p| Circle::new(*p, 3, colour.filled())))
                        .map_err(plot_error)?;
                }
                if si.is_some() {
                    chart
                        .configure_series_labels()
                        .position(SeriesLabelPosition::UpperLeft)
                        .background_style(WHITE.mix(0.9))
                        .border_style(RGBColor(200, 200, 200))
                        .label_font(("sans-serif", 13))
                        .draw()
                        .map_err(plot_error)?;
                }
            }};
        }
        match (options.log_x, options.log_y) {
            (true, true) => draw!(
                (x0..x1).log_scale().with_key_points(log_ticks(x0, x1)),
                (y0..y1).log_scale().with_key_points(log_ticks(y0, y1))
            ),
            (true, false) => draw!(
                (x0..x1).log_scale().with_key_points(log_ticks(x0, x1)),
                y0..y1
            ),
            (false, true) => draw!(
                x0..x1,
                (y0..y1).log_scale().with_key_points(log_ticks(y0, y1))
            ),
            (false, false) => draw!(x0..x1, y0..y1),
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_titles_carry_units() {
        assert_eq!(axis_title("step_time_us"), "step time (us)");
        assert_eq!(axis_title("tokens_per_s"), "tokens per second");
        assert_eq!(axis_title("attained_tflops"), "attained (TFLOP/s)");
        assert_eq!(
            axis_title("usd_per_million_tokens"),
            "USD per million tokens"
        );
        assert_eq!(axis_title("batch"), "batch");
        assert_eq!(
            axis_title("tokens_per_s_per_chip"),
            "tokens per second per chip"
        );
        assert_eq!(axis_title("ms_per_token"), "ms per token");
    }
}
