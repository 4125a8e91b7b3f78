//! The ranges of a simulated run (`simulate`): its instances, its arrival window, its
//! requests, a trace's clock and its latency bounds.

use super::{range, Range};

/// `simulate --instances`: the instances behind the router (the decode instances, with
/// prompts prefilled apart).
pub const SIM_INSTANCES: Range = range(
    "--instances",
    "instances",
    1.0,
    1e6,
    "instances behind one router, up to a million; only those given a request take memory",
);
/// `simulate --prefill-instances`: the instances that prefill prompts apart; bounded as
/// `SIM_INSTANCES`.
pub const SIM_PREFILL_INSTANCES: Range = Range {
    field: "--prefill-instances",
    ..SIM_INSTANCES
};
/// `simulate --duration`: the arrival window.
pub const SIM_DURATION: Range = range(
    "--duration",
    "seconds",
    1e-3,
    1e9,
    "simulated seconds of arrivals, a millisecond to 31 years",
);
/// `simulate --requests`: the requests that arrive (and the most a run or a trace holds).
pub const SIM_REQUESTS: Range = range(
    "--requests",
    "requests",
    1.0,
    2e7,
    "requests in one run, each held in memory (about 100 bytes) until the report",
);
/// `simulate --burstiness`: the shape of the gamma distribution arrival gaps are drawn from.
pub const SIM_BURSTINESS: Range = range(
    "--burstiness",
    "",
    1e-3,
    1e3,
    "a gamma shape: 1 is Poisson, below it burstier (gaps' spread 1/sqrt(shape)), above it more even",
);
/// A trace's `arrival_s`: when a request arrives on the trace's own clock.
pub const TRACE_ARRIVAL: Range = range(
    "arrival_s (trace)",
    "seconds",
    0.0,
    1e10,
    "seconds on the trace's clock, up to 317 years (a Unix time today is 1.8e9 s); a run counts from the first arrival",
);
/// `--max-ttft-ms`: the most time to a request's first token.
pub const MAX_TTFT_MS: Range = range(
    "--max-ttft-ms",
    "ms",
    1e-3,
    1e7,
    "a microsecond to nearly three hours to the first token",
);
