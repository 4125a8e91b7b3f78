//! Pictures as SVG text: the roofline of one or more chips with a step's kernels placed on it,
//! and line charts of any sweep CSV. Drawn with plotters' SVG backend; text is plain SVG
//! `<text>`, so a file needs no font installed to open.
//!
//! This module owns what the pictures share: their size, the palette (chips' lines, kernel
//! kinds' markers and legend swatches), placing text labels so they do not collide, and the
//! ticks and titles of their axes.

mod chart;
mod point_labels;
mod roofline;
mod series;
mod title;
mod whiskers;

pub use chart::{sweep, SweepChart};
pub use roofline::roofline;

use plotters::prelude::*;

use crate::base::error::Error;
use crate::core::workload::KernelKind;

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
        // A scan streams each sequence's recurrent state as a KV read streams its cache.
        KernelKind::KvRead | KernelKind::Scan => RGBColor(60, 179, 113),
        KernelKind::Elementwise | KernelKind::Collective(_) => RGBColor(160, 160, 160),
    }
}

/// The legend entry a kernel kind falls under (collectives are drawn with the vector work).
fn legend_kind(kind: KernelKind) -> KernelKind {
    match kind {
        KernelKind::Gemm | KernelKind::Gemv => KernelKind::Gemm,
        KernelKind::Fused | KernelKind::KvRead | KernelKind::Elementwise => kind,
        KernelKind::Scan => KernelKind::KvRead,
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

/// The kernel kinds the legend names, in its order.
const KINDS: [(KernelKind, &str); 4] = [
    (KernelKind::Gemm, "GEMM / GEMV"),
    (KernelKind::Fused, "fused group"),
    (KernelKind::KvRead, "KV read"),
    (KernelKind::Elementwise, "elementwise"),
];

/// Fill opacity of a kernel's marker (and only of kernel markers, so a reader of the SVG can
/// tell them apart from the legend's swatches and the ridge points).
pub const MARKER_OPACITY: f64 = 0.55;

/// The legend box of every picture: a nearly opaque white ground, a light grey frame.
pub(super) const LEGEND_BACKGROUND: RGBAColor = RGBAColor(255, 255, 255, 0.9);
pub(super) const LEGEND_BORDER: RGBColor = RGBColor(200, 200, 200);
pub(super) const LEGEND_FONT: (&str, u32) = ("sans-serif", 13);

/// A CSV error as a message: a failure to read the file (its size limit reached, say) names
/// the file; a malformed row says where, after `what`.
fn csv_error(name: &str, e: csv::Error, what: &str) -> Error {
    if !e.is_io_error() {
        return Error::Plot(format!("{name}: {what}{e}").into());
    }
    match e.into_kind() {
        csv::ErrorKind::Io(source) => Error::Io {
            path: name.to_owned(),
            source,
        },
        kind => Error::Plot(format!("{name}: {what}{kind:?}").into()),
    }
}

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

/// Where a kernel's name may go around its marker of radius `r`, for a label `w` wide, in
/// order of preference: above, below, then right and left at rising heights, each time a
/// little further out.
fn kernel_label_offsets(r: i32, w: i32) -> Vec<(i32, i32)> {
    let mut offsets = Vec::new();
    for gap in [4, 24, 48] {
        offsets.push((-w / 2, -r - 16 - gap));
        offsets.push((-w / 2, r + gap));
        for step in [0, -1, 1, -2, 2] {
            offsets.push((r + gap, -8 + 16 * step));
            offsets.push((-r - gap - w, -8 + 16 * step));
        }
    }
    offsets
}

/// The largest magnitude an axis draws: plotters steps through an axis's ticks in f64, and
/// a span that overflows (1e308 padded by 5%) or a log range of more decades than it can
/// count never ends, so every range is checked here before plotters sees it.
pub const AXIS_LIMIT: f64 = 1e300;

/// A linear axis over `padded` (the data's `values` with room around them, the room clamped
/// to [`AXIS_LIMIT`]), checked before drawing: finite, with a span its ticks can step through;
/// otherwise an error naming `what` the axis shows and the values it would hold.
fn linear_axis(values: (f64, f64), padded: (f64, f64), what: &str) -> Result<(f64, f64), Error> {
    let within = |v: f64| v.abs() <= AXIS_LIMIT;
    let (lo, hi) = (padded.0.max(-AXIS_LIMIT), padded.1.min(AXIS_LIMIT));
    let magnitude = lo.abs().max(hi.abs());
    if within(values.0) && within(values.1) && hi - lo > magnitude * 1e-12 {
        return Ok((lo, hi));
    }
    Err(axis_error(
        values,
        what,
        "a linear axis holds values up to 1e300 in magnitude",
    ))
}

/// A log axis over `padded` (the room clamped to 1/[`AXIS_LIMIT`]..[`AXIS_LIMIT`]) for data
/// `values` inside those bounds and at most 300 decades apart; otherwise an error naming
/// `what` the axis shows and the values it would hold.
fn log_axis(values: (f64, f64), padded: (f64, f64), what: &str) -> Result<(f64, f64), Error> {
    let within = |v: f64| (1.0 / AXIS_LIMIT..=AXIS_LIMIT).contains(&v);
    let (lo, hi) = (padded.0.max(1.0 / AXIS_LIMIT), padded.1.min(AXIS_LIMIT));
    let (v0, v1) = values;
    if within(v0) && within(v1) && v1 / v0 <= AXIS_LIMIT && lo < hi {
        return Ok((lo, hi));
    }
    Err(axis_error(
        values,
        what,
        "a log axis holds values from 1e-300 to 1e300, at most 300 decades apart",
    ))
}

fn axis_error(values: (f64, f64), what: &str, holds: &str) -> Error {
    Error::Plot(
        format!(
            "cannot draw the picture: {what} runs from {} to {}, and {holds}",
            scientific(values.0),
            scientific(values.1)
        )
        .into(),
    )
}

/// Three significant digits in scientific notation: `1.7e308`, `2.5e-9`, `1e0`.
fn scientific(v: f64) -> String {
    let text = format!("{v:.2e}");
    match text.split_once('e') {
        Some((mantissa, exponent)) => {
            let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
            format!("{mantissa}e{exponent}")
        }
        None => text, // inf, NaN
    }
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
        // beyond what the prefixes name (only absurd inputs reach here): 1e300, 2.5e-9
        a if a >= 1e15 || (a > 0.0 && a < 1e-6) => scientific(v),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_refuse_ranges_plotters_cannot_finish() {
        let linear = |lo: f64, hi: f64| linear_axis((lo, hi), (lo, hi), "y");
        let log = |lo: f64, hi: f64| log_axis((lo, hi), (lo, hi), "x");
        assert_eq!(linear(0.0, 1e300).unwrap(), (0.0, 1e300));
        assert!(linear(0.0, f64::INFINITY).is_err());
        assert!(linear(-1.7e308, 1.7e308).is_err());
        assert!(linear(1.0, 1.0).is_err());
        assert!(linear(1e300, 1e300 * (1.0 + 1e-15)).is_err());
        assert!(linear(f64::NAN, 1.0).is_err());
        // the room around data at the limits is clamped, not refused
        let edge = linear_axis((-1e300, 1e300), (-1.1e300, 1.1e300), "y");
        assert_eq!(edge.unwrap(), (-1e300, 1e300));
        assert_eq!(log(1e-150, 1e150).unwrap(), (1e-150, 1e150));
        let edge = log_axis((1e-300, 0.1), (1e-300 / 1.3, 0.13), "x");
        assert_eq!(edge.unwrap(), (1e-300, 0.13));
        assert!(log(1e-300, 1e300).is_err());
        assert!(log(0.0, 1.0).is_err());
        assert!(log(1e-310, 1.0).is_err());
        assert!(log(1.0, f64::INFINITY).is_err());
        assert!(log(2.0, 1.0).is_err());
        let e = log_axis((1.7e308, 1.7e308), (1.3e308, f64::INFINITY), "`y`");
        let e = e.unwrap_err().to_string();
        assert!(
            e.contains("`y` runs from 1.7e308 to 1.7e308, and a log axis"),
            "{e}"
        );
    }

    #[test]
    fn ticks_of_absurd_values_stay_short() {
        assert_eq!(format_tick(1e300), "1e300");
        assert_eq!(format_tick(2.5e-9), "2.5e-9");
        assert_eq!(format_tick(-3e20), "-3e20");
        assert_eq!(format_tick(0.001), "0.001");
        assert_eq!(format_tick(2.5e6), "2.5M");
        assert!(log_ticks(1e-150, 1e150).len() <= 301);
    }

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
