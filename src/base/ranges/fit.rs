//! The bounds `stepcost fit` keeps expected-mode constants inside: narrower than what a chip
//! file may hold (`EXPECTED_*`), because a fit on few rows can otherwise trade one constant
//! against another into values no kernel shows (a DRAM latency of 1 ns, a GEMM at 100 % of
//! the datasheet). Each spans what public measurements show, with a margin on either side
//! (docs/sources.md, kernel physics 2, 4, 8 and the MAMF rows of the measurements).

use super::{range, Range};

/// The bounds `stepcost fit` keeps `expected.matrix.TYPE` inside: the share of the dense matrix
/// peak a large GEMM reaches.
pub const FIT_MATRIX: Range = range(
    "expected.matrix.TYPE",
    "",
    0.3,
    0.95,
    "the best GEMMs measured reach 51 % (MI300X bf16) to 87 % (A100 bf16) of the dense peak",
);
/// The bounds `stepcost fit` keeps `expected.vector` inside: the share of the vector peak
/// elementwise work reaches.
pub const FIT_VECTOR: Range = range(
    "expected.vector",
    "",
    0.2,
    1.0,
    "vector work is rarely what sets a kernel's time; any share from a fifth up",
);
/// The bounds `stepcost fit` keeps `expected.memory` inside: the share of memory bandwidth a large
/// stream reaches.
pub const FIT_MEMORY: Range = range(
    "expected.memory",
    "",
    0.6,
    0.98,
    "large streams reach 81 % (MI300X) to 93 % (H200 dot) of the datasheet bandwidth",
);
/// The bounds `stepcost fit` keeps `expected.small_m_memory` inside: the share of the stream
/// bandwidth library GEMMs reach at small M.
pub const FIT_SMALL_M_MEMORY: Range = range(
    "expected.small_m_memory",
    "",
    0.5,
    1.0,
    "library GEMMs at small M stream 1/1.44 of a custom GEMV's bandwidth at worst",
);
/// The bounds `stepcost fit` keeps `expected.attention_memory` inside: the share of memory
/// bandwidth decode attention reaches streaming the KV cache.
pub const FIT_ATTENTION_MEMORY: Range = range(
    "expected.attention_memory",
    "",
    0.6,
    0.98,
    "decode attention kernels stream the KV cache at 90 % (FlashMLA) to nearly all of it",
);
/// The bounds `stepcost fit` keeps `expected.weight_only_memory` inside: a weight-only GEMM's share
/// of a 16-bit one's small-M bandwidth.
pub const FIT_WEIGHT_ONLY_MEMORY: Range = range(
    "expected.weight_only_memory",
    "",
    0.5,
    1.0,
    "weight-only decode kernels stream their weights at half to all of a bf16 GEMV's rate",
);
/// The bounds `stepcost fit` keeps `expected.fp4_memory` inside: an fp4 GEMM's share of a 16-bit
/// one's small-M bandwidth.
pub const FIT_FP4_MEMORY: Range = range(
    "expected.fp4_memory",
    "",
    0.2,
    1.0,
    "fp4 GEMMs at M = 1 stream at 1.78 of a 16-bit GEMM's 5-6 TB/s on B200, up to all of it",
);
/// The bounds `stepcost fit` keeps `expected.dram_latency` inside, in seconds: 100-800 ns.
pub const FIT_DRAM_LATENCY: Range = range(
    "expected.dram_latency",
    "s",
    1e-7,
    8e-7,
    "unloaded DRAM latency measured at 337-408 ns; 100-800 ns spans HBM generations",
);
/// The bounds `stepcost fit` keeps `expected.exp_overlap` inside: the share of a fused attention
/// kernel's exponential time that hides under its GEMMs.
pub const FIT_EXP_OVERLAP: Range = range(
    "expected.exp_overlap",
    "",
    0.05,
    0.95,
    "FlashAttention-3's pipelining hides about 0.4 of the exponentials' time at head dim 128",
);
/// The bounds `stepcost fit` keeps `expected.host_step` inside: a serving engine's host work per
/// step, in seconds.
pub const FIT_HOST_STEP: Range = range(
    "expected.host_step",
    "s",
    2e-5,
    5e-3,
    "a graph replay's launch (tens of microseconds) to vLLM 0.5.3's host work, 62 % of a Llama 3 8B step on H100",
);
/// The bounds `stepcost fit` keeps `expected.host_sequence` inside: the host work per sequence of a
/// step, in seconds.
pub const FIT_HOST_SEQUENCE: Range = range(
    "expected.host_sequence",
    "s",
    5e-7,
    1e-4,
    "a serving engine's per-sequence scheduling, sampling and output work: microseconds to tens of them",
);
/// The bounds `stepcost fit` keeps a kernel path's fraction inside, as a factor on the
/// section's fraction of the same kind (`expected.paths.P.matrix.TYPE` over
/// `expected.matrix.TYPE`, `expected.paths.P.small_m_memory` over `expected.small_m_memory`).
pub const FIT_PATH_FACTOR: Range = range(
    "expected.paths.P",
    "",
    0.5,
    2.0,
    "libraries on one chip measured within 1.5-2.5x of one another, the vendor's library near the middle",
);
