//! A request's sweep: its grid checked against the server's cap on scenarios before any axis
//! is expanded, then priced into memory in the format asked for, as `stepcost sweep` would
//! write it with the same flags.

use std::sync::atomic::AtomicBool;

use super::error::ApiError;
use super::request::ScenarioRequest;
use super::state::{self, State};
use crate::export::stream::{StreamFormat, SweepRows};
use crate::study::sweep::{self, Axes, Grid, SweepOptions};

/// The rows of the request's sweep; `cancel` stops it (its request is gone).
pub(crate) fn rows(
    state: &State,
    request: &ScenarioRequest,
    format: StreamFormat,
    cancel: &AtomicBool,
) -> Result<Vec<u8>, ApiError> {
    let workload = state.workload(request)?;
    let chips = state::chips(request)?;
    let spec = request.spec()?;
    let params = request.sweep_params()?;
    let dtypes = request.sweep_types()?;
    let fusions = request.sweep_fusions();
    let limit = state.limits.max_scenarios;
    let cap = request.sweep.max_scenarios.map_or(limit, |m| m.min(limit));
    let size = sweep::grid_len(
        &workload,
        chips.len(),
        params.iter().map(|(_, values)| values.len()),
        dtypes.iter().map(|(_, types)| types.len()),
        &fusions,
    );
    match size {
        Some(n) if n <= cap => {}
        n => {
            return Err(ApiError::bad(format!(
                "the sweep has {} scenarios, more than the limit of {cap} per request; narrow an \
                 axis, or run `stepcost sweep` on the command line",
                n.map_or("more than 2^64".to_owned(), |n| n.to_string()),
            )))
        }
    }
    let sink = SweepRows::new(&workload, format, false);
    let axes = Axes {
        chips,
        params: (params.into_iter())
            .map(|(name, values)| (name, values.expand()))
            .collect(),
        dtypes,
        fusions,
        mode: spec.mode,
        memory_utilization: spec.memory_utilization,
    };
    let grid = Grid::new(&workload, axes)?;
    let mut out = Vec::new();
    let options = SweepOptions::default();
    let quiet = |_| {};
    #[cfg(feature = "parquet")]
    if format == StreamFormat::Parquet {
        let columns = sink.column_types();
        let mut file = crate::export::parquet::ParquetFile::new(&mut out, columns)
            .map_err(anyhow::Error::from)?;
        sweep::run(&grid, options, &sink, &mut file, &quiet, cancel)
            .map_err(anyhow::Error::from)?;
        file.finish().map_err(anyhow::Error::from)?;
        return Ok(out);
    }
    sweep::run(&grid, options, &sink, &mut out, &quiet, cancel).map_err(anyhow::Error::from)?;
    Ok(out)
}
