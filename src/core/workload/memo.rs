//! What an evaluation keeps from one scenario to the next so that a sweep's next scenario,
//! which usually changes one param, redoes only what that param changes: which ops' numbers
//! changed, the activation workspace, and the choices the kernels' costs were priced under.

use super::{Evaluation, GemmDims, Op, ReadSize, Ref};
use crate::base::format::Scheme;
use crate::base::param::Launch;
use crate::base::types::Types;
use crate::core::engine::Engine;
use std::sync::Arc;

/// An op's numbers in an evaluation, to tell whether evaluating it again changed them: its
/// FLOPs, output, GEMM sizes, group, and the sizes it reads (but for whole outputs of ops,
/// settled after every op, compared by whether their producer's output changed).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct OpNumbers {
    flops: u64,
    pub(super) out: f64,
    gemm: [u64; 4],
    group: u64,
    causal: u64,
    /// The first reads' sizes as bits (whole op outputs as 0); more than fit: `None`.
    reads: Option<[u64; 6]>,
}

impl OpNumbers {
    pub(super) fn of(i: usize, op: &Op, ev: &Evaluation) -> OpNumbers {
        let GemmDims { count, m, n, k } = ev.gemm[i];
        let mut reads = [0; 6];
        let fits = op.slots.len() <= reads.len();
        for ((input, slot), read) in op.inputs.iter().zip(op.slots.clone()).zip(&mut reads) {
            if !matches!((&input.size, input.source), (ReadSize::Whole, Ref::Op(_))) {
                *read = ev.reads[slot].to_bits();
            }
        }
        OpNumbers {
            flops: ev.flops[i].to_bits(),
            out: ev.out_elements[i],
            gemm: [count, m, n, k].map(f64::to_bits),
            group: ev.group[i].to_bits(),
            causal: ev.causal[i].to_bits(),
            reads: fits.then_some(reads),
        }
    }
}

/// An activation workspace and the scenario choices it was priced under.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WorkspaceMemo {
    /// Overrides of params other than batch, tokens and context, in order.
    pub(crate) overrides: Vec<(usize, f64)>,
    pub(crate) fusion: usize,
    pub(crate) types: Types,
    pub(crate) bytes: Option<f64>,
}

/// One kernel's executions summed into what the step's totals add up: kept with its cost, so
/// that a kernel neither priced again nor run a different number of times is added without
/// being multiplied out again (a sweep's next scenario reprices one kernel of about twenty).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct KernelSums {
    pub(crate) executions: u64,
    pub(crate) time_s: f64,
    pub(crate) roofline_time_s: f64,
    pub(crate) flops: f64,
    /// HBM traffic (none for a collective, whose bytes cross the link).
    pub(crate) hbm_bytes: f64,
    /// The FLOPs' time at the MFU reference peaks.
    pub(crate) mfu_time_s: f64,
    /// The time, where the kernel is compute-bound (else none).
    pub(crate) compute_bound_s: f64,
    /// The time, where the kernel runs only on the first (or the last) pipeline stage.
    pub(crate) first_stage_s: f64,
    pub(crate) last_stage_s: f64,
    /// One execution's activation bytes (none when it never runs).
    pub(crate) activation_bytes: f64,
    pub(crate) scheme: Option<Scheme>,
}

/// What a kernel's cost depends on beyond its ops' numbers: the types, the fusion plan, whether
/// in roofline mode, how it is launched.
pub(crate) type PricedUnder = (Types, usize, bool, Launch);

/// The choices the last scenario's kernel costs were priced under, and each kernel's sums.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct KernelMemo {
    /// Whether the costs may be reused at all (the choices below are then meaningful).
    valid: bool,
    /// The chip's id, kept in a buffer reused from one scenario to the next.
    chip: String,
    key: PricedUnder,
    /// The engine the costs were priced under (expected mode; `None` otherwise). Held, so
    /// that an engine still priced under is never freed and its address reused.
    engine: Option<Arc<Engine>>,
    /// Each kernel's seconds at the MFU reference peaks, for one execution.
    pub(crate) mfu_s: Vec<f64>,
    pub(crate) sums: Vec<KernelSums>,
    /// Whether each kernel's cost is a price (else it was absent: its block ran 0 times).
    pub(crate) priced: Vec<bool>,
}

impl KernelMemo {
    /// Whether the costs were priced on chip `chip` under `key` (types, fusion plan,
    /// roofline mode, launches).
    pub(crate) fn priced_under(
        &self,
        chip: &str,
        key: PricedUnder,
        engine: Option<&Arc<Engine>>,
    ) -> bool {
        let same_engine = match (&self.engine, engine) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
            _ => false,
        };
        self.valid && self.key == key && self.chip == chip && same_engine
    }

    /// The costs are now those of `chip` under `key` and `engine`, or (`None`) may not be
    /// reused.
    pub(crate) fn set(
        &mut self,
        priced: Option<(&str, PricedUnder)>,
        engine: Option<&Arc<Engine>>,
    ) {
        self.valid = priced.is_some();
        if !match (&self.engine, engine) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        } {
            self.engine = engine.cloned();
        }
        if let Some((chip, key)) = priced {
            if self.chip != chip {
                self.chip.clear();
                self.chip.push_str(chip);
            }
            self.key = key;
        }
    }
}
