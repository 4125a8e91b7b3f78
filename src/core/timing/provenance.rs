//! Which chip-file constants priced a kernel: the datasheet peak and bandwidth its roofline
//! reads, and in expected mode the fitted fractions, tiles and latencies that moved its time,
//! each named as the chip file writes it (`expected.paths.cutlass.matrix.fp8`, [`ConstantName`]), so that a
//! reader can see why a number is what it is and which line of which file to question.
//!
//! Pricing records the few choices it made that the cost's own numbers cannot tell (the
//! kernel path of its GEMM, whether the small-M bandwidth applied, whether it ran as fused
//! attention, whether a collective crossed the network) in [`Basis`]; the names and values
//! are read back from the chip here, off the pricing path.

use crate::base::dtype::DType;
use crate::core::chip::{Achievable, Chip};
use crate::core::engine::KernelPath;
use crate::core::workload::KernelKind;

use super::{Bound, KernelCost, Unit};

/// The choices pricing made for one kernel that its cost's numbers do not show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Basis {
    /// Priced in expected mode (the fitted constants apply).
    pub expected: bool,
    /// The kernel path whose fractions priced its GEMMs (`None`: the chip section's).
    pub path: Option<KernelPath>,
    /// Its weights streamed at the small-M fraction (a decode-shaped library GEMM).
    pub small_m: bool,
    /// Priced as a fused attention kernel (its own bandwidth fraction, special functions).
    pub attention: bool,
    /// A collective whose group spans scale-up domains: a phase on the network.
    pub network: bool,
}

/// A chip-file constant, named as the chip file writes it (its [`Display`]).
///
/// [`Display`]: std::fmt::Display
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstantName {
    /// `matrix.<type>`: the matrix unit's datasheet peak.
    MatrixPeak(DType),
    /// `vector.<type>`: the vector unit's datasheet peak.
    VectorPeak(DType),
    /// `sfu`: the special-function units' peak.
    Sfu,
    /// `memory.bandwidth`: the HBM bandwidth.
    Bandwidth,
    /// `cache.bandwidth`: the on-chip cache's bandwidth.
    CacheBandwidth,
    /// `interconnect.bandwidth`: the scale-up link's bandwidth.
    LinkBandwidth,
    /// `interconnect.latency`: a step of a collective over the link.
    LinkLatency,
    /// `network.bandwidth`: the scale-out network's bandwidth.
    NetworkBandwidth,
    /// `network.latency`: a step of a collective over the network.
    NetworkLatency,
    /// `expected.matrix.<type>`: the fitted matrix fraction (without a type: the lowest the
    /// section gives, for a type it gives none).
    Matrix(Option<DType>),
    /// `expected.paths.<path>.matrix.<type>`: a kernel path's own matrix fraction.
    PathMatrix(KernelPath, DType),
    /// `expected.row_tile`: the rows a GEMM's M is padded to.
    RowTile,
    /// `expected.vector`: the fitted vector-unit fraction.
    Vector,
    /// `expected.memory`: the fitted fraction of the bandwidth a large stream reaches.
    Memory,
    /// `expected.attention_memory`: a fused attention kernel's bandwidth fraction.
    AttentionMemory,
    /// `expected.small_m_memory`: a decode-shaped library GEMM's bandwidth fraction.
    SmallMMemory,
    /// `expected.paths.<path>.small_m_memory`: a kernel path's own small-M fraction.
    PathSmallMMemory(KernelPath),
    /// `expected.weight_only_memory`: a weight-only quantised GEMM's, at small M.
    WeightOnlyMemory,
    /// `expected.fp4_memory`: an fp4 GEMM's, at small M.
    Fp4Memory,
    /// `expected.exp_overlap`: the share of the softmax's exponentials hidden under the
    /// matrix work.
    ExpOverlap,
    /// `expected.dram_latency`: a kernel's first load and last store.
    DramLatency,
}

impl std::fmt::Display for ConstantName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use ConstantName as C;
        match *self {
            C::MatrixPeak(d) => write!(f, "matrix.{}", d.name()),
            C::VectorPeak(d) => write!(f, "vector.{}", d.name()),
            C::Sfu => f.write_str("sfu"),
            C::Bandwidth => f.write_str("memory.bandwidth"),
            C::CacheBandwidth => f.write_str("cache.bandwidth"),
            C::LinkBandwidth => f.write_str("interconnect.bandwidth"),
            C::LinkLatency => f.write_str("interconnect.latency"),
            C::NetworkBandwidth => f.write_str("network.bandwidth"),
            C::NetworkLatency => f.write_str("network.latency"),
            C::Matrix(Some(d)) => write!(f, "expected.matrix.{}", d.name()),
            C::Matrix(None) => f.write_str("expected.matrix"),
            C::PathMatrix(p, d) => write!(f, "expected.paths.{}.matrix.{}", p.name(), d.name()),
            C::RowTile => f.write_str("expected.row_tile"),
            C::Vector => f.write_str("expected.vector"),
            C::Memory => f.write_str("expected.memory"),
            C::AttentionMemory => f.write_str("expected.attention_memory"),
            C::SmallMMemory => f.write_str("expected.small_m_memory"),
            C::PathSmallMMemory(p) => write!(f, "expected.paths.{}.small_m_memory", p.name()),
            C::WeightOnlyMemory => f.write_str("expected.weight_only_memory"),
            C::Fp4Memory => f.write_str("expected.fp4_memory"),
            C::ExpOverlap => f.write_str("expected.exp_overlap"),
            C::DramLatency => f.write_str("expected.dram_latency"),
        }
    }
}

impl ConstantName {
    /// The SI unit of its value: `FLOP/s`, `B/s`, `s`, `rows`, or empty for a fraction.
    pub fn unit(self) -> &'static str {
        use ConstantName as C;
        match self {
            C::MatrixPeak(_) | C::VectorPeak(_) | C::Sfu => "FLOP/s",
            C::Bandwidth | C::CacheBandwidth | C::LinkBandwidth | C::NetworkBandwidth => "B/s",
            C::LinkLatency | C::NetworkLatency | C::DramLatency => "s",
            C::RowTile => "rows",
            C::Matrix(_)
            | C::PathMatrix(..)
            | C::Vector
            | C::Memory
            | C::AttentionMemory
            | C::SmallMMemory
            | C::PathSmallMMemory(_)
            | C::WeightOnlyMemory
            | C::Fp4Memory
            | C::ExpOverlap => "",
        }
    }
}

impl serde::Serialize for ConstantName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One chip-file constant behind a kernel's time, and its value in SI units (FLOP/s,
/// bytes/s, seconds, or a plain fraction or count).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Constant {
    /// Which constant.
    pub name: ConstantName,
    /// The value pricing read.
    pub value: f64,
}

/// The chip-file constants that moved `cost`'s time on `chip` (priced there, as `kind`), in
/// the order compute, memory, fixed costs. A kernel not in the step names none.
pub fn priced_by(chip: &Chip, kind: KernelKind, cost: &KernelCost) -> Vec<Constant> {
    let mut out = Vec::new();
    if cost.count == 0 || cost.time_s <= 0.0 {
        return out;
    }
    if let KernelKind::Collective(_) = kind {
        links(chip, cost.basis, &mut out);
        return out;
    }
    // On the roofline only the binding roof sets the time; in expected mode compute and
    // memory overlap imperfectly, and both move it.
    let (compute, memory) = match cost.basis.expected {
        true => (cost.flops > 0.0, cost.bytes > 0.0),
        false => (cost.bound == Bound::Compute, cost.bound == Bound::Memory),
    };
    let roles = Roles {
        matrix: matches!(cost.unit, Unit::Matrix | Unit::Mixed) && compute,
        vector: matches!(cost.unit, Unit::Vector | Unit::Mixed) && compute,
        memory,
    };
    datasheet(chip, cost, roles, &mut out);
    if let Some(a) = chip.expected().filter(|_| cost.basis.expected) {
        fitted(a, cost, roles, &mut out);
    }
    out
}

/// Which of a kernel's roofs moved its time.
#[derive(Clone, Copy)]
struct Roles {
    matrix: bool,
    vector: bool,
    memory: bool,
}

/// A collective's wires: the scale-up link, and the network where its group spans domains.
fn links(chip: &Chip, basis: Basis, out: &mut Vec<Constant>) {
    let mut put = |name, value| out.push(Constant { name, value });
    if let Some(link) = chip.interconnect() {
        put(ConstantName::LinkBandwidth, link.bandwidth_bytes_per_s);
        put(ConstantName::LinkLatency, link.latency_s);
    }
    if let Some(net) = chip.network.as_ref().filter(|_| basis.network) {
        put(ConstantName::NetworkBandwidth, net.bandwidth_bytes_per_s);
        put(ConstantName::NetworkLatency, net.latency_s);
    }
}

/// The datasheet's peaks and bandwidths behind a kernel's time.
fn datasheet(chip: &Chip, cost: &KernelCost, roles: Roles, out: &mut Vec<Constant>) {
    use ConstantName as C;
    let mut put = |name, value| out.push(Constant { name, value });
    let dtype = cost.compute_dtype;
    if roles.matrix {
        if let Ok(peak) = chip.matrix_peak(dtype) {
            put(C::MatrixPeak(dtype), peak);
        }
    }
    if roles.vector || cost.dequant_s > 0.0 {
        if let Ok((d, peak)) = chip.vector_peak(dtype) {
            put(C::VectorPeak(d), peak);
        }
    }
    if cost.special_s > 0.0 {
        if let Some(sfu) = chip.sfu_ops_per_s {
            put(C::Sfu, sfu);
        }
    }
    if roles.memory {
        put(C::Bandwidth, chip.bandwidth_bytes_per_s);
    }
    // Only expected mode reads cache hits at the cache's bandwidth.
    if cost.basis.expected && cost.cache_hit_bytes > 0.0 {
        let bandwidth = chip.cache.as_ref().and_then(|c| c.bandwidth_bytes_per_s);
        if let Some(bandwidth) = bandwidth {
            put(C::CacheBandwidth, bandwidth);
        }
    }
}

/// Expected mode's fitted fractions, tiles and latency behind a kernel's time.
fn fitted(a: &Achievable, cost: &KernelCost, roles: Roles, out: &mut Vec<Constant>) {
    use ConstantName as C;
    let mut put = |name, value| out.push(Constant { name, value });
    let (basis, dtype) = (cost.basis, cost.compute_dtype);
    let path = basis.path.and_then(|p| a.path(Some(p)).map(|f| (p, f)));
    if roles.matrix {
        match path.and_then(|(p, f)| f.matrix[dtype as usize].map(|v| (p, v))) {
            Some((p, v)) => put(C::PathMatrix(p, dtype), v),
            None => match a.matrix[dtype as usize] {
                Some(v) => put(C::Matrix(Some(dtype)), v),
                // No fraction for the type: the lowest the section gives any.
                None => put(C::Matrix(None), a.matrix(dtype)),
            },
        }
        if cost.quantization > 1.0 {
            put(C::RowTile, a.row_tile as f64);
        }
    }
    if roles.vector {
        put(C::Vector, a.vector);
    }
    if cost.special_s > 0.0 {
        if let Some(overlap) = a.exp_overlap {
            put(C::ExpOverlap, overlap);
        }
    }
    if roles.memory {
        match (basis.attention, a.attention_memory) {
            (true, Some(v)) => put(C::AttentionMemory, v),
            _ => put(C::Memory, a.memory),
        }
        if basis.small_m && !basis.attention {
            match path.and_then(|(p, f)| f.small_m_memory.map(|v| (p, v))) {
                Some((p, v)) => put(C::PathSmallMMemory(p), v),
                None => put(C::SmallMMemory, a.small_m_memory),
            }
            match cost.scheme {
                Some(s) if s.weight_only() => put(C::WeightOnlyMemory, a.weight_only_memory),
                Some(s) if s.compute == DType::Fp4 => put(C::Fp4Memory, a.fp4_memory),
                _ => {}
            }
        }
    }
    if cost.launch_s > 0.0 || cost.bound == Bound::Launch {
        put(C::DramLatency, a.dram_latency_s);
    }
}
