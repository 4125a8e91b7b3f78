//! Tile padding and wave quantization of a GEMM in expected mode: M padded to the matrix
//! instruction's rows, and the last wave of CTAs, which leaves compute units idle unless
//! Stream-K splits its tiles over them (at the price of a fixup) or the library splits K.

use crate::base::dtype::DType;
use crate::core::chip::{Achievable, Chip};
use crate::core::workload::GemmDims;

use super::kernel::{cache, fixed_cost_s};

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
/// peak): M padded to the matrix instruction's rows, and with Stream-K (`stream_k`) the cost
/// of its last wave as [`stream_k_time_s`] prices it; without, the last wave of
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
    let Some(units) = chip.compute_units.map(|u| u as f64) else {
        return padding;
    };
    if stream_k && ideal_s > 0.0 {
        return stream_k_time_s(chip, a, dims, ideal_s * padding, padded_m, units) / ideal_s;
    }
    let reduction_s = |split: f64| match split > 1.0 {
        true => {
            let bytes = 2.0 * split * count * m * n * 4.0;
            fixed_cost_s(launch_s, a) + bytes / (chip.bandwidth_bytes_per_s * a.memory)
        }
        false => 0.0,
    };
    let most_splits = (a.split_k as f64).min((k / SPLIT_K_DEPTH).floor()).max(1.0) as u64;
    let times_s = (a.cta_tiles.iter())
        .flat_map(|tile| (1..=most_splits).map(move |split| (tile, split as f64)))
        .map(|(tile, split)| {
            // A library uses no taller tile than the padded rows need.
            let [cta_m, cta_n] = tile.map(|t| t as f64);
            let grid = Grid::of(a, [cta_m.min(padded_m), cta_n], padded_m, n, count, units);
            let ctas = grid.tiles * split;
            let wave_efficiency = ctas / ((ctas / grid.slots).ceil() * grid.slots) * grid.used;
            ideal_s * padding / wave_efficiency + reduction_s(split)
        });
    match least_s(times_s) {
        Some(best_s) if ideal_s > 0.0 => best_s / ideal_s,
        _ => padding,
    }
}

/// The least of the times a search priced, leaving out those no tile can give (not finite,
/// or none at all); `None` where none is left.
fn least_s(times_s: impl Iterator<Item = f64>) -> Option<f64> {
    (times_s.filter(|t| t.is_finite() && *t > 0.0)).reduce(f64::min)
}

/// One CTA tile's grid over a GEMM of `count` x `padded_m` x `n` outputs.
struct Grid {
    tiles: f64,
    /// The share of the tiles' area the matrix fills: tiles that overhang it compute the
    /// overhang too.
    used: f64,
    /// The tiles a wave holds: one per unit, or one per pair of units where a CTA pair
    /// computes each (`expected.cta_pair_rows`).
    slots: f64,
}

impl Grid {
    fn of(
        a: &Achievable,
        [cta_m, cta_n]: [f64; 2],
        padded_m: f64,
        n: f64,
        count: f64,
        units: f64,
    ) -> Grid {
        let (rows, columns) = ((padded_m / cta_m).ceil(), (n / cta_n).ceil());
        let paired = a.cta_pair_rows.is_some_and(|r| cta_m >= r as f64);
        Grid {
            tiles: count * rows * columns,
            used: padded_m * n / (rows * cta_m * columns * cta_n),
            slots: if paired { units / 2.0 } else { units },
        }
    }
}

/// A GEMM's time under Stream-K, from its time at the achievable peak with M padded
/// (`padded_s`), with the CTA tile that costs least: the full waves of output tiles run one
/// tile per CTA, and the tiles of a partial last wave are split along K over the units the
/// wave leaves idle, so that every unit works until the end; each extra piece of a split tile
/// writes its fp32 partial sums and the tile's owner reads them back (the fixup), through the
/// cache where the chip file gives its bandwidth (else HBM), after waiting one DRAM latency
/// for its peers' stores (the model's round trip through memory). Where that costs more than
/// leaving the last wave part empty, the library runs the tiles data-parallel (kernel
/// physics 1).
fn stream_k_time_s(
    chip: &Chip,
    a: &Achievable,
    dims: GemmDims,
    padded_s: f64,
    padded_m: f64,
    units: f64,
) -> f64 {
    let GemmDims { count, n, .. } = dims;
    let fixup_bytes_per_s = cache(chip).map_or(chip.bandwidth_bytes_per_s * a.memory, |(_, bw)| bw);
    let times_s = (a.cta_tiles.iter()).map(|tile| {
        // A library uses no taller tile than the padded rows need, nor a wider one than N
        // (Hopper's and Blackwell's MMA instructions take N in steps of 8).
        let [cta_m, cta_n] = tile.map(|t| t as f64);
        let (cta_m, cta_n) = (cta_m.min(padded_m), cta_n.min(n));
        let Grid { tiles, used, slots } = Grid::of(a, [cta_m, cta_n], padded_m, n, count, units);
        let waves = (tiles / slots).ceil();
        let data_parallel_s = padded_s / (tiles / (waves * slots) * used);
        // The last wave's tiles spread over every slot: one extra piece per slot they
        // leave (none where they fill the wave).
        let pieces = waves * slots - tiles;
        // The owner waits on its peers' partial sums: their stores, then its loads, one
        // round trip through the memory system on the critical path.
        let wait_s = if pieces > 0.0 { a.dram_latency_s } else { 0.0 };
        let fixup_s = 2.0 * pieces * cta_m * cta_n * 4.0 / fixup_bytes_per_s + wait_s;
        let stream_k_s = padded_s / used + fixup_s;
        data_parallel_s.min(stream_k_s)
    });
    least_s(times_s).unwrap_or(padded_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::source::Source;

    /// 10 units, 128 x 128 CTA tiles, Stream-K, HBM at 1 TB/s x 0.8, and the `cache` line given.
    fn chip(cache: &str) -> Chip {
        chip_with(cache, "")
    }

    /// [`chip`] with `expected` lines added.
    fn chip_with(cache: &str, expected: &str) -> Chip {
        let text = format!(
            "name: Round chip\nmemory: {{capacity: 80 GB, bandwidth: 1 TB/s}}\n\
             matrix: {{bf16: 100 TFLOPS}}\nvector: {{bf16: 10 TFLOPS}}\ncompute_units: 10\n\
             {cache}expected:\n  matrix: {{bf16: 0.5}}\n  memory: 0.8\n  row_tile: 64\n  \
             cta_tiles: [[128, 128]]\n  stream_k: true\n{expected}"
        );
        Chip::load(&Source::from_text("round.yaml", &text)).unwrap()
    }

    fn quantization(chip: &Chip, m: f64, n: f64, ideal_s: f64) -> f64 {
        let dims = GemmDims {
            count: 1.0,
            m,
            n,
            k: 4096.0,
        };
        gemm_quantization(chip, 1e-6, chip.expected().unwrap(), dims, ideal_s, true)
    }

    #[test]
    fn stream_k_fills_a_partial_wave_for_the_fixup_of_its_split_tiles() {
        // 4 tiles of 128 x 128 on 10 units: 6 extra pieces, each a 64 KiB fp32 partial written
        // and read back, here at HBM's 0.8 TB/s
        let fixup_s = 2.0 * 6.0 * 128.0 * 128.0 * 4.0 / 0.8e12;
        let q = quantization(&chip(""), 128.0, 512.0, 1e-3);
        assert!((q - (1.0 + fixup_s / 1e-3)).abs() < 1e-12);
        // through the cache where the file gives its bandwidth
        let cached = chip("cache: {size: 50 MB, bandwidth: 2 TB/s}\n");
        let fixup_s = 2.0 * 6.0 * 128.0 * 128.0 * 4.0 / 2e12;
        let q = quantization(&cached, 128.0, 512.0, 1e-3);
        assert!((q - (1.0 + fixup_s / 1e-3)).abs() < 1e-12);
    }

    #[test]
    fn the_fixup_waits_one_dram_latency_for_the_peers_partial_sums() {
        // the same 6 pieces with a 0.5 us DRAM latency: the owner's wait for its peers' stores
        // adds it once, beside the bytes
        let fixup_s = 2.0 * 6.0 * 128.0 * 128.0 * 4.0 / 0.8e12 + 0.5e-6;
        let q = quantization(
            &chip_with("", "  dram_latency: 0.5 us\n"),
            128.0,
            512.0,
            1e-3,
        );
        assert!((q - (1.0 + fixup_s / 1e-3)).abs() < 1e-12);
        // 20 tiles fill two waves: no piece, no wait
        let full = quantization(
            &chip_with("", "  dram_latency: 0.5 us\n"),
            128.0,
            2560.0,
            1e-3,
        );
        assert!((full - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_gemm_too_short_for_its_fixup_runs_its_tiles_data_parallel() {
        // the same 4 tiles, 100 ns of work: the fixup (1 us) costs more than the 6 idle units
        assert!((quantization(&chip(""), 128.0, 512.0, 1e-7) - 10.0 / 4.0).abs() < 1e-12);
    }

    #[test]
    fn only_the_last_partial_wave_is_split() {
        // 25 tiles: two full waves of 10, then 5 tiles split over the 10 units (5 extra pieces)
        let fixup_s = 2.0 * 5.0 * 128.0 * 128.0 * 4.0 / 0.8e12;
        let q = quantization(&chip(""), 128.0, 25.0 * 128.0, 1e-3);
        assert!((q - (1.0 + fixup_s / 1e-3)).abs() < 1e-12);
        // 20 tiles fill two waves: nothing to split
        assert!((quantization(&chip(""), 128.0, 20.0 * 128.0, 1e-3) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_narrow_n_takes_a_narrow_tile() {
        // N = 64 under a 128-wide tile: the tile narrows to 64 columns, nothing computed in
        // vain; 20 such tiles fill two waves
        let q = quantization(&chip(""), 20.0 * 128.0, 64.0, 1e-3);
        assert!((q - 1.0).abs() < 1e-12);
    }
}
