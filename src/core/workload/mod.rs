//! One model step as a graph: params with defaults, tensors that live in HBM, ops grouped in
//! blocks that repeat, and named fusion plans: parsed in `file`, validated in `build` into a
//! [`Workload`] with compiled, shared expressions, resolved names, no cycle, and fusion plans
//! cut into kernels (`graph`). This module holds the domain types and the lookups by name.
//! Evaluating one set of param values (`eval`) fills an [`Evaluation`], whose flat arrays are
//! reused from one scenario to the next: a sweep allocates nothing per scenario.

mod bits;
mod build;
mod causal;
mod count;
mod derived;
mod eval;
mod file;
mod graph;
mod memo;
mod reach;
mod resident;
mod scan;
mod work;

pub use causal::Causal;
pub use count::ParameterCounts;
pub use eval::Evaluation;
pub use graph::{FusionPlan, Kernel, KernelKind, KernelRead};
pub(crate) use memo::{KernelSums, WorkspaceMemo};
pub use scan::{ScanDims, ScanRule, ScanSizes};

use std::ops::Range;
use std::sync::Arc;

use crate::base::diagnostic::{did_you_mean, Diagnostic, Diagnostics, Origin};
use crate::base::dtype::{DType, Role};
use crate::base::error::{Error, NotInWorkload};
use crate::base::format::Format;
use crate::base::param::ScenarioParam;
use crate::base::source::Source;
use crate::base::types::{Slot, Types};
use crate::core::expr::Expr;

/// A use of a shared expression, and the place in the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Index into `Workload::exprs`.
    pub id: usize,
    /// Where the expression is written in the file, for errors.
    pub origin: Origin,
}

/// A named number the file's expressions use; `--set` overrides its default.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The param's name, as expressions and `--set` write it.
    pub name: String,
    /// A number, or an expression over other params.
    pub default: Expr,
    /// Where the param is declared in the file, for errors.
    pub origin: Origin,
}

/// A tensor that lives in HBM before the step starts (weights, KV cache, inputs).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// The tensor's name, as ops' `of:` lists write it.
    pub name: String,
    /// Its role, and for a weight its group: where its format comes from.
    pub slot: Slot,
    /// Its dimensions, in elements; their product is its size.
    pub shape: Vec<Field>,
    /// The block it belongs to (one copy per repeat), or `None` for the whole step.
    pub block: Option<usize>,
    /// A sequence's recurrent state (the file's role `state`: a state-space layer's, kept
    /// from step to step like a KV cache but not growing with the context). It is stored in
    /// the activation type and reported apart, as `state_bytes`.
    pub recurrent: bool,
}

/// A run of ops executed `repeat` times (a model's layers); one repeated 0 times is absent.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The block's name, as the file writes it.
    pub name: String,
    /// How many times the block's ops run in a step (its layers); once when `None`.
    pub repeat: Option<Field>,
    /// Repeats one chip holds the tensors of, when fewer than it runs (`layers / pp`: a
    /// pipeline stage holds its share of the layers, while a step runs them all in turn).
    pub held: Option<Field>,
    /// The one pipeline stage that runs the block, or `None` when every stage runs its share.
    pub stage: Option<Stage>,
    /// Whether, and how, the block's attention is causal.
    pub causal: Option<Causal>,
    /// Indices into `Workload::ops`.
    pub ops: Range<usize>,
}

/// A pipeline stage a block belongs to alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The first stage (the embedding).
    First,
    /// The last stage (the final norm and the head).
    Last,
}

/// What an op reads: a declared tensor, another op's output, or a GEMM's own weight matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ref {
    /// A declared tensor, by index into `Workload::tensors`.
    Tensor(usize),
    /// Another op's output, by index into `Workload::ops`.
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

impl Tensor {
    /// The tensor's role (weight, KV cache, activation, ...), from its slot.
    pub fn role(&self) -> Role {
        self.slot.role()
    }
}

/// One input of an op.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// What is read.
    pub source: Ref,
    /// How many elements of it are read.
    pub size: ReadSize,
    /// The role (and weight group) of what is read, which decides its format.
    pub slot: Slot,
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
    /// The name the file writes the collective under, and the `kind` column shows.
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
        /// Rows of the left matrix (1 for a GEMV that gives none).
        m: Field,
        /// Columns of the right matrix.
        n: Field,
        /// The shared inner dimension.
        k: Field,
        /// Independent products; one when `None`.
        batch: Option<Field>,
        /// Whether the file wrote it as a `gemv` (its kernel kind), not a `gemm`.
        gemv: bool,
    },
    /// A read of stored tensors (the KV cache) with `flops` of matrix work, writing `out`.
    KvRead {
        /// FLOPs of matrix work; none when `None`.
        flops: Option<Field>,
        /// Elements written; none when `None`.
        out: Option<Field>,
    },
    /// `elements x flops_per_element` of vector work, writing `out` elements.
    Elementwise {
        /// Elements worked on; the size of the first input when `None`.
        elements: Option<Field>,
        /// FLOPs per element worked on.
        flops_per_element: Field,
        /// Elements written; as many as are worked on when `None`.
        out: Option<Field>,
    },
    /// A state-space scan (Mamba-2's SSD) of the sizes in [`ScanDims`]: its FLOPs follow
    /// from them (`ScanSizes::flops`), and it writes each token's output and each sequence's
    /// updated recurrent state.
    Scan(Box<ScanDims>),
    /// A collective of `elements` (see [`Collective`]) over `group` chips laid over `span`
    /// chips (the group itself when `None`), on the chip's interconnect, and hierarchically over
    /// the network where the span passes one scale-up domain. `algorithm`: the fastest when
    /// `None`.
    Collective {
        /// Which collective.
        collective: Collective,
        /// Elements moved, in the sense the [`Collective`] variant gives.
        elements: Field,
        /// Chips in the group.
        group: Field,
        /// Chips the group is laid over, when its members are not neighbours (`tp * ep`).
        span: Option<Field>,
        /// The algorithm the file names, if any.
        algorithm: Option<Algorithm>,
    },
}

/// The sizes of `count` independent `[m x k] x [k x n]` products; all zero for an op that is
/// not a GEMM.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GemmDims {
    /// Independent products (the GEMM's `batch`).
    pub count: f64,
    /// Rows of the left matrix.
    pub m: f64,
    /// Columns of the right matrix.
    pub n: f64,
    /// The shared inner dimension.
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
            OpKind::Scan(_) => KernelKind::Scan,
            OpKind::Collective { collective, .. } => KernelKind::Collective(*collective),
        }
    }

    /// The name of the op's kind, as in the `kind` column.
    pub fn name(&self) -> &'static str {
        self.kernel_kind().name()
    }

    /// Whether the op's FLOPs run on the matrix unit (else the vector unit). A scan's do: the
    /// chunked kernel's work is small matrix products (at one token a step it is bound by the
    /// state's bytes whichever unit it runs on).
    pub fn matrix_unit(&self) -> bool {
        !matches!(self, OpKind::Elementwise { .. })
    }
}

/// One kernel's worth of work; its output is a tensor named after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// The op's name, which its output tensor takes.
    pub name: String,
    /// The block it runs in (index into `Workload::blocks`).
    pub block: usize,
    /// What it does, with its dimensions.
    pub kind: OpKind,
    /// What it reads, in the order of its `of:` list.
    pub inputs: Vec<Input>,
    /// The role of the output.
    pub out_role: Role,
    /// Where the output's format comes from (`build::values`).
    pub out_slot: Slot,
    /// Indices of this op's inputs in `Evaluation::reads`.
    pub slots: Range<usize>,
    /// Which slots are among [`Op::operand_slots`], indexed by [`Slot::index`].
    pub operands: [bool; 8],
    /// The expressions the op's numbers come from (into `Workload::exprs`).
    pub deps: Vec<usize>,
    /// Its block's causal mask's expressions not among `deps`: they move the op's numbers
    /// only through the mask's share.
    pub mask_deps: Vec<usize>,
    /// Where the op is declared in the file, for errors.
    pub origin: Origin,
}

impl Op {
    /// The slots whose formats decide the op's compute type: its inputs', and for vector work
    /// its output's too. The matrix unit multiplies an `Output` value (attention's query and
    /// probabilities) in the activations' type, as FlashAttention-3's fp8 path does.
    pub fn operand_slots(&self) -> impl Iterator<Item = Slot> + '_ {
        let matrix = self.kind.matrix_unit();
        let out = (!matrix).then_some(self.out_slot);
        (self.inputs.iter().map(|i| i.slot))
            .map(move |s| match s {
                Slot::Output if matrix => Slot::Activation,
                s => s,
            })
            .chain(out)
    }

    /// The type the op's values call for under `types`: the widest of its operands' element
    /// types (the chip may lack it: see `Chip::matrix_dtype`).
    pub fn compute_dtype(&self, types: &Types) -> DType {
        let mut elements = Slot::ALL
            .into_iter()
            .filter(|s| self.operands[s.index()])
            .map(|s| types.get(s).element());
        let first = elements
            .next()
            .unwrap_or(types.role(Role::Activation).element());
        elements.fold(first, DType::compute_with)
    }

    /// Whether the op is a GEMM with its own (implied) weight.
    pub fn reads_own_weight(&self) -> bool {
        (self.inputs.iter()).any(|input| matches!(input.source, Ref::OwnWeight(_)))
    }

    /// The format of the weight the op reads, if it reads one.
    pub fn weight_format(&self, types: &Types) -> Option<Format> {
        Slot::ALL[..5]
            .iter()
            .find(|s| self.operands[s.index()])
            .map(|s| types.get(*s))
    }
}

/// A validated workload.
#[derive(Debug, Clone)]
pub struct Workload {
    /// File stem (`llama-3.1-70b`).
    pub(crate) id: String,
    pub(crate) name: String,
    /// The file as errors name it.
    pub(crate) file: String,
    text: Arc<str>,
    pub(crate) params: Vec<Param>,
    /// Params in an order where each comes after those its default reads.
    eval_order: Vec<usize>,
    /// The params whose defaults read params, in `eval_order`.
    derived_order: Vec<usize>,
    /// Each distinct expression but param defaults, once per scenario however many use it.
    pub(crate) exprs: Vec<Expr>,
    /// Where each expression is first used, for errors.
    expr_origins: Vec<Origin>,
    pub(crate) default_dtypes: Types,
    pub(crate) tokens_per_step: Option<Field>,
    /// Sequences in the step (each gets `tokens_per_step / sequences` tokens).
    pub(crate) sequences: Option<Field>,
    /// Chips one replica of the step runs on (`tp * pp`): the step's ops are one chip's share.
    pub(crate) chips: Option<Field>,
    /// Pipeline stages one after the other (`pp`): MFU and MBU count one stage's share.
    pub(crate) stages: Option<Field>,
    /// Numbers every scenario must keep whole (`heads / tp`), each with why.
    pub(crate) wholes: Vec<(Field, String)>,
    /// Positions a step may reach at most (`max_positions`), where the file states it.
    pub(crate) max_positions: Option<u64>,
    pub(crate) tensors: Vec<Tensor>,
    pub(crate) blocks: Vec<Block>,
    pub(crate) ops: Vec<Op>,
    /// Read slots in all.
    slot_count: usize,
    /// The plans, `none` (no fusion) first.
    pub(crate) fusion_plans: Vec<FusionPlan>,
    pub(crate) default_fusion: usize,
    /// Where each [`ScenarioParam`] is among `params`, found at load.
    known: [Option<usize>; ScenarioParam::ALL.len()],
    /// Whether each tensor follows `batch` (a mixed step's prompt KV does not).
    follows_batch: Vec<bool>,
    /// The vision encoder the model file links (`vision:`), resolved but not loaded.
    vision: Option<Arc<Source>>,
}

/// Largest repeat count accepted for a block.
pub const MAX_REPEAT: f64 = 1e9;

impl Workload {
    /// File stem (`llama-3.1-70b`), or the name given for text that came from no file.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Positions the model attends over at most (`max_positions` in its file), where stated:
    /// a step whose `context + tokens` passes it is refused ([`Error::PastPositions`]).
    pub fn max_positions(&self) -> Option<u64> {
        self.max_positions
    }

    /// The workload without its position limit: a measured run that went past the
    /// checkpoint's `max_positions` (an engine that does not refuse it) is priced as it ran.
    pub fn without_position_limit(mut self) -> Workload {
        self.max_positions = None;
        self
    }

    /// The model's name (`Llama-3.1-70B`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The params' names, in the file's order.
    pub fn param_names(&self) -> impl Iterator<Item = &str> + Clone {
        self.params.iter().map(|p| p.name.as_str())
    }

    /// The fusion plans' names, `none` first.
    pub fn fusion_plan_names(&self) -> impl Iterator<Item = &str> + Clone {
        self.fusion_plans.iter().map(|p| p.name.as_str())
    }

    /// Loads a built-in workload by name, or a workload file by path.
    pub fn named(name: &str) -> Result<Workload, Error> {
        Workload::load(&Source::resolve(
            name,
            crate::base::source::FileKind::Workload,
        )?)
    }

    /// The vision encoder the model file links (`vision:`): the file a request's images are
    /// priced with, `None` for a model that takes no images.
    pub fn vision(&self) -> Option<&Source> {
        self.vision.as_deref()
    }

    /// Parses and validates a workload file; every problem found is reported.
    pub fn load(source: &Source) -> Result<Workload, Error> {
        build::build(source, build::Templates::Files)
    }

    /// [`Workload::load`] for text that came from no file the reader may open (a workload
    /// pasted into the web page): a `template:` it names is a built-in template, never a file
    /// on disk, whatever files the process's working folder holds.
    pub(crate) fn load_detached(source: &Source) -> Result<Workload, Error> {
        build::build(source, build::Templates::BuiltIn)
    }

    fn problem(&self, origin: &Origin, message: impl Into<String>) -> Error {
        Error::Invalid(self.diagnostics(origin, message))
    }

    /// One problem at `origin` in the workload's file.
    fn diagnostics(&self, origin: &Origin, message: impl Into<String>) -> Diagnostics {
        Diagnostics(vec![Diagnostic::at(
            &self.file,
            Some(&self.text),
            origin,
            message,
        )])
    }

    /// Index of the param called `name`.
    pub fn param_index(&self, name: &str) -> Result<usize, Error> {
        self.find("param", name, self.param_names())
    }

    /// Index of the param called `name` as a scenario may set it: not one whose default is an
    /// expression of other params (`ffn_local: ffn / tp`), which an override would put out of
    /// step with the params it follows (a `tp` that no longer divides the FFN it splits),
    /// unless it is a [`ScenarioParam`].
    pub fn settable_param_index(&self, name: &str) -> Result<usize, Error> {
        let index = self.param_index(name)?;
        let param = &self.params[index];
        // A param with a meaning is an input whose default may follow another
        // (`prefill_seqs: min(prefill_tokens, 1)`), not a derivation.
        if param.default.params().is_empty() || self.known.contains(&Some(index)) {
            return Ok(index);
        }
        let from: Vec<String> = (param.default.params().iter())
            .map(|&i| format!("`{}`", self.params[i].name))
            .collect();
        Err(Error::value(format!(
            "param `{name}` of workload `{}` is derived from {} (`{name}: {}`) and cannot be set; \
             set {} instead",
            self.id,
            from.join(", "),
            param.default.text(),
            from.join(" or ")
        )))
    }

    /// Index of the fusion plan called `name`.
    pub fn fusion_index(&self, name: &str) -> Result<usize, Error> {
        self.find("fusion plan", name, self.fusion_plan_names())
    }

    /// Position of `name` among `names`, or an error naming the closest and all of them.
    fn find<'a>(
        &self,
        what: &'static str,
        name: &str,
        names: impl Iterator<Item = &'a str> + Clone,
    ) -> Result<usize, Error> {
        names.clone().position(|n| n == name).ok_or_else(|| {
            Error::NotInWorkload(Box::new(NotInWorkload {
                what,
                name: name.to_owned(),
                workload: self.id.clone(),
                suggestion: did_you_mean(name, names.clone()),
                known: names.collect::<Vec<_>>().join(", "),
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
}

#[cfg(test)]
mod tests;
