//! The chip file as written: serde types that mirror the YAML field for field (unknown fields
//! denied), with each value's place in the file kept for diagnostics. Quantities stay text
//! here; `load` parses and validates them.

use indexmap::IndexMap;
use serde::Deserialize;
use serde_saphyr::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ChipFile {
    pub(super) name: Spanned<String>,
    pub(super) sku: Option<Spanned<String>>,
    pub(super) family: Option<Spanned<String>>,
    /// The vendor's default engine: a built-in engine id.
    pub(super) engine: Option<Spanned<String>>,
    /// `available` (the default) or `announced`: checked in `load`.
    pub(super) status: Option<Spanned<String>>,
    pub(super) memory: MemoryFile,
    pub(super) matrix: IndexMap<String, Spanned<String>>,
    #[serde(default)]
    pub(super) vector: IndexMap<String, Spanned<String>>,
    /// Special-function unit throughput (exponentials, tanh), per second.
    pub(super) sfu: Option<Spanned<String>>,
    pub(super) cache: Option<CacheFile>,
    pub(super) compute_units: Option<Spanned<u64>>,
    pub(super) launch: Option<Spanned<String>>,
    /// A kernel's fixed cost when launched from the host one by one (no CUDA graph).
    pub(super) eager_launch: Option<Spanned<String>>,
    pub(super) interconnect: Option<InterconnectFile>,
    pub(super) network: Option<NetworkFile>,
    pub(super) power: Option<Spanned<String>>,
    /// What `power` measures: required in built-in files, checked in `cost`.
    pub(super) power_basis: Option<Spanned<super::PowerBasis>>,
    pub(super) price: Option<PriceFile>,
    pub(super) expected: Option<ExpectedFile>,
    /// A measured perf-vs-power curve, for `--power-cap`.
    pub(super) power_curve: Option<super::power_cap::PowerCurveFile>,
}

/// What a chip costs: per hour on one cloud price basis, and to buy.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PriceFile {
    /// The cloud price basis: provider, tier and date.
    pub(super) basis: Option<Spanned<String>>,
    /// Per chip-hour on that basis, or `none` where the basis lists no price for the chip.
    pub(super) cloud: Option<Spanned<String>>,
    /// Purchase price of the system `purchase_gpus` GPUs come in.
    pub(super) purchase: Option<Spanned<String>>,
    pub(super) purchase_gpus: Option<Spanned<u64>>,
    /// What `purchase` buys: required in built-in files, checked in `cost`.
    pub(super) purchase_basis: Option<Spanned<super::PurchaseBasis>>,
}

/// A standalone `expected:` section, as `stepcost fit` writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExpectedFragment {
    pub(super) expected: ExpectedFile,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExpectedFile {
    pub(super) matrix: IndexMap<String, Spanned<f64>>,
    #[serde(default)]
    pub(super) vector: Option<Spanned<f64>>,
    pub(super) memory: Spanned<f64>,
    pub(super) row_tile: Option<Spanned<u64>>,
    pub(super) cta_tiles: Option<Spanned<Vec<Vec<u64>>>>,
    #[serde(default)]
    pub(super) stream_k: bool,
    pub(super) split_k: Option<Spanned<u64>>,
    pub(super) cta_pair_rows: Option<Spanned<u64>>,
    pub(super) weight_only_memory: Option<Spanned<f64>>,
    pub(super) fp4_memory: Option<Spanned<f64>>,
    pub(super) fp16_clock: Option<Spanned<f64>>,
    pub(super) small_m_memory: Option<Spanned<f64>>,
    pub(super) attention_memory: Option<Spanned<f64>>,
    pub(super) exp_overlap: Option<Spanned<f64>>,
    pub(super) dram_latency: Option<Spanned<String>>,
    pub(super) host_step: Option<Spanned<String>>,
    pub(super) host_sequence: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) paths: IndexMap<String, Spanned<super::paths::PathFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MemoryFile {
    pub(super) capacity: Spanned<String>,
    pub(super) marketed_capacity: Option<Spanned<String>>,
    pub(super) capacity_basis: Option<Spanned<super::CapacityBasis>>,
    pub(super) reserve: Option<Spanned<String>>,
    pub(super) bandwidth: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CacheFile {
    pub(super) size: Spanned<String>,
    pub(super) bandwidth: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InterconnectFile {
    /// `switch` (the default), `mesh`, `torus` or `pcie`: checked in `fabric`.
    pub(super) fabric: Option<Spanned<String>>,
    pub(super) bandwidth: Spanned<String>,
    /// A mesh's one peer link, per direction.
    pub(super) link_bandwidth: Option<Spanned<String>>,
    /// A torus's chips along each dimension.
    pub(super) torus: Option<Spanned<Vec<u64>>>,
    pub(super) domain: Option<Spanned<u64>>,
    pub(super) latency: Option<Spanned<String>>,
    /// Measured share of the group's bandwidth a collective reaches, by group size.
    pub(super) expected: Option<Spanned<IndexMap<u64, f64>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NetworkFile {
    pub(super) bandwidth: Spanned<String>,
    pub(super) latency: Option<Spanned<String>>,
}
