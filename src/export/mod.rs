//! Turns priced steps and chip lists into bytes for people (tables with human-scaled units)
//! and programs (CSV and JSON, each number in the unit its column name ends with; see
//! `docs/columns.md`). Exporters write to any `io::Write`; where the bytes go is the caller's
//! business.

mod advice;
pub mod atomic;
pub mod band;
pub(crate) mod cells;
mod costs;
pub mod document;
mod escape;
pub mod filter;
pub mod fit;
pub mod launch;
mod models;
#[cfg(feature = "parquet")]
pub mod parquet;
mod plan_table;
pub mod rows;
pub mod serving;
pub mod serving_cases;
mod shaped;
pub mod simulate;
pub mod stream;
pub mod svg;
mod table;
pub mod top;
pub mod typed;

#[cfg(any(feature = "cli", feature = "ui"))]
pub use advice::{next_step_line, unfit_warning};
#[cfg(any(feature = "cli", feature = "ui"))]
pub use models::write_workloads;

use std::io::{self, Write};

use crate::base::dtype::DType;
use crate::base::param::ScenarioParam;
use crate::base::text::shown_as_is;
use crate::core::chip::Chip;
use crate::core::timing::StepReport;
use crate::study::band::{of_step, Band};
use crate::study::plan::{PlanEntry, PlanRequest};
use crate::study::serving::ServingBand;
use crate::study::validate::{ErrorStats, Outcome};
use rows::{
    CaseRow, ChipRow, CompareRow, CsvText, KernelName, KernelRow, PlanRow, Row, ScenarioLabel,
    Shape, StatsRow, SummaryRow,
};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// Aligned tables with human-scaled units (`1.11 ms`, `403 MB`).
    #[default]
    Table,
    /// Comma-separated values: numbers in the units their column names end with; a text cell
    /// a spreadsheet would run as a formula gets a `'` before it (see `rows::CsvText`).
    Csv,
    /// CSV with every text cell as it is (`--raw-text`).
    CsvRaw,
    /// JSON: numbers in the units their field names end with.
    Json,
}

impl OutputFormat {
    /// How the format writes text cells, for the CSV ones.
    fn csv_text(self) -> CsvText {
        match self {
            OutputFormat::CsvRaw => CsvText::Raw,
            _ => CsvText::Neutralised,
        }
    }
}

/// A report's params as row cells: column names and values.
struct ParamCells {
    columns: Vec<String>,
    values: Vec<f64>,
}

impl ParamCells {
    fn of(report: &StepReport) -> ParamCells {
        ParamCells {
            columns: rows::param_columns(report.params.iter().map(|(n, _)| n.as_str())),
            values: report.params.iter().map(|(_, v)| *v).collect(),
        }
    }
}

/// The label columns of a report.
fn label<'a>(report: &'a StepReport, cells: &'a ParamCells) -> ScenarioLabel<'a> {
    ScenarioLabel {
        workload: &report.workload,
        chip: &report.chip,
        mode: report.mode,
        fusion: &report.fusion,
        dtypes: report.dtypes,
        param_columns: &cells.columns,
        params: &cells.values,
        what_if: rows::WhatIfCells::NONE,
    }
}

/// The 80 % band of a report's step: by its kind (from its `tokens` param) and its chip's
/// family; none in roofline mode.
pub fn band_of(report: &StepReport) -> Option<Band> {
    let tokens = (report.params.iter())
        .find(|(name, _)| name == ScenarioParam::Tokens.name())
        .map(|(_, v)| *v);
    of_step(report.mode, tokens, report.chip_family.as_deref())
}

/// The 80 % bands of a report's request, as a serving point's numbers take them (none in
/// roofline mode or without a request).
pub fn request_band_of(report: &StepReport) -> Option<ServingBand> {
    let family = report.chip_family.as_deref();
    (report.request.as_ref()).and_then(|_| ServingBand::of(report.mode, family))
}

/// The summary row of a run.
fn summary_row<'a>(report: &'a StepReport, cells: &'a ParamCells) -> SummaryRow<'a> {
    SummaryRow {
        label: label(report, cells),
        outcome: Ok(&report.summary),
        request: report.request.as_ref(),
        band: band_of(report),
        request_band: request_band_of(report),
    }
}

/// A row per kernel of a run.
fn kernel_rows<'a>(report: &'a StepReport, cells: &'a ParamCells) -> Vec<KernelRow<'a>> {
    (report.prices.iter())
        .map(|p| KernelRow {
            label: label(report, cells),
            kernel: Some(KernelName {
                name: &p.name,
                block: &p.block,
                kind: p.kind.name(),
            }),
            cost: Some(&p.cost),
            step_time_s: report.summary.step_time_s,
            error: "",
        })
        .collect()
}

/// A row per chip of a comparison, each with its speed relative to the first's.
fn compare_rows<'a>(reports: &'a [StepReport], cells: &'a [ParamCells]) -> Vec<CompareRow<'a>> {
    let first = reports.first().map(|r| r.summary.step_time_s);
    (reports.iter().zip(cells))
        .map(|(r, cells)| CompareRow {
            summary: summary_row(r, cells),
            relative_speed: first.map(|t| t / r.summary.step_time_s),
        })
        .collect()
}

/// A row per chip and choice of types of a plan (those that cannot meet it only if asked).
fn plan_rows<'a>(
    workload: &'a str,
    request: &PlanRequest,
    entries: &'a [PlanEntry],
) -> Vec<PlanRow<'a>> {
    (entries.iter())
        .filter(|e| e.outcome.is_ok() || request.include_unfit)
        .map(|entry| PlanRow {
            workload,
            entry,
            target_tokens_per_s: request.target_tokens_per_s,
            max_ms_per_token: request.max_ms_per_token,
        })
        .collect()
}

/// Writes a run: its summary, and with `per_op` every kernel.
pub fn write_run(
    out: &mut dyn Write,
    report: &StepReport,
    per_op: bool,
    format: OutputFormat,
) -> io::Result<()> {
    write_run_shaped(out, report, per_op, format, &Shape::default())
}

/// [`write_run`] with the rows cut to `shape`: the summary's columns, or with `per_op` the
/// kernels' (then JSON is an array of kernel objects, the summary left out).
pub fn write_run_shaped(
    out: &mut dyn Write,
    report: &StepReport,
    per_op: bool,
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let cells = ParamCells::of(report);
    let summary = summary_row(report, &cells);
    let kernels = kernel_rows(report, &cells);
    if !shape.is_whole() {
        return match per_op {
            true => shaped::write(out, &kernels, format, shape, true),
            false => shaped::write(out, &[summary], format, shape, false),
        };
    }
    match format {
        OutputFormat::Table => for_terminal(out, |t| table::write_run(t, report, per_op)),
        OutputFormat::Csv | OutputFormat::CsvRaw if per_op => rows::write_rows(
            out,
            kernels.iter().map(|r| r as &dyn Row),
            format.csv_text(),
        ),
        OutputFormat::Csv | OutputFormat::CsvRaw => {
            rows::write_rows(out, [&summary as &dyn Row], format.csv_text())
        }
        OutputFormat::Json => {
            let mut value = rows::json_value(&summary);
            if per_op {
                let ops = kernels.iter().map(|k| rows::json_value(k)).collect();
                if let serde_json::Value::Object(map) = &mut value {
                    map.insert("ops".into(), serde_json::Value::Array(ops));
                }
            }
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// Writes one scenario priced on several chips, with each chip's speed relative to the
/// first's.
pub fn write_compare(
    out: &mut dyn Write,
    reports: &[StepReport],
    format: OutputFormat,
) -> io::Result<()> {
    write_compare_shaped(out, reports, format, &Shape::default())
}

/// [`write_compare`] with the rows cut to `shape`.
pub fn write_compare_shaped(
    out: &mut dyn Write,
    reports: &[StepReport],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let cells: Vec<ParamCells> = reports.iter().map(ParamCells::of).collect();
    let rows = compare_rows(reports, &cells);
    write_list(out, &rows, format, shape, |t| {
        table::write_compare(t, reports)
    })
}

/// Writes a plan: one row per chip and choice of types, best first.
pub fn write_plan(
    out: &mut dyn Write,
    workload: &str,
    request: &PlanRequest,
    entries: &[PlanEntry],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let rows = plan_rows(workload, request, entries);
    write_list(out, &rows, format, shape, |t| {
        plan_table::write_plan(t, workload, request, entries)
    })
}

/// `rows` as CSV or a JSON array, or the human table `table` writes.
fn write_list<R: Row>(
    out: &mut dyn Write,
    rows: &[R],
    format: OutputFormat,
    shape: &Shape,
    table: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    if !shape.is_whole() {
        return shaped::write(out, rows, format, shape, true);
    }
    match format {
        OutputFormat::Table => for_terminal(out, table),
        OutputFormat::Csv | OutputFormat::CsvRaw => {
            rows::write_rows(out, rows.iter().map(|r| r as &dyn Row), format.csv_text())
        }
        OutputFormat::Json => {
            let value: Vec<serde_json::Value> = rows.iter().map(|r| rows::json_value(r)).collect();
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// Writes a validation: every case, then the error statistics (table and JSON; CSV lists the
/// cases only).
pub fn write_validation(
    out: &mut dyn Write,
    outcomes: &[Outcome],
    stats: &[ErrorStats],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let cases: Vec<CaseRow> = outcomes.iter().map(CaseRow).collect();
    if !shape.is_whole() {
        return shaped::validation(out, &cases, stats, format, shape);
    }
    match format {
        OutputFormat::Table => for_terminal(out, |t| table::write_validation(t, outcomes, stats)),
        OutputFormat::Csv | OutputFormat::CsvRaw => {
            rows::write_rows(out, cases.iter().map(|r| r as &dyn Row), format.csv_text())
        }
        OutputFormat::Json => {
            let value = serde_json::json!({
                "cases": cases.iter().map(|r| rows::json_value(r)).collect::<Vec<_>>(),
                "errors": stats.iter().map(|s| rows::json_value(&StatsRow(s))).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// Writes the chip list: one row per chip and matrix-unit data type with a peak.
pub fn write_chips(
    out: &mut dyn Write,
    chips: &[Chip],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let rows: Vec<ChipRow> = chips
        .iter()
        .flat_map(|chip| {
            chip.matrix.peaks().map(move |(dtype, peak)| ChipRow {
                chip,
                dtype,
                peak_flop_per_s: peak,
            })
        })
        .collect();
    if !shape.is_whole() {
        return shaped::write(out, &rows, format, shape, true);
    }
    let rows = rows.iter().map(|r| r as &dyn Row);
    match format {
        OutputFormat::Table => for_terminal(out, |t| table::write_chips(t, chips)),
        OutputFormat::Csv | OutputFormat::CsvRaw => rows::write_rows(out, rows, format.csv_text()),
        OutputFormat::Json => {
            let value: Vec<serde_json::Value> = rows.map(rows::json_value).collect();
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// The data types of the chip list's table columns.
fn table_dtypes(chips: &[Chip]) -> Vec<DType> {
    DType::ALL
        .into_iter()
        .filter(|d| chips.iter().any(|c| c.matrix.peaks().any(|(x, _)| x == *d)))
        .collect()
}

/// Writes a human table with every character a terminal could act on (an escape sequence in
/// a chip's name, a line separator) shown as its escape (`\u{1b}`); line breaks stay. The
/// table's own text is printable, so only names from files can change.
fn for_terminal(
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut text = Vec::new();
    write(&mut text)?;
    let text = String::from_utf8_lossy(&text);
    if text.chars().all(|c| c == '\n' || shown_as_is(c)) {
        return out.write_all(text.as_bytes());
    }
    let mut inert = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\n' || shown_as_is(c) {
            inert.push(c);
        } else {
            inert.extend(c.escape_debug());
        }
    }
    out.write_all(inert.as_bytes())
}
