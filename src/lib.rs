//! stepcost prices one transformer step (a prefill or a decode step) on an accelerator.
//!
//! A [`Workload`] is the step as a graph of ops over tensors; a [`Chip`] is the accelerator's
//! peaks, bandwidth and capacity. [`price`] places every op (or fused group of ops) on the
//! chip's roofline and returns a [`StepReport`]: per-kernel prices and the step's totals.
//! [`compare`] prices one scenario on several chips, [`plan()`] finds the chips a throughput
//! target needs, and [`sweep`] streams a whole [`Grid`] of scenarios into any [`RowSink`]
//! ([`SweepRows`] for CSV, JSON Lines and, with the `parquet` feature, a `ParquetFile`).
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
//! The code sits in wings with one-way doors: `cli` (the command line) over `study` (sweeps,
//! plans, levers, validation, the serving simulator) and `export` (rows, tables, documents, pictures), over `engine`
//! (chips, workloads, pricing), over `base` (units, data types, diagnostics, limits, errors).

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

pub use base::chip_field::ChipField;
pub use base::diagnostic::{Diagnostic, Diagnostics};
pub use base::dtype::{DType, Role};
pub use base::error::{Error, NotInWorkload, UnknownName, Unsupported};
pub use base::format::{Format, Scheme};
pub use base::param::ScenarioParam;
pub use base::source::{FileKind, Source};
pub use base::types::{Slot, TypeKey, Types, WeightGroup};
pub use core::chip::{Announced, Chip, ChipStatus, Fabric, Interconnect};
pub use core::scenario::{Mode, Scenario, ScenarioSpec};
pub use core::timing::{
    price, Bound, Iteration, IterationPricer, KernelCost, Price, RequestSummary, StepReport,
    StepSummary,
};
pub use core::workload::{KernelKind, Workload};
#[cfg(feature = "parquet")]
pub use export::parquet::ParquetFile;
pub use export::rows::ColumnType;
pub use export::stream::{StreamFormat, SweepRows};
pub use export::typed::{Cell, TypedBatch, TypedRows, TypedTable, TypedValues};
pub use study::check::{check, CheckError, Checked};
pub use study::compare::{compare, Compared};
pub use study::plan::{
    assumptions as plan_assumptions, dtype_choices, plan, PlanEntry, PlanPoint, PlanRequest,
    PlanSort,
};
pub use study::serving::{
    frontier, frontier_rows, one_layer_draft, plan_fleet, survey as serving_survey, Disagg,
    Disaggregated, Draft, Fleet, FleetEntry, KvLink, LayoutChoice, PrefillPool, RequestShape,
    Server, ServingBand, ServingError, ServingOptions, ServingPoint, ServingQuery, ServingRow,
    Simulated, Skipped, Slo, Speculation, Survey, CHECK_MOST_ADDED, CHECK_REQUESTS,
};
pub use study::simulate::{
    default_max_seqs, read_trace, simulate, simulate_band, Arrivals, Horizon, LatencyBounds,
    Lengths, Percentiles, PrefillApart, Request, Router, SimBand, SimConfig, SimReport,
    BLOCK_TOKENS, CONTEXT_GRID, MAX_REQUESTS,
};
pub use study::sweep::{
    run as sweep, what_if_chips, Axes, ChipAxis, Grid, RowSink, Shard, SweepError, SweepOptions,
    SweepStats, SweptScenario,
};

/// The ids of the built-in chips, sorted.
pub fn builtin_chips() -> impl Iterator<Item = &'static str> {
    base::builtin::CHIPS.iter().map(|(id, _)| *id)
}

/// The ids of the built-in workloads, sorted.
pub fn builtin_workloads() -> impl Iterator<Item = &'static str> {
    base::builtin::WORKLOADS.iter().map(|(id, _)| *id)
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
        pub use crate::export::document;
        pub use crate::export::filter;
        pub use crate::export::fit;
        pub use crate::export::launch;
        pub use crate::export::{write_compare, write_run, OutputFormat};
    }
    pub use crate::study::{band, fit, import, lever, sweep, validate};
}
