//! One accelerator: peak FLOP/s per data type and unit, memory, cache, overheads and price.
//! `ChipFile` mirrors the YAML (unknown fields denied); `Chip` is the validated form the
//! engine uses, in SI units.
//!
//! This module owns `Chip`, its parts and its accessors; `file` holds the YAML's serde types
//! and `load` turns a file into a validated `Chip`.

mod file;
mod load;

use crate::base::builtin;
use crate::base::dtype::DType;
use crate::base::error::Error;
use crate::base::source::{FileKind, Source};

/// A unit's support for one data type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Support {
    /// Dense peak, FLOP/s (OP/s for integer types).
    Peak(f64),
    /// The chip file says the unit lacks this type.
    Unsupported,
}

/// Peaks of one unit (matrix or vector), per data type; a type absent from the file is `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeakTable([Option<Support>; DType::ALL.len()]);

impl PeakTable {
    pub fn get(&self, dtype: DType) -> Option<Support> {
        self.0[dtype as usize]
    }

    /// The data types with a peak, with that peak in FLOP/s, in [`DType::ALL`] order.
    pub fn peaks(&self) -> impl Iterator<Item = (DType, f64)> + '_ {
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
pub struct Cache {
    pub size_bytes: f64,
    pub bandwidth_bytes_per_s: Option<f64>,
}

/// Scale-up link of one chip.
#[derive(Debug, Clone, PartialEq)]
pub struct Interconnect {
    /// Per direction, per chip.
    pub bandwidth_bytes_per_s: f64,
    /// Chips in one scale-up domain (an 8-GPU NVLink node, a 72-GPU NVL72 rack).
    pub domain: Option<u64>,
    /// Time one step of a collective algorithm takes beyond its bytes (0 when not given).
    pub latency_s: f64,
}

/// The scale-out network between domains, per chip.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    pub bandwidth_bytes_per_s: f64,
    pub latency_s: f64,
}

/// GEMMs with fewer rows than this are decode-shaped (docs/sources.md, kernel physics 2: the decode grid is
/// M = 1..256).
pub const SMALL_M: f64 = 256.0;

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
    /// [`SMALL_M`]), whose tiles and split-K leave the memory system partly idle.
    pub small_m_memory: f64,
    /// Rows a GEMM's M is padded to (the matrix instruction's M).
    pub row_tile: u64,
    /// Output tiles a CTA / workgroup may compute, `[rows, columns]`: the library is taken to
    /// pick the one that wastes the least of the last wave.
    pub cta_tiles: Vec<[u64; 2]>,
    /// Whether GEMM libraries spread the last wave's work over every compute unit (Stream-K,
    /// persistent kernels), so no wave is left part-empty.
    pub stream_k: bool,
    /// Time to first byte from HBM, paid when a kernel starts loading and again when its
    /// last stores drain.
    pub dram_latency_s: f64,
}

impl Achievable {
    /// Fraction of the matrix peak reached in `dtype`.
    pub fn matrix(&self, dtype: DType) -> f64 {
        self.matrix[dtype as usize]
            .or_else(|| self.matrix.iter().flatten().copied().reduce(f64::min))
            .unwrap_or(1.0)
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
    /// Usable HBM.
    pub(crate) capacity_bytes: f64,
    pub(crate) marketed_capacity_bytes: Option<f64>,
    pub(crate) bandwidth_bytes_per_s: f64,
    /// Tensor/matrix unit: GEMMs and attention.
    pub(crate) matrix: PeakTable,
    /// Vector unit: elementwise work.
    pub(crate) vector: PeakTable,
    pub(crate) cache: Option<Cache>,
    pub(crate) compute_units: Option<u64>,
    /// Fixed cost of one kernel launch.
    pub(crate) launch_s: Option<f64>,
    pub(crate) interconnect: Option<Interconnect>,
    pub(crate) network: Option<Network>,
    pub(crate) power_w: Option<f64>,
    /// Indicative on-demand price.
    pub(crate) price_usd_per_hour: Option<f64>,
    /// Constants of expected mode; `None` for a chip file without an `expected` section.
    pub(crate) expected: Option<Achievable>,
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

    /// Usable memory: what the device reports to software, where that is known.
    pub fn capacity_bytes(&self) -> f64 {
        self.capacity_bytes
    }

    /// Bytes the runtime holds on the chip before a model loads (context, communication
    /// buffers, graphs).
    pub fn runtime_reserve_bytes(&self) -> f64 {
        // Placeholder until chip files state it: 1 GiB (the CUDA context's 0.5-1 GiB).
        1024.0 * 1024.0 * 1024.0
    }

    /// Memory bandwidth (datasheet).
    pub fn bandwidth_bytes_per_s(&self) -> f64 {
        self.bandwidth_bytes_per_s
    }

    /// Indicative price per chip-hour, where the chip file gives one.
    pub fn price_usd_per_hour(&self) -> Option<f64> {
        self.price_usd_per_hour
    }

    /// Loads a built-in chip by name, or a chip file by path.
    pub fn named(name: &str) -> Result<Chip, Error> {
        Chip::load(&Source::resolve(name, FileKind::Chip)?)
    }

    /// Loads each chip named: a built-in name or a YAML file; `all` is every built-in chip.
    pub fn load_all(names: &[impl AsRef<str>]) -> Result<Vec<Chip>, Error> {
        let mut chips = Vec::new();
        for name in names.iter().map(AsRef::as_ref) {
            if name == "all" {
                for (id, _) in builtin::CHIPS {
                    chips.push(Chip::load(&Source::resolve(id, FileKind::Chip)?)?);
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
