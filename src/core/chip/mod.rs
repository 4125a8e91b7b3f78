//! One accelerator: peak FLOP/s per data type and unit, memory, cache, overheads and prices.
//! `ChipFile` mirrors the YAML (unknown fields denied); `Chip` is the validated form the
//! engine uses, in SI units.
//!
//! This module owns `Chip`, its parts and its accessors; `file` holds the YAML's serde types,
//! `load` turns a file into a validated `Chip` and `expected` checks its `expected:` section.

mod basis;
mod cost;
mod expected;
mod fabric;
mod file;
mod load;
mod paths;
mod power_cap;
mod what_if;

use std::sync::Arc;

use serde::Deserialize;

use crate::base::builtin;
use crate::base::dtype::DType;
use crate::base::error::Error;
use crate::base::source::{FileKind, Source};
use crate::core::cost::{CostGap, CostModel};
use crate::core::engine::Engine;

pub use basis::{PowerBasis, PurchaseBasis};
pub use fabric::{Fabric, Interconnect};
pub use paths::{gemm_path, PathFractions};
pub use power_cap::{PowerCapError, PowerCurve};

/// Runtime reserve of a chip file that gives none: 1 GiB, the shipped chips' stated
/// assumption (a CUDA/HIP context of 0.5 GiB, 0.5 GiB of NCCL/RCCL buffers and captured
/// graphs; docs/sources.md, runtime reserve).
pub(crate) const DEFAULT_RUNTIME_RESERVE_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

/// Where `memory.capacity` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityBasis {
    /// What the device reports to software (`nvidia-smi`, `rocm-smi`, a framework's total).
    Reported,
    /// The vendor states the size in GiB.
    VendorGib,
    /// The marketed figure, read as 10^9 bytes per GB: no reported figure is public.
    #[default]
    Marketed,
}

impl CapacityBasis {
    /// As the chip file and the `capacity_basis` column write it.
    pub fn name(self) -> &'static str {
        match self {
            CapacityBasis::Reported => "reported",
            CapacityBasis::VendorGib => "vendor_gib",
            CapacityBasis::Marketed => "marketed",
        }
    }
}

/// Whether a chip ships: an announced one (a roadmap part) is left out of `all` unless asked
/// for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChipStatus {
    /// It ships: among `all`.
    #[default]
    Available,
    /// Announced, not yet shipping (a roadmap part): in `all` only when asked for.
    Announced,
}

impl ChipStatus {
    /// As the chip file writes it.
    pub fn name(self) -> &'static str {
        match self {
            ChipStatus::Available => "available",
            ChipStatus::Announced => "announced",
        }
    }
}

/// Whether `all` takes in the announced built-in chips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Announced {
    /// `all` is the chips that ship (the default of every command).
    #[default]
    Exclude,
    /// `all` is every built-in chip, announced ones too (`--include-announced`).
    Include,
}

/// What a chip costs as its file gives it: per hour on one cloud price basis, and to buy.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ChipPrices {
    /// The cloud price basis (provider, tier, date); `None` when the file names none.
    pub(crate) cloud_basis: Option<Arc<str>>,
    /// On-demand price per chip-hour on that basis.
    pub(crate) cloud_usd_per_hour: Option<f64>,
    /// Purchase price of the system the chip comes in, and its GPUs.
    pub(crate) purchase_system_usd: Option<f64>,
    pub(crate) purchase_gpus: u64,
    /// What the purchase price buys; `None` where the file does not say (a user's file).
    pub(crate) purchase_basis: Option<PurchaseBasis>,
    /// What the power figure measures; `None` where the file does not say.
    pub(crate) power_basis: Option<PowerBasis>,
}

/// A unit's support for one data type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Support {
    /// Dense peak, FLOP/s (OP/s for integer types).
    Peak(f64),
    /// The chip file says the unit lacks this type.
    Unsupported,
}

/// Peaks of one unit (matrix or vector), per data type; a type absent from the file is `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PeakTable([Option<Support>; DType::ALL.len()]);

impl PeakTable {
    pub(crate) fn get(&self, dtype: DType) -> Option<Support> {
        self.0[dtype as usize]
    }

    /// The data types with a peak, with that peak in FLOP/s, in [`DType::ALL`] order.
    pub(crate) fn peaks(&self) -> impl Iterator<Item = (DType, f64)> + '_ {
        DType::ALL.into_iter().filter_map(|d| match self.get(d) {
            Some(Support::Peak(p)) => Some((d, p)),
            _ => None,
        })
    }

    fn listed(&self) -> String {
        let names: Vec<&str> = self.peaks().map(|(d, _)| d.name()).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }
}

/// On-chip last-level cache.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cache {
    pub size_bytes: f64,
    pub bandwidth_bytes_per_s: Option<f64>,
}

/// The scale-out network between domains, per chip.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Network {
    pub bandwidth_bytes_per_s: f64,
    pub latency_s: f64,
}

/// GEMMs with fewer rows than this are decode-shaped (docs/sources.md, kernel physics 2: the decode grid is
/// M = 1..256).
pub(crate) const SMALL_M: f64 = 256.0;

/// What real kernels achieve on a chip: the constants of expected mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Achievable {
    /// Fraction of the matrix unit's peak a large GEMM reaches, per data type (types without
    /// a figure use the chip's lowest).
    pub matrix: [Option<f64>; DType::ALL.len()],
    /// Fraction of the vector unit's peak elementwise work reaches.
    pub vector: f64,
    /// Fraction of HBM bandwidth a large stream reaches.
    pub memory: f64,
    /// Fraction of that stream bandwidth library GEMMs reach when M is small (decode: M below
    /// `SMALL_M`, 256), whose tiles and split-K leave the memory system partly idle.
    pub small_m_memory: f64,
    /// Fraction of HBM bandwidth a fused attention kernel reaches streaming the KV cache
    /// (FlashAttention / FlashInfer decode, FlashMLA): its own kernel, not a library GEMM, so
    /// no small-M derate. `None`: the stream fraction `memory` (FlashInfer's decode kernels
    /// come close to the bandwidth on long sequences; docs/sources.md, kernel physics 11).
    pub attention_memory: Option<f64>,
    /// Share of a fused attention kernel's special-function time (or of its matrix time,
    /// whichever is shorter) that hides under the other: FlashAttention-3 runs one warpgroup's
    /// softmax while another's GEMMs run. `None`: none hides.
    pub exp_overlap: Option<f64>,
    /// Rows a GEMM's M is padded to (the matrix instruction's M).
    pub row_tile: u64,
    /// Output tiles a CTA / workgroup may compute, `[rows, columns]`: the library is taken to
    /// pick the one that wastes the least of the last wave.
    pub cta_tiles: Vec<[u64; 2]>,
    /// Whether GEMM libraries spread the last wave's work over every compute unit (Stream-K,
    /// persistent kernels), so no wave is left part-empty.
    pub stream_k: bool,
    /// Rows from which a CTA tile is computed by a pair of compute units (Blackwell's
    /// `cta_group::2` MMA: two SMs, one tile), so that a wave holds half as many such tiles;
    /// `None`: every tile takes one.
    pub cta_pair_rows: Option<u64>,
    /// Most slices a GEMM library without Stream-K splits K into when too few output tiles
    /// fill the chip (hipBLASLt's split-K); 1: no split.
    pub split_k: u64,
    /// Fraction of the small-M bandwidth a weight-only quantised GEMM (W4A16, W8A16: Marlin,
    /// Machete) reaches beside a 16-bit one, beyond its dequantisation work; 1 where the chip
    /// file gives none.
    pub weight_only_memory: f64,
    /// Fraction of the small-M bandwidth a GEMM multiplying in fp4 (W4A4 with block scales:
    /// NVFP4, MXFP4 x MXFP4) reaches beside a 16-bit one; 1 where the chip file gives none.
    pub fp4_memory: f64,
    /// fp16's sustained matrix clock over bf16's (MI300X 1115 / 1207 MHz; 1 where none is given):
    /// not priced, `stepcost fit` sets fp16's fraction to bf16's times it (kernel physics 8).
    pub fp16_clock: f64,
    /// Time to first byte from HBM, paid when a kernel starts loading and again when its
    /// last stores drain.
    pub dram_latency_s: f64,
    /// A serving engine's host work for each step it runs (scheduling, preparing the inputs,
    /// launching the step or replaying its graph, sampling, processing the outputs), which
    /// the chip waits for: paid by a step whose workload has an `engine_host` param, times
    /// that share; 0 where the file gives none.
    pub host_step_s: f64,
    /// The part of that host work that grows with each sequence in the step.
    pub host_sequence_s: f64,
    /// Fractions of kernel paths that differ from the section's (`expected.paths`), ordered
    /// by path; see [`Achievable::matrix_on`].
    pub paths: Vec<(crate::core::engine::KernelPath, PathFractions)>,
}

impl Achievable {
    /// Fraction of the matrix peak reached in `dtype`.
    pub fn matrix(&self, dtype: DType) -> f64 {
        self.matrix[dtype as usize]
            .or_else(|| self.matrix.iter().flatten().copied().reduce(f64::min))
            .unwrap_or(1.0)
    }

    /// Fraction of HBM bandwidth a fused attention kernel reaches: its own where the chip
    /// file gives one, else a large stream's.
    pub fn attention_memory(&self) -> f64 {
        self.attention_memory.unwrap_or(self.memory)
    }
}

/// A validated accelerator: every number finite and inside its physical range
/// ([`crate::base::ranges::CHIP`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Chip {
    /// File stem (`h100-sxm`).
    pub(crate) id: String,
    /// Product name (`NVIDIA H100 SXM`).
    pub(crate) name: String,
    /// The exact SKU modelled (the product name where the file gives none).
    pub(crate) sku: String,
    /// Vendor and generation (`nvidia-hopper`): chips whose expected-mode constants may be
    /// fitted together; `None` where the file names none.
    pub(crate) family: Option<String>,
    /// The serving engine the vendor's own numbers use (`vllm`, `trtllm`, `jetstream`):
    /// expected mode prices under it unless `--engine` names another; `None` where the file
    /// names none.
    pub(crate) engine: Option<Arc<Engine>>,
    /// Shipping, or only announced.
    pub(crate) status: ChipStatus,
    /// Usable HBM.
    pub(crate) capacity_bytes: f64,
    pub(crate) marketed_capacity_bytes: Option<f64>,
    pub(crate) capacity_basis: CapacityBasis,
    /// Memory the runtime holds before any model loads.
    pub(crate) reserve_bytes: f64,
    pub(crate) bandwidth_bytes_per_s: f64,
    /// Tensor/matrix unit: GEMMs and attention.
    pub(crate) matrix: PeakTable,
    /// Vector unit: elementwise work.
    pub(crate) vector: PeakTable,
    /// Special-function unit: exponentials (and tanh) per second, which a fused attention
    /// kernel's softmax evaluates once per score (`None`: no such term).
    pub(crate) sfu_ops_per_s: Option<f64>,
    pub(crate) cache: Option<Cache>,
    pub(crate) compute_units: Option<u64>,
    /// Fixed cost of one kernel launch: back to back inside a CUDA graph, as serving engines
    /// replay their decode steps.
    pub(crate) launch_s: Option<f64>,
    /// Fixed cost of one kernel launched from the host on its own, as a step with prompt
    /// tokens runs (`None`: as `launch_s`).
    pub(crate) eager_launch_s: Option<f64>,
    pub(crate) interconnect: Option<Interconnect>,
    pub(crate) network: Option<Network>,
    /// Power per chip: the system's per GPU where sourced, else the TDP.
    pub(crate) power_w: Option<f64>,
    pub(crate) prices: ChipPrices,
    /// How a chip-hour is costed ([`Chip::with_cost_model`]).
    pub(crate) cost: CostModel,
    /// Constants of expected mode; `None` for a chip file without an `expected` section.
    pub(crate) expected: Option<Achievable>,
    /// The measured perf-vs-power curve `--power-cap` reads; `None` where none is public.
    pub(crate) power_curve: Option<PowerCurve>,
}

impl Chip {
    /// File stem (`h100-sxm`), or the name given for text that came from no file.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Product name (`NVIDIA H100 SXM`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Vendor and generation (`nvidia-hopper`), where the chip file names one.
    pub fn family(&self) -> Option<&str> {
        self.family.as_deref()
    }

    /// The vendor's default engine, as the chip file names it (`engine:`); `None` where it
    /// names none.
    pub fn default_engine(&self) -> Option<&Arc<Engine>> {
        self.engine.as_ref()
    }

    /// Shipping, or only announced (a roadmap part).
    pub fn status(&self) -> ChipStatus {
        self.status
    }

    /// The scale-up fabric, where the chip has one.
    pub fn interconnect(&self) -> Option<&Interconnect> {
        self.interconnect.as_ref()
    }

    /// The constants of expected mode, where the chip file has an `expected` section.
    pub fn expected(&self) -> Option<&Achievable> {
        self.expected.as_ref()
    }

    /// The chip with `expected` as its constants of expected mode.
    pub fn with_expected(mut self, expected: Achievable) -> Chip {
        self.expected = Some(expected);
        self
    }

    /// Usable memory: what the device reports to software, where that is known
    /// ([`Chip::capacity_basis`] says).
    pub fn capacity_bytes(&self) -> f64 {
        self.capacity_bytes
    }

    /// The exact SKU modelled (`H100 SXM5 80GB HBM3, HGX board`).
    pub fn sku(&self) -> &str {
        &self.sku
    }

    /// Where [`Chip::capacity_bytes`] comes from.
    pub fn capacity_basis(&self) -> CapacityBasis {
        self.capacity_basis
    }

    /// Memory the runtime holds per chip before weights load: context, communication
    /// buffers, captured graphs (1 GiB where the file gives none).
    pub fn runtime_reserve_bytes(&self) -> f64 {
        self.reserve_bytes
    }

    /// The cloud price basis the chip file names (provider, tier, date).
    pub fn cloud_basis(&self) -> Option<&str> {
        self.prices.cloud_basis.as_deref()
    }

    pub(crate) fn cloud_basis_shared(&self) -> Option<Arc<str>> {
        self.prices.cloud_basis.clone()
    }

    /// Purchase price per GPU: the system's price over its GPUs.
    pub fn purchase_usd(&self) -> Option<f64> {
        (self.prices.purchase_system_usd).map(|usd| usd / self.prices.purchase_gpus as f64)
    }

    /// Power per chip, where the chip file gives it.
    pub fn power_w(&self) -> Option<f64> {
        self.power_w
    }

    /// What the chip file's purchase price buys, where it says.
    pub fn purchase_basis(&self) -> Option<PurchaseBasis> {
        self.prices.purchase_basis
    }

    /// What the chip file's power figure measures, where it says.
    pub fn power_basis(&self) -> Option<PowerBasis> {
        self.prices.power_basis
    }

    /// Scale-out network bandwidth per chip, in bytes per second, where the file gives one.
    pub fn network_bytes_per_s(&self) -> Option<f64> {
        self.network.as_ref().map(|n| n.bandwidth_bytes_per_s)
    }

    /// How this chip's hours are costed.
    pub fn cost_model(&self) -> CostModel {
        self.cost
    }

    /// What one chip-hour costs in the chip's cost model, or why it has no cost.
    pub fn usd_per_hour(&self) -> Result<f64, CostGap> {
        self.cost.usd_per_hour(self)
    }

    /// The chip costed in `model`'s view and assumptions.
    pub fn with_cost_model(mut self, model: CostModel) -> Chip {
        self.cost = model;
        self
    }

    /// The chip at a buyer's own cloud quote per chip-hour, on the basis `basis`.
    pub fn with_cloud_price(mut self, usd_per_hour: f64, basis: &str) -> Chip {
        self.prices.cloud_usd_per_hour = Some(usd_per_hour);
        self.prices.cloud_basis = Some(basis.into());
        self
    }

    /// The chip at a buyer's own purchase price per GPU, whose basis the buyer does not say.
    pub fn with_purchase_price(mut self, usd_per_gpu: f64) -> Chip {
        self.prices.purchase_system_usd = Some(usd_per_gpu);
        self.prices.purchase_gpus = 1;
        self.prices.purchase_basis = None;
        self
    }

    /// The chip drawing `watts` per GPU, whose basis the buyer does not say.
    pub fn with_power(mut self, watts: f64) -> Chip {
        self.power_w = Some(watts);
        self.prices.power_basis = None;
        self
    }

    /// Memory bandwidth (datasheet).
    pub fn bandwidth_bytes_per_s(&self) -> f64 {
        self.bandwidth_bytes_per_s
    }

    /// Cloud price per chip-hour on the chip's price basis, where it has one.
    pub fn price_usd_per_hour(&self) -> Option<f64> {
        self.prices.cloud_usd_per_hour
    }

    /// Loads a built-in chip by name, or a chip file by path.
    pub fn named(name: &str) -> Result<Chip, Error> {
        Chip::load(&Source::resolve(name, FileKind::Chip)?)
    }

    /// Loads each chip named: a built-in name or a YAML file; `all` is every built-in chip
    /// that ships (announced ones are left out).
    pub fn load_all(names: &[impl AsRef<str>]) -> Result<Vec<Chip>, Error> {
        Chip::load_selected(names, Announced::Exclude)
    }

    /// As [`Chip::load_all`], with `announced` saying whether `all` takes in the announced
    /// chips; a chip named by itself loads whatever its status.
    pub fn load_selected(
        names: &[impl AsRef<str>],
        announced: Announced,
    ) -> Result<Vec<Chip>, Error> {
        let mut chips = Vec::new();
        for name in names.iter().map(AsRef::as_ref) {
            if name == "all" {
                for (id, _) in builtin::CHIPS {
                    let chip = Chip::load(&Source::resolve(id, FileKind::Chip)?)?;
                    if announced == Announced::Include || chip.status == ChipStatus::Available {
                        chips.push(chip);
                    }
                }
            } else {
                chips.push(Chip::load(&Source::resolve(name, FileKind::Chip)?)?);
            }
        }
        Ok(chips)
    }

    /// Peak of the matrix unit in `dtype`, or why there is none.
    pub fn matrix_peak(&self, dtype: DType) -> Result<f64, String> {
        match self.matrix.get(dtype) {
            Some(Support::Peak(p)) => Ok(p),
            Some(Support::Unsupported) => Err(format!(
                "`{}` ({}) has no {dtype} support in its matrix unit (the chip file marks it unsupported); it computes in: {}",
                self.id,
                self.name,
                self.matrix.listed()
            )),
            None => Err(format!(
                "`{}` ({}) lists no {dtype} peak for its matrix unit; it lists: {}",
                self.id,
                self.name,
                self.matrix.listed()
            )),
        }
    }

    /// The type the matrix unit multiplies values of `wanted` in: `wanted` where the unit has
    /// it, else (for a type narrower than 16 bits) the 16-bit type it has, as weight-only
    /// kernels widen fp8 or 4-bit values to bf16 before the multiply; the error of
    /// [`Chip::matrix_peak`] where neither is there.
    pub fn matrix_dtype(&self, wanted: DType) -> Result<DType, String> {
        match self.matrix_peak(wanted) {
            Ok(_) => Ok(wanted),
            Err(e) if wanted.bytes() < 2.0 => [DType::Bf16, DType::Fp16]
                .into_iter()
                .find(|d| self.matrix_peak(*d).is_ok())
                .ok_or(e),
            Err(e) => Err(e),
        }
    }

    /// Peak of the vector unit for values of `dtype`, and the type it computes them in: the
    /// type itself when listed, else the narrowest wider floating type the unit lists (vector
    /// units convert fp8 or int4 values before they compute).
    pub fn vector_peak(&self, dtype: DType) -> Result<(DType, f64), String> {
        std::iter::once(dtype)
            .chain([DType::Bf16, DType::Fp16, DType::Fp32])
            .filter(|d| d.bytes() >= dtype.bytes())
            .find_map(|d| match self.vector.get(d) {
                Some(Support::Peak(p)) => Some((d, p)),
                _ => None,
            })
            .ok_or_else(|| {
                format!(
                    "`{}` ({}) lists no vector-unit peak for {dtype} or a wider type; it lists: {}",
                    self.id,
                    self.name,
                    self.vector.listed()
                )
            })
    }

    /// Intensity (FLOP per byte of HBM traffic) where the matrix unit's `dtype` roof meets the
    /// memory slope.
    pub fn ridge_flop_per_byte(&self, dtype: DType) -> Option<f64> {
        match self.matrix.get(dtype) {
            Some(Support::Peak(p)) => Some(p / self.bandwidth_bytes_per_s),
            _ => None,
        }
    }
}
