//! Tile padding and wave quantization of a GEMM in expected mode: M padded to the matrix
//! instruction's rows, the last wave of CTAs leaving compute units idle, and where the
//! library splits K, the split that costs least.

use crate::base::dtype::DType;
use crate::engine::chip::{Achievable, Chip};
use crate::engine::workload::GemmDims;

use super::kernel::fixed_cost_s;

/// K a split-K slice keeps at least: one CTA's step along K (an assumption: 64, the depth of
/// a 16-bit MFMA tile's K loop; no source states the smallest slice a library makes).
const SPLIT_K_DEPTH: f64 = 64.0;

/// Whether a GEMM computing in `dtype` fills the tail wave with Stream-K where the chip's
/// libraries do (`expected.stream_k`). Block-scaled fp4 GEMMs are scheduled one output tile
/// per CTA: DeepGEMM has no Stream-K (deepseek-ai/DeepGEMM issue 41) and CUTLASS's
/// block-scaled SM100 kernels run its data-parallel persistent scheduler unless a user swaps
/// it (NVIDIA/cutlass issue 3167); docs/sources.md, kernel physics 12.
pub(super) fn stream_k(a: &Achievable, dtype: DType) -> bool {
    a.stream_k && dtype != DType::Fp4
}

/// How much longer a GEMM's compute takes than its FLOPs say (`ideal_s` at the achievable
/// peak): M padded to the matrix instruction's rows, and (without Stream-K) the last wave of
/// CTAs leaving compute units idle (a wave holding half as many tiles where a CTA pair
/// computes each, `expected.cta_pair_rows`), with the CTA tile and, where the library splits K
/// (`split_k`), the split that costs least, as libraries' heuristics choose. A split multiplies
/// the CTAs, each slice keeping at least `SPLIT_K_DEPTH` of K, and pays the reduction of its
/// partial sums: every slice writes its M x N fp32 partial sums and a second kernel reads them
/// back (its launch, `launch_s`, first access and bytes); the factor includes that reduction.
pub(super) fn gemm_quantization(
    chip: &Chip,
    launch_s: f64,
    a: &Achievable,
    dims: GemmDims,
    ideal_s: f64,
    stream_k: bool,
) -> f64 {
    let GemmDims { count, m, n, k } = dims;
    if m <= 0.0 {
        return 1.0; // not a GEMM
    }
    let row_tile = a.row_tile as f64;
    let padded_m = (m / row_tile).ceil() * row_tile;
    let padding = padded_m / m;
    let units = match chip.compute_units {
        Some(units) if !stream_k => units as f64,
        _ => return padding,
    };
    let reduction_s = |split: f64| match split > 1.0 {
        true => {
            let bytes = 2.0 * split * count * m * n * 4.0;
            fixed_cost_s(launch_s, a) + bytes / (chip.bandwidth_bytes_per_s * a.memory)
        }
        false => 0.0,
    };
    let most_splits = (a.split_k as f64).min((k / SPLIT_K_DEPTH).floor()).max(1.0) as u64;
    let best_s = (a.cta_tiles.iter())
        .flat_map(|tile| (1..=most_splits).map(move |split| (tile, split as f64)))
        .map(|(tile, split)| {
            // A library uses no taller tile than the padded rows need.
            let [cta_m, cta_n] = tile.map(|t| t as f64);
            let cta_m = cta_m.min(padded_m);
            let (rows, columns) = ((padded_m / cta_m).ceil(), (n / cta_n).ceil());
            let ctas = count * rows * columns * split;
            // Tiles that overhang the matrix compute their overhang too.
            let used = padded_m * n / (rows * cta_m * columns * cta_n);
            // A tile a CTA pair computes takes two units: a wave holds half as many.
            let paired = a.cta_pair_rows.is_some_and(|r| cta_m >= r as f64);
            let slots = if paired { units / 2.0 } else { units };
            let wave_efficiency = ctas / ((ctas / slots).ceil() * slots) * used;
            ideal_s * padding / wave_efficiency + reduction_s(split)
        })
        .filter(|t| t.is_finite() && *t > 0.0)
        .fold(f64::INFINITY, f64::min);
    if best_s.is_finite() && ideal_s > 0.0 {
        best_s / ideal_s
    } else {
        padding
    }
}
