//! Evaluating a workload for one set of param values: params, then the expressions that read
//! a changed param, tensor sizes, block repeats, each op's work and reads, and the step-wide
//! numbers, into an [`Evaluation`] reused from one scenario to the next. Also what a scenario
//! keeps resident in HBM.

use super::memo::{KernelMemo, OpNumbers, WorkspaceMemo};
use super::{Collective, Field, GemmDims, Op, OpKind, ReadSize, Ref, Workload, MAX_REPEAT};
use crate::base::dtype::Role;
use crate::base::error::Error;
use crate::base::ranges;
use crate::base::types::Types;

/// The numbers of one scenario, in flat arrays indexed like the workload's params,
/// expressions, blocks, ops and read slots. Reuse one per thread across scenarios.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    pub(crate) params: Vec<f64>,
    pub(crate) exprs: Vec<f64>,
    /// The params `exprs` were last evaluated with, whether they are all current, and which
    /// params changed since (scratch).
    previous: Vec<f64>,
    valid: bool,
    changed: Vec<bool>,
    /// Which expressions, tensors and ops changed in the last evaluation (scratch).
    expr_changed: Vec<bool>,
    tensor_changed: Vec<bool>,
    op_changed: Vec<bool>,
    /// Which ops' output sizes changed in the last evaluation (scratch): what an op reading
    /// a whole output depends on.
    out_changed: Vec<bool>,
    /// Elements of each declared tensor.
    pub(crate) tensors: Vec<f64>,
    pub(crate) repeats: Vec<u64>,
    /// Repeats of each block one chip holds the tensors of.
    pub(crate) held: Vec<f64>,
    pub(crate) flops: Vec<f64>,
    pub(crate) out_elements: Vec<f64>,
    /// Elements each op reads of each input.
    pub(crate) reads: Vec<f64>,
    /// `[batch, m, n, k]` of each GEMM (zeros for other ops).
    pub(crate) gemm: Vec<GemmDims>,
    /// Chips in each collective's group (0 for other ops).
    pub(crate) group: Vec<f64>,
    pub(crate) tokens_per_step: Option<f64>,
    pub(crate) sequences: Option<f64>,
    /// Chips one replica runs on (1 when the workload does not say).
    pub(crate) chips: f64,
    /// Pipeline stages (1 when the workload does not say).
    pub(crate) stages: f64,
    /// The last activation workspace priced, and what it depends on (see `price::memory`):
    /// a sweep changes batch or context far more often than what the workspace depends on.
    pub(crate) workspace_memo: Option<WorkspaceMemo>,
    /// What the kernel costs of the last priced scenario were priced under (see
    /// `price::price_step`): a kernel none of whose ops changed since keeps its cost.
    pub(crate) kernel_memo: KernelMemo,
}

/// What one op does in a scenario: its FLOPs and output elements, and for a GEMM the
/// elements of its left and right matrices (zero for other ops).
#[derive(Debug, Clone, Copy, Default)]
struct Work {
    flops: f64,
    out: f64,
    left: f64,
    right: f64,
}

impl Workload {
    /// An evaluation sized for this workload, to be filled by [`Workload::evaluate`].
    pub fn new_evaluation(&self) -> Evaluation {
        Evaluation {
            params: vec![0.0; self.params.len()],
            exprs: vec![0.0; self.exprs.len()],
            previous: vec![0.0; self.params.len()],
            valid: false,
            changed: vec![true; self.params.len()],
            expr_changed: vec![true; self.exprs.len()],
            tensor_changed: vec![true; self.tensors.len()],
            op_changed: vec![true; self.ops.len()],
            out_changed: vec![true; self.ops.len()],
            tensors: vec![0.0; self.tensors.len()],
            repeats: vec![1; self.blocks.len()],
            held: vec![1.0; self.blocks.len()],
            flops: vec![0.0; self.ops.len()],
            out_elements: vec![0.0; self.ops.len()],
            reads: vec![0.0; self.slot_count],
            gemm: vec![GemmDims::default(); self.ops.len()],
            group: vec![0.0; self.ops.len()],
            tokens_per_step: None,
            sequences: None,
            workspace_memo: None,
            kernel_memo: KernelMemo::default(),
            chips: 1.0,
            stages: 1.0,
        }
    }

    /// Evaluates the step for the param values `overrides` sets (later entries win) and the
    /// defaults of the rest, into `ev` (from [`Workload::new_evaluation`]).
    pub fn evaluate(&self, overrides: &[(usize, f64)], ev: &mut Evaluation) -> Result<(), Error> {
        self.evaluate_params(overrides, ev)?;
        self.evaluate_exprs(ev)?;
        self.evaluate_tensors(ev)?;
        self.evaluate_repeats(ev)?;
        self.evaluate_ops(ev)?;
        self.evaluate_step(ev)?;
        ev.valid = true;
        Ok(())
    }

    /// Every param's value: its override, or its default over the params before it.
    fn evaluate_params(
        &self,
        overrides: &[(usize, f64)],
        ev: &mut Evaluation,
    ) -> Result<(), Error> {
        for &i in &self.eval_order {
            ev.params[i] = match overrides.iter().rev().find(|(j, _)| *j == i) {
                Some(&(_, v)) => v,
                None => {
                    let p = &self.params[i];
                    p.default
                        .eval(&ev.params)
                        .map_err(|e| self.problem(&p.origin, e.to_string()))?
                }
            };
        }
        Ok(())
    }

    /// The expressions' values; leaves `ev` not valid until the whole evaluation succeeds.
    fn evaluate_exprs(&self, ev: &mut Evaluation) -> Result<(), Error> {
        // A sweep changes a param or two from one scenario to the next: evaluate only the
        // expressions that read a param whose value changed since the last evaluation.
        for (i, &value) in ev.params.iter().enumerate() {
            ev.changed[i] = !ev.valid || value.to_bits() != ev.previous[i].to_bits();
        }
        ev.previous.copy_from_slice(&ev.params);
        let first = !ev.valid;
        ev.valid = false; // until every expression below is current
        for (k, expr) in self.exprs.iter().enumerate() {
            ev.expr_changed[k] = first || expr.params().iter().any(|&p| ev.changed[p]);
            if ev.expr_changed[k] {
                ev.exprs[k] = expr
                    .eval(&ev.params)
                    .map_err(|e| self.problem(&self.expr_origins[k], e.to_string()))?;
            }
        }
        Ok(())
    }

    /// Elements of each declared tensor whose shape changed.
    fn evaluate_tensors(&self, ev: &mut Evaluation) -> Result<(), Error> {
        for (t, tensor) in self.tensors.iter().enumerate() {
            ev.tensor_changed[t] = tensor.shape.iter().any(|d| ev.expr_changed[d.id]);
            if ev.tensor_changed[t] {
                let mut elements = 1.0;
                for d in &tensor.shape {
                    elements *= self.dim(d, ev)?;
                }
                ev.tensors[t] = elements;
            }
        }
        Ok(())
    }

    /// How many times each block runs.
    fn evaluate_repeats(&self, ev: &mut Evaluation) -> Result<(), Error> {
        for (b, block) in self.blocks.iter().enumerate() {
            ev.repeats[b] = match &block.repeat {
                None => 1,
                Some(field) => self.repeat(field, ev)?,
            };
        }
        Ok(())
    }

    /// The work and reads of each op whose expressions or inputs changed. `op_changed` says
    /// whether an op's numbers really changed (an op downstream of a changed one often keeps
    /// its numbers: attention's output is as wide at any context), so that pricing can keep
    /// the cost of a kernel whose ops are as they were.
    fn evaluate_ops(&self, ev: &mut Evaluation) -> Result<(), Error> {
        for (i, op) in self.ops.iter().enumerate() {
            // An op reading an op defined after it reads a size settled below: changed.
            let input_changed = |ev: &Evaluation, source: Ref| match source {
                Ref::Tensor(t) => ev.tensor_changed[t],
                Ref::Op(j) => j >= i || ev.out_changed[j],
                Ref::OwnWeight(_) => false,
            };
            // An op whose expressions and inputs are as they were keeps its numbers.
            let stale = op.deps.iter().any(|&k| ev.expr_changed[k])
                || op
                    .inputs
                    .iter()
                    .any(|input| input_changed(ev, input.source));
            ev.op_changed[i] = false;
            ev.out_changed[i] = false;
            if stale {
                let before = OpNumbers::of(i, op, ev);
                self.evaluate_op(i, op, ev)?;
                let whole_read_changed = op.inputs.iter().any(|input| {
                    matches!(input.size, ReadSize::Whole)
                        && matches!(input.source, Ref::Op(_))
                        && input_changed(ev, input.source)
                });
                ev.out_changed[i] = before.out.to_bits() != ev.out_elements[i].to_bits();
                ev.op_changed[i] = whole_read_changed || before != OpNumbers::of(i, op, ev);
            }
        }
        // Reads of whole op outputs, now that every output is known (an op may read an op
        // defined after it).
        for op in &self.ops {
            for (input, slot) in op.inputs.iter().zip(op.slots.clone()) {
                if let (Ref::Op(j), ReadSize::Whole) = (input.source, &input.size) {
                    ev.reads[slot] = ev.out_elements[j];
                }
            }
        }
        Ok(())
    }

    /// The step-wide numbers (tokens, sequences, chips, stages) and the repeats of each block
    /// one chip holds.
    fn evaluate_step(&self, ev: &mut Evaluation) -> Result<(), Error> {
        ev.tokens_per_step = match &self.tokens_per_step {
            Some(f) => Some(self.dim(f, ev)?),
            None => None,
        };
        ev.sequences = match &self.sequences {
            Some(f) => Some(self.dim(f, ev)?),
            None => None,
        };
        ev.chips = match &self.chips {
            Some(f) => self.chips(f, ev)?,
            None => 1.0,
        };
        ev.stages = match &self.stages {
            Some(f) => self.dim(f, ev)?,
            None => 1.0,
        };
        for (b, block) in self.blocks.iter().enumerate() {
            ev.held[b] = match &block.held {
                Some(f) => self.amount(&Some(f.clone()), ev)?,
                None => ev.repeats[b] as f64,
            };
        }
        Ok(())
    }

    /// A repeat count's value, which must be a whole number from 0 to [`MAX_REPEAT`].
    fn repeat(&self, field: &Field, ev: &Evaluation) -> Result<u64, Error> {
        let r = ev.exprs[field.id];
        if !(r >= 0.0 && r.fract() == 0.0 && r <= MAX_REPEAT) {
            return Err(self.problem(
                &field.origin,
                format!(
                    "`{}` is {r}; a repeat count must be a whole number from 0 to {MAX_REPEAT:e}",
                    self.exprs[field.id]
                ),
            ));
        }
        Ok(r as u64)
    }

    /// The chips of one replica: a dimension rounded up to a whole count inside
    /// [`ranges::WORKLOAD_CHIPS`], never saturated.
    fn chips(&self, field: &Field, ev: &Evaluation) -> Result<f64, Error> {
        let chips = self.dim(field, ev)?.ceil();
        let what = Backticked(&self.exprs[field.id]);
        match ranges::whole(chips, &ranges::WORKLOAD_CHIPS, what) {
            Ok(n) => Ok(n as f64),
            Err(message) => Err(self.problem(&field.origin, message)),
        }
    }

    /// A dimension's value, which must be > 0.
    fn dim(&self, field: &Field, ev: &Evaluation) -> Result<f64, Error> {
        let v = ev.exprs[field.id];
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.problem(
                &field.origin,
                format!(
                    "`{}` is {v}; a dimension must be greater than zero",
                    self.exprs[field.id]
                ),
            ))
        }
    }

    /// An amount of work (FLOPs, elements written), which must be >= 0.
    fn amount(&self, field: &Option<Field>, ev: &Evaluation) -> Result<f64, Error> {
        let Some(field) = field else { return Ok(0.0) };
        let v = ev.exprs[field.id];
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(self.problem(
                &field.origin,
                format!("`{}` is {v}; it must not be negative", self.exprs[field.id]),
            ))
        }
    }

    /// One op's FLOPs, output elements and reads (those of whole op outputs are settled
    /// after every op, as NaN until then).
    fn evaluate_op(&self, index: usize, op: &Op, ev: &mut Evaluation) -> Result<(), Error> {
        let work = match &op.kind {
            OpKind::Gemm { m, n, k, batch, .. } => {
                self.gemm_work(index, [m, n, k], batch.as_ref(), ev)?
            }
            OpKind::KvRead { flops, out } => Work {
                flops: self.amount(flops, ev)?,
                out: self.amount(out, ev)?,
                ..Work::default()
            },
            OpKind::Elementwise {
                elements,
                flops_per_element,
                out,
            } => self.elementwise_work(op, elements.as_ref(), flops_per_element, out, ev)?,
            OpKind::Collective {
                collective,
                elements,
                group,
                ..
            } => self.collective_work(index, *collective, elements, group, ev)?,
        };
        if !work.flops.is_finite() || !work.out.is_finite() {
            return Err(self.problem(
                &op.origin,
                format!("op `{}`: its FLOPs or output size overflow", op.name),
            ));
        }
        ev.flops[index] = work.flops;
        ev.out_elements[index] = work.out;
        for (input, slot) in op.inputs.iter().zip(op.slots.clone()) {
            ev.reads[slot] = match (&input.size, input.source) {
                (ReadSize::GemmLeft, _) => work.left,
                (ReadSize::GemmRight, _) => work.right,
                (ReadSize::Explicit(field), _) => self.dim(field, ev)?,
                (ReadSize::Whole, Ref::Tensor(t)) => ev.tensors[t],
                (ReadSize::Whole, _) => f64::NAN, // an op's output: settled after all ops
            };
        }
        Ok(())
    }

    /// `batch` products of `[m x k] x [k x n]`; records the GEMM's sizes in `ev`.
    fn gemm_work(
        &self,
        index: usize,
        [m, n, k]: [&Field; 3],
        batch: Option<&Field>,
        ev: &mut Evaluation,
    ) -> Result<Work, Error> {
        let (m, n, k) = (self.dim(m, ev)?, self.dim(n, ev)?, self.dim(k, ev)?);
        let batch = match batch {
            Some(b) => self.dim(b, ev)?,
            None => 1.0,
        };
        ev.gemm[index] = GemmDims {
            count: batch,
            m,
            n,
            k,
        };
        // Each matrix once: A is [m x k], B is [k x n], C is [m x n], per batch entry.
        Ok(Work {
            flops: 2.0 * batch * m * n * k,
            out: batch * m * n,
            left: batch * m * k,
            right: batch * k * n,
        })
    }

    /// `elements` (by default, the size of the first input) times `flops_per_element` of
    /// vector work, writing `out` elements (by default, as many as it works on).
    fn elementwise_work(
        &self,
        op: &Op,
        elements: Option<&Field>,
        flops_per_element: &Field,
        out: &Option<Field>,
        ev: &Evaluation,
    ) -> Result<Work, Error> {
        let n = match elements {
            Some(e) => self.dim(e, ev)?,
            // `build` made sure the first input is a tensor or an earlier op.
            None => match op.inputs[0].source {
                Ref::Tensor(t) => ev.tensors[t],
                Ref::Op(j) => ev.out_elements[j],
                Ref::OwnWeight(_) => 0.0,
            },
        };
        let out = match out {
            Some(_) => self.amount(out, ev)?,
            None => n,
        };
        let per_element = ev.exprs[flops_per_element.id];
        if per_element < 0.0 {
            return Err(self.problem(
                &flops_per_element.origin,
                format!("`{per_element}` FLOPs per element must not be negative"),
            ));
        }
        Ok(Work {
            flops: n * per_element,
            out,
            ..Work::default()
        })
    }

    /// A collective of `elements` over a whole number of chips; records the group in `ev`.
    fn collective_work(
        &self,
        index: usize,
        collective: Collective,
        elements: &Field,
        group: &Field,
        ev: &mut Evaluation,
    ) -> Result<Work, Error> {
        let n = self.dim(elements, ev)?;
        let chips = self.dim(group, ev)?;
        if chips.fract() != 0.0 {
            return Err(self.problem(
                &group.origin,
                format!(
                    "`{}` is {chips}; a group is a whole number of chips",
                    self.exprs[group.id]
                ),
            ));
        }
        ev.group[index] = chips;
        let out = match collective {
            Collective::ReduceScatter => n / chips,
            _ => n,
        };
        Ok(Work {
            out,
            ..Work::default()
        })
    }

    /// Bytes of weights and KV cache resident in HBM under `dtypes`: declared tensors and
    /// implied GEMM weights, each block's counted once per repeat.
    pub fn resident_bytes(&self, ev: &Evaluation, types: &Types) -> (f64, f64) {
        let mut weight = 0.0;
        let mut kv = 0.0;
        let count = |block: Option<usize>| block.map_or(1.0, |b| ev.held[b]);
        for (t, tensor) in self.tensors.iter().enumerate() {
            let bytes = ev.tensors[t] * types.get(tensor.slot).bytes() * count(tensor.block);
            match tensor.role() {
                Role::Weight => weight += bytes,
                Role::Kv => kv += bytes,
                Role::Activation => {}
            }
        }
        for op in &self.ops {
            for (input, slot) in op.inputs.iter().zip(op.slots.clone()) {
                if matches!(input.source, Ref::OwnWeight(_)) {
                    let format = types.get(input.slot);
                    weight += ev.reads[slot] * format.bytes() * count(Some(op.block));
                }
            }
        }
        (weight, kv)
    }
}

impl Evaluation {
    /// Whether op `i`'s numbers changed in the last evaluation.
    pub(crate) fn op_changed(&self, i: usize) -> bool {
        self.op_changed[i]
    }
}

/// A value shown in backticks, formatted only when a message needs it.
struct Backticked<'a, T>(&'a T);

impl<T: std::fmt::Display> std::fmt::Display for Backticked<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`", self.0)
    }
}
