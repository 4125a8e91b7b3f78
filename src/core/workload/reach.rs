//! What a change of some params reaches in the workload's graph: the expressions that read a
//! changed param, the tensors shaped by those, and the ops whose numbers may follow. A sweep
//! changes the same param or two from one scenario to the next (its innermost axis), so the
//! reach of each such change is found once and kept: evaluating the next scenario then visits
//! only what it reaches, not every expression, tensor and op of the graph.

use super::bits::Bits;
use super::{Op, OpKind, ReadSize, Ref, Workload};
use crate::base::dtype::Role;

/// The parts of the graph one set of changed params reaches, in evaluation order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Reach {
    /// Which params changed: what the reach is kept under.
    changed: Bits,
    pub(super) exprs: Vec<usize>,
    pub(super) tensors: Vec<usize>,
    /// Ops whose numbers may change: those reading a reached expression or tensor, or the
    /// size of a reached op or of an op defined after them (settled only after every op).
    /// Each is evaluated again only if what it reads did change.
    pub(super) ops: Vec<usize>,
    /// Whether the resident weights may change through a reached weight tensor or repeat
    /// count (a GEMM's own weight is checked as it is evaluated).
    pub(super) weights: bool,
    /// Whether a block's repeat count or held repeats may change.
    pub(super) repeats: bool,
}

/// The reaches of the last few changes an evaluation saw, and which of them its change flags
/// follow now.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Reaches {
    kept: Vec<Reach>,
    /// The next to be replaced when a new one is kept and there is no room.
    next: usize,
    /// The reach the evaluation's change flags were last set from; `None` after an
    /// evaluation of everything (the flags then say everything changed).
    pub(super) current: Option<usize>,
}

/// Reaches kept per evaluation: a sweep's grid changes one of a few sets of params (the
/// innermost axis alone, or it and the next when the innermost wraps around).
const KEPT: usize = 8;

impl Reaches {
    /// The index of the reach of the params `changed` marks, found anew when not kept.
    pub(super) fn of(&mut self, workload: &Workload, changed: &Bits) -> usize {
        if let Some(i) = self.kept.iter().position(|r| r.changed == *changed) {
            return i;
        }
        let reach = Reach::of(workload, changed);
        if self.kept.len() < KEPT {
            self.kept.push(reach);
            return self.kept.len() - 1;
        }
        let i = self.next;
        self.next = (self.next + 1) % KEPT;
        self.kept[i] = reach;
        if self.current == Some(i) {
            self.current = None; // its flags belong to the reach replaced
        }
        i
    }

    pub(super) fn get(&self, i: usize) -> &Reach {
        &self.kept[i]
    }
}

/// Whether op `op`'s numbers depend on the size of its input `n`: a whole read, or the
/// elements an elementwise op works on by default (its first input's). A GEMM's operands and
/// an explicit read have sizes of their own.
fn reads_size_of(op: &Op, n: usize) -> bool {
    matches!(op.inputs[n].size, ReadSize::Whole)
        || (n == 0 && matches!(op.kind, OpKind::Elementwise { elements: None, .. }))
}

impl Reach {
    fn of(workload: &Workload, changed: &Bits) -> Reach {
        let reached_expr: Vec<bool> = (workload.exprs.iter())
            .map(|e| e.params().iter().any(|&p| changed.contains(p)))
            .collect();
        let reached_tensor: Vec<bool> = (workload.tensors.iter())
            .map(|t| t.shape.iter().any(|d| reached_expr[d.id]))
            .collect();
        let mut reached_op = vec![false; workload.ops.len()];
        for (i, op) in workload.ops.iter().enumerate() {
            reached_op[i] = (op.deps.iter().chain(&op.mask_deps)).any(|&k| reached_expr[k])
                || op
                    .inputs
                    .iter()
                    .enumerate()
                    .any(|(n, input)| match input.source {
                        Ref::Tensor(t) => reached_tensor[t],
                        Ref::Op(j) => reads_size_of(op, n) && (j >= i || reached_op[j]),
                        Ref::OwnWeight(_) => false,
                    });
        }
        let weight_tensor = (workload.tensors.iter().zip(&reached_tensor))
            .any(|(t, &reached)| reached && t.role() == Role::Weight);
        let repeats = (workload.blocks.iter())
            .flat_map(|b| b.repeat.iter().chain(&b.held))
            .any(|field| reached_expr[field.id]);
        let indices = |flags: &[bool]| -> Vec<usize> {
            (flags.iter().enumerate())
                .filter(|(_, f)| **f)
                .map(|(i, _)| i)
                .collect()
        };
        Reach {
            changed: changed.clone(),
            exprs: indices(&reached_expr),
            tensors: indices(&reached_tensor),
            ops: indices(&reached_op),
            weights: weight_tensor || repeats,
            repeats,
        }
    }
}
