//! Turns priced steps and chip lists into bytes for people (tables with human-scaled units)
//! and programs (CSV and JSON with raw numbers and units in the column names). Exporters write
//! to any `io::Write`; where the bytes go is the caller's business.

mod csv;
mod json;
mod table;

use std::io::{self, Write};

use crate::chip::Chip;
use crate::dtype::DType;
use crate::price::{Price, StepReport};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Aligned tables with human-scaled units (`1.11 ms`, `403 MB`).
    #[default]
    Table,
    /// Comma-separated values: raw SI numbers, units in the column names.
    Csv,
    /// JSON: raw SI numbers, units in the field names.
    Json,
}

/// One value of a flat record.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    Num(f64),
    Int(u64),
    /// No value (a step without `tokens_per_step` has no tokens per second).
    Empty,
}

/// A flat record: named cells in a fixed order.
pub type Record = Vec<(String, Cell)>;

/// A run's summary as one flat record: what was priced, then one column per param, then the
/// totals. Times in microseconds, rates in TFLOP/s, everything else in SI units. A param whose
/// name is already a column gets a `param_` prefix.
pub fn summary_record(report: &StepReport) -> Record {
    let s = &report.summary;
    let text = |v: &str| Cell::Text(v.to_owned());
    let opt = |v: Option<f64>| v.map_or(Cell::Empty, Cell::Num);
    let head: Record = vec![
        ("workload".into(), text(&report.workload)),
        ("chip".into(), text(&report.chip)),
        ("mode".into(), text(report.mode.name())),
        ("fusion".into(), text(&report.fusion)),
        ("weight_dtype".into(), text(report.dtypes.weight.name())),
        (
            "activation_dtype".into(),
            text(report.dtypes.activation.name()),
        ),
        ("kv_dtype".into(), text(report.dtypes.kv.name())),
    ];
    let tail: Record = vec![
        ("step_time_us".into(), Cell::Num(s.step_time_s * 1e6)),
        ("flops".into(), Cell::Num(s.flops)),
        ("bytes".into(), Cell::Num(s.bytes)),
        (
            "intensity_flop_per_byte".into(),
            Cell::Num(s.intensity_flop_per_byte),
        ),
        (
            "attained_tflops".into(),
            Cell::Num(s.attained_flop_per_s / 1e12),
        ),
        ("mfu".into(), Cell::Num(s.mfu)),
        ("mbu".into(), Cell::Num(s.mbu)),
        ("kernels".into(), Cell::Int(s.kernels)),
        ("tokens_per_step".into(), opt(s.tokens_per_step)),
        ("tokens_per_s".into(), opt(s.tokens_per_s)),
        (
            "compute_bound_share".into(),
            Cell::Num(s.compute_bound_share),
        ),
        ("memory_bound_share".into(), Cell::Num(s.memory_bound_share)),
        ("weight_bytes".into(), Cell::Num(s.weight_bytes)),
        ("kv_bytes".into(), Cell::Num(s.kv_bytes)),
        ("fits".into(), text(if s.fits { "true" } else { "false" })),
    ];
    let taken = |name: &str| head.iter().chain(&tail).any(|(c, _)| c == name);
    let params: Record = report
        .params
        .iter()
        .map(|(name, value)| {
            let column = if taken(name) {
                format!("param_{name}")
            } else {
                name.clone()
            };
            (column, Cell::Num(*value))
        })
        .collect();
    head.into_iter().chain(params).chain(tail).collect()
}

/// One kernel as a flat record; `flops`, `bytes` and times are for one execution.
pub fn price_record(p: &Price) -> Record {
    vec![
        ("op".into(), Cell::Text(p.name.clone())),
        ("block".into(), Cell::Text(p.block.clone())),
        ("kind".into(), Cell::Text(p.kind.into())),
        ("count".into(), Cell::Int(p.count)),
        ("flops".into(), Cell::Num(p.flops)),
        ("bytes".into(), Cell::Num(p.bytes)),
        (
            "intensity_flop_per_byte".into(),
            Cell::Num(p.intensity_flop_per_byte),
        ),
        (
            "compute_dtype".into(),
            Cell::Text(p.compute_dtype.name().into()),
        ),
        ("unit".into(), Cell::Text(p.unit.name().into())),
        ("bound".into(), Cell::Text(p.bound.name().into())),
        ("compute_time_us".into(), Cell::Num(p.compute_time_s * 1e6)),
        ("memory_time_us".into(), Cell::Num(p.memory_time_s * 1e6)),
        ("time_us".into(), Cell::Num(p.time_s * 1e6)),
        (
            "attainable_tflops".into(),
            Cell::Num(p.attainable_flop_per_s / 1e12),
        ),
        ("share".into(), Cell::Num(p.share)),
    ]
}

/// One row per chip and matrix-unit data type with a peak.
pub fn chip_records(chips: &[Chip]) -> Vec<Record> {
    let opt = |v: Option<f64>| v.map_or(Cell::Empty, Cell::Num);
    let mut rows = Vec::new();
    for chip in chips {
        for (dtype, peak) in chip.matrix.peaks() {
            let vector = chip.vector_peak(dtype).ok().map(|(_, p)| p / 1e12);
            rows.push(vec![
                ("chip".into(), Cell::Text(chip.id.clone())),
                ("name".into(), Cell::Text(chip.name.clone())),
                ("dtype".into(), Cell::Text(dtype.name().into())),
                ("peak_tflops".into(), Cell::Num(peak / 1e12)),
                (
                    "bandwidth_tb_s".into(),
                    Cell::Num(chip.bandwidth_bytes_per_s / 1e12),
                ),
                (
                    "ridge_flop_per_byte".into(),
                    Cell::Num(peak / chip.bandwidth_bytes_per_s),
                ),
                ("capacity_gb".into(), Cell::Num(chip.capacity_bytes / 1e9)),
                ("vector_tflops".into(), opt(vector)),
                (
                    "cache_mb".into(),
                    opt(chip.cache.as_ref().map(|c| c.size_bytes / 1e6)),
                ),
                ("launch_us".into(), opt(chip.launch_s.map(|s| s * 1e6))),
                ("usd_per_hour".into(), opt(chip.price_usd_per_hour)),
            ]);
        }
    }
    rows
}

/// Writes a run: its summary, and with `per_op` every kernel.
pub fn write_run(
    out: &mut dyn Write,
    report: &StepReport,
    per_op: bool,
    format: Format,
) -> io::Result<()> {
    match format {
        Format::Table => table::write_run(out, report, per_op),
        Format::Csv if per_op => csv::write_records(
            out,
            &report.prices.iter().map(price_record).collect::<Vec<_>>(),
        ),
        Format::Csv => csv::write_records(out, &[summary_record(report)]),
        Format::Json => json::write_run(out, report, per_op),
    }
}

/// Writes the chip list: peaks, bandwidth and ridge point per chip and data type.
pub fn write_chips(out: &mut dyn Write, chips: &[Chip], format: Format) -> io::Result<()> {
    match format {
        Format::Table => table::write_chips(out, chips),
        Format::Csv => csv::write_records(out, &chip_records(chips)),
        Format::Json => json::write_records(out, &chip_records(chips)),
    }
}

/// The data types of the chip list's table columns.
fn table_dtypes(chips: &[Chip]) -> Vec<DType> {
    DType::ALL
        .into_iter()
        .filter(|d| chips.iter().any(|c| c.matrix.peaks().any(|(x, _)| x == *d)))
        .collect()
}
