//! The physical range of every number stepcost takes from a file or a flag: one table, as
//! data, of each field's smallest and largest value and why. A value outside its range is
//! refused where it is read, with the field named, so nothing downstream (pricing, plotting,
//! planning, what-if chips, fitting) meets a latency of 1e300 s or a bandwidth of 1e-300 B/s.
//!
//! The bounds are generous: every shipped chip sits far inside them, and so would chips a
//! thousand times faster; they exist so that arithmetic on them stays finite and pictures of
//! them can be drawn. Counts that become integers go through [`whole`], which refuses rather
//! than saturates.

use crate::base::units;

mod cost;
mod expected;
mod fabric;
mod fit;
mod serving;
mod simulate;
pub use self::{cost::*, expected::*, fabric::*, fit::*, serving::*, simulate::*};

/// The range of one field: `min..=max` in `unit`, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// As written in the file (`memory.bandwidth`, `matrix.TYPE`) or on the command line.
    pub field: &'static str,
    /// The unit the bounds are in: an SI unit (`B/s`, `s`) shown with a prefix, or a plain
    /// one (`tokens`); empty for a count or a fraction of a chip file.
    pub unit: &'static str,
    /// Smallest value accepted, in `unit`.
    pub min: f64,
    /// Largest value accepted, in `unit`.
    pub max: f64,
    /// Why the bounds are where they are, shown after them in a refusal and in the README's limits
    /// table.
    pub why: &'static str,
}

impl Range {
    /// Whether `value` lies inside the range (NaN never does).
    pub fn contains(&self, value: f64) -> bool {
        value >= self.min && value <= self.max
    }

    /// `Ok` inside the range; otherwise what was expected and why (the caller names the
    /// value as written and the field).
    pub fn check(&self, value: f64) -> Result<(), String> {
        if self.contains(value) {
            Ok(())
        } else {
            Err(format!("out of range: {}", self.expected()))
        }
    }

    /// [`Range::check`] of a time in seconds against a range in milliseconds, compared as
    /// `ms / 1000` gives the seconds (so a bound typed at the range's end is inside it).
    pub fn check_ms_as_s(&self, value_s: f64) -> Result<(), String> {
        let in_s = Range {
            min: self.min / 1e3,
            max: self.max / 1e3,
            ..*self
        };
        in_s.check(value_s)
            .map_err(|_| self.check(f64::NAN).unwrap_err())
    }

    /// `expected from 1 ns to 1 ms (why)`.
    pub fn expected(&self) -> String {
        format!(
            "expected from {} to {}: {}",
            show(self.min, self.unit),
            show(self.max, self.unit),
            self.why
        )
    }
}

/// The largest count an `f64` holds exactly (2^53); no count stepcost writes goes above it.
pub const MAX_COUNT: f64 = 9_007_199_254_740_992.0;

/// `value` as a count: a whole number inside `range` (and so at most [`MAX_COUNT`]), never
/// rounded or saturated; otherwise a message that names `what` and says the count is too
/// large, too small or not whole.
/// (`what` is formatted only for a message: counts are checked on the hot path.)
pub fn whole(value: f64, range: &Range, what: impl std::fmt::Display) -> Result<u64, String> {
    let shown = || show(value, range.unit);
    if !value.is_finite() || value.fract() != 0.0 {
        return Err(format!(
            "{what} is {}, not a whole number: {}",
            shown(),
            range.expected()
        ));
    }
    if value > range.max || value > MAX_COUNT {
        return Err(format!(
            "{what} is {}, a count too large: {}",
            shown(),
            range.expected()
        ));
    }
    if value < range.min {
        return Err(format!(
            "{what} is {}, a count too small: {}",
            shown(),
            range.expected()
        ));
    }
    Ok(value as u64)
}

/// A value refused, as a message quotes it: `0.5`, `600`, `2e9`, `1e-7`, `1e300` (an
/// exponent where plain digits would run long).
pub fn quoted(value: f64) -> String {
    let magnitude = value.abs();
    if value == 0.0 || (1e-4..1e6).contains(&magnitude) {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}

/// A bound for people: `1 GB/s`, `1 ns`, `10^6`, `0.01`.
pub fn show(value: f64, unit: &str) -> String {
    if !value.is_finite() || value == 0.0 {
        return format!("{value}{}", spaced(unit));
    }
    if !si(unit) {
        return plain(value, unit);
    }
    let magnitude = value.abs();
    match units::PREFIXES
        .iter()
        .find(|(scale, _)| magnitude >= *scale)
    {
        Some((scale, prefix)) if magnitude < 1e21 => {
            format!("{} {prefix}{unit}", trimmed(value / scale))
        }
        _ => format!("{value:e} {unit}"),
    }
}

/// Whether `unit` takes an SI prefix (`GB/s`, `ns`); a plain one (`tokens`) never does.
fn si(unit: &str) -> bool {
    matches!(unit, "B" | "B/s" | "FLOP/s" | "s" | "W")
}

fn spaced(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

/// A count or a price: `10^6`, `4096`, `0.01`, `1e-3 USD/h`.
fn plain(value: f64, unit: &str) -> String {
    if value == MAX_COUNT {
        return format!("2^53{}", spaced(unit));
    }
    let exponent = value.abs().log10();
    let text = if value.abs() >= 1e5 && exponent.fract() == 0.0 {
        format!("10^{exponent}")
    } else if value.abs() >= 1e5 || value.abs() < 1e-3 {
        format!("{value:e}")
    } else {
        trimmed(value)
    };
    format!("{text}{}", spaced(unit))
}

/// The shortest form that reads back: `1`, `2.5`, `100`, `0.001`.
fn trimmed(x: f64) -> String {
    format!("{x}")
}

const fn range(
    field: &'static str,
    unit: &'static str,
    min: f64,
    max: f64,
    why: &'static str,
) -> Range {
    Range {
        field,
        unit,
        min,
        max,
        why,
    }
}

/// Why each fraction of `expected` is bounded as it is.
const FRACTION_WHY: &str =
    "the share of a datasheet figure real kernels reach, at least 1% and at most all of it";

/// A chip file's `memory.capacity`: the usable memory, in bytes.
pub const MEMORY_CAPACITY: Range = range(
    "memory.capacity",
    "B",
    1e6,
    1e14,
    "an on-chip SRAM to a hundred times the largest HBM of today (288 GB)",
);
/// A chip file's `memory.marketed_capacity`: the memory as marketed, where the file gives it;
/// bounded as `MEMORY_CAPACITY`.
pub const MEMORY_MARKETED_CAPACITY: Range = Range {
    field: "memory.marketed_capacity",
    ..MEMORY_CAPACITY
};
/// A chip file's `memory.reserve`: what the runtime holds before any model loads, in bytes.
pub const MEMORY_RESERVE: Range = range(
    "memory.reserve",
    "B",
    1e3,
    1e12,
    "a kilobyte to 1 TB (runtimes hold back 0.5-2 GiB today: context, communication buffers, graphs)",
);
/// A chip file's `memory.bandwidth`: the datasheet memory (HBM) bandwidth, in bytes per second.
pub const MEMORY_BANDWIDTH: Range = range(
    "memory.bandwidth",
    "B/s",
    1e9,
    1e15,
    "one DDR channel to a hundred times the fastest HBM of today (8 TB/s)",
);
/// A chip file's `matrix.TYPE`: the matrix unit's dense peak in one data type, in FLOP/s (OP/s for
/// integer types).
pub const MATRIX_PEAK: Range = range(
    "matrix.TYPE",
    "FLOP/s",
    1e9,
    1e19,
    "one CPU core to a thousand times the fastest chip of today (13 PFLOP/s in fp4)",
);
/// A chip file's `vector.TYPE`: the vector unit's peak in one data type; bounded as `MATRIX_PEAK`.
pub const VECTOR_PEAK: Range = Range {
    field: "vector.TYPE",
    ..MATRIX_PEAK
};
/// A chip file's `sfu`: the special-function unit's exponentials (and tanh) per second; bounded as
/// `MATRIX_PEAK`.
pub const SFU: Range = Range {
    field: "sfu",
    ..MATRIX_PEAK
};
/// A chip file's `cache.size`: the on-chip last-level cache, in bytes.
pub const CACHE_SIZE: Range = range(
    "cache.size",
    "B",
    1e3,
    1e12,
    "a kilobyte to 1 TB (a wafer-scale chip holds 44 GB of SRAM)",
);
/// A chip file's `cache.bandwidth`: the last-level cache's bandwidth, in bytes per second.
pub const CACHE_BANDWIDTH: Range = range(
    "cache.bandwidth",
    "B/s",
    1e9,
    1e17,
    "one DDR channel to 100 PB/s (a wafer-scale chip's SRAM reaches 21 PB/s)",
);
/// A chip file's `compute_units`: SMs, CUs or cores, over which a GEMM's tiles run in waves.
pub const COMPUTE_UNITS: Range = range(
    "compute_units",
    "",
    1.0,
    1e6,
    "one unit to a million (a wafer-scale chip has 900,000 cores)",
);
/// A chip file's `launch`: the fixed cost of one kernel back to back inside a CUDA graph, in
/// seconds.
pub const LAUNCH: Range = range(
    "launch",
    "s",
    1e-9,
    1e-3,
    "a kernel launch, 1-10 us today (omit the field for none)",
);
/// A chip file's `eager_launch`: the fixed cost of one kernel launched from the host without a
/// graph, in seconds.
pub const EAGER_LAUNCH: Range = range(
    "eager_launch",
    "s",
    1e-9,
    1e-3,
    "a kernel launched from the host without a graph, 2-3 us in a tight loop today",
);
/// A chip file's `interconnect.bandwidth`: the scale-up fabric's rate per chip and direction, in
/// bytes per second.
pub const INTERCONNECT_BANDWIDTH: Range = range(
    "interconnect.bandwidth",
    "B/s",
    1e8,
    1e15,
    "gigabit Ethernet (125 MB/s) to a thousand times NVLink 5 (900 GB/s)",
);
/// A chip file's `interconnect.domain`: the chips one scale-up fabric joins.
pub const INTERCONNECT_DOMAIN: Range = range(
    "interconnect.domain",
    "",
    1.0,
    1e6,
    "one chip to a million in one scale-up domain (a TPU v5p pod has 8,960)",
);
/// A chip file's `interconnect.latency`: one step of a collective over the fabric, in seconds.
pub const INTERCONNECT_LATENCY: Range = range(
    "interconnect.latency",
    "s",
    1e-9,
    1.0,
    "one step of a collective, 1-10 us on today's links",
);
/// A chip file's `network.bandwidth`: the scale-out network's rate per chip, between domains;
/// bounded as `INTERCONNECT_BANDWIDTH`.
pub const NETWORK_BANDWIDTH: Range = Range {
    field: "network.bandwidth",
    ..INTERCONNECT_BANDWIDTH
};
/// A chip file's `network.latency`: one step of a collective across the network; bounded as
/// `INTERCONNECT_LATENCY`.
pub const NETWORK_LATENCY: Range = Range {
    field: "network.latency",
    ..INTERCONNECT_LATENCY
};
/// A chip file's `power`: watts per chip, a system's share per GPU where sourced, else the TDP.
pub const POWER: Range = range(
    "power",
    "W",
    1.0,
    1e5,
    "an edge chip to 100 kW (a wafer-scale system draws 23 kW)",
);
/// A chip file's `expected.matrix.TYPE`: the fraction of the matrix peak a large GEMM reaches in
/// one type.
pub const EXPECTED_MATRIX: Range = range("expected.matrix.TYPE", "", 0.01, 1.0, FRACTION_WHY);
/// A chip file's `expected.vector`: the fraction of the vector peak elementwise work reaches.
pub const EXPECTED_VECTOR: Range = Range {
    field: "expected.vector",
    ..EXPECTED_MATRIX
};
/// A chip file's `expected.memory`: the fraction of memory bandwidth a large stream reaches.
pub const EXPECTED_MEMORY: Range = Range {
    field: "expected.memory",
    ..EXPECTED_MATRIX
};
/// A chip file's `expected.small_m_memory`: the fraction of that stream bandwidth library GEMMs
/// reach at small M (decode).
pub const EXPECTED_SMALL_M_MEMORY: Range = Range {
    field: "expected.small_m_memory",
    ..EXPECTED_MATRIX
};
/// A chip file's `expected.attention_memory`: the fraction of memory bandwidth a fused attention
/// kernel reaches streaming the KV cache.
pub const EXPECTED_ATTENTION_MEMORY: Range = Range {
    field: "expected.attention_memory",
    ..EXPECTED_MATRIX
};
/// A chip file's `expected.exp_overlap`: the share of a fused attention kernel's exponential time
/// (or of its matrix time, whichever is shorter) that hides under the other.
pub const EXPECTED_EXP_OVERLAP: Range = Range {
    field: "expected.exp_overlap",
    ..EXPECTED_MATRIX
};
/// A chip file's `expected.row_tile`: the rows a GEMM's M is padded to (the matrix instruction's
/// M).
pub const EXPECTED_ROW_TILE: Range = range(
    "expected.row_tile",
    "",
    1.0,
    4096.0,
    "rows a matrix instruction pads M to, 16-256 today",
);
/// A chip file's `expected.cta_tiles`: each row and column count of the output tiles a CTA may
/// compute.
pub const EXPECTED_CTA_TILES: Range = range(
    "expected.cta_tiles",
    "",
    1.0,
    4096.0,
    "rows and columns of a CTA's output tile, 64-256 today",
);
/// A chip file's `expected.dram_latency`: time to first byte from memory, paid as a kernel starts
/// loading and again as its stores drain, in seconds.
pub const EXPECTED_DRAM_LATENCY: Range = range(
    "expected.dram_latency",
    "s",
    1e-9,
    1e-3,
    "time to first byte from memory, 100-800 ns today",
);
/// A chip file's `expected.host_step`: a serving engine's host work per step, which the chip waits
/// for, in seconds.
pub const EXPECTED_HOST_STEP: Range = range(
    "expected.host_step",
    "s",
    1e-6,
    0.1,
    "a serving engine's host work per step, tens of microseconds to milliseconds today",
);
/// A chip file's `expected.host_sequence`: the part of that host work that grows with each sequence
/// in the step, in seconds.
pub const EXPECTED_HOST_SEQUENCE: Range = range(
    "expected.host_sequence",
    "s",
    1e-8,
    1e-2,
    "a serving engine's host work per sequence of a step, microseconds to tens of them today",
);

/// Every number a chip file gives, in the file's order.
pub const CHIP: &[Range] = &[
    MEMORY_CAPACITY,
    MEMORY_MARKETED_CAPACITY,
    MEMORY_RESERVE,
    MEMORY_BANDWIDTH,
    MATRIX_PEAK,
    VECTOR_PEAK,
    SFU,
    CACHE_SIZE,
    CACHE_BANDWIDTH,
    COMPUTE_UNITS,
    LAUNCH,
    EAGER_LAUNCH,
    INTERCONNECT_BANDWIDTH,
    INTERCONNECT_DOMAIN,
    INTERCONNECT_LATENCY,
    INTERCONNECT_LINK_BANDWIDTH,
    INTERCONNECT_EXPECTED,
    NETWORK_BANDWIDTH,
    NETWORK_LATENCY,
    POWER,
    PRICE_CLOUD,
    PRICE_PURCHASE,
    PRICE_PURCHASE_GPUS,
    EXPECTED_MATRIX,
    EXPECTED_VECTOR,
    EXPECTED_MEMORY,
    EXPECTED_SMALL_M_MEMORY,
    EXPECTED_ATTENTION_MEMORY,
    EXPECTED_EXP_OVERLAP,
    EXPECTED_WEIGHT_ONLY_MEMORY,
    EXPECTED_FP4_MEMORY,
    EXPECTED_FP16_CLOCK,
    EXPECTED_SPLIT_K,
    EXPECTED_ROW_TILE,
    EXPECTED_CTA_TILES,
    EXPECTED_CTA_PAIR_ROWS,
    EXPECTED_DRAM_LATENCY,
    EXPECTED_HOST_STEP,
    EXPECTED_HOST_SEQUENCE,
];

/// Chips one replica of a step runs on: a workload's `chips` (e.g. `tp * pp`).
pub const WORKLOAD_CHIPS: Range = range(
    "chips (workload)",
    "",
    1.0,
    1e6,
    "one chip to a million, the largest clusters built",
);

/// `--memory-utilization`: the share of the chip's reported memory a serving engine uses
/// (vLLM's `gpu_memory_utilization`).
pub const MEMORY_UTILIZATION: Range = range(
    "--memory-utilization",
    "",
    0.01,
    1.0,
    "the share of the chip's memory the engine uses, above 0 and at most 1 (vLLM: 0.9)",
);
/// `plan --target-tokens-per-s`: the tokens per second the deployment must serve.
pub const TARGET_TOKENS_PER_S: Range = range(
    "--target-tokens-per-s",
    "tokens/s",
    1e-3,
    1e12,
    "one token in a quarter of an hour to a trillion a second, beyond all serving today",
);
/// `plan --max-ms-per-token`.
pub const MAX_MS_PER_TOKEN: Range = range(
    "--max-ms-per-token",
    "ms",
    1e-3,
    1e6,
    "a microsecond to a quarter of an hour per output token",
);
/// `plan --context`.
pub const CONTEXT: Range = range(
    "--context",
    "tokens",
    0.0,
    1e9,
    "tokens in each sequence's KV cache, up to a hundred times the longest context window",
);
/// `--request in=I,out=O`.
pub const REQUEST_TOKENS: Range = range(
    "--request in, out",
    "tokens",
    1.0,
    1e9,
    "tokens per sequence, up to a hundred times the longest context window",
);
/// `sweep --max-scenarios`.
pub const MAX_SCENARIOS: Range = range(
    "--max-scenarios",
    "scenarios",
    1.0,
    1e15,
    "scenarios in one sweep, up to decades of pricing at the speeds the README gives",
);

/// Chips (and replicas) a plan needs: any count an `f64` holds exactly.
pub const PLAN_CHIPS: Range = range(
    "chips (plan)",
    "",
    1.0,
    MAX_COUNT,
    "chips a plan may answer with, any count an f64 holds exactly",
);

/// Counts stepcost computes: a workload's chips per replica, and the chips a plan needs.
pub const COUNTS: &[Range] = &[WORKLOAD_CHIPS, PLAN_CHIPS];

/// Numbers from the command line or a case file (a `--set` value is any finite number; the
/// workload's checks of the dimension, repeat or count it becomes apply).
pub const FLAGS: &[Range] = &[
    MEMORY_UTILIZATION,
    TARGET_TOKENS_PER_S,
    MAX_MS_PER_TOKEN,
    CONTEXT,
    REQUEST_TOKENS,
    SERVING_CONCURRENCY,
    REQUEST_RATE,
    MAX_TTFT_MS,
    SIM_INSTANCES,
    SIM_PREFILL_INSTANCES,
    SIM_DURATION,
    SIM_REQUESTS,
    SIM_BURSTINESS,
    TRACE_ARRIVAL,
    MAX_SCENARIOS,
    COST_YEARS,
    COST_PUE,
    COST_USD_PER_KWH,
    COST_RATE_OF_CAPITAL,
    COST_USD_PER_KW_MONTH,
    COST_TCO_UTILIZATION,
    COST_NETWORK_USD_PER_GBPS,
    POWER_BUDGET_MW,
    POWER_CAP,
    COST_QUOTE,
];

/// Every range, as the README's limits section shows it: a Markdown table, one row a range.
pub fn markdown() -> String {
    let mut text =
        String::from("| field | unit | min | max | why |\n| --- | --- | --- | --- | --- |\n");
    for r in CHIP.iter().chain(COUNTS).chain(FLAGS) {
        text.push_str(&markdown_row(r));
        text.push('\n');
    }
    text
}

/// One range as a Markdown table row (a plain unit only in its column, an SI one with its
/// prefix in the bounds too: `1 GB/s`).
pub fn markdown_row(r: &Range) -> String {
    let bound_unit = if si(r.unit) { r.unit } else { "" };
    format!(
        "| `{}` | {} | {} | {} | {} |",
        r.field,
        r.unit,
        show(r.min, bound_unit),
        show(r.max, bound_unit),
        r.why
    )
}

#[cfg(test)]
mod tests;
