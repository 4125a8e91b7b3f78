//! One model step as a graph: params with defaults, tensors that live in HBM, ops grouped in
//! blocks that repeat, and named fusion plans. `WorkloadFile` mirrors the YAML (unknown fields
//! denied); `Workload` is the validated graph with every expression compiled, every name
//! resolved and no cycle, ready to be evaluated for one set of param values.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::diagnostic::{did_you_mean, Diagnostic, Diagnostics, Origin};
use crate::dtype::{DType, Role, RoleDTypes};
use crate::expr::Expr;
use crate::source::Source;
use crate::Error;

// ---------------------------------------------------------------------------------------------
// The file, as written.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadFile {
    name: Spanned<String>,
    #[allow(dead_code)] // documentation for readers of the file
    description: Option<String>,
    #[serde(default)]
    params: IndexMap<String, Spanned<String>>,
    #[serde(default)]
    dtypes: IndexMap<String, Spanned<String>>,
    tokens_per_step: Option<Spanned<String>>,
    #[serde(default)]
    tensors: IndexMap<String, TensorFile>,
    blocks: Vec<BlockFile>,
    #[serde(default)]
    fusion: IndexMap<String, Spanned<Vec<Vec<String>>>>,
    default_fusion: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TensorFile {
    role: Spanned<String>,
    shape: Spanned<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockFile {
    name: Spanned<String>,
    repeat: Option<Spanned<String>>,
    #[serde(default)]
    tensors: IndexMap<String, TensorFile>,
    ops: Vec<OpFile>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum OpFile {
    Gemm(GemmFile),
    Gemv(GemmFile),
    KvRead(KvReadFile),
    Elementwise(ElementwiseFile),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Names {
    One(String),
    Many(Vec<String>),
}

impl Names {
    fn list(&self) -> Vec<&str> {
        match self {
            Names::One(s) => vec![s.as_str()],
            Names::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GemmFile {
    name: Spanned<String>,
    of: Spanned<Names>,
    m: Option<Spanned<String>>,
    n: Spanned<String>,
    k: Spanned<String>,
    batch: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KvReadFile {
    name: Spanned<String>,
    of: Spanned<Names>,
    flops: Option<Spanned<String>>,
    out: Option<Spanned<String>>,
    #[serde(default)]
    reads: IndexMap<String, Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ElementwiseFile {
    name: Spanned<String>,
    of: Spanned<Names>,
    elements: Option<Spanned<String>>,
    flops_per_element: Spanned<String>,
    out: Option<Spanned<String>>,
    out_role: Option<Spanned<String>>,
    #[serde(default)]
    reads: IndexMap<String, Spanned<String>>,
}

// ---------------------------------------------------------------------------------------------
// The validated graph.

/// An expression and the place in the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub expr: Expr,
    pub origin: Origin,
}

/// A named number the file's expressions use; `--set` overrides its default.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    /// A number, or an expression over other params.
    pub default: Field,
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

/// A run of ops executed `repeat` times (the layers of a model).
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub name: String,
    pub repeat: Option<Field>,
    /// Indices into [`Workload::ops`].
    pub ops: std::ops::Range<usize>,
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

/// One input of an op, with the elements read when the op reads only a slice of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    pub source: Ref,
    pub elements: Option<Field>,
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
    /// `elements x flops_per_element` of vector work, writing `out` elements in `out_role`.
    Elementwise {
        elements: Option<Field>,
        flops_per_element: Field,
        out: Option<Field>,
        out_role: Role,
    },
}

impl OpKind {
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Gemm { gemv: false, .. } => "gemm",
            OpKind::Gemm { gemv: true, .. } => "gemv",
            OpKind::KvRead { .. } => "kv_read",
            OpKind::Elementwise { .. } => "elementwise",
        }
    }
}

/// One kernel's worth of work; its output is a tensor named after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    pub name: String,
    pub block: usize,
    pub kind: OpKind,
    pub inputs: Vec<Input>,
    pub origin: Origin,
}

/// A named way to group ops into kernels; ops in no group run alone.
#[derive(Debug, Clone, PartialEq)]
pub struct FusionPlan {
    pub name: String,
    /// Groups of op indices; each group is one kernel.
    pub groups: Vec<Vec<usize>>,
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
    pub default_dtypes: RoleDTypes,
    pub tokens_per_step: Option<Field>,
    pub tensors: Vec<Tensor>,
    pub blocks: Vec<Block>,
    pub ops: Vec<Op>,
    /// For each op, the ops that read its output.
    pub consumers: Vec<Vec<usize>>,
    /// The plans, `none` (no fusion) first.
    pub fusion_plans: Vec<FusionPlan>,
    pub default_fusion: usize,
}

/// Where a tensor's elements sit and in which role, as an evaluated op sees them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Read {
    pub source: Ref,
    pub elements: f64,
    pub role: Role,
}

/// What matters about one op for one set of param values.
#[derive(Debug, Clone, PartialEq)]
pub struct OpWork {
    pub flops: f64,
    /// `true` for the matrix (tensor-core) unit, `false` for the vector unit.
    pub matrix_unit: bool,
    pub reads: Vec<Read>,
    pub out_elements: f64,
    pub out_role: Role,
}

/// The whole step evaluated for one set of param values.
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluatedStep {
    pub params: Vec<f64>,
    /// Repeat count of each block.
    pub repeats: Vec<u64>,
    pub ops: Vec<OpWork>,
    pub tokens_per_step: Option<f64>,
}

/// Largest repeat count accepted for a block.
pub const MAX_REPEAT: f64 = 1e9;

impl Workload {
    /// Parses and validates a workload file; every problem found is reported.
    pub fn load(source: &Source) -> Result<Workload, Error> {
        let file: WorkloadFile = source.parse().map_err(Error::Invalid)?;
        Builder {
            source,
            problems: Vec::new(),
        }
        .build(file)
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
                Error::Scenario(format!(
                    "workload `{}` has no param `{name}`{}; its params: {}",
                    self.id,
                    did_you_mean(name, names.iter().copied()),
                    names.join(", ")
                ))
            })
    }

    /// Index of the fusion plan called `name`.
    pub fn fusion_index(&self, name: &str) -> Result<usize, Error> {
        self.fusion_plans
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.fusion_plans.iter().map(|p| p.name.as_str()).collect();
                Error::Scenario(format!(
                    "workload `{}` has no fusion plan `{name}`{}; its plans: {}",
                    self.id,
                    did_you_mean(name, names.iter().copied()),
                    names.join(", ")
                ))
            })
    }

    fn eval(&self, field: &Field, values: &[f64]) -> Result<f64, Error> {
        field
            .expr
            .eval(values)
            .map_err(|e| self.problem(&field.origin, e.to_string()))
    }

    /// Evaluates a dimension, which must be > 0.
    fn dim(&self, field: &Field, values: &[f64]) -> Result<f64, Error> {
        let v = self.eval(field, values)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.problem(
                &field.origin,
                format!(
                    "`{}` is {v}; a dimension must be greater than zero",
                    field.expr
                ),
            ))
        }
    }

    /// Evaluates a count of work (FLOPs, elements written), which must be >= 0.
    fn amount(&self, field: &Field, values: &[f64]) -> Result<f64, Error> {
        let v = self.eval(field, values)?;
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(self.problem(
                &field.origin,
                format!("`{}` is {v}; it must not be negative", field.expr),
            ))
        }
    }

    /// Param values: each default evaluated in dependency order, unless `overrides` sets it.
    pub fn param_values(&self, overrides: &[(usize, f64)]) -> Result<Vec<f64>, Error> {
        let mut values = vec![f64::NAN; self.params.len()];
        for &i in &self.eval_order {
            values[i] = match overrides.iter().rev().find(|(j, _)| *j == i) {
                Some((_, v)) => *v,
                None => self.eval(&self.params[i].default, &values)?,
            };
        }
        Ok(values)
    }

    /// Elements of a declared tensor.
    fn tensor_elements(&self, tensor: &Tensor, values: &[f64]) -> Result<f64, Error> {
        tensor
            .shape
            .iter()
            .try_fold(1.0, |acc, d| Ok(acc * self.dim(d, values)?))
    }

    /// Evaluates every op, block repeat and `tokens_per_step` for these param values.
    pub fn evaluate(&self, params: Vec<f64>) -> Result<EvaluatedStep, Error> {
        let values = params.as_slice();
        let repeats = self
            .blocks
            .iter()
            .map(|b| match &b.repeat {
                None => Ok(1),
                Some(field) => {
                    let r = self.eval(field, values)?;
                    if r >= 1.0 && r.fract() == 0.0 && r <= MAX_REPEAT {
                        Ok(r as u64)
                    } else {
                        Err(self.problem(
                            &field.origin,
                            format!(
                                "`{}` is {r}; a repeat count must be a whole number from 1 to {MAX_REPEAT:e}",
                                field.expr
                            ),
                        ))
                    }
                }
            })
            .collect::<Result<Vec<u64>, Error>>()?;
        let mut ops: Vec<OpWork> = Vec::with_capacity(self.ops.len());
        for (index, op) in self.ops.iter().enumerate() {
            let work = self.evaluate_op(index, op, values, &ops)?;
            ops.push(work);
        }
        // Ops may read ops defined after them; settle those reads now that all are known.
        for index in 0..ops.len() {
            for r in 0..ops[index].reads.len() {
                if let Ref::Op(j) = ops[index].reads[r].source {
                    let (out_elements, out_role) = (ops[j].out_elements, ops[j].out_role);
                    let read = &mut ops[index].reads[r];
                    read.role = out_role;
                    if read.elements.is_nan() {
                        read.elements = out_elements;
                    }
                }
            }
        }
        let tokens_per_step = match &self.tokens_per_step {
            Some(field) => Some(self.dim(field, values)?),
            None => None,
        };
        Ok(EvaluatedStep {
            params,
            repeats,
            ops,
            tokens_per_step,
        })
    }

    fn evaluate_op(
        &self,
        index: usize,
        op: &Op,
        values: &[f64],
        done: &[OpWork],
    ) -> Result<OpWork, Error> {
        // Elements and role of an input read whole (NaN: an op not evaluated yet).
        let whole = |source: Ref| -> Result<(f64, Role), Error> {
            Ok(match source {
                Ref::Tensor(t) => {
                    let tensor = &self.tensors[t];
                    (self.tensor_elements(tensor, values)?, tensor.role)
                }
                Ref::Op(j) => done
                    .get(j)
                    .map(|w| (w.out_elements, w.out_role))
                    .unwrap_or((f64::NAN, Role::Activation)),
                Ref::OwnWeight(_) => (f64::NAN, Role::Weight),
            })
        };
        let mut reads = Vec::with_capacity(op.inputs.len());
        for input in &op.inputs {
            let (elements, role) = whole(input.source)?;
            let elements = match &input.elements {
                Some(field) => self.dim(field, values)?,
                None => elements,
            };
            reads.push(Read {
                source: input.source,
                elements,
                role,
            });
        }
        let work = match &op.kind {
            OpKind::Gemm { m, n, k, batch, .. } => {
                let (m, n, k) = (
                    self.dim(m, values)?,
                    self.dim(n, values)?,
                    self.dim(k, values)?,
                );
                let batch = match batch {
                    Some(b) => self.dim(b, values)?,
                    None => 1.0,
                };
                // Each matrix once: A is [m x k], B is [k x n], C is [m x n], per batch entry.
                reads[0].elements = batch * m * k;
                let b_elements = batch * k * n;
                match reads.get_mut(1) {
                    Some(b) => b.elements = b_elements,
                    None => reads.push(Read {
                        source: Ref::OwnWeight(index),
                        elements: b_elements,
                        role: Role::Weight,
                    }),
                }
                OpWork {
                    flops: 2.0 * batch * m * n * k,
                    matrix_unit: true,
                    reads,
                    out_elements: batch * m * n,
                    out_role: Role::Activation,
                }
            }
            OpKind::KvRead { flops, out } => OpWork {
                flops: match flops {
                    Some(f) => self.amount(f, values)?,
                    None => 0.0,
                },
                matrix_unit: true,
                reads,
                out_elements: match out {
                    Some(o) => self.amount(o, values)?,
                    None => 0.0,
                },
                out_role: Role::Activation,
            },
            OpKind::Elementwise {
                elements,
                flops_per_element,
                out,
                out_role,
            } => {
                let n = match elements {
                    Some(e) => self.dim(e, values)?,
                    None if reads[0].elements.is_nan() => {
                        return Err(self.problem(
                            &op.origin,
                            format!(
                                "op `{}` reads an op defined after it, so its `elements` cannot default to that input's size; write `elements:`",
                                op.name
                            ),
                        ))
                    }
                    None => reads[0].elements,
                };
                let out_elements = match out {
                    Some(o) => self.amount(o, values)?,
                    None => n,
                };
                OpWork {
                    flops: n * self.amount(flops_per_element, values)?,
                    matrix_unit: false,
                    reads,
                    out_elements,
                    out_role: *out_role,
                }
            }
        };
        for (value, what) in [
            (work.flops, "FLOPs"),
            (work.out_elements, "output elements"),
        ] {
            if !value.is_finite() {
                return Err(self.problem(&op.origin, format!("op `{}`: {what} overflow", op.name)));
            }
        }
        Ok(work)
    }

    /// Bytes of weights and KV cache resident in HBM for these values and role types: declared
    /// tensors and implied GEMM weights, each block's counted once per repeat.
    pub fn resident_bytes(
        &self,
        step: &EvaluatedStep,
        dtypes: &RoleDTypes,
    ) -> Result<(f64, f64), Error> {
        let mut weight = 0.0;
        let mut kv = 0.0;
        let count = |block: Option<usize>| block.map_or(1.0, |b| step.repeats[b] as f64);
        for tensor in &self.tensors {
            let bytes = self.tensor_elements(tensor, &step.params)?
                * dtypes.get(tensor.role).bytes()
                * count(tensor.block);
            match tensor.role {
                Role::Weight => weight += bytes,
                Role::Kv => kv += bytes,
                Role::Activation => {}
            }
        }
        for (i, work) in step.ops.iter().enumerate() {
            for read in &work.reads {
                if read.source == Ref::OwnWeight(i) {
                    weight += read.elements
                        * dtypes.get(Role::Weight).bytes()
                        * count(Some(self.ops[i].block));
                }
            }
        }
        Ok((weight, kv))
    }

    /// The data type a role takes when the scenario does not choose one.
    pub fn default_dtype(&self, role: Role) -> DType {
        self.default_dtypes.get(role)
    }
}

// ---------------------------------------------------------------------------------------------
// Validation: file -> graph, collecting every problem.

struct Builder<'a> {
    source: &'a Source,
    problems: Vec<Diagnostic>,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl Builder<'_> {
    fn problem(&mut self, origin: Origin, message: impl Into<String>) {
        self.problems.push(self.source.problem(&origin, message));
    }

    fn expr(&mut self, field: &str, value: &Spanned<String>, params: &[String]) -> Option<Field> {
        let origin = Origin::of(field, value);
        let resolve = |name: &str| -> Result<usize, String> {
            params.iter().position(|p| p == name).ok_or_else(|| {
                format!(
                    "undefined param `{name}`{}; params are declared under `params:`",
                    did_you_mean(name, params.iter().map(String::as_str))
                )
            })
        };
        match Expr::parse(&value.value, &resolve) {
            Ok(expr) => Some(Field { expr, origin }),
            Err(e) => {
                self.problem(origin, e.to_string());
                None
            }
        }
    }

    fn opt_expr(
        &mut self,
        field: &str,
        value: &Option<Spanned<String>>,
        params: &[String],
    ) -> Option<Option<Field>> {
        match value {
            None => Some(None),
            Some(v) => self.expr(field, v, params).map(Some),
        }
    }

    fn role(&mut self, field: &str, value: &Spanned<String>) -> Option<Role> {
        value
            .value
            .parse()
            .map_err(|e: String| self.problem(Origin::of(field, value), e))
            .ok()
    }

    fn tensors(
        &mut self,
        prefix: &str,
        files: &IndexMap<String, TensorFile>,
        block: Option<usize>,
        params: &[String],
        out: &mut Vec<Tensor>,
    ) {
        for (name, file) in files {
            let field = format!("{prefix}tensors.{name}");
            let role = self.role(&format!("{field}.role"), &file.role);
            if file.shape.value.is_empty() {
                self.problem(
                    Origin::of(format!("{field}.shape"), &file.shape),
                    "a shape needs at least one dimension",
                );
            }
            let shape: Vec<Option<Field>> = file
                .shape
                .value
                .iter()
                .enumerate()
                .map(|(i, d)| self.expr(&format!("{field}.shape[{i}]"), d, params))
                .collect();
            if !valid_name(name) {
                self.problem(
                    Origin::of(format!("{field}.role"), &file.role),
                    format!("`{name}` is not a valid name (letters, digits, `_`, `-`, `.`; starting with a letter)"),
                );
            }
            if let (Some(role), Some(shape)) = (role, shape.into_iter().collect::<Option<Vec<_>>>())
            {
                out.push(Tensor {
                    name: name.clone(),
                    role,
                    shape,
                    block,
                });
            }
        }
    }

    fn build(mut self, file: WorkloadFile) -> Result<Workload, Error> {
        // Params: names first, so defaults may refer to each other in any order.
        let param_names: Vec<String> = file.params.keys().cloned().collect();
        let mut params = Vec::new();
        for (name, value) in &file.params {
            if !valid_name(name) || name.contains(['-', '.']) {
                self.problem(
                    Origin::of(format!("params.{name}"), value),
                    format!("`{name}` is not a valid param name (letters, digits and `_`, starting with a letter)"),
                );
            }
            if let Some(default) = self.expr(&format!("params.{name}"), value, &param_names) {
                params.push(Param {
                    name: name.clone(),
                    default,
                });
            }
        }
        let eval_order = if params.len() == param_names.len() {
            self.param_order(&params)
        } else {
            Vec::new()
        };

        let mut default_dtypes = RoleDTypes::default();
        for (role, value) in &file.dtypes {
            let field = format!("dtypes.{role}");
            match (role.parse::<Role>(), value.value.parse::<DType>()) {
                (Ok(r), Ok(d)) => default_dtypes.set(r, d),
                (Err(e), _) | (_, Err(e)) => self.problem(Origin::of(field, value), e),
            }
        }
        let tokens_per_step = self
            .opt_expr("tokens_per_step", &file.tokens_per_step, &param_names)
            .flatten();

        let mut tensors = Vec::new();
        self.tensors("", &file.tensors, None, &param_names, &mut tensors);
        for (b, block) in file.blocks.iter().enumerate() {
            self.tensors(
                &format!("blocks[{b}]."),
                &block.tensors,
                Some(b),
                &param_names,
                &mut tensors,
            );
        }

        // Every name an op may read: tensors, then ops. Names are global and unique.
        let mut names: HashMap<String, Ref> = HashMap::new();
        for (i, t) in tensors.iter().enumerate() {
            if names.insert(t.name.clone(), Ref::Tensor(i)).is_some() {
                self.problem(
                    t.shape
                        .first()
                        .map(|f| f.origin.clone())
                        .unwrap_or_default(),
                    format!("tensor `{}` is declared twice", t.name),
                );
            }
        }
        let mut op_index = 0;
        for (b, block) in file.blocks.iter().enumerate() {
            for (o, op) in block.ops.iter().enumerate() {
                let name = op_name(op);
                let field = format!("blocks[{b}].ops[{o}].{}.name", op_kind(op));
                if !valid_name(&name.value) {
                    self.problem(
                        Origin::of(&field, name),
                        format!("`{}` is not a valid op name (letters, digits, `_`, `-`, `.`; starting with a letter)", name.value),
                    );
                }
                if names
                    .insert(name.value.clone(), Ref::Op(op_index))
                    .is_some()
                {
                    self.problem(
                        Origin::of(&field, name),
                        format!(
                            "`{}` is already the name of a tensor or op; names must be unique",
                            name.value
                        ),
                    );
                }
                op_index += 1;
            }
        }

        let mut blocks = Vec::new();
        let mut ops = Vec::new();
        let mut block_names = HashSet::new();
        for (b, block) in file.blocks.iter().enumerate() {
            if !block_names.insert(block.name.value.clone()) {
                self.problem(
                    Origin::of(format!("blocks[{b}].name"), &block.name),
                    format!("block `{}` is declared twice", block.name.value),
                );
            }
            if block.ops.is_empty() {
                self.problem(
                    Origin::of(format!("blocks[{b}].ops"), &block.name),
                    format!("block `{}` has no ops", block.name.value),
                );
            }
            let repeat = self
                .opt_expr(&format!("blocks[{b}].repeat"), &block.repeat, &param_names)
                .flatten();
            let first = ops.len();
            for (o, op) in block.ops.iter().enumerate() {
                let prefix = format!("blocks[{b}].ops[{o}].{}", op_kind(op));
                if let Some(op) = self.op(&prefix, op, b, first + o, &names, &param_names) {
                    ops.push(op);
                } else {
                    // Keep indices aligned with `names`; the error is already recorded.
                    ops.push(Op {
                        name: op_name(op).value.clone(),
                        block: b,
                        kind: OpKind::KvRead {
                            flops: None,
                            out: None,
                        },
                        inputs: Vec::new(),
                        origin: Origin::default(),
                    });
                }
            }
            blocks.push(Block {
                name: block.name.value.clone(),
                repeat,
                ops: first..ops.len(),
            });
        }
        if file.blocks.is_empty() {
            self.problem(
                Origin::of("name", &file.name),
                "a workload needs at least one block with ops under `blocks:`",
            );
        }

        let mut consumers = vec![Vec::new(); ops.len()];
        for (i, op) in ops.iter().enumerate() {
            for input in &op.inputs {
                if let Ref::Op(j) = input.source {
                    if !consumers[j].contains(&i) {
                        consumers[j].push(i);
                    }
                }
            }
        }
        self.check_acyclic(&ops, &[]);

        let mut fusion_plans = vec![FusionPlan {
            name: "none".into(),
            groups: Vec::new(),
        }];
        for (plan_name, groups) in &file.fusion {
            let field = format!("fusion.{plan_name}");
            let origin = Origin::of(&field, groups);
            let mut plan = FusionPlan {
                name: plan_name.clone(),
                groups: Vec::new(),
            };
            let mut seen = HashSet::new();
            for group in &groups.value {
                let mut members = Vec::new();
                for op in group {
                    match names.get(op.as_str()) {
                        Some(Ref::Op(i)) => {
                            if !seen.insert(*i) {
                                self.problem(
                                    origin.clone(),
                                    format!(
                                        "op `{op}` is in more than one group of plan `{plan_name}`"
                                    ),
                                );
                            }
                            members.push(*i);
                        }
                        Some(_) => self.problem(
                            origin.clone(),
                            format!("`{op}` is a tensor, not an op; fusion groups list ops"),
                        ),
                        None => self.problem(
                            origin.clone(),
                            format!(
                                "fusion plan `{plan_name}` names unknown op `{op}`{}",
                                did_you_mean(op, ops.iter().map(|o| o.name.as_str()))
                            ),
                        ),
                    }
                }
                if group.is_empty() {
                    self.problem(origin.clone(), "a fusion group needs at least one op");
                }
                if members
                    .windows(2)
                    .any(|w| ops[w[0]].block != ops[w[1]].block)
                {
                    self.problem(
                        origin.clone(),
                        format!(
                            "a group of plan `{plan_name}` spans blocks; ops fused into one kernel must repeat together"
                        ),
                    );
                }
                members.sort_unstable();
                plan.groups.push(members);
            }
            if plan_name == "none" {
                if !plan.groups.is_empty() {
                    self.problem(origin, "plan `none` means no fusion and must be empty");
                }
                continue;
            }
            self.check_acyclic(&ops, &plan.groups);
            fusion_plans.push(plan);
        }
        let default_fusion = match &file.default_fusion {
            None => 0,
            Some(name) => fusion_plans
                .iter()
                .position(|p| p.name == name.value)
                .unwrap_or_else(|| {
                    self.problem(
                        Origin::of("default_fusion", name),
                        format!(
                            "no fusion plan `{}`; plans: {}",
                            name.value,
                            fusion_plans
                                .iter()
                                .map(|p| p.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                    0
                }),
        };
        if file.name.value.trim().is_empty() {
            self.problem(Origin::of("name", &file.name), "must not be empty");
        }

        if !self.problems.is_empty() {
            return Err(Error::Invalid(Diagnostics(self.problems)));
        }
        Ok(Workload {
            id: self.source.id.clone(),
            name: file.name.value.trim().to_owned(),
            file: self.source.name.clone(),
            text: Arc::from(self.source.text.as_str()),
            params,
            eval_order,
            default_dtypes,
            tokens_per_step,
            tensors,
            blocks,
            ops,
            consumers,
            fusion_plans,
            default_fusion,
        })
    }

    /// Orders params so each follows those its default reads; reports a cycle.
    fn param_order(&mut self, params: &[Param]) -> Vec<usize> {
        let deps: Vec<Vec<usize>> = params.iter().map(|p| p.default.expr.params()).collect();
        let mut order = Vec::with_capacity(params.len());
        let mut state = vec![0u8; params.len()]; // 0 new, 1 on the stack, 2 done
        for start in 0..params.len() {
            if state[start] != 0 {
                continue;
            }
            let mut stack = vec![(start, 0usize)];
            state[start] = 1;
            while let Some((node, next)) = stack.pop() {
                if let Some(&dep) = deps[node].get(next) {
                    stack.push((node, next + 1));
                    match state[dep] {
                        0 => {
                            state[dep] = 1;
                            stack.push((dep, 0));
                        }
                        1 => {
                            let p = &params[dep];
                            self.problem(
                                p.default.origin.clone(),
                                format!("param `{}` depends on itself through its default", p.name),
                            );
                            return Vec::new();
                        }
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                    order.push(node);
                }
            }
        }
        order
    }

    /// Reports a cycle among ops, with each group of `groups` taken as one node.
    fn check_acyclic(&mut self, ops: &[Op], groups: &[Vec<usize>]) {
        let mut node_of: Vec<usize> = (0..ops.len()).collect();
        for (g, members) in groups.iter().enumerate() {
            for &m in members {
                node_of[m] = ops.len() + g;
            }
        }
        let nodes = ops.len() + groups.len();
        let mut edges = vec![Vec::new(); nodes];
        for (i, op) in ops.iter().enumerate() {
            for input in &op.inputs {
                if let Ref::Op(j) = input.source {
                    let (from, to) = (node_of[j], node_of[i]);
                    if from != to {
                        edges[from].push(to);
                    }
                }
            }
        }
        let mut state = vec![0u8; nodes];
        for start in 0..nodes {
            if state[start] != 0 {
                continue;
            }
            let mut stack = vec![(start, 0usize)];
            state[start] = 1;
            while let Some((node, next)) = stack.pop() {
                if let Some(&to) = edges[node].get(next) {
                    stack.push((node, next + 1));
                    match state[to] {
                        0 => {
                            state[to] = 1;
                            stack.push((to, 0));
                        }
                        1 => {
                            let cycle: Vec<&str> = stack
                                .iter()
                                .map(|(n, _)| *n)
                                .skip_while(|n| *n != to)
                                .filter(|n| *n < ops.len())
                                .map(|n| ops[n].name.as_str())
                                .collect();
                            let op = if to < ops.len() {
                                to
                            } else {
                                groups[to - ops.len()][0]
                            };
                            let message = if groups.is_empty() {
                                format!(
                                    "the ops form a cycle: {} reads its own output",
                                    cycle.join(" -> ")
                                )
                            } else {
                                "a fusion group would read its own output through an op outside it (the group cannot be one kernel)".to_string()
                            };
                            self.problem(ops[op].origin.clone(), message);
                            return;
                        }
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                }
            }
        }
    }

    fn inputs(
        &mut self,
        prefix: &str,
        of: &Spanned<Names>,
        reads: &IndexMap<String, Spanned<String>>,
        names: &HashMap<String, Ref>,
        params: &[String],
    ) -> Option<Vec<Input>> {
        let origin = Origin::of(format!("{prefix}.of"), of);
        let list = of.value.list();
        if list.is_empty() {
            self.problem(origin.clone(), "an op needs at least one input");
            return None;
        }
        let mut inputs = Vec::new();
        let mut ok = true;
        for name in &list {
            match names.get(*name) {
                Some(source) => inputs.push(Input {
                    source: *source,
                    elements: None,
                }),
                None => {
                    ok = false;
                    self.problem(
                        origin.clone(),
                        format!(
                            "unknown tensor or op `{name}`{}",
                            did_you_mean(name, names.keys().map(String::as_str))
                        ),
                    );
                }
            }
        }
        for (name, value) in reads {
            let field = format!("{prefix}.reads.{name}");
            match list.iter().position(|n| n == name) {
                Some(i) if ok => inputs[i].elements = self.expr(&field, value, params),
                Some(_) => {}
                None => {
                    ok = false;
                    self.problem(
                        Origin::of(field, value),
                        format!(
                            "`{name}` is not one of this op's inputs ({})",
                            list.join(", ")
                        ),
                    );
                }
            }
        }
        ok.then_some(inputs)
    }

    fn op(
        &mut self,
        prefix: &str,
        op: &OpFile,
        block: usize,
        index: usize,
        names: &HashMap<String, Ref>,
        params: &[String],
    ) -> Option<Op> {
        let name = op_name(op);
        let origin = Origin::of(format!("{prefix}.name"), name);
        let no_reads = IndexMap::new();
        let (of, reads) = match op {
            OpFile::Gemm(g) | OpFile::Gemv(g) => (&g.of, &no_reads),
            OpFile::KvRead(r) => (&r.of, &r.reads),
            OpFile::Elementwise(e) => (&e.of, &e.reads),
        };
        let inputs = self.inputs(prefix, of, reads, names, params);
        if inputs
            .as_ref()
            .is_some_and(|i| i.iter().any(|x| x.source == Ref::Op(index)))
        {
            self.problem(
                origin.clone(),
                format!("op `{}` reads its own output", name.value),
            );
        }
        let kind = match op {
            OpFile::Gemm(g) | OpFile::Gemv(g) => {
                let gemv = matches!(op, OpFile::Gemv(_));
                let of_len = g.of.value.list().len();
                if of_len > 2 {
                    self.problem(
                        Origin::of(format!("{prefix}.of"), &g.of),
                        format!(
                            "a {} reads one input (its weight is implied) or two, found {of_len}",
                            if gemv { "gemv" } else { "gemm" }
                        ),
                    );
                }
                let m = match (&g.m, gemv) {
                    (Some(m), _) => self.expr(&format!("{prefix}.m"), m, params),
                    (None, true) => Some(Field {
                        expr: Expr::constant(1.0),
                        origin: origin.clone(),
                    }),
                    (None, false) => {
                        self.problem(
                            origin.clone(),
                            "missing field `m` (rows of the left matrix)",
                        );
                        None
                    }
                };
                let n = self.expr(&format!("{prefix}.n"), &g.n, params);
                let k = self.expr(&format!("{prefix}.k"), &g.k, params);
                let batch = self.opt_expr(&format!("{prefix}.batch"), &g.batch, params);
                OpKind::Gemm {
                    m: m?,
                    n: n?,
                    k: k?,
                    batch: batch?,
                    gemv,
                }
            }
            OpFile::KvRead(r) => {
                let flops = self.opt_expr(&format!("{prefix}.flops"), &r.flops, params);
                let out = self.opt_expr(&format!("{prefix}.out"), &r.out, params);
                OpKind::KvRead {
                    flops: flops?,
                    out: out?,
                }
            }
            OpFile::Elementwise(e) => {
                let elements = self.opt_expr(&format!("{prefix}.elements"), &e.elements, params);
                let fpe = self.expr(
                    &format!("{prefix}.flops_per_element"),
                    &e.flops_per_element,
                    params,
                );
                let out = self.opt_expr(&format!("{prefix}.out"), &e.out, params);
                let out_role = match &e.out_role {
                    Some(r) => self.role(&format!("{prefix}.out_role"), r),
                    None => Some(Role::Activation),
                };
                OpKind::Elementwise {
                    elements: elements?,
                    flops_per_element: fpe?,
                    out: out?,
                    out_role: out_role?,
                }
            }
        };
        Some(Op {
            name: name.value.clone(),
            block,
            kind,
            inputs: inputs?,
            origin,
        })
    }
}

fn op_name(op: &OpFile) -> &Spanned<String> {
    match op {
        OpFile::Gemm(g) | OpFile::Gemv(g) => &g.name,
        OpFile::KvRead(r) => &r.name,
        OpFile::Elementwise(e) => &e.name,
    }
}

fn op_kind(op: &OpFile) -> &'static str {
    match op {
        OpFile::Gemm(_) => "gemm",
        OpFile::Gemv(_) => "gemv",
        OpFile::KvRead(_) => "kv_read",
        OpFile::Elementwise(_) => "elementwise",
    }
}
