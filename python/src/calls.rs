//! The questions: one scenario (`run`), one scenario on several chips (`compare`), a grid of
//! scenarios or a shard of it (`sweep`, `grid_len`), and the chips a target needs (`plan`).
//! Each is the library's own call; the GIL is released while it prices.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use stepcost::{
    plan_assumptions as assumptions, Axes, Grid, PlanSort, Scenario, ScenarioSpec, Shard,
    StepReport, StreamFormat, SweepError, SweepOptions, SweepRows, TypedRows, TypedTable,
};

use crate::errors::{from_error, input, OrRaise};
use crate::inputs::{self, ChipArg, WorkloadArg};
use crate::tables::{row_dict, ArrowStream};

/// A priced scenario: its summary row and its kernels.
#[pyclass(module = "stepcost", frozen)]
pub struct Run {
    report: StepReport,
    summary: TypedTable,
}

#[pymethods]
impl Run {
    /// The summary's columns and values, as `run --format csv` writes them.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        row_dict(py, &self.summary, 0)
    }

    /// The kernels' rows, as `run --per-op --format csv` writes them.
    fn kernels(&self, py: Python<'_>) -> PyResult<ArrowStream> {
        let table = TypedTable::of_kernels(&self.report).or_raise()?;
        ArrowStream::of(py, table)
    }
}

/// The scenario choices shared by `run`, `compare` and `plan`.
fn spec(
    sets: Vec<(String, f64)>,
    dtypes: &[(String, String)],
    fusion: Option<String>,
    mode: &str,
    memory_utilization: Option<f64>,
    overlap_comm: bool,
) -> PyResult<ScenarioSpec> {
    Ok(ScenarioSpec {
        sets,
        dtypes: inputs::dtypes(dtypes)?,
        fusion,
        mode: inputs::mode(mode)?,
        overlap_comm,
        memory_utilization,
    })
}

#[pyfunction]
#[pyo3(signature = (workload, chip, sets, dtypes, fusion, mode, memory_utilization, overlap_comm, request))]
#[allow(clippy::too_many_arguments)]
pub fn run(
    py: Python<'_>,
    workload: WorkloadArg,
    chip: ChipArg,
    sets: Vec<(String, f64)>,
    dtypes: Vec<(String, String)>,
    fusion: Option<String>,
    mode: &str,
    memory_utilization: Option<f64>,
    overlap_comm: bool,
    request: Option<(u64, u64)>,
) -> PyResult<Run> {
    let workload = workload.load(py)?;
    let chip = inputs::chips(py, std::slice::from_ref(&chip))?.remove(0);
    let spec = spec(
        sets,
        &dtypes,
        fusion,
        mode,
        memory_utilization,
        overlap_comm,
    )?;
    let report = py
        .detach(|| {
            let scenario = Scenario::resolve(&workload, &spec)?;
            let report = stepcost::price(&workload, &chip, &scenario)?;
            match request {
                Some(r) => report.with_request(&workload, &chip, &scenario, r),
                None => Ok(report),
            }
        })
        .or_raise()?;
    let summary = TypedTable::of_run(&report).or_raise()?;
    Ok(Run { report, summary })
}

#[pyfunction]
#[pyo3(signature = (workload, chips, sets, dtypes, fusion, mode, memory_utilization, overlap_comm))]
#[allow(clippy::too_many_arguments)]
pub fn compare(
    py: Python<'_>,
    workload: WorkloadArg,
    chips: Vec<ChipArg>,
    sets: Vec<(String, f64)>,
    dtypes: Vec<(String, String)>,
    fusion: Option<String>,
    mode: &str,
    memory_utilization: Option<f64>,
    overlap_comm: bool,
) -> PyResult<ArrowStream> {
    let workload = workload.load(py)?;
    let chips = inputs::chips(py, &chips)?;
    let spec = spec(
        sets,
        &dtypes,
        fusion,
        mode,
        memory_utilization,
        overlap_comm,
    )?;
    let compared = py
        .detach(|| stepcost::compare(workload, chips, &spec))
        .or_raise()?;
    let reports: Vec<StepReport> = compared.reports.into_iter().map(|(_, r)| r).collect();
    ArrowStream::of(py, TypedTable::of_compare(&reports).or_raise()?)
}

/// A sweep as Python describes it: the axes and what each scenario prices.
#[derive(FromPyObject)]
pub struct SweepArgs<'py> {
    workload: WorkloadArg<'py>,
    chips: Vec<ChipArg<'py>>,
    params: Vec<(String, Vec<f64>)>,
    dtypes: Vec<(String, Vec<String>)>,
    fusions: Vec<String>,
    mode: String,
    memory_utilization: Option<f64>,
    skip_invalid: bool,
    per_op: bool,
    request: Option<(u64, u64)>,
    /// `(i, n)`: slice `i` of `n`.
    part: (u64, u64),
    filter: Option<String>,
    max_scenarios: u64,
}

/// The axes of `args`, and the shard.
fn axes(py: Python<'_>, args: &SweepArgs) -> PyResult<(Axes, Shard)> {
    let axes = Axes {
        chips: inputs::chips(py, &args.chips)?,
        params: args.params.clone(),
        dtypes: inputs::dtype_axes(&args.dtypes)?,
        fusions: args.fusions.clone(),
        mode: inputs::mode(&args.mode)?,
        memory_utilization: args.memory_utilization,
    };
    let shard = Shard::new(args.part.0, args.part.1).or_raise()?;
    Ok((axes, shard))
}

/// Scenarios in the grid `args` describes (all of it, whatever its shard).
#[pyfunction]
pub fn grid_len(py: Python<'_>, args: SweepArgs) -> PyResult<u64> {
    let workload = args.workload.load(py)?;
    let (axes, _) = axes(py, &args)?;
    let grid = Grid::new(&workload, axes).or_raise()?;
    grid.len()
        .ok_or_else(|| input("the grid has more than 2^64 scenarios"))
}

/// The rows of a sweep (or of its shard), as the command line's `sweep` makes them.
#[pyfunction]
pub fn sweep(py: Python<'_>, args: SweepArgs) -> PyResult<ArrowStream> {
    let workload = args.workload.load(py)?;
    let (axes, shard) = axes(py, &args)?;
    let grid = Grid::new(&workload, axes).or_raise()?;
    let total = grid.len().unwrap_or(u64::MAX);
    let range = shard.range(total);
    if range.end - range.start > args.max_scenarios {
        return Err(input(format!(
            "the sweep has {} scenarios, more than max_scenarios {}; narrow an axis, cut it into shards or raise the limit",
            range.end - range.start,
            args.max_scenarios
        )));
    }
    let mut sink = SweepRows::new(&workload, StreamFormat::Cells, args.per_op);
    if let Some(text) = &args.filter {
        sink = sink
            .filtered(text)
            .map_err(|e| input(format!("where: {e}")))?;
    }
    let options = SweepOptions {
        skip_invalid: args.skip_invalid,
        request: args.request,
        shard,
        header: false,
    };
    let mut rows = TypedRows::new(sink.column_types());
    // Ctrl-C stops the sweep within a chunk, as on the command line: after each chunk the
    // thread takes the GIL long enough to see whether Python has a signal pending.
    let interrupted: Mutex<Option<PyErr>> = Mutex::new(None);
    let swept = py.detach(|| {
        let cancel = AtomicBool::new(false);
        let progress = |_| {
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                cancel.store(true, Ordering::Relaxed);
                *interrupted.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
            }
        };
        stepcost::sweep(&grid, options, &sink, &mut rows, &progress, &cancel)
    });
    if let Some(e) = interrupted
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        return Err(e);
    }
    match swept {
        Ok(_) => {}
        Err(SweepError::Scenario { index, chip, error }) => {
            let context = format!("scenario {index} of the sweep (chip `{chip}`)");
            return Err(from_error(&error, Some(context)));
        }
        Err(SweepError::Write(e)) => return Err(input(e.to_string())),
    }
    if let Some(e) = sink.filter_error() {
        return Err(input(format!("where {e}; such rows were left out")));
    }
    ArrowStream::of(py, rows.finish().or_raise()?)
}

/// A plan as Python describes it.
#[derive(FromPyObject)]
pub struct PlanArgs<'py> {
    workload: WorkloadArg<'py>,
    chips: Vec<ChipArg<'py>>,
    target_tokens_per_s: Option<f64>,
    max_ms_per_token: Option<f64>,
    sets: Vec<(String, f64)>,
    dtypes: Vec<(String, Vec<String>)>,
    fusion: Option<String>,
    mode: String,
    memory_utilization: Option<f64>,
    sort: String,
    conservative: bool,
    include_unfit: bool,
}

/// Every chip and choice of types at the cheapest layout, ranked, as `plan` makes them.
#[pyfunction]
pub fn plan(py: Python<'_>, args: PlanArgs) -> PyResult<ArrowStream> {
    let workload = args.workload.load(py)?;
    let chips = inputs::chips(py, &args.chips)?;
    let sort = match args.sort.as_str() {
        "cost" => PlanSort::Cost,
        "chips" => PlanSort::Chips,
        "latency" => PlanSort::Latency,
        other => {
            return Err(input(format!(
                "unknown sort `{other}`; expected `cost`, `chips` or `latency`"
            )))
        }
    };
    let spec = spec(
        args.sets,
        &[],
        args.fusion,
        &args.mode,
        args.memory_utilization,
        false,
    )?;
    let scenario = Scenario::resolve(&workload, &spec).or_raise()?;
    let request = stepcost::PlanRequest {
        target_tokens_per_s: args.target_tokens_per_s,
        max_ms_per_token: args.max_ms_per_token,
        dtype_choices: stepcost::dtype_choices(
            *scenario.dtypes(),
            &inputs::dtype_axes(&args.dtypes)?,
        ),
        sort,
        conservative: args.conservative,
        include_unfit: args.include_unfit,
        assumed: assumptions(&workload, &scenario).or_raise()?,
        scenario,
    };
    let entries = py
        .detach(|| stepcost::plan(&workload, &chips, &request))
        .or_raise()?;
    let table = TypedTable::of_plan(workload.name(), &request, &entries).or_raise()?;
    ArrowStream::of(py, table)
}
