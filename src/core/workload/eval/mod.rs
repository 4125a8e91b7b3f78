//! Evaluating a workload for one set of param values: params, then the expressions, tensor
//! sizes and ops a changed param reaches (`reach`), block repeats and the step-wide numbers,
//! into an [`Evaluation`] reused from one scenario to the next. An op's own work is `work`'s.

mod step_params;

use super::bits::Bits;
use super::derived::DerivedReaches;
use super::memo::{KernelMemo, OpNumbers, WorkspaceMemo};
use super::reach::Reaches;
use super::{Field, GemmDims, ReadSize, Ref, Workload, MAX_REPEAT};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::ranges;
use crate::base::types::Types;

/// The numbers of one scenario, in flat arrays indexed like the workload's params,
/// expressions, blocks, ops and read slots. Reuse one per thread across scenarios.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    pub(crate) params: Vec<f64>,
    pub(crate) exprs: Vec<f64>,
    /// Whether every number below is current (the last evaluation succeeded), which params
    /// changed in the last evaluation, and which took an override's value.
    valid: bool,
    pub(super) changed: Bits,
    overridden: Vec<bool>,
    /// Each param's override in the evaluation under way (scratch, `None` between them).
    pub(super) given: Vec<Option<f64>>,
    /// The params the last evaluation overrode.
    pub(super) last_overrides: Vec<usize>,
    /// The derived params the params overridden may change (see `derived`), and the set
    /// they are found for (scratch).
    pub(super) derived: DerivedReaches,
    pub(super) seed: Bits,
    /// What the changes of params seen so far reach in the graph (see `reach`).
    reaches: Reaches,
    /// Which expressions, tensors and ops changed in the last evaluation (scratch).
    expr_changed: Vec<bool>,
    tensor_changed: Vec<bool>,
    op_changed: Vec<bool>,
    /// Which ops' output sizes changed in the last evaluation (scratch), for whole reads.
    out_changed: Vec<bool>,
    /// Each op's numbers as last evaluated, to tell whether they changed (`None` at first).
    numbers: Vec<Option<OpNumbers>>,
    /// Elements of each declared tensor.
    pub(crate) tensors: Vec<f64>,
    pub(crate) repeats: Vec<u64>,
    /// Repeats of each block one chip holds the tensors of.
    pub(crate) held: Vec<f64>,
    pub(crate) flops: Vec<f64>,
    pub(crate) out_elements: Vec<f64>,
    /// Elements each op reads of each input.
    pub(crate) reads: Vec<f64>,
    /// Share of each op's counted work a causal mask leaves (1 outside a causal block).
    pub(crate) causal: Vec<f64>,
    /// `[batch, m, n, k]` of each GEMM (zeros for other ops).
    pub(crate) gemm: Vec<GemmDims>,
    /// Chips in each collective's group (0 for other ops).
    pub(crate) group: Vec<f64>,
    /// Chips each collective's group is laid over (its group unless it says otherwise).
    pub(crate) span: Vec<f64>,
    pub(crate) tokens_per_step: Option<f64>,
    pub(crate) sequences: Option<f64>,
    /// Chips one replica runs on (1 when the workload does not say).
    pub(crate) chips: f64,
    /// Pipeline stages (1 when the workload does not say).
    pub(crate) stages: f64,
    /// Micro-batches in flight through the stages: the `micro_batches` param, else one per
    /// stage; 1 without a pipeline.
    pub(crate) micro_batches: f64,
    /// The last activation workspace priced, and what it depends on (see `price::memory`):
    /// a sweep changes batch or context far more often than what the workspace depends on.
    pub(crate) workspace_memo: Option<WorkspaceMemo>,
    /// What the kernel costs of the last priced scenario were priced under (see
    /// `price::price_step`): a kernel none of whose ops changed since keeps its cost.
    pub(crate) kernel_memo: KernelMemo,
    /// The resident weight bytes last counted and the types they were counted under; cleared
    /// by an evaluation that may change them.
    pub(super) weight_memo: Option<(Types, f64, f64)>,
}

impl Workload {
    /// An evaluation sized for this workload, to be filled by [`Workload::evaluate`].
    pub fn new_evaluation(&self) -> Evaluation {
        Evaluation {
            params: vec![0.0; self.params.len()],
            exprs: vec![0.0; self.exprs.len()],
            valid: false,
            changed: Bits::full(self.params.len()),
            overridden: vec![false; self.params.len()],
            given: vec![None; self.params.len()],
            last_overrides: Vec::new(),
            derived: DerivedReaches::default(),
            seed: Bits::default(),
            reaches: Reaches::default(),
            expr_changed: vec![true; self.exprs.len()],
            tensor_changed: vec![true; self.tensors.len()],
            op_changed: vec![true; self.ops.len()],
            out_changed: vec![true; self.ops.len()],
            numbers: vec![None; self.ops.len()],
            tensors: vec![0.0; self.tensors.len()],
            repeats: vec![1; self.blocks.len()],
            held: vec![1.0; self.blocks.len()],
            flops: vec![0.0; self.ops.len()],
            out_elements: vec![0.0; self.ops.len()],
            reads: vec![0.0; self.slot_count],
            causal: vec![1.0; self.ops.len()],
            gemm: vec![GemmDims::default(); self.ops.len()],
            group: vec![0.0; self.ops.len()],
            span: vec![0.0; self.ops.len()],
            tokens_per_step: None,
            sequences: None,
            workspace_memo: None,
            kernel_memo: KernelMemo::default(),
            weight_memo: None,
            chips: 1.0,
            stages: 1.0,
            micro_batches: 1.0,
        }
    }

    /// Evaluates the step for the param values `overrides` sets (later entries win) and the
    /// defaults of the rest, into `ev` (from [`Workload::new_evaluation`]). An index that is
    /// not one of the workload's params is an error.
    pub fn evaluate(&self, overrides: &[(usize, f64)], ev: &mut Evaluation) -> Result<(), Error> {
        if let Some((i, _)) = overrides.iter().find(|(i, _)| *i >= self.params.len()) {
            return Err(Error::value(format!(
                "param index {i} is out of range: workload `{}` has {} params",
                self.id,
                self.params.len()
            )));
        }
        // Until this evaluation succeeds, the next one starts from scratch.
        let was_valid = std::mem::replace(&mut ev.valid, false);
        if let Err(e) = self.evaluate_params(overrides, ev, was_valid) {
            // A param derived from the prefill params (a chunk over no sequences) fails on
            // values the check refuses by name: its error is the clearer one.
            self.check_step_params(ev)?;
            return Err(e);
        }
        self.check_step_params(ev)?;
        let mut reaches = std::mem::take(&mut ev.reaches);
        let reached = self.evaluate_reached(ev, &mut reaches, was_valid);
        // Repeat counts follow expressions alone: kept unless one of theirs changed.
        let repeats = !was_valid || reaches.current.is_none_or(|r| reaches.get(r).repeats);
        ev.reaches = reaches;
        reached?;
        if repeats {
            self.evaluate_repeats(ev)?;
        }
        self.evaluate_step(ev, repeats)?;
        ev.valid = true;
        Ok(())
    }

    /// Every param's value: its override, or its default over the params before it (kept
    /// when none of those changed); marks those whose value changed. After a successful
    /// evaluation only what can have changed is visited: the params overridden now or the
    /// last time, and those whose defaults read params.
    fn evaluate_params(
        &self,
        overrides: &[(usize, f64)],
        ev: &mut Evaluation,
        was_valid: bool,
    ) -> Result<(), Error> {
        // Each param's override (the last given), found once rather than per param.
        for &(i, v) in overrides {
            ev.given[i] = Some(v);
        }
        ev.changed.clear();
        let settled = match was_valid {
            false => (self.eval_order.iter()).try_for_each(|&i| self.settle(i, ev, false)),
            true => self.settle_changed(overrides, ev),
        };
        for &(i, _) in overrides {
            ev.given[i] = None;
        }
        ev.last_overrides.clear();
        ev.last_overrides.extend(overrides.iter().map(|&(i, _)| i));
        settled
    }

    /// Param `i`'s value: its override, else its default, kept when it read no changed param
    /// and was not overridden the last time.
    pub(super) fn settle(
        &self,
        i: usize,
        ev: &mut Evaluation,
        was_valid: bool,
    ) -> Result<(), Error> {
        let p = &self.params[i];
        let given = ev.given[i];
        let value = match given {
            Some(v) => v,
            None if was_valid && self.kept(i, ev) => return Ok(()),
            None => {
                (p.default.eval(&ev.params)).map_err(|e| self.problem(&p.origin, e.to_string()))?
            }
        };
        if !was_valid || value.to_bits() != ev.params[i].to_bits() {
            ev.changed.insert(i);
        }
        ev.overridden[i] = given.is_some();
        ev.params[i] = value;
        Ok(())
    }

    /// Whether param `i`, given no override now, keeps its value from the last successful
    /// evaluation: it was not overridden then and its default reads no param that changed.
    #[inline(always)]
    pub(super) fn kept(&self, i: usize, ev: &Evaluation) -> bool {
        !ev.overridden[i]
            && !(self.params[i].default.params().iter()).any(|&d| ev.changed.contains(d))
    }

    /// What the changed params reach, or everything after an evaluation that failed.
    fn evaluate_reached(
        &self,
        ev: &mut Evaluation,
        reaches: &mut Reaches,
        was_valid: bool,
    ) -> Result<(), Error> {
        ev.op_changed.fill(false);
        ev.out_changed.fill(false);
        if !was_valid {
            reaches.current = None;
            ev.weight_memo = None;
            ev.expr_changed.fill(true);
            ev.tensor_changed.fill(true);
            self.evaluate_exprs(ev, 0..self.exprs.len(), false)?;
            self.evaluate_tensors(ev, 0..self.tensors.len(), false)?;
            return self.evaluate_ops(ev, 0..self.ops.len());
        }
        let r = reaches.of(self, &ev.changed);
        let fresh = reaches.current != Some(r);
        reaches.current = Some(r);
        let reach = reaches.get(r);
        if fresh {
            // What this reach visits is flagged below, each by whether its value moved.
            ev.expr_changed.fill(false);
            ev.tensor_changed.fill(false);
        }
        if reach.weights {
            ev.weight_memo = None;
        }
        self.evaluate_exprs(ev, reach.exprs.iter().copied(), true)?;
        self.evaluate_tensors(ev, reach.tensors.iter().copied(), true)?;
        self.evaluate_ops(ev, reach.ops.iter().copied())
    }

    /// The values of expressions `exprs`; with `compare`, each flagged changed only if its value
    /// moved (`min(context, window)` past the window keeps it, and so do the ops reading it).
    fn evaluate_exprs(
        &self,
        ev: &mut Evaluation,
        exprs: impl Iterator<Item = usize>,
        compare: bool,
    ) -> Result<(), Error> {
        for k in exprs {
            let value = (self.exprs[k].eval(&ev.params))
                .map_err(|e| self.problem(&self.expr_origins[k], e.to_string()))?;
            if compare {
                ev.expr_changed[k] = value.to_bits() != ev.exprs[k].to_bits();
            }
            ev.exprs[k] = value;
        }
        Ok(())
    }

    /// Elements of tensors `tensors`, flagged changed as [`Workload::evaluate_exprs`] flags.
    fn evaluate_tensors(
        &self,
        ev: &mut Evaluation,
        tensors: impl Iterator<Item = usize>,
        compare: bool,
    ) -> Result<(), Error> {
        for t in tensors {
            let mut elements = 1.0;
            for d in &self.tensors[t].shape {
                elements *= self.dim(d, ev)?;
            }
            if compare {
                ev.tensor_changed[t] = elements.to_bits() != ev.tensors[t].to_bits();
            }
            ev.tensors[t] = elements;
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

    /// The work and reads of those of `ops` whose expressions or inputs changed, in order.
    /// `op_changed` says whether an op's numbers really changed (an op downstream of a changed
    /// one often keeps its numbers: attention's output is as wide at any context), so that
    /// pricing can keep the cost of a kernel whose ops are as they were.
    fn evaluate_ops(
        &self,
        ev: &mut Evaluation,
        ops: impl Iterator<Item = usize> + Clone,
    ) -> Result<(), Error> {
        let mut causal = None; // the last block's causal share in this evaluation
        for i in ops.clone() {
            let op = &self.ops[i];
            // An op reading an op defined after it reads a size settled below: changed.
            let input_changed = |ev: &Evaluation, source: Ref| match source {
                Ref::Tensor(t) => ev.tensor_changed[t],
                Ref::Op(j) => j >= i || ev.out_changed[j],
                Ref::OwnWeight(_) => false,
            };
            // An op whose expressions, inputs and mask's share are as they were keeps its numbers.
            let stale = op.deps.iter().any(|&k| ev.expr_changed[k])
                || op
                    .inputs
                    .iter()
                    .any(|input| input_changed(ev, input.source))
                || (op.mask_deps.iter().any(|&k| ev.expr_changed[k])
                    && self.causal_share(op, ev, &mut causal).to_bits() != ev.causal[i].to_bits());
            if stale {
                let share = self.causal_share(op, ev, &mut causal);
                self.evaluate_op(i, op, ev, share)?;
                let whole_read_changed = op.inputs.iter().any(|input| {
                    matches!(input.size, ReadSize::Whole)
                        && matches!(input.source, Ref::Op(_))
                        && input_changed(ev, input.source)
                });
                let after = OpNumbers::of(i, op, ev);
                let before = ev.numbers[i].replace(after);
                let now = ev.numbers[i].as_ref();
                ev.out_changed[i] =
                    before.as_ref().map(|b| b.out.to_bits()) != now.map(|a| a.out.to_bits());
                ev.op_changed[i] = whole_read_changed || before.as_ref() != now;
                if ev.op_changed[i] && op.reads_own_weight() {
                    ev.weight_memo = None;
                }
            }
        }
        // Reads of whole op outputs, now that every output is known (an op may read an op
        // defined after it). An op outside `ops` reads no output that changed.
        for i in ops {
            let op = &self.ops[i];
            for (input, slot) in op.inputs.iter().zip(op.slots.clone()) {
                if let (Ref::Op(j), ReadSize::Whole) = (input.source, &input.size) {
                    ev.reads[slot] = ev.out_elements[j];
                }
            }
        }
        Ok(())
    }

    /// The step-wide numbers (tokens, sequences, chips, stages) and, when the repeat counts
    /// may have changed, the repeats of each block one chip holds.
    fn evaluate_step(&self, ev: &mut Evaluation, repeats: bool) -> Result<(), Error> {
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
        ev.micro_batches = self.micro_batches(ev)?;
        for (field, why) in &self.wholes {
            let v = ev.exprs[field.id];
            if (v - v.round()).abs() > 1e-9 * v.abs().max(1.0) {
                let what = Backticked(&self.exprs[field.id]);
                let message = format!("{what} is {v:.4}; {why}");
                return Err(Error::Layout(self.diagnostics(&field.origin, message)));
            }
        }
        if !repeats {
            return Ok(());
        }
        for (b, block) in self.blocks.iter().enumerate() {
            ev.held[b] = match &block.held {
                Some(f) => self.amount(Some(f), ev)?,
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
    /// The micro-batches in flight: a whole number of at least 1 where the workload names
    /// them, one per stage where it does not, 1 with one stage (nothing to overlap).
    fn micro_batches(&self, ev: &Evaluation) -> Result<f64, Error> {
        if ev.stages <= 1.0 {
            return Ok(1.0);
        }
        let Some(i) = self.param(ScenarioParam::MicroBatches) else {
            return Ok(ev.stages);
        };
        let m = ev.params[i];
        if m >= 1.0 && m.fract() == 0.0 && m <= ranges::MAX_COUNT {
            return Ok(m);
        }
        Err(self.problem(
            &self.params[i].origin,
            format!(
                "`{}` is {m}; micro-batches in flight are a whole number, at least 1",
                self.params[i].name
            ),
        ))
    }

    fn chips(&self, field: &Field, ev: &Evaluation) -> Result<f64, Error> {
        let chips = self.dim(field, ev)?.ceil();
        let what = Backticked(&self.exprs[field.id]);
        match ranges::whole(chips, &ranges::WORKLOAD_CHIPS, what) {
            Ok(n) => Ok(n as f64),
            Err(message) => Err(self.problem(&field.origin, message)),
        }
    }

    /// A dimension's value, which must be > 0.
    pub(super) fn dim(&self, field: &Field, ev: &Evaluation) -> Result<f64, Error> {
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
    pub(super) fn amount(&self, field: Option<&Field>, ev: &Evaluation) -> Result<f64, Error> {
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
