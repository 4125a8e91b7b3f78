//! A priced report's rows: its params as cells, its summary row, a row per kernel, a
//! comparison's rows and a plan's, and the 80 % bands a report's numbers carry. The CSV, JSON
//! and typed tables of `run`, `compare` and `plan` are written from them.

use super::{
    param_columns, CompareRow, KernelName, KernelRow, PlanRow, ScenarioLabel, SummaryRow,
    WhatIfCells,
};
use crate::base::param::ScenarioParam;
use crate::core::timing::StepReport;
use crate::study::band::{of_step, Band};
use crate::study::plan::{PlanEntry, PlanRequest};
use crate::study::serving::ServingBand;

/// A report's params as row cells: column names and values.
pub(crate) struct ParamCells {
    columns: Vec<String>,
    values: Vec<f64>,
}

impl ParamCells {
    pub(crate) fn of(report: &StepReport) -> ParamCells {
        ParamCells {
            columns: param_columns(report.params.iter().map(|(n, _)| n.as_str())),
            values: report.params.iter().map(|(_, v)| *v).collect(),
        }
    }
}

/// The label columns of a report.
fn label<'a>(report: &'a StepReport, cells: &'a ParamCells) -> ScenarioLabel<'a> {
    ScenarioLabel {
        workload: &report.workload,
        chip: &report.chip,
        engine: &report.engine,
        mode: report.mode,
        fusion: &report.fusion,
        dtypes: report.dtypes,
        param_columns: &cells.columns,
        params: &cells.values,
        what_if: WhatIfCells::NONE,
    }
}

/// The 80 % band of a report's step: by its kind (from its `tokens` param) and its chip's
/// family; none in roofline mode.
pub(crate) fn band_of(report: &StepReport) -> Option<Band> {
    let tokens = (report.params.iter())
        .find(|(name, _)| name == ScenarioParam::Tokens.name())
        .map(|(_, v)| *v);
    of_step(report.mode, tokens, report.chip_family.as_deref())
}

/// The 80 % bands of a report's request, as a serving point's numbers take them (none in
/// roofline mode or without a request).
pub(crate) fn request_band_of(report: &StepReport) -> Option<ServingBand> {
    let family = report.chip_family.as_deref();
    (report.request.as_ref()).and_then(|_| ServingBand::of(report.mode, family))
}

/// The summary row of a run.
pub(crate) fn summary_row<'a>(report: &'a StepReport, cells: &'a ParamCells) -> SummaryRow<'a> {
    SummaryRow {
        label: label(report, cells),
        outcome: Ok(&report.summary),
        request: report.request.as_ref(),
        band: band_of(report),
        request_band: request_band_of(report),
    }
}

/// A row per kernel of a run.
pub(crate) fn kernel_rows<'a>(report: &'a StepReport, cells: &'a ParamCells) -> Vec<KernelRow<'a>> {
    (report.prices.iter())
        .map(|p| KernelRow {
            label: label(report, cells),
            kernel: Some(KernelName {
                name: &p.name,
                block: &p.block,
                kind: p.kind.name(),
            }),
            cost: Some(&p.cost),
            priced_by: &p.priced_by,
            step_time_s: report.summary.step_time_s,
            error: "",
        })
        .collect()
}

/// A row per chip of a comparison, each with its speed relative to the first's.
pub(crate) fn compare_rows<'a>(
    reports: &'a [StepReport],
    cells: &'a [ParamCells],
) -> Vec<CompareRow<'a>> {
    let first = reports.first().map(|r| r.summary.step_time_s);
    (reports.iter().zip(cells))
        .map(|(r, cells)| CompareRow {
            summary: summary_row(r, cells),
            relative_speed: first.map(|t| t / r.summary.step_time_s),
        })
        .collect()
}

/// A row per chip and choice of types of a plan (those that cannot meet it only if asked).
pub(crate) fn plan_rows<'a>(
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
