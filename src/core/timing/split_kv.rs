//! Split-KV decode attention: a fused attention kernel with too few (sequence, head, query
//! block) tiles to fill the chip splits the keys and values over the units as well, and a
//! second kernel combines the splits' partial outputs (FlashDecoding; docs/sources.md,
//! kernel physics 11).

use super::context::Context;
use crate::core::workload::Kernel;

/// Query rows of one tile of a split-KV kernel (FlashAttention's `kBlockM` there).
const QUERY_BLOCK: f64 = 64.0;
/// Keys of one block of the cache a split takes whole (FlashAttention's `kBlockN`).
const KEY_BLOCK: f64 = 128.0;
/// Share of the units below which the tiles are split: FlashAttention's `num_splits_heuristic`
/// splits only where (sequence, head, query block) tiles fill less than 0.8 of the SMs.
const FILLED: f64 = 0.8;

/// Whether a fused attention kernel splits the cache and so launches a combine kernel beside
/// its own: where its first matrix op's tiles, `count x ceil(m / 64)`, fill less than 0.8 of
/// the compute units and the cache holds two key blocks or more to split. A chip file without
/// `compute_units` splits nothing.
pub(super) fn splits(cx: &Context, kernel: &Kernel) -> bool {
    let Some(units) = cx.chip.compute_units else {
        return false;
    };
    let Some(&first) = (kernel.members.iter()).find(|&&i| cx.workload.ops[i].kind.matrix_unit())
    else {
        return false;
    };
    let dims = cx.ev.gemm[first];
    let tiles = dims.count * (dims.m / QUERY_BLOCK).ceil();
    tiles < FILLED * units as f64 && (dims.n / KEY_BLOCK).ceil() >= 2.0
}
