//! Serving simulated request by request: arrivals (Poisson, evenly spaced or from a trace)
//! routed to one or more instances, each running a continuous-batching scheduler with chunked
//! prefill, a KV cache of blocks and recompute preemption (`instance`), every iteration priced
//! for what it carries (`clock`). Where `study::serving` gives the mean of a closed loop in
//! steady state, this gives the distribution of an open one: queueing, bursts, preemption,
//! and whether the queue keeps up at all.
//!
//! A request's first token comes at the end of the iteration that computes the last of its
//! prompt; TTFT is that time less its arrival, TPOT `(e2e - TTFT) / (output - 1)`. With
//! prompts prefilled apart (`prefill`), the first token comes out of the prefill instance and
//! counts once its KV cache has reached the decode side: TTFT runs to the end of the prompt's
//! last prefill iteration plus the transfer, as vLLM's, SGLang's and Dynamo's disaggregated
//! serving report it.
//!
//! The run. Arrivals come for the arrival window (`--duration`, or until `--requests` or a
//! trace's end), then the instances drain. A run stops early, reported unstable, at
//! [`TIME_CAP_WINDOWS`] arrival windows plus [`TIME_CAP_EXTRA_S`] of simulated time or
//! [`MAX_ITERATIONS`] iterations. Its KV budget per instance is `(usable bytes - everything
//! but the KV and the recurrent state) / KV bytes per token` of a reference decode step, in
//! blocks of [`BLOCK_TOKENS`]; a state-space model's recurrent state, one per running
//! sequence whatever its context, takes `state bytes / block bytes` of them, rounded up, from
//! each sequence's admission (its first prompt chunk) until it finishes or is preempted.

mod band;
mod clock;
mod instance;
mod pool;
mod prefill;
mod report;
mod requests;
mod rng;
mod run;
mod setup;
mod stats;

use serde::Serialize;

use crate::core::scenario::Scenario;
use crate::study::request::KvLink;

pub use band::{simulate_band, SimBand};
pub use clock::CONTEXT_GRID;
pub use instance::BLOCK_TOKENS;
pub use requests::{read_trace, Arrivals, Horizon, Lengths, Request, MAX_REQUESTS};
#[cfg(feature = "cli")]
pub(crate) use setup::check_config;
pub use setup::simulate;

pub use stats::Percentiles;

/// A run stops at this many arrival windows of simulated time, plus [`TIME_CAP_EXTRA_S`].
pub(crate) const TIME_CAP_WINDOWS: f64 = 3.0;
/// Drain time a run always has, beyond its arrival windows (a long request's worth).
pub(crate) const TIME_CAP_EXTRA_S: f64 = 600.0;
/// Iterations a run prices at most, over all its instances.
pub(crate) const MAX_ITERATIONS: u64 = 100_000_000;

/// How requests are spread over instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Router {
    /// In turn.
    RoundRobin,
    /// To the instance with the fewest requests running and queued (the first, on a tie).
    LeastLoaded,
}

impl Router {
    /// The router as the command line and reports name it (`round-robin`, `least-loaded`).
    pub fn name(self) -> &'static str {
        match self {
            Router::RoundRobin => "round-robin",
            Router::LeastLoaded => "least-loaded",
        }
    }
}

/// Latency bounds a request must meet to count towards goodput.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LatencyBounds {
    /// Most time to first token, seconds (none: no bound).
    pub max_ttft_s: Option<f64>,
    /// Most time per output token after the first, seconds (none: no bound).
    pub max_tpot_s: Option<f64>,
}

/// Prompts prefilled on instances of their own (disaggregated serving), each prompt's KV
/// cache then sent to a decode instance.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefillApart {
    /// Prefill instances (at least one).
    pub instances: u32,
    /// Their scenario: the run's types and plan, their own layout.
    pub scenario: Scenario,
    /// How a prompt's cache reaches its decode instance.
    pub link: KvLink,
}

/// What a simulation runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// How requests arrive.
    pub arrivals: Arrivals,
    /// When arrivals stop (ignored for a trace, which stops at its end).
    pub horizon: Horizon,
    /// The requests' prompt and output lengths (ignored for a trace, which gives its own).
    pub lengths: Lengths,
    /// Seeds the arrival gaps and the drawn lengths: the same seed gives the same run.
    pub seed: u64,
    /// Most sequences running per instance; `None` for vLLM's default on the chip
    /// ([`default_max_seqs`]).
    pub max_seqs: Option<u64>,
    /// Instances serving (each prefilling its own prompts, or the decode instances where
    /// prompts are prefilled apart).
    pub instances: u32,
    /// How requests are spread over the instances.
    pub router: Router,
    /// The bounds a request must meet to count towards goodput.
    pub slo: LatencyBounds,
    /// Price every iteration exactly instead of from the cache.
    pub exact: bool,
    /// Also price every cached iteration exactly and report the cache's largest error.
    pub audit: bool,
    /// Prompts prefilled apart, on these instances; `None` where each instance prefills its
    /// own (`instances` are then the decode instances).
    pub prefill: Option<PrefillApart>,
}

/// vLLM's default `max_num_seqs` for its OpenAI-compatible server: 1024 on a device of
/// 70 GiB or more other than an A100, 256 otherwise (docs/sources.md, SE-4).
pub fn default_max_seqs(chip_id: &str, capacity_bytes: f64) -> u64 {
    if capacity_bytes >= 70.0 * (1u64 << 30) as f64 && !chip_id.contains("a100") {
        1024
    } else {
        256
    }
}

/// A run's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimReport {
    /// Instances run (the decode instances, where prompts are prefilled apart).
    pub instances: u32,
    /// How requests were spread over them.
    pub router: Router,
    /// Chips of one of those instances.
    pub chips_per_instance: u64,
    /// Prefill instances apart and each one's chips (0 and 0 where prefill is together).
    pub prefill_instances: u32,
    /// Chips of one prefill instance.
    pub prefill_chips_per_instance: u64,
    /// Iterations the prefill instances ran (within `iterations`).
    pub prefill_iterations: u64,
    /// Chips of both pools.
    pub chips: u64,
    /// Most sequences running per instance: the one asked for, or vLLM's default.
    pub max_seqs: u64,
    /// Most tokens an iteration batches: the workload's `max_batched_tokens` at the
    /// scenario (half `u32::MAX`, in effect none, without that param).
    pub max_batched_tokens: u64,
    /// KV blocks per instance, of [`BLOCK_TOKENS`] tokens.
    pub kv_blocks: u64,
    /// Of those, the blocks each running sequence's recurrent state takes (0 without one).
    pub state_blocks_per_seq: u64,
    /// Requests that arrived, and that finished.
    pub requests: u64,
    /// Requests that finished before the run stopped.
    pub finished: u64,
    /// Time to first token of the finished requests.
    pub ttft: Percentiles,
    /// Time per output token after the first of the finished requests.
    pub tpot: Percentiles,
    /// End-to-end latency of the finished requests, arrival to last token.
    pub e2e: Percentiles,
    /// Output tokens of finished requests over the simulated time.
    pub output_tokens_per_s: f64,
    /// `output_tokens_per_s` over the chips of both pools.
    pub output_tokens_per_s_per_chip: f64,
    /// Requests finished over the simulated time.
    pub requests_per_s: f64,
    /// Requests meeting every SLO given, per second, and their share of those finished;
    /// `None` without an SLO.
    pub goodput_requests_per_s: Option<f64>,
    /// The share of finished requests that meet every SLO given, in [0, 1]; `None` without
    /// an SLO.
    pub goodput_share: Option<f64>,
    /// The bounds goodput counts against.
    pub slo: LatencyBounds,
    /// Sequences an iteration carries, on average over iterations (the decode instances'
    /// only, where prompts are prefilled apart).
    pub mean_batch: f64,
    /// Sequences preempted for want of a free KV block, over all instances (each requeued
    /// and its tokens recomputed).
    pub preemptions: u64,
    /// Iterations of every instance, both pools'.
    pub iterations: u64,
    /// From the first arrival to the last finish (or the cap).
    pub simulated_s: f64,
    /// From the first arrival to the last.
    pub arrival_window_s: f64,
    /// Whether the queue keeps up (see `stats::SecondHalf::grows`) and the run drained
    /// within its caps.
    pub stable: bool,
    /// Whether the run stopped at a cap before draining.
    pub capped: bool,
    /// Whether every iteration was priced exactly rather than from the cache.
    pub exact: bool,
    /// Steps the pricer priced (cache misses, or every iteration when exact).
    pub steps_priced: u64,
    /// The cache's largest relative error against exact pricing, where audited.
    pub cache_max_relative_error: Option<f64>,
}
