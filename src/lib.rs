//! stepcost prices one transformer step (a prefill or a decode step) on an accelerator.
//!
//! A [`Workload`] is the step as a graph of ops over tensors; a [`Chip`] is the accelerator's
//! peaks, bandwidth and capacity. [`price`] places every op (or fused group of ops) on the
//! chip's roofline and returns a [`StepReport`]: per-kernel prices and the step's totals.
//! Those seven names and [`Error`] and [`Source`] are the front door; the rest is found by
//! topic:
//!
//! | module | what it answers |
//! | --- | --- |
//! | [`chip`], [`workload`], [`types`] | the inputs: accelerators, model steps, data types |
//! | [`timing`] | a step's time, kernel by kernel; one scenario on several chips |
//! | [`cost`] | what a chip-hour costs: cloud prices, TCO, price books |
//! | [`sweep`] | grids of scenarios streamed to CSV, JSON Lines, Parquet or typed tables |
//! | [`plan`] | the chips a throughput target needs within a latency bound |
//! | [`serving`] | continuous batching in steady state, frontiers, fleets under SLOs |
//! | [`simulate`] | serving request by request |
//! | [`validate`], [`fit`] | predictions against measurements; constants fitted to them |
//! | [`error`] | the errors a caller can match |
//!
//! ```
//! use stepcost::{price, Chip, Mode, Scenario, ScenarioSpec, Workload};
//!
//! // Built-in names or paths of YAML files.
//! let chip = Chip::named("h100-sxm")?;
//! let workload = Workload::named("llama-3.1-70b")?;
//! let spec = ScenarioSpec {
//!     sets: vec![("batch".into(), 32.0)],
//!     mode: Mode::Roofline,
//!     ..ScenarioSpec::default()
//! };
//! let report = price(&workload, &chip, &Scenario::resolve(&workload, &spec)?)?;
//! // A decode step at batch 32 reads every weight once: it is bound by memory.
//! assert!(report.summary.memory_bound_share > 0.9);
//! println!("{:.1} ms per token", report.summary.step_time_s * 1e3);
//!
//! // Errors from files say where: file, line and field.
//! let bad = stepcost::Source::from_text("bad.yaml", "name: x\nmemory: {capacity: 80 GB}\n");
//! let err = Chip::load(&bad).unwrap_err();
//! assert_eq!(err.file(), Some("bad.yaml"));
//! # Ok::<(), stepcost::Error>(())
//! ```
//!
//! The code sits in wings with one-way doors (docs/ARCHITECTURE.md): `cli` (the command line)
//! over `ui` (the web page's server) over `export` (rows, tables, documents, pictures) over
//! `study` (sweeps, plans, serving, the simulator, validation, fits) over `core` (chips,
//! workloads, scenarios, timing and cost) over `base` (units, data types, parsers,
//! diagnostics, ranges, errors).

// Without the command line, the exporters only it calls (tables, documents, atomic files) are
// unused; they stay compiled so a later front end (the web page) can call them.
#![cfg_attr(not(feature = "cli"), allow(dead_code))]

pub(crate) mod base;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
pub(crate) mod core;
pub(crate) mod export;
pub(crate) mod study;
#[cfg(feature = "ui")]
pub(crate) mod ui;

// The front door: load a chip and a workload, price a scenario. Everything else is under
// the topic modules below.
pub use base::error::Error;
pub use base::source::Source;
pub use core::chip::Chip;
pub use core::scenario::{Mode, Scenario, ScenarioSpec};
pub use core::timing::{price, StepReport};
pub use core::workload::Workload;

pub mod error {
    //! Errors a caller can match: a file's problems with their places, a name the workload or
    //! catalogue lacks, a data type a chip cannot compute.
    //!
    //! ```
    //! use stepcost::{error::NotInWorkload, Error, Scenario, Workload};
    //!
    //! let workload = Workload::named("llama-3.1-8b")?;
    //! let mut scenario = Scenario::defaults(&workload);
    //! let refused = scenario.set(&workload, "batchh", 8.0).unwrap_err();
    //! assert!(matches!(refused, Error::NotInWorkload(_)));
    //! # let _: Option<&NotInWorkload> = None;
    //! # Ok::<(), Error>(())
    //! ```
    pub use crate::base::diagnostic::{Diagnostic, Diagnostics};
    pub use crate::base::error::{Error, NotInWorkload, PastPositions, UnknownName, Unsupported};
}

pub mod chip {
    //! Accelerators: peaks per data type, memory, cache, interconnect, prices; the built-in
    //! catalogue and the fields a what-if sweep may set.
    //!
    //! ```
    //! use stepcost::chip::{self, Chip};
    //!
    //! assert!(chip::builtin().any(|id| id == "h200"));
    //! let h200 = Chip::named("h200")?;
    //! // The H200's HBM3e: 4.8 TB/s (NVIDIA's datasheet).
    //! assert_eq!(h200.bandwidth_bytes_per_s(), 4.8e12);
    //! # Ok::<(), stepcost::Error>(())
    //! ```
    pub use crate::base::chip_field::ChipField;
    pub use crate::core::chip::{
        gemm_path, Achievable, Announced, Chip, ChipStatus, Fabric, Interconnect, PathFractions,
        PowerBasis, PowerCapError, PowerCurve, PurchaseBasis,
    };

    /// The ids of the built-in chips, sorted.
    pub fn builtin() -> impl Iterator<Item = &'static str> {
        crate::base::builtin::CHIPS.iter().map(|(id, _)| *id)
    }
}

pub mod workload {
    //! Model steps as graphs of ops over tensors: loading a workload file or a built-in
    //! model, its params, the kinds of kernel it runs, and the files it is read from.
    //!
    //! ```
    //! use stepcost::workload::{self, ScenarioParam, Workload};
    //!
    //! assert!(workload::builtin().any(|id| id == "llama-3.1-70b"));
    //! let llama = Workload::named("llama-3.1-70b")?;
    //! assert!(llama.param(ScenarioParam::Batch).is_some());
    //! # Ok::<(), stepcost::Error>(())
    //! ```
    pub use crate::base::param::ScenarioParam;
    pub use crate::base::source::{FileKind, Source};
    pub use crate::core::workload::{KernelKind, Workload};
    pub use crate::study::check::{check, CheckError, Checked};

    /// The ids of the built-in workloads, sorted.
    pub fn builtin() -> impl Iterator<Item = &'static str> {
        crate::base::builtin::WORKLOADS.iter().map(|(id, _)| *id)
    }
}

pub mod types {
    //! Data types: what a matrix unit computes in, the formats tensors are stored in with
    //! their scales, and a scenario's format per slot (`--dtype weight=fp8`).
    //!
    //! ```
    //! use stepcost::types::{Format, TypeKey, Types};
    //!
    //! let mut types = Types::default();
    //! types.apply([("weight".parse::<TypeKey>()?, "fp8".parse::<Format>()?)]);
    //! # Ok::<(), Box<dyn std::error::Error>>(())
    //! ```
    pub use crate::base::dtype::{DType, Role};
    pub use crate::base::format::{Format, Scheme};
    pub use crate::base::types::{Slot, TypeKey, Types, WeightGroup};
}

pub mod timing {
    //! The time of a step: every kernel on the chip's roofline (or what real kernels achieve,
    //! in expected mode), summed into a [`StepReport`]; one scenario on several chips.
    //!
    //! ```
    //! use stepcost::timing::{compare, price, Mode, Scenario, ScenarioSpec};
    //! use stepcost::{Chip, Workload};
    //!
    //! let workload = Workload::named("llama-3.1-8b")?;
    //! let spec = ScenarioSpec { mode: Mode::Roofline, ..ScenarioSpec::default() };
    //! let h100 = Chip::named("h100-sxm")?;
    //! let report = price(&workload, &h100, &Scenario::resolve(&workload, &spec)?)?;
    //! // A batch-1 decode step reads every weight once: at least the weights' bytes over the
    //! // bandwidth, however fast the matrix units.
    //! let weights_s = 2.0 * 8.0e9 / h100.bandwidth_bytes_per_s();
    //! assert!(report.summary.step_time_s > 0.9 * weights_s);
    //! let side_by_side = compare(workload, vec![h100, Chip::named("b200")?], &spec)?;
    //! assert_eq!(side_by_side.reports.len(), 2);
    //! # Ok::<(), stepcost::Error>(())
    //! ```
    pub use crate::core::scenario::{Mode, Scenario, ScenarioSpec};
    pub use crate::core::timing::{
        price, Bound, ImagesSummary, Iteration, IterationPricer, KernelCost, Price, RequestSummary,
        StepReport, StepSummary,
    };
    pub use crate::study::compare::{compare, Compared};
    pub use crate::study::images::{price_with_images, request_with_images, Images};
}

pub mod cost {
    //! What a chip-hour costs: the cloud view or the total cost of ownership, a buyer's price
    //! book, and the settings both front ends share.
    //!
    //! ```
    //! use stepcost::cost::{CostSettings, CostView};
    //!
    //! let settings = CostSettings::default();
    //! assert_eq!(settings.view, CostView::Cloud);
    //! ```
    pub use crate::core::cost::book::{PriceBook, Quote};
    pub use crate::core::cost::books::{cloud_books, CloudBook};
    pub use crate::core::cost::settings::CostSettings;
    pub use crate::core::cost::{
        CostGap, CostModel, CostView, Costing, StepCost, TcoParts, TcoTerms, HOST_USD, HOST_W,
    };
}

pub mod engine {
    //! The serving software over the chip, as expected mode prices it: host work and what of
    //! it the GPU hides, graph capture, all-reduce choice, admission, batching limits, what
    //! the type choices expand to, kernel paths, and the speculative and pipeline schedules.
    //!
    //! Engines come from `engines/*.yaml` (built in) or a file: [`resolve`] takes either, as
    //! `--engine` does; [`builtin`] only the built-ins.
    pub use crate::core::engine::{
        builtin, builtin_ids, resolve, Admission, AllReduceAlgorithm, AllReduceRule, BatchLimits,
        Engine, EngineTerms, GemmPaths, HostWork, KernelPath, KvDequant, LaunchFamily, Launches,
        PipelineSchedule, QuantChoices, SpecCycle,
    };
}

pub mod sweep {
    //! Grids of scenarios (chips x params x types x fusion plans) priced in parallel and
    //! streamed in product order into any [`RowSink`]: CSV, JSON Lines, Parquet, typed tables.
    //!
    //! ```
    //! use std::sync::atomic::AtomicBool;
    //!
    //! use stepcost::sweep::{self, Axes, Grid, StreamFormat, SweepOptions, SweepRows};
    //! use stepcost::{Chip, Workload};
    //!
    //! let workload = Workload::named("llama-3.1-8b")?;
    //! let axes = Axes {
    //!     chips: vec![Chip::named("h100-sxm")?],
    //!     params: vec![("batch".into(), vec![1.0, 8.0, 64.0])],
    //!     ..Axes::default()
    //! };
    //! let grid = Grid::new(&workload, axes)?;
    //! let rows = SweepRows::new(&workload, StreamFormat::Csv, false);
    //! let (mut csv, cancel) = (Vec::new(), AtomicBool::new(false));
    //! let options = SweepOptions::default();
    //! let stats = sweep::run(&grid, options, &rows, &mut csv, &|_| {}, &cancel).unwrap();
    //! assert_eq!((stats.scenarios, stats.errors), (3, 0));
    //! // A header, then one row per scenario.
    //! assert_eq!(String::from_utf8(csv).unwrap().lines().count(), 4);
    //! # Ok::<(), stepcost::Error>(())
    //! ```
    #[cfg(feature = "parquet")]
    pub use crate::export::parquet::ParquetFile;
    pub use crate::export::rows::ColumnType;
    pub use crate::export::stream::{StreamFormat, SweepRows};
    pub use crate::export::typed::{Cell, TypedBatch, TypedRows, TypedTable, TypedValues};
    pub use crate::study::sweep::{
        run, what_if_chips, Axes, ChipAxis, Grid, RowSink, Shard, SweepError, SweepOptions,
        SweepStats, SweptScenario,
    };
}

pub mod plan {
    //! Chips for a throughput target: per chip and data types, the cheapest layout and the
    //! largest batch within a latency bound and the memory.
    //!
    //! ```
    //! use stepcost::plan::{assumptions, dtype_choices, plan, PlanRequest, PlanSort};
    //! use stepcost::{Chip, Scenario, Workload};
    //!
    //! let workload = Workload::named("llama-3.1-8b")?;
    //! let scenario = Scenario::defaults(&workload);
    //! let request = PlanRequest {
    //!     target_tokens_per_s: None,
    //!     max_ms_per_token: Some(50.0),
    //!     dtype_choices: dtype_choices(*scenario.dtypes(), &[]),
    //!     engines: Vec::new(), // each chip's default engine
    //!     engine_types: true,  // the fp8 choice as the engine runs it
    //!     sort: PlanSort::default(),
    //!     conservative: false,
    //!     include_unfit: false,
    //!     assumed: assumptions(&workload, &scenario)?,
    //!     power_budget_mw: None,
    //!     scenario,
    //! };
    //! let entries = plan(&workload, &[Chip::named("h100-sxm")?], &request)?;
    //! // One answer per chip and choice of types, each meeting the 50 ms bound.
    //! assert!(!entries.is_empty());
    //! # Ok::<(), stepcost::Error>(())
    //! ```
    pub use crate::study::plan::power::{fleet_power_fit, power_fit, FleetPowerFit, PowerFit};
    pub use crate::study::plan::{
        assumptions, dtype_choices, engine_types, leaves_types_to_engine, plan, PlanEntry,
        PlanPoint, PlanRequest, PlanSort,
    };
}

pub mod serving {
    //! Continuous batching in steady state: TTFT, TPOT and throughput per concurrency, each
    //! chip's frontier, disaggregated prefill, speculation, and the cheapest fleet under
    //! latency bounds.
    //!
    //! ```
    //! use stepcost::serving::RequestShape;
    //!
    //! // A served request has a prompt and at least two output tokens (one from the prefill,
    //! // one from a decode step); anything less is refused, not priced.
    //! assert!(RequestShape::new(1000, 200).is_ok());
    //! assert!(RequestShape::new(1000, 1).is_err());
    //! ```
    pub use crate::study::serving::{
        frontier, frontier_rows, one_layer_draft, plan_fleet, plan_fleet_engines, survey,
        survey_engines, Disagg, Disaggregated, Draft, Fleet, FleetEntry, KvLink, LayoutChoice,
        PrefillPool, RequestShape, Server, ServingBand, ServingError, ServingOptions, ServingPoint,
        ServingQuery, ServingRow, Simulated, Skipped, Slo, Speculation, Survey, CHECK_MOST_ADDED,
        CHECK_REQUESTS,
    };
}

pub mod simulate {
    //! Serving request by request: arrivals, a continuous-batching scheduler with chunked
    //! prefill, KV blocks and preemption, every iteration priced.
    //!
    //! ```
    //! use stepcost::simulate::default_max_seqs;
    //!
    //! // vLLM's default batch limit: 1024 sequences on an 80 GB H100, 256 on an A100.
    //! assert_eq!(default_max_seqs("h100-sxm", 80e9), 1024);
    //! assert_eq!(default_max_seqs("a100-80gb", 80e9), 256);
    //! ```
    pub use crate::study::simulate::{
        default_max_seqs, read_trace, simulate, simulate_band, Arrivals, Horizon, LatencyBounds,
        Lengths, Percentiles, PrefillApart, Request, Router, SimBand, SimConfig, SimReport,
        BLOCK_TOKENS, CONTEXT_GRID, MAX_REQUESTS,
    };
}

pub mod validate {
    //! Predictions against measured hardware: case files, each row priced and its error, the
    //! statistics per group.
    //!
    //! ```
    //! use std::path::Path;
    //!
    //! use stepcost::validate::{read_cases, validate};
    //! use stepcost::{Mode, Source};
    //!
    //! // An 8192-cubed bf16 GEMM on an H200 measured at 769 TFLOP/s.
    //! let text = "id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,notes\n\
    //!             G1,h200,gemm,m=8192;n=8192;k=8192,,,,1,attained_tflops,769,kernel,a bench,\n";
    //! let cases = read_cases(&Source::from_text("cases.csv", text))?;
    //! let outcomes = validate(cases, Path::new("cases.csv"), Mode::Roofline);
    //! // The roofline is the datasheet's 989 TFLOP/s: a ceiling above what was measured.
    //! let predicted = *outcomes[0].predicted.as_ref().unwrap();
    //! assert!(predicted > 769.0);
    //! # Ok::<(), stepcost::Error>(())
    //! ```
    pub use crate::study::validate::{
        error_stats, read_case_file, read_cases, serving_stats, validate, validate_serving,
        validate_serving_under, validate_under, Case, CaseFile, ErrorStats, Metric, Outcome,
        ServingOutcome,
    };
}

pub mod fit {
    //! Expected mode's constants fitted to measured cases, and the leave-one-source-out
    //! cross-validation that reports their error on sources a fit never saw.
    //!
    //! ```
    //! use stepcost::fit::Constant;
    //! use stepcost::Chip;
    //!
    //! // The constants a fit of the H200 moves, each with its physical range.
    //! let h200 = Chip::named("h200")?;
    //! let expected = h200.expected().expect("the H200 ships fitted constants");
    //! let constants = Constant::of(expected);
    //! assert!(!constants.is_empty());
    //! for c in constants {
    //!     assert!(c.range().check(c.get(expected)).is_ok(), "{}", c.name());
    //! }
    //! # Ok::<(), stepcost::Error>(())
    //! ```
    pub use crate::study::fit::cross::{cross_validate, CrossValidation};
    pub use crate::study::fit::{fit_chip, ChipFit, Constant, Prior};
}

/// What tests, benchmarks and fuzz targets reach beneath the front door. Not a stable API.
#[doc(hidden)]
pub mod internals {
    pub use crate::base::{builtin, limits, parse, ranges, units};
    pub use crate::core::chip::Achievable;
    pub use crate::core::{expr, timing, workload};
    pub use crate::export::svg;
    /// The exporters' entry points.
    pub mod export {
        pub use crate::export::bench;
        pub use crate::export::document;
        pub use crate::export::filter;
        pub use crate::export::fit;
        pub use crate::export::ingest;
        pub use crate::export::launch;
        pub use crate::export::{write_compare, write_run, OutputFormat};
    }
    pub use crate::study::{band, fit, import, ingest, lever, sweep, validate};
    /// The web API's request, read and counted without pricing (the `api_request` fuzz
    /// target's entry).
    #[cfg(feature = "ui")]
    pub use crate::ui::budget::parse_request;
}
