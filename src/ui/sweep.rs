//! A request's sweep: its grid checked against the server's cap on scenarios before any axis
//! is expanded, its work and answer counted (`budget`), then priced into memory in the format
//! asked for, as `stepcost sweep` would write it with the same flags.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::budget::{past_limit, row_bytes, Answer, Budget, Capped};
use super::error::ApiError;
use super::request::ScenarioRequest;
use super::state::{self, State};
use crate::core::chip::Chip;
use crate::core::workload::Workload;
use crate::export::stream::{StreamFormat, SweepRows};
use crate::study::sweep::{self, Axes, Grid, SweepOptions};

/// A sweep loaded and counted, not yet priced.
pub(crate) struct Planned {
    /// The answer's bytes, as the budget estimates them.
    answer_bytes: u64,
    workload: Arc<Workload>,
    chips: Vec<Chip>,
    format: StreamFormat,
}

/// Loads the request's sweep and counts it: refused past the scenarios' cap (before any axis
/// is expanded); its budget for `format`, drawn as a chart when `chart`.
pub(crate) fn plan(
    state: &State,
    request: &ScenarioRequest,
    format: StreamFormat,
    chart: bool,
) -> Result<(Planned, Budget), ApiError> {
    let workload = state.workload(request)?;
    let chips = state::chips(request)?;
    let params = request.sweep_params()?;
    let dtypes = request.sweep_types()?;
    let fusions = request.sweep_fusions();
    let limit = state.limits.max_scenarios;
    let cap = request.sweep.max_scenarios.map_or(limit, |m| m.min(limit));
    let engines = request.sweep.engine.len().max(1);
    let engines = match request.sweep.engine.as_slice() {
        [all] if all == "all" => crate::core::engine::builtin_ids().count(),
        _ => engines,
    };
    let size = sweep::grid_len(
        &workload,
        chips.len() * engines,
        params.iter().map(|(_, values)| values.len()),
        dtypes.iter().map(|(_, types)| types.len()),
        &fusions,
    );
    let scenarios = match size {
        Some(n) if n <= cap => n,
        n => {
            return Err(ApiError::bad(format!(
                "the sweep has {} scenarios, more than the limit of {cap} per request; narrow an \
                 axis, or run `stepcost sweep` on the command line",
                n.map_or("more than 2^64".to_owned(), |n| n.to_string()),
            )))
        }
    };
    let columns = SweepRows::new(&workload, format, false).column_types();
    let names = columns.iter().map(|(name, _)| name.as_str());
    let row_bytes = row_bytes(names, format == StreamFormat::JsonLines);
    let answer = match chart {
        true => Answer::Chart { row_bytes },
        false => Answer::Rows { row_bytes },
    };
    // The grid's count is of every chip's scenarios: the budget's, of each chip's.
    let per_chip = scenarios / chips.len().max(1) as u64;
    let budget = Budget::of(answer, &workload, chips.len(), per_chip);
    let planned = Planned {
        answer_bytes: budget.answer_bytes,
        workload,
        chips,
        format,
    };
    Ok((planned, budget))
}

/// The rows of a planned sweep, at most the answer limit's bytes; `cancel` stops it (its
/// request is gone).
pub(crate) fn rows(
    state: &State,
    request: &ScenarioRequest,
    planned: Planned,
    cancel: &AtomicBool,
) -> Result<Vec<u8>, ApiError> {
    let Planned {
        answer_bytes: planned_bytes,
        workload,
        chips,
        format,
    } = planned;
    let spec = request.spec()?;
    let sink = SweepRows::new(&workload, format, false);
    let axes = Axes {
        chips,
        engines: request.sweep_engines()?,
        params: (request.sweep_params()?.into_iter())
            .map(|(name, values)| (name, values.expand()))
            .collect(),
        dtypes: request.sweep_types()?,
        fusions: request.sweep_fusions(),
        mode: spec.mode,
        memory_utilization: spec.memory_utilization,
    };
    let grid = Grid::new(&workload, axes)?;
    let mut out = Capped::new(state.limits.answer_bytes, planned_bytes);
    let options = SweepOptions::default();
    let quiet = |_| {};
    #[cfg(feature = "parquet")]
    if format == StreamFormat::Parquet {
        let columns = sink.column_types();
        let mut file =
            crate::export::parquet::ParquetFile::new(&mut out, columns).map_err(failed)?;
        sweep::run(&grid, options, &sink, &mut file, &quiet, cancel).map_err(failed)?;
        file.finish().map_err(failed)?;
        return Ok(out.into_inner());
    }
    sweep::run(&grid, options, &sink, &mut out, &quiet, cancel).map_err(failed)?;
    Ok(out.into_inner())
}

/// A sweep's error: 413 where the answer passed its limit, else the command line's message.
fn failed<E: std::error::Error + Send + Sync + 'static>(error: E) -> ApiError {
    past_limit(&error).unwrap_or_else(|| anyhow::Error::from(error).into())
}
