//! What an evaluation keeps from one scenario to the next so that a sweep's next scenario,
//! which usually changes one param, redoes only what that param changes: which ops' numbers
//! changed, the activation workspace, and the choices the kernels' costs were priced under.

use super::{Evaluation, GemmDims, Op, ReadSize, Ref};
use crate::base::types::Types;

/// An op's numbers in an evaluation, to tell whether evaluating it again changed them: its
/// FLOPs, output, GEMM sizes, group, and the sizes it reads (but for whole outputs of ops,
/// settled after every op, compared by whether their producer's output changed).
#[derive(PartialEq)]
pub(super) struct OpNumbers {
    flops: u64,
    pub(super) out: f64,
    gemm: [u64; 4],
    group: u64,
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

/// The choices the last scenario's kernel costs were priced under, and each kernel's seconds
/// at the MFU reference peaks; `key` is `None` when no costs may be reused.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct KernelMemo {
    /// Chip id, types, fusion plan, roofline mode.
    pub(crate) key: Option<(String, Types, usize, bool)>,
    pub(crate) mfu_s: Vec<f64>,
}
