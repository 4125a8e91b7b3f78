//! Sweeps: the cartesian product of chips, param values, data types and fusion plans, priced
//! in parallel and streamed out in order.
//!
//! Scenario `i` of a grid is decoded from `i` in mixed radix (chip most significant, then the
//! params in the order given, then the data types, then the fusion plan), so any worker can
//! price any scenario without the grid ever being materialised. Scenarios are priced in
//! chunks, each chunk split into tasks that run on rayon's pool and write their rows into
//! their own buffers; the buffers are handed, in order, to a writer thread while the next
//! chunk is priced. Chunks are sized in bytes from the widest row seen, so memory stays at a
//! few chunks of a few MiB whatever the size of the grid or the width of a row, and the bytes
//! out do not depend on the number of threads.
//!
//! An axis is read as an [`AxisValues`], whose length is known before its values are made:
//! a grid's size ([`grid_len`]) is checked before any axis takes memory.
//!
//! The sweep decides which scenarios make rows; a [`RowSink`] decides what a row looks like
//! (CSV, JSON Lines, or anything else), so this module never chooses a format.

mod grid;
mod run;
mod shard;
mod what_if;

pub use crate::base::parse::{parse_values, AxisValues, MAX_AXIS_VALUES};
pub use grid::{grid_len, Axes, Grid};
pub use run::{run, SweepError};
pub use shard::Shard;
pub use what_if::{
    too_many_what_if_chips, what_if_chips, what_if_len, ChipAxis, MAX_WHAT_IF_CHIPS,
};

use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::timing::{KernelCost, RequestSummary, StepSummary};
use crate::core::workload::Workload;

/// Default cap on the number of scenarios of a sweep.
pub const DEFAULT_MAX_SCENARIOS: u64 = 100_000_000;

/// Which scenarios a sweep prices and what it prices with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepOptions {
    /// Leave out scenarios that cannot be priced instead of writing an `error` row.
    pub skip_invalid: bool,
    /// Also price a request of `(input, output)` tokens per sequence at each scenario.
    pub request: Option<(u64, u64)>,
    /// The slice of the grid's product order priced (default: the whole grid).
    pub shard: Shard,
    /// Whether the sink's header comes first (default: yes; a shard after the first leaves it
    /// out so that the shards concatenate to the whole).
    pub header: bool,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            skip_invalid: false,
            request: None,
            shard: Shard::WHOLE,
            header: true,
        }
    }
}

/// What a sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepStats {
    /// Scenarios priced (all of the grid, or of its shard, unless cancelled).
    pub scenarios: u64,
    /// Rows written (header excluded).
    pub rows: u64,
    /// Scenarios that could not be priced.
    pub errors: u64,
    /// Whether `cancel` stopped the sweep before the end.
    pub cancelled: bool,
}

/// One scenario of a sweep, priced, as a [`RowSink`] sees it.
pub struct SweptScenario<'a> {
    /// Its index in the grid's product order (ties in a ranking go to the lower).
    pub index: u64,
    /// The workload every scenario of the grid prices.
    pub workload: &'a Workload,
    /// The chip this scenario is priced on.
    pub chip: &'a Chip,
    /// The resolved scenario: its params, data types, fusion plan and mode.
    pub scenario: &'a Scenario,
    /// Every param's value, indexed like the workload's params.
    pub params: &'a [f64],
    /// The step's totals, or the first line of why it could not be priced.
    pub outcome: Result<&'a StepSummary, &'a str>,
    /// The request's totals where [`SweepOptions::request`] asks for one and the step priced.
    pub request: Option<&'a RequestSummary>,
    /// One cost per kernel of the scenario's fusion plan (valid when `outcome` is `Ok`).
    pub costs: &'a [KernelCost],
}

/// Turns a sweep's scenarios into bytes. Called from many threads at once, each with its own
/// buffer; the buffers are written out in grid order.
pub trait RowSink: Sync {
    /// The most rows one scenario of `workload` makes (with the widest row seen, sizes the
    /// chunks held in memory).
    fn rows_per_scenario(&self, workload: &Workload) -> u64;
    /// Appends what comes before the rows (a CSV header; nothing for JSON Lines).
    fn header(&self, grid: &Grid, out: &mut Vec<u8>);
    /// Appends the rows of one scenario and returns how many.
    fn scenario(&self, scenario: &SweptScenario, out: &mut Vec<u8>) -> u64;
    /// Appends what comes after every scenario's rows (those a sink held back, such as a
    /// ranking's) and returns how many rows; called once, unless the sweep was stopped.
    fn finish(&self, _out: &mut Vec<u8>) -> u64 {
        0
    }
}
