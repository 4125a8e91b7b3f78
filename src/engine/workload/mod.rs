//! One model step as a graph: params with defaults, tensors that live in HBM, ops grouped in
//! blocks that repeat, and named fusion plans. The file is parsed in `file`, validated in
//! `build`; what comes out is a [`Workload`] whose expressions are compiled and shared, whose
//! names are resolved, which has no cycle, and whose fusion plans are already cut into kernels.
//!
//! Evaluating a workload for one set of param values fills an [`Evaluation`]: flat arrays of
//! numbers that are reused from one scenario to the next, so a sweep allocates nothing per
//! scenario.

mod build;
mod file;

use std::ops::Range;
use std::sync::Arc;

use crate::base::diagnostic::{did_you_mean, Diagnostic, Diagnostics, Origin};
use crate::base::dtype::{DType, Role, RoleDTypes};
use crate::base::error::{Error, NotInWorkload};
use crate::base::param::ScenarioParam;
use crate::base::source::Source;
use crate::engine::expr::Expr;

/// A use of a shared expression, and the place in the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Index into [`Workload::exprs`].
    pub id: usize,
    pub origin: Origin,
}

/// A named number the file's expressions use; `--set` overrides its default.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    /// A number, or an expression over other params.
    pub default: Expr,
    pub origin: Origin,
}

/// A tensor that lives in HBM before the step starts (weights, KV cache, inputs).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub name: String,
    pub role: Role,
    pub shape: Vec<Field>,
    /// The block it belongs to (one copy per repeat), or `None` for the whole step.
    pub block: Option<usize>,
}

/// A run of ops executed `repeat` times (the layers of a model); a block repeated 0 times is
/// absent from the step (a model without sliding-window layers).
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub name: String,
    pub repeat: Option<Field>,
    /// Repeats one chip holds the tensors of, when fewer than it runs (`layers / pp`: a
    /// pipeline stage holds its share of the layers, while a step runs them all in turn).
    pub held: Option<Field>,
    /// Indices into [`Workload::ops`].
    pub ops: Range<usize>,
}

/// What an op reads: a declared tensor, another op's output, or a GEMM's own weight matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ref {
    Tensor(usize),
    Op(usize),
    /// The `[k x n]` weight (per batch entry) of the GEMM with this op index, implied when the
    /// GEMM names only one input.
    OwnWeight(usize),
}

/// How many elements an op reads of one input.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadSize {
    /// The whole input: a tensor's shape, or the producing op's output.
    Whole,
    /// As many as the expression says (`reads: {name: elements}`).
    Explicit(Field),
    /// A GEMM's left matrix: `batch x m x k`.
    GemmLeft,
    /// A GEMM's right matrix: `batch x k x n`.
    GemmRight,
}

/// One input of an op.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    pub source: Ref,
    pub size: ReadSize,
    /// The role of what is read, which decides its data type.
    pub role: Role,
}

/// A collective operation over a group of chips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    /// Every chip ends with the sum of every chip's buffer.
    AllReduce,
    /// Every chip ends with every chip's shard; `elements` is the gathered whole.
    AllGather,
    /// Every chip ends with its shard of the sum; `elements` is the whole input.
    ReduceScatter,
    /// Every chip sends a share of its buffer to every other; `elements` is one chip's buffer.
    AllToAll,
    /// One chip sends its buffer to the next (a pipeline stage boundary).
    SendRecv,
}

impl Collective {
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "allreduce",
            Collective::AllGather => "allgather",
            Collective::ReduceScatter => "reducescatter",
            Collective::AllToAll => "alltoall",
            Collective::SendRecv => "sendrecv",
        }
    }
}

/// How a collective moves its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// Around a ring: bandwidth-optimal, `n - 1` steps (twice for an all-reduce).
    Ring,
    /// Down and up a binary tree: `2 log2 n` steps, the whole buffer each way (all-reduce).
    Tree,
}

/// The kind of work an op does, with its dimensions.
#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    /// `batch` independent `[m x k] x [k x n]` products. `gemv` is the same with `m` small.
    Gemm {
        m: Field,
        n: Field,
        k: Field,
        batch: Option<Field>,
        gemv: bool,
    },
    /// A read of stored tensors (the KV cache) with `flops` of matrix-unit work, writing `out`
    /// elements.
    KvRead {
        flops: Option<Field>,
        out: Option<Field>,
    },
    /// `elements x flops_per_element` of vector work, writing `out` elements.
    Elementwise {
        elements: Option<Field>,
        flops_per_element: Field,
        out: Option<Field>,
    },
    /// A collective of `elements` (see [`Collective`]) over `group` chips, on the chip's
    /// interconnect (the network beyond one domain). `algorithm`: the fastest when `None`.
    Collective {
        collective: Collective,
        elements: Field,
        group: Field,
        algorithm: Option<Algorithm>,
    },
}

/// What a kernel is, as rows and pictures name it: one op's kind, or a fused group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    Gemm,
    Gemv,
    KvRead,
    Elementwise,
    /// Several ops run as one kernel.
    Fused,
    Collective(Collective),
}

impl KernelKind {
    /// The name in the `kind` column.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Gemm => "gemm",
            KernelKind::Gemv => "gemv",
            KernelKind::KvRead => "kv_read",
            KernelKind::Elementwise => "elementwise",
            KernelKind::Fused => "fused",
            KernelKind::Collective(c) => c.name(),
        }
    }
}

impl serde::Serialize for KernelKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// The sizes of `count` independent `[m x k] x [k x n]` products; all zero for an op that is
/// not a GEMM.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GemmDims {
    pub count: f64,
    pub m: f64,
    pub n: f64,
    pub k: f64,
}

impl OpKind {
    /// The kind of the kernel this op makes alone.
    pub fn kernel_kind(&self) -> KernelKind {
        match self {
            OpKind::Gemm { gemv: false, .. } => KernelKind::Gemm,
            OpKind::Gemm { gemv: true, .. } => KernelKind::Gemv,
            OpKind::KvRead { .. } => KernelKind::KvRead,
            OpKind::Elementwise { .. } => KernelKind::Elementwise,
            OpKind::Collective { collective, .. } => KernelKind::Collective(*collective),
        }
    }

    pub fn name(&self) -> &'static str {
        self.kernel_kind().name()
    }

    /// Whether the op's FLOPs run on the matrix unit (else the vector unit).
    pub fn matrix_unit(&self) -> bool {
        !matches!(self, OpKind::Elementwise { .. })
    }
}

/// One kernel's worth of work; its output is a tensor named after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    pub name: String,
    pub block: usize,
    pub kind: OpKind,
    pub inputs: Vec<Input>,
    /// The role of the output.
    pub out_role: Role,
    /// Indices of this op's inputs in [`Evaluation::reads`].
    pub slots: Range<usize>,
    /// Which roles are among [`Op::operand_roles`], indexed by `Role as usize`.
    pub operands: [bool; 3],
    /// The expressions the op's numbers come from (into [`Workload::exprs`]).
    pub deps: Vec<usize>,
    pub origin: Origin,
}

impl Op {
    /// The roles whose types decide the op's compute type: its inputs', and for vector work
    /// its output's too.
    pub fn operand_roles(&self) -> impl Iterator<Item = Role> + '_ {
        let out = (!self.kind.matrix_unit()).then_some(self.out_role);
        self.inputs.iter().map(|i| i.role).chain(out)
    }

    /// The type the op computes in under `dtypes`: the widest of its operands.
    pub fn compute_dtype(&self, dtypes: &RoleDTypes) -> DType {
        let mut types = Role::ALL
            .into_iter()
            .filter(|r| self.operands[*r as usize])
            .map(|r| dtypes.get(r));
        let first = types.next().unwrap_or(dtypes.activation);
        types.fold(first, DType::compute_with)
    }
}

/// One launch: a single op, or a fused group of ops from one block.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// The op's name, or the fused ops' names joined by `+`.
    pub name: String,
    pub kind: KernelKind,
    pub block: usize,
    /// Op indices, in file order.
    pub members: Vec<usize>,
    /// What crosses the boundary inward, one entry per source read (a source read by several
    /// members is read once, at the largest size any member reads).
    pub reads: Vec<KernelRead>,
    /// Members whose output is written to HBM: read outside the kernel, or by nobody.
    pub writes: Vec<usize>,
}

/// One source a kernel reads from HBM.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRead {
    pub role: Role,
    /// Whether the source is an output of the kernel just before this one (so it may still
    /// be in the on-chip cache).
    pub after_write: bool,
    /// Read slots of the members that read this source.
    pub slots: Vec<usize>,
}

/// A named way to group ops into kernels; ops in no group run alone.
#[derive(Debug, Clone, PartialEq)]
pub struct FusionPlan {
    pub name: String,
    /// Groups of op indices; each group is one kernel.
    pub groups: Vec<Vec<usize>>,
    /// Every kernel of the step under this plan, in the order of their first op.
    pub kernels: Vec<Kernel>,
}

/// A validated workload.
#[derive(Debug, Clone)]
pub struct Workload {
    /// File stem (`llama-3.1-70b`).
    pub id: String,
    pub name: String,
    /// The file as errors name it.
    pub file: String,
    text: Arc<str>,
    pub params: Vec<Param>,
    /// Params in an order where each comes after those its default reads.
    eval_order: Vec<usize>,
    /// Every distinct expression of the file other than param defaults, evaluated once per
    /// scenario however many fields use it.
    pub exprs: Vec<Expr>,
    /// Where each expression is first used, for errors.
    expr_origins: Vec<Origin>,
    pub default_dtypes: RoleDTypes,
    pub tokens_per_step: Option<Field>,
    /// Sequences in the step (each gets `tokens_per_step / sequences` tokens).
    pub sequences: Option<Field>,
    /// Chips one replica of the step runs on (`tp * pp`): the step's ops are one chip's share.
    pub chips: Option<Field>,
    /// Pipeline stages the step passes through one after the other (`pp`): each chip works
    /// one stage's share of the step's time, which MFU and MBU account for.
    pub stages: Option<Field>,
    pub tensors: Vec<Tensor>,
    pub blocks: Vec<Block>,
    pub ops: Vec<Op>,
    /// Read slots in all.
    slot_count: usize,
    /// The plans, `none` (no fusion) first.
    pub fusion_plans: Vec<FusionPlan>,
    pub default_fusion: usize,
    /// Where each [`ScenarioParam`] is among `params`, found at load.
    known: [Option<usize>; ScenarioParam::ALL.len()],
}

/// The numbers of one scenario, in flat arrays indexed like the workload's params,
/// expressions, blocks, ops and read slots. Reuse one per thread across scenarios.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    pub params: Vec<f64>,
    pub exprs: Vec<f64>,
    /// The params `exprs` were last evaluated with, whether they are all current, and which
    /// params changed since (scratch).
    previous: Vec<f64>,
    valid: bool,
    changed: Vec<bool>,
    /// Which expressions, tensors and ops changed in the last evaluation (scratch).
    expr_changed: Vec<bool>,
    tensor_changed: Vec<bool>,
    op_changed: Vec<bool>,
    /// Elements of each declared tensor.
    pub tensors: Vec<f64>,
    pub repeats: Vec<u64>,
    /// Repeats of each block one chip holds the tensors of.
    pub held: Vec<f64>,
    pub flops: Vec<f64>,
    pub out_elements: Vec<f64>,
    /// Elements each op reads of each input.
    pub reads: Vec<f64>,
    /// `[batch, m, n, k]` of each GEMM (zeros for other ops).
    pub gemm: Vec<GemmDims>,
    /// Chips in each collective's group (0 for other ops).
    pub group: Vec<f64>,
    pub tokens_per_step: Option<f64>,
    pub sequences: Option<f64>,
    /// Chips one replica runs on (1 when the workload does not say).
    pub chips: f64,
    /// Pipeline stages (1 when the workload does not say).
    pub stages: f64,
}

/// Largest repeat count accepted for a block.
pub const MAX_REPEAT: f64 = 1e9;

impl Workload {
    /// Loads a built-in workload by name, or a workload file by path.
    pub fn named(name: &str) -> Result<Workload, Error> {
        Workload::load(&Source::resolve(
            name,
            crate::base::source::FileKind::Workload,
        )?)
    }

    /// Parses and validates a workload file; every problem found is reported.
    pub fn load(source: &Source) -> Result<Workload, Error> {
        build::build(source)
    }

    fn problem(&self, origin: &Origin, message: impl Into<String>) -> Error {
        Error::Invalid(Diagnostics(vec![Diagnostic::at(
            &self.file,
            Some(&self.text),
            origin,
            message,
        )]))
    }

    /// Index of the param called `name`.
    pub fn param_index(&self, name: &str) -> Result<usize, Error> {
        self.params
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                Error::NotInWorkload(Box::new(NotInWorkload {
                    what: "param",
                    name: name.to_owned(),
                    workload: self.id.clone(),
                    suggestion: did_you_mean(name, names.iter().copied()),
                    known: names.join(", "),
                }))
            })
    }

    /// Index of the fusion plan called `name`.
    pub fn fusion_index(&self, name: &str) -> Result<usize, Error> {
        self.fusion_plans
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.fusion_plans.iter().map(|p| p.name.as_str()).collect();
                Error::NotInWorkload(Box::new(NotInWorkload {
                    what: "fusion plan",
                    name: name.to_owned(),
                    workload: self.id.clone(),
                    suggestion: did_you_mean(name, names.iter().copied()),
                    known: names.join(", "),
                }))
            })
    }

    /// Index of the param with meaning `p`, if the workload has it.
    pub fn param(&self, p: ScenarioParam) -> Option<usize> {
        self.known[p.index()]
    }

    /// Index of the param with meaning `p`, or an error saying what cannot be done without it.
    pub fn require(&self, p: ScenarioParam, consequence: &'static str) -> Result<usize, Error> {
        self.param(p).ok_or_else(|| Error::MissingParam {
            workload: self.id.as_str().into(),
            param: p,
            consequence,
        })
    }

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
            chips: 1.0,
            stages: 1.0,
        }
    }

    /// Evaluates the step for the param values `overrides` sets (later entries win) and the
    /// defaults of the rest, into `ev` (from [`Workload::new_evaluation`]).
    pub fn evaluate(&self, overrides: &[(usize, f64)], ev: &mut Evaluation) -> Result<(), Error> {
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
        for (b, block) in self.blocks.iter().enumerate() {
            ev.repeats[b] = match &block.repeat {
                None => 1,
                Some(field) => {
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
                    r as u64
                }
            };
        }
        for (i, op) in self.ops.iter().enumerate() {
            // An op whose expressions and inputs are as they were keeps its numbers.
            ev.op_changed[i] = op.deps.iter().any(|&k| ev.expr_changed[k])
                || op.inputs.iter().any(|input| match input.source {
                    Ref::Tensor(t) => ev.tensor_changed[t],
                    Ref::Op(j) => j >= i || ev.op_changed[j],
                    Ref::OwnWeight(_) => false,
                });
            if ev.op_changed[i] {
                self.evaluate_op(i, op, ev)?;
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
        ev.tokens_per_step = match &self.tokens_per_step {
            Some(f) => Some(self.dim(f, ev)?),
            None => None,
        };
        ev.sequences = match &self.sequences {
            Some(f) => Some(self.dim(f, ev)?),
            None => None,
        };
        ev.chips = match &self.chips {
            Some(f) => self.dim(f, ev)?.ceil(),
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
        ev.valid = true;
        Ok(())
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

    fn evaluate_op(&self, index: usize, op: &Op, ev: &mut Evaluation) -> Result<(), Error> {
        let (mut left, mut right) = (0.0, 0.0);
        let (flops, out) = match &op.kind {
            OpKind::Gemm { m, n, k, batch, .. } => {
                let (m, n, k) = (self.dim(m, ev)?, self.dim(n, ev)?, self.dim(k, ev)?);
                let batch = match batch {
                    Some(b) => self.dim(b, ev)?,
                    None => 1.0,
                };
                // Each matrix once: A is [m x k], B is [k x n], C is [m x n], per batch entry.
                (left, right) = (batch * m * k, batch * k * n);
                ev.gemm[index] = GemmDims {
                    count: batch,
                    m,
                    n,
                    k,
                };
                (2.0 * batch * m * n * k, batch * m * n)
            }
            OpKind::KvRead { flops, out } => (self.amount(flops, ev)?, self.amount(out, ev)?),
            OpKind::Elementwise {
                elements,
                flops_per_element,
                out,
            } => {
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
                (n * per_element, out)
            }
            OpKind::Collective {
                collective,
                elements,
                group,
                ..
            } => {
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
                (0.0, out)
            }
        };
        if !flops.is_finite() || !out.is_finite() {
            return Err(self.problem(
                &op.origin,
                format!("op `{}`: its FLOPs or output size overflow", op.name),
            ));
        }
        ev.flops[index] = flops;
        ev.out_elements[index] = out;
        for (input, slot) in op.inputs.iter().zip(op.slots.clone()) {
            ev.reads[slot] = match (&input.size, input.source) {
                (ReadSize::GemmLeft, _) => left,
                (ReadSize::GemmRight, _) => right,
                (ReadSize::Explicit(field), _) => self.dim(field, ev)?,
                (ReadSize::Whole, Ref::Tensor(t)) => ev.tensors[t],
                (ReadSize::Whole, _) => f64::NAN, // an op's output: settled after all ops
            };
        }
        Ok(())
    }

    /// Bytes of weights and KV cache resident in HBM under `dtypes`: declared tensors and
    /// implied GEMM weights, each block's counted once per repeat.
    pub fn resident_bytes(&self, ev: &Evaluation, dtypes: &RoleDTypes) -> (f64, f64) {
        let mut weight = 0.0;
        let mut kv = 0.0;
        let count = |block: Option<usize>| block.map_or(1.0, |b| ev.held[b]);
        for (t, tensor) in self.tensors.iter().enumerate() {
            let bytes = ev.tensors[t] * dtypes.get(tensor.role).bytes() * count(tensor.block);
            match tensor.role {
                Role::Weight => weight += bytes,
                Role::Kv => kv += bytes,
                Role::Activation => {}
            }
        }
        for op in &self.ops {
            for (input, slot) in op.inputs.iter().zip(op.slots.clone()) {
                if matches!(input.source, Ref::OwnWeight(_)) {
                    weight += ev.reads[slot] * dtypes.weight.bytes() * count(Some(op.block));
                }
            }
        }
        (weight, kv)
    }
}
