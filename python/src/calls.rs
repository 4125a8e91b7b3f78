//! The questions: one scenario (`run`), one scenario on several chips (`compare`), a grid of
//! scenarios or a shard of it (`sweep`, `grid_len`), and the chips a target needs (`plan`).
//! Each is the library's own call; the GIL is released while it prices.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use stepcost::engine::Engine;

use stepcost::internals::ranges;
use stepcost::internals::sweep::{grid_len as axes_len, AxisValues};
use stepcost::{
    plan::assumptions, plan::PlanSort, sweep::Axes, sweep::Grid, sweep::Shard, sweep::StreamFormat,
    sweep::SweepError, sweep::SweepOptions, sweep::SweepRows, sweep::TypedRows, sweep::TypedTable,
    types::Format, types::TypeKey, workload::ScenarioParam, Chip, Mode, Scenario, ScenarioSpec,
    StepReport, Workload,
};

use crate::errors::{from_error, input, OrRaise};
use crate::flags;
use crate::inputs::{self, ChipArg, WorkloadArg};
use crate::memory::{Budget, Cap, Measured, RowBytes};
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

/// The scenario choices shared by `run`, `compare` and `plan`: each param's value and the
/// memory utilisation as the command line's text, read by its flag's parser.
fn spec(
    sets: &[(String, String)],
    dtypes: &[(String, String)],
    fusion: Option<String>,
    mode: &str,
    memory_utilization: Option<&str>,
    overlap_comm: bool,
) -> PyResult<ScenarioSpec> {
    Ok(ScenarioSpec {
        sets: flags::sets(sets)?,
        dtypes: inputs::dtypes(dtypes)?,
        fusion,
        mode: inputs::mode(mode)?,
        overlap_comm,
        memory_utilization: memory_utilization_flag(memory_utilization)?,
        engine: None,
    })
}

/// The engine `--engine` names (a built-in id or an engine file), or none.
fn engine(name: Option<&str>) -> PyResult<Option<Arc<Engine>>> {
    name.map(stepcost::engine::resolve).transpose().or_raise()
}

/// The engines a list names (`all`: every built-in), as `plan --engine` reads them.
fn engines(names: &[String]) -> PyResult<Vec<Arc<Engine>>> {
    match names {
        [all] if all == "all" => stepcost::engine::builtin_ids()
            .map(stepcost::engine::builtin)
            .collect::<Result<Vec<_>, _>>()
            .or_raise(),
        names => names
            .iter()
            .map(|n| stepcost::engine::resolve(n))
            .collect::<Result<Vec<_>, _>>()
            .or_raise(),
    }
}

/// `memory_utilization` as `--memory-utilization` reads it.
fn memory_utilization_flag(text: Option<&str>) -> PyResult<Option<f64>> {
    flags::number("memory_utilization", text, &ranges::MEMORY_UTILIZATION)
}

#[pyfunction]
#[pyo3(signature = (workload, chip, sets, dtypes, fusion, mode, memory_utilization, overlap_comm, request, engine=None))]
#[allow(clippy::too_many_arguments)]
pub fn run(
    py: Python<'_>,
    workload: WorkloadArg,
    chip: ChipArg,
    sets: Vec<(String, String)>,
    dtypes: Vec<(String, String)>,
    fusion: Option<String>,
    mode: &str,
    memory_utilization: Option<&str>,
    overlap_comm: bool,
    request: Option<&str>,
    engine: Option<&str>,
) -> PyResult<Run> {
    let mut spec = spec(
        &sets,
        &dtypes,
        fusion,
        mode,
        memory_utilization,
        overlap_comm,
    )?;
    spec.engine = self::engine(engine)?;
    let request = flags::request(request)?;
    let workload = workload.load(py)?;
    // One chip, as `run --chip` takes it: `all` is no chip's name here.
    let chip = chip.load(py)?;
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
#[pyo3(signature = (workload, chips, sets, dtypes, fusion, mode, memory_utilization, overlap_comm, engine=None))]
#[allow(clippy::too_many_arguments)]
pub fn compare(
    py: Python<'_>,
    workload: WorkloadArg,
    chips: Vec<ChipArg>,
    sets: Vec<(String, String)>,
    dtypes: Vec<(String, String)>,
    fusion: Option<String>,
    mode: &str,
    memory_utilization: Option<&str>,
    overlap_comm: bool,
    engine: Option<&str>,
) -> PyResult<ArrowStream> {
    let mut spec = spec(
        &sets,
        &dtypes,
        fusion,
        mode,
        memory_utilization,
        overlap_comm,
    )?;
    spec.engine = self::engine(engine)?;
    inputs::some_chips(&chips, "compare")?;
    let workload = workload.load(py)?;
    let chips = inputs::chips(py, &chips)?;
    let compared = py
        .detach(|| stepcost::timing::compare(workload, chips, &spec))
        .or_raise()?;
    let reports: Vec<StepReport> = compared.reports.into_iter().map(|(_, r)| r).collect();
    ArrowStream::of(py, TypedTable::of_compare(&reports).or_raise()?)
}

/// A sweep as Python describes it: the axes and what each scenario prices, each number as
/// the command line's text.
#[derive(FromPyObject)]
pub struct SweepArgs<'py> {
    workload: WorkloadArg<'py>,
    chips: Vec<ChipArg<'py>>,
    /// Engines as `--engine` lists them (`all`: every built-in); none: each chip's default.
    engines: Vec<String>,
    /// `(name, list)`: a param's values as `--set NAME=LIST` writes them.
    params: Vec<(String, String)>,
    dtypes: Vec<(String, Vec<String>)>,
    fusions: Vec<String>,
    mode: String,
    memory_utilization: Option<String>,
    skip_invalid: bool,
    per_op: bool,
    request: Option<String>,
    /// `(i, n)`: slice `i` of `n`.
    part: (u64, u64),
    filter: Option<String>,
    max_scenarios: String,
}

/// A sweep's flags, read: everything but the files.
struct SweepFlags {
    params: Vec<(String, AxisValues)>,
    dtypes: Vec<(TypeKey, Vec<Format>)>,
    mode: Mode,
    memory_utilization: Option<f64>,
    request: Option<(u64, u64)>,
    shard: Shard,
    max_scenarios: u64,
}

impl SweepArgs<'_> {
    fn flags(&self) -> PyResult<SweepFlags> {
        Ok(SweepFlags {
            params: flags::axes(&self.params)?,
            dtypes: inputs::dtype_axes(&self.dtypes)?,
            mode: inputs::mode(&self.mode)?,
            memory_utilization: memory_utilization_flag(self.memory_utilization.as_deref())?,
            request: flags::request(self.request.as_deref())?,
            shard: Shard::new(self.part.0, self.part.1).or_raise()?,
            max_scenarios: flags::count(
                "max_scenarios",
                &self.max_scenarios,
                &ranges::MAX_SCENARIOS,
            )?,
        })
    }
}

/// Reads a sweep's flags without loading its files, so that a bad value is refused where the
/// grid is described.
#[pyfunction]
pub fn check_grid(args: SweepArgs) -> PyResult<()> {
    args.flags().map(drop)
}

/// A shard `I/N` as `--shard` reads it: `(i, n)`.
#[pyfunction]
pub fn shard(text: &str) -> PyResult<(u64, u64)> {
    let shard = flags::shard(text)?;
    Ok((shard.index(), shard.count()))
}

/// A sweep's workload, chips and flags, loaded and read; the grid's size counted before its
/// axes are made.
struct Loaded {
    workload: Workload,
    chips: Vec<Chip>,
    /// The engine axis, after the chips (empty: each chip file's engine).
    engines: Vec<Arc<Engine>>,
    flags: SweepFlags,
    /// Scenarios in the whole grid, if fewer than 2^64.
    size: Option<u64>,
}

fn load(py: Python<'_>, args: &SweepArgs) -> PyResult<Loaded> {
    let flags = args.flags()?;
    let workload = args.workload.load(py)?;
    let chips = inputs::chips(py, &args.chips)?;
    let engines = engines(&args.engines)?;
    let size = axes_len(
        &workload,
        // The engine axis multiplies the chips' (one value where none is given).
        chips.len().saturating_mul(engines.len().max(1)),
        flags.params.iter().map(|(_, values)| values.len()),
        flags.dtypes.iter().map(|(_, formats)| formats.len()),
        &args.fusions,
    );
    Ok(Loaded {
        workload,
        chips,
        engines,
        flags,
        size,
    })
}

impl Loaded {
    /// The scenarios in the whole grid, refused (as the command line refuses them, before
    /// any axis is made) when its shard holds more than `max_scenarios`.
    fn total(&self) -> PyResult<u64> {
        let shard = self.flags.shard;
        let most = self.flags.max_scenarios;
        let priced = (self.size).map(|n| shard.range(n)).map(|r| r.end - r.start);
        match (priced, self.size) {
            (Some(n), Some(total)) if n <= most => Ok(total),
            (Some(n), Some(total)) if shard.count() > 1 => Err(input(format!(
                "shard {shard} of the sweep has {n} scenarios (of {total}), more than \
                 max_scenarios {most}; cut it into more shards, narrow an axis or raise the limit"
            ))),
            (n, _) => Err(input(format!(
                "the sweep has {} scenarios, more than max_scenarios {most}; narrow an axis, cut \
                 it into shards or raise the limit",
                n.map_or("more than 2^64".to_owned(), |n| n.to_string()),
            ))),
        }
    }

    /// The grid, its axes made.
    fn grid(&self, args: &SweepArgs) -> PyResult<Grid<'_>> {
        let axes = Axes {
            chips: self.chips.clone(),
            engines: self.engines.clone(),
            params: (self.flags.params.iter())
                .map(|(name, values)| (name.clone(), values.expand()))
                .collect(),
            dtypes: self.flags.dtypes.clone(),
            fusions: args.fusions.clone(),
            mode: self.flags.mode,
            memory_utilization: self.flags.memory_utilization,
        };
        Grid::new(&self.workload, axes).or_raise()
    }
}

/// Scenarios in the grid `args` describes (all of it, whatever its shard or its
/// `max_scenarios`).
#[pyfunction]
pub fn grid_len(py: Python<'_>, args: SweepArgs) -> PyResult<u64> {
    let loaded = load(py, &args)?;
    loaded.grid(&args)?;
    (loaded.size).ok_or_else(|| input("the grid has more than 2^64 scenarios"))
}

/// The rows of a sweep (or of its shard), as the command line's `sweep` makes them, into a
/// table of at most `max_memory_bytes` (`memory_origin` says where that figure comes from).
#[pyfunction]
pub fn sweep(
    py: Python<'_>,
    args: SweepArgs,
    max_memory_bytes: u64,
    memory_origin: String,
) -> PyResult<ArrowStream> {
    let loaded = load(py, &args)?;
    let total = loaded.total()?;
    let grid = loaded.grid(&args)?;
    let workload = &loaded.workload;
    let mut sink = SweepRows::new(workload, StreamFormat::Cells, args.per_op);
    if let Some(text) = &args.filter {
        sink = sink
            .filtered(text)
            .map_err(|e| input(format!("where: {e}")))?;
    }
    let options = SweepOptions {
        skip_invalid: args.skip_invalid,
        request: loaded.flags.request,
        shard: loaded.flags.shard,
        header: false,
    };
    let scenarios = options.shard.range(total);
    let cap = Cap {
        bytes: max_memory_bytes,
        origin: memory_origin,
    };
    let plans = axes_len(workload, 1, [], [], &args.fusions).unwrap_or(1);
    let row = py.detach(|| {
        RowBytes::measure(&Measured {
            workload,
            grid: &grid,
            chips: &loaded.chips,
            options,
            sink: &sink,
            per_op: args.per_op,
            plans,
            scenarios: scenarios.clone(),
            total,
        })
    });
    // Without a filter every scenario keeps its rows: refuse before pricing any. With one,
    // the rows kept are counted as they come (as they are anyway, should the estimate be
    // short).
    if args.filter.is_none() {
        row.check(scenarios.end - scenarios.start, &cap)?;
    }
    let mut rows = TypedRows::new(sink.column_types());
    // Ctrl-C stops the sweep within a chunk, as on the command line: after each chunk the
    // thread takes the GIL long enough to see whether Python has a signal pending.
    let interrupted: Mutex<Option<PyErr>> = Mutex::new(None);
    let cancel = AtomicBool::new(false);
    let budget = Budget::new(&sink, &row, &cap, &cancel);
    let swept = py.detach(|| {
        let progress = |_| {
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                cancel.store(true, Ordering::Relaxed);
                *interrupted.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
            }
        };
        stepcost::sweep::run(&grid, options, &budget, &mut rows, &progress, &cancel)
    });
    if let Some(e) = interrupted
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        return Err(e);
    }
    if budget.passed() {
        return Err(budget.error(&cap));
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
    target_tokens_per_s: Option<String>,
    max_ms_per_token: Option<String>,
    context: Option<String>,
    sets: Vec<(String, String)>,
    dtypes: Vec<(String, Vec<String>)>,
    fusion: Option<String>,
    mode: String,
    memory_utilization: Option<String>,
    sort: String,
    conservative: bool,
    include_unfit: bool,
    /// Engines to search (`all`: every built-in); empty: each chip's default.
    engines: Vec<String>,
}

/// Every chip and choice of types at the cheapest layout, ranked, as `plan` makes them.
#[pyfunction]
pub fn plan(py: Python<'_>, args: PlanArgs) -> PyResult<ArrowStream> {
    let target_tokens_per_s = flags::number(
        "target_tokens_per_s",
        args.target_tokens_per_s.as_deref(),
        &ranges::TARGET_TOKENS_PER_S,
    )?;
    let max_ms_per_token = flags::number(
        "max_ms_per_token",
        args.max_ms_per_token.as_deref(),
        &ranges::MAX_MS_PER_TOKEN,
    )?;
    let context = (args.context.as_deref())
        .map(|t| flags::count("context", t, &ranges::CONTEXT))
        .transpose()?;
    let dtype_axes = inputs::dtype_axes(&args.dtypes)?;
    let mut spec = spec(
        &args.sets,
        &[],
        args.fusion,
        &args.mode,
        args.memory_utilization.as_deref(),
        false,
    )?;
    if let Some(context) = context {
        spec.sets
            .push((ScenarioParam::Context.name().to_owned(), context as f64));
    }
    inputs::some_chips(&args.chips, "a plan")?;
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
    let scenario = Scenario::resolve(&workload, &spec).or_raise()?;
    let request = stepcost::plan::PlanRequest {
        target_tokens_per_s,
        max_ms_per_token,
        dtype_choices: stepcost::plan::dtype_choices(*scenario.dtypes(), &dtype_axes),
        engines: engines(&args.engines)?,
        engine_types: stepcost::plan::leaves_types_to_engine(&dtype_axes),
        sort,
        conservative: args.conservative,
        include_unfit: args.include_unfit,
        power_budget_mw: None,
        assumed: assumptions(&workload, &scenario).or_raise()?,
        scenario,
    };
    let entries = py
        .detach(|| stepcost::plan::plan(&workload, &chips, &request))
        .or_raise()?;
    let table = TypedTable::of_plan(workload.name(), &request, &entries).or_raise()?;
    ArrowStream::of(py, table)
}
