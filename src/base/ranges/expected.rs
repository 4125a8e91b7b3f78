//! Ranges of the expected-mode constants of GEMM kernels beyond the first ones: the
//! weight-only and fp4 fractions, fp16's clock beside bf16's, the tiles CTA pairs share and
//! the split of K.

use super::{range, Range, EXPECTED_MATRIX};

/// A chip file's `expected.weight_only_memory`: the fraction of the small-M bandwidth a weight-only
/// quantised GEMM (W4A16, W8A16) reaches beside a 16-bit one.
pub const EXPECTED_WEIGHT_ONLY_MEMORY: Range = Range {
    field: "expected.weight_only_memory",
    min: 0.3,
    why: "weight-only kernels at a small batch read weights at 30-100 % of a 16-bit GEMM's rate",
    ..EXPECTED_MATRIX
};
/// A chip file's `expected.fp4_memory`: the fraction of the small-M bandwidth a GEMM multiplying in
/// fp4 reaches beside a 16-bit one.
pub const EXPECTED_FP4_MEMORY: Range = Range {
    field: "expected.fp4_memory",
    min: 0.2,
    why: "fp4 GEMMs at a small batch stream at a fifth to all of a 16-bit GEMM's rate",
    ..EXPECTED_MATRIX
};
/// A chip file's `expected.fp16_clock`: fp16's sustained matrix clock over bf16's, which
/// `stepcost fit` scales bf16's fraction by for fp16.
pub const EXPECTED_FP16_CLOCK: Range = Range {
    field: "expected.fp16_clock",
    min: 0.5,
    why: "fp16's sustained matrix clock beside bf16's, 0.92 on MI300X, 1 where the two draw alike",
    ..EXPECTED_MATRIX
};
/// A chip file's `expected.cta_pair_rows`: the rows from which a CTA tile is computed by a pair of
/// compute units.
pub const EXPECTED_CTA_PAIR_ROWS: Range = range(
    "expected.cta_pair_rows",
    "",
    1.0,
    4096.0,
    "rows of a CTA tile that a pair of compute units shares, 256 on Blackwell",
);
/// A chip file's `expected.split_k`: the most slices a library without Stream-K splits K into when
/// too few output tiles fill the chip.
pub const EXPECTED_SPLIT_K: Range = range(
    "expected.split_k",
    "",
    1.0,
    64.0,
    "slices of K a library splits a skinny GEMM into, 4-16 today",
);
