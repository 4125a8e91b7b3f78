//! The continuous constants of expected mode a fit moves: how each is named in a chip file,
//! bounded, read and written, and which of them every chip shares.

use crate::base::dtype::DType;
use crate::base::ranges::{self, Range};
use crate::core::chip::Achievable;
use crate::core::engine::KernelPath;

/// A continuous constant of expected mode that a fit may move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Constant {
    /// The tensor units' fraction of peak for one type. `Matrix(Bf16)` is both 16-bit float
    /// types' where the file has both: they run the same MMA instructions at one peak (every
    /// datasheet gives them one figure), so rows of either set it, and fp16's is its value
    /// times the file's `fp16_clock` (1 but where the sustained clocks are measured to differ:
    /// MI300X); two free fractions would tell apart the sources that measured each type.
    Matrix(DType),
    /// The vector unit's fraction of peak for elementwise work (`vector`).
    Vector,
    /// The fraction of HBM bandwidth a large stream reaches (`memory`).
    Memory,
    /// The fraction of the stream bandwidth library GEMMs reach at small M (`small_m_memory`).
    SmallMMemory,
    /// The fraction of HBM bandwidth a fused attention kernel reaches streaming the KV cache
    /// (`attention_memory`): fitted only where the file gives one.
    AttentionMemory,
    /// The share of a fused attention kernel's special-function or matrix time that hides
    /// under the other (`exp_overlap`): not listed by [`Constant::of`], so a fit keeps the
    /// figure FlashAttention-3's ablation gives.
    ExpOverlap,
    /// The fraction of the small-M bandwidth a weight-only quantised GEMM reaches beside a
    /// 16-bit one (`weight_only_memory`).
    WeightOnlyMemory,
    /// The fraction of the small-M bandwidth an fp4 GEMM reaches beside a 16-bit one
    /// (`fp4_memory`).
    Fp4Memory,
    /// The time to first byte from HBM, in seconds (`dram_latency`): fitted only where the
    /// file gives one.
    DramLatency,
    /// A serving engine's host work per step, in seconds (`host_step`), shared by every chip.
    HostStep,
    /// The part of that host work per sequence in the step, in seconds (`host_sequence`),
    /// shared by every chip.
    HostSequence,
    /// One kernel path's fraction of the matrix peak for one type (`paths.P.matrix.T`), as a
    /// factor on the section's (`matrix.T`): fitted where the rows being fitted measure the
    /// path in the type and it is not the reference path (whose fractions are the section's);
    /// see [`Constant::paths_for`]. A factor, pulled towards 1 as hard as one source's rows,
    /// so that a path's rows also inform the section's fraction, and a path no other source
    /// measured falls back to it when its source is held out. Set after the section's own
    /// constants (a fit lists it after them), it is written as the fraction it gives.
    PathMatrix(KernelPath, DType),
    /// One kernel path's fraction of the stream bandwidth at small M
    /// (`paths.P.small_m_memory`), as a factor on `small_m_memory`, as
    /// [`Constant::PathMatrix`].
    PathSmallMMemory(KernelPath),
}

impl Constant {
    /// As the chip file names it (`matrix.bf16`, `small_m_memory`).
    pub fn name(self) -> String {
        match self {
            Constant::Matrix(d) => format!("matrix.{d}"),
            Constant::Vector => "vector".into(),
            Constant::Memory => "memory".into(),
            Constant::SmallMMemory => "small_m_memory".into(),
            Constant::AttentionMemory => "attention_memory".into(),
            Constant::ExpOverlap => "exp_overlap".into(),
            Constant::WeightOnlyMemory => "weight_only_memory".into(),
            Constant::Fp4Memory => "fp4_memory".into(),
            Constant::DramLatency => "dram_latency".into(),
            Constant::HostStep => "host_step".into(),
            Constant::HostSequence => "host_sequence".into(),
            Constant::PathMatrix(p, d) => format!("paths.{}.matrix.{d}", p.name()),
            Constant::PathSmallMMemory(p) => format!("paths.{}.small_m_memory", p.name()),
        }
    }

    /// The bounds a fit keeps it inside (`base::ranges`, the fit's table).
    pub fn range(self) -> &'static Range {
        match self {
            Constant::Matrix(_) => &ranges::FIT_MATRIX,
            Constant::Vector => &ranges::FIT_VECTOR,
            Constant::Memory => &ranges::FIT_MEMORY,
            Constant::SmallMMemory => &ranges::FIT_SMALL_M_MEMORY,
            Constant::AttentionMemory => &ranges::FIT_ATTENTION_MEMORY,
            Constant::ExpOverlap => &ranges::FIT_EXP_OVERLAP,
            Constant::WeightOnlyMemory => &ranges::FIT_WEIGHT_ONLY_MEMORY,
            Constant::Fp4Memory => &ranges::FIT_FP4_MEMORY,
            Constant::DramLatency => &ranges::FIT_DRAM_LATENCY,
            Constant::HostStep => &ranges::FIT_HOST_STEP,
            Constant::HostSequence => &ranges::FIT_HOST_SEQUENCE,
            Constant::PathMatrix(..) | Constant::PathSmallMMemory(_) => &ranges::FIT_PATH_FACTOR,
        }
    }

    /// Where every fit starts: the middle of its bounds (in logs), whatever the chip file
    /// says, so that a fit's result depends on the cases alone and a chip file holding a
    /// fit's output fits to the same numbers again.
    pub fn start(self) -> f64 {
        let r = self.range();
        (r.min * r.max).sqrt()
    }

    /// Its value in `a` (a matrix type without a figure reads 1, no exponentials' overlap 0).
    pub fn get(self, a: &Achievable) -> f64 {
        match self {
            Constant::Matrix(d) => a.matrix[d as usize].unwrap_or(1.0),
            Constant::Vector => a.vector,
            Constant::Memory => a.memory,
            Constant::SmallMMemory => a.small_m_memory,
            Constant::AttentionMemory => a.attention_memory(),
            Constant::ExpOverlap => a.exp_overlap.unwrap_or(0.0),
            Constant::WeightOnlyMemory => a.weight_only_memory,
            Constant::Fp4Memory => a.fp4_memory,
            Constant::DramLatency => a.dram_latency_s,
            Constant::HostStep => a.host_step_s,
            Constant::HostSequence => a.host_sequence_s,
            Constant::PathMatrix(p, d) => a.matrix_on(Some(p), d) / a.matrix(d),
            Constant::PathSmallMMemory(p) => a.small_m_memory_on(Some(p)) / a.small_m_memory,
        }
    }

    pub(crate) fn set(self, a: &mut Achievable, value: f64) {
        match self {
            Constant::Matrix(d) => {
                if let Some(Constant::Matrix(t)) = self.tied(a) {
                    a.matrix[t as usize] = Some(value * a.fp16_clock);
                }
                a.matrix[d as usize] = Some(value);
            }
            Constant::Vector => a.vector = value,
            Constant::Memory => a.memory = value,
            Constant::SmallMMemory => a.small_m_memory = value,
            Constant::AttentionMemory => a.attention_memory = Some(value),
            Constant::ExpOverlap => a.exp_overlap = Some(value),
            Constant::WeightOnlyMemory => a.weight_only_memory = value,
            Constant::Fp4Memory => a.fp4_memory = value,
            Constant::DramLatency => a.dram_latency_s = value,
            Constant::HostStep => a.host_step_s = value,
            Constant::HostSequence => a.host_sequence_s = value,
            Constant::PathMatrix(p, d) => {
                let fraction = path_fraction(value * a.matrix(d));
                a.path_mut(p).matrix[d as usize] = Some(fraction);
            }
            Constant::PathSmallMMemory(p) => {
                let fraction = path_fraction(value * a.small_m_memory);
                a.path_mut(p).small_m_memory = Some(fraction);
            }
        }
    }

    /// The kernel-path constants `a` gives a figure for, in path order. They are not among
    /// [`Constant::of`]: a fit adds them from its own rows ([`Constant::paths_for`]), never
    /// from a file, so a held-out source's path leaves no trace in the fits without it.
    pub fn paths_of(a: &Achievable) -> Vec<Constant> {
        let mut constants = Vec::new();
        for (p, f) in &a.paths {
            for d in DType::ALL {
                if f.matrix[d as usize].is_some() {
                    constants.push(Constant::PathMatrix(*p, d));
                }
            }
            if f.small_m_memory.is_some() {
                constants.push(Constant::PathSmallMMemory(*p));
            }
        }
        constants
    }

    /// The kernel-path constants a fit to rows measuring `(path, type)` GEMMs fits: every
    /// path but the reference, whose fractions are the section's own, gets a matrix fraction
    /// for each type its rows compute in and a small-M bandwidth fraction (dropped again where
    /// no row depends on it). The reference is the chip vendor's own library where rows
    /// measure one (`VENDOR_PATHS`: what an engine's 16-bit GEMMs and a framework call by
    /// default), else the path most rows measure (ties: the first in [`KernelPath::ALL`]).
    pub fn paths_for(measured: &[(KernelPath, DType)]) -> Vec<Constant> {
        let count = |p: KernelPath| measured.iter().filter(|(q, _)| *q == p).count();
        let most = |paths: &mut dyn Iterator<Item = KernelPath>| {
            paths
                .filter(|p| count(*p) > 0)
                .max_by_key(|p| (count(*p), std::cmp::Reverse(*p)))
        };
        let Some(main) =
            most(&mut VENDOR_PATHS.into_iter()).or_else(|| most(&mut KernelPath::ALL.into_iter()))
        else {
            return Vec::new();
        };
        let mut constants = Vec::new();
        for p in KernelPath::ALL
            .into_iter()
            .filter(|p| *p != main && count(*p) > 0)
        {
            for d in DType::ALL {
                if measured.contains(&(p, d)) {
                    constants.push(Constant::PathMatrix(p, d));
                }
            }
            constants.push(Constant::PathSmallMMemory(p));
        }
        constants
    }

    /// Whether it is one kernel path's.
    pub fn is_path(self) -> bool {
        matches!(
            self,
            Constant::PathMatrix(..) | Constant::PathSmallMMemory(_)
        )
    }

    /// The constants `a` has: each matrix type it gives a fraction for (but one tied to
    /// another it has), then the rest (the attention fraction, the exponentials' overlap, the
    /// DRAM latency and the host work only where the file gives them: absent, the first is the
    /// stream fraction and the others no term at all).
    pub fn of(a: &Achievable) -> Vec<Constant> {
        let matrix: Vec<Constant> = (DType::ALL.into_iter())
            .filter(|d| a.matrix[*d as usize].is_some())
            .map(Constant::Matrix)
            .collect();
        let followers: Vec<Constant> = matrix.iter().filter_map(|c| c.tied(a)).collect();
        let mut constants: Vec<Constant> = (matrix.into_iter())
            .filter(|c| !followers.contains(c))
            .collect();
        constants.extend([Constant::Vector, Constant::Memory, Constant::SmallMMemory]);
        if a.attention_memory.is_some() {
            constants.push(Constant::AttentionMemory);
        }
        // Always: 1 (a file without them) is a value, no derate, not the absence of a term.
        constants.extend([Constant::WeightOnlyMemory, Constant::Fp4Memory]);
        if a.dram_latency_s > 0.0 {
            constants.push(Constant::DramLatency);
        }
        if a.host_step_s > 0.0 {
            constants.push(Constant::HostStep);
        }
        if a.host_sequence_s > 0.0 {
            constants.push(Constant::HostSequence);
        }
        constants
    }

    /// The constant that takes this one's value in `a`, where `a` has it (fp16's fraction with
    /// bf16's, times `fp16_clock`): not fitted on its own, and not listed by [`Constant::of`].
    pub fn tied(self, a: &Achievable) -> Option<Constant> {
        match self {
            Constant::Matrix(d) => tied_to(d)
                .filter(|t| a.matrix[*t as usize].is_some())
                .map(Constant::Matrix),
            _ => None,
        }
    }

    /// Whether every chip shares the constant: a serving engine's host work is the engine's
    /// and its host's, not the accelerator's, so it is fitted once, to every chip's model
    /// steps and requests ([`super::fit_pooled`]), and a family's or a chip's fit holds it
    /// there (a family measured through one engine alone would otherwise bill that engine to
    /// its chips).
    pub fn is_shared(self) -> bool {
        matches!(self, Constant::HostStep | Constant::HostSequence)
    }
}

/// A path's fraction as a file may hold it: a factor times the section's, at most 1.
fn path_fraction(fraction: f64) -> f64 {
    fraction.clamp(0.01, 1.0)
}

/// The chip vendors' own GEMM libraries: where a fit's rows measure one, its fractions are the
/// section's own and the other paths' are fitted apart ([`Constant::paths_for`]).
pub(super) const VENDOR_PATHS: [KernelPath; 4] = [
    KernelPath::Cublaslt,
    KernelPath::Hipblaslt,
    KernelPath::Xla,
    KernelPath::Neuron,
];

/// The matrix type whose fraction moves with `d`'s: fp16 with bf16 (see [`Constant::Matrix`]).
fn tied_to(d: DType) -> Option<DType> {
    (d == DType::Bf16).then_some(DType::Fp16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::source::Source;

    fn section(matrix: &str) -> Achievable {
        let text = format!("expected:\n  matrix: {matrix}\n  vector: 0.5\n  memory: 0.8\n");
        Achievable::load(&Source::from_text("fragment.yaml", &text)).unwrap()
    }

    #[test]
    fn fp16_moves_with_bf16_where_a_section_has_both() {
        let mut a = section("{bf16: 0.8, fp16: 0.7, fp8: 0.6}");
        let listed = Constant::of(&a);
        assert!(listed.contains(&Constant::Matrix(DType::Bf16)));
        assert!(!listed.contains(&Constant::Matrix(DType::Fp16)));
        assert_eq!(
            Constant::Matrix(DType::Bf16).tied(&a),
            Some(Constant::Matrix(DType::Fp16))
        );
        Constant::Matrix(DType::Bf16).set(&mut a, 0.65);
        assert_eq!(a.matrix[DType::Fp16 as usize], Some(0.65));
        assert_eq!(a.matrix[DType::Fp8 as usize], Some(0.6));
    }

    #[test]
    fn fp16_follows_bf16_at_its_clock_where_the_file_gives_one() {
        // MI300X's median MFMA clocks: 1115 MHz in fp16, 1207 in bf16 (AMD's table).
        let text =
            "expected:\n  matrix: {bf16: 0.6, fp16: 0.6}\n  memory: 0.8\n  fp16_clock: 0.9238\n";
        let mut a = Achievable::load(&Source::from_text("fragment.yaml", text)).unwrap();
        Constant::Matrix(DType::Bf16).set(&mut a, 0.5);
        assert!((a.matrix[DType::Fp16 as usize].unwrap() - 0.4619).abs() < 1e-12);
        assert_eq!(a.matrix[DType::Bf16 as usize], Some(0.5));
    }

    #[test]
    fn paths_other_than_the_vendor_library_get_their_own_constants() {
        use KernelPath::*;
        let measured = [
            (Deepgemm, DType::Fp8),
            (Deepgemm, DType::Fp8),
            (Deepgemm, DType::Fp8),
            (Cublaslt, DType::Fp8),
            (FrameworkLinear, DType::Bf16),
        ];
        assert_eq!(
            Constant::paths_for(&measured),
            [
                Constant::PathMatrix(Deepgemm, DType::Fp8),
                Constant::PathSmallMMemory(Deepgemm),
                Constant::PathMatrix(FrameworkLinear, DType::Bf16),
                Constant::PathSmallMMemory(FrameworkLinear),
            ]
        );
        // No vendor library measured: the path most rows measure is the reference.
        let measured = [
            (Aiter, DType::Bf16),
            (Aiter, DType::Bf16),
            (FrameworkLinear, DType::Bf16),
        ];
        assert_eq!(
            Constant::paths_for(&measured),
            [
                Constant::PathMatrix(FrameworkLinear, DType::Bf16),
                Constant::PathSmallMMemory(FrameworkLinear),
            ]
        );
        assert!(Constant::paths_for(&[(Marlin, DType::Fp16)]).is_empty());
    }

    #[test]
    fn a_path_constant_reads_the_section_until_set() {
        let mut a = section("{bf16: 0.8, fp8: 0.6}");
        let c = Constant::PathMatrix(KernelPath::Deepgemm, DType::Fp8);
        assert_eq!(c.get(&a), 1.0);
        c.set(&mut a, 1.25);
        assert_eq!(a.matrix_on(Some(KernelPath::Deepgemm), DType::Fp8), 0.75);
        assert_eq!(c.get(&a), 1.25);
        assert_eq!(Constant::paths_of(&a), [c]);
        assert_eq!(c.name(), "paths.deepgemm.matrix.fp8");
        assert!(!Constant::of(&a).contains(&c));
    }

    #[test]
    fn a_lone_16_bit_type_is_its_own_constant() {
        // fp16 without bf16 (a pre-Ampere part) is fitted on its own; bf16 without fp16 gains
        // no fp16 fraction.
        let fp16_only = section("{fp16: 0.7}");
        assert!(Constant::of(&fp16_only).contains(&Constant::Matrix(DType::Fp16)));
        let mut bf16_only = section("{bf16: 0.8}");
        assert_eq!(Constant::Matrix(DType::Bf16).tied(&bf16_only), None);
        Constant::Matrix(DType::Bf16).set(&mut bf16_only, 0.65);
        assert_eq!(bf16_only.matrix[DType::Fp16 as usize], None);
    }
}
