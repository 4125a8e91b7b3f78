//! Validation: a parsed workload file becomes a [`Workload`], or every problem found is
//! reported with its line and field.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use super::file::{BlockFile, CollectiveFile, OpFile, TensorFile, WorkloadFile};
use super::{
    Algorithm, Block, Collective, Field, FusionPlan, Input, Kernel, KernelKind, KernelRead, Op,
    OpKind, Param, ReadSize, Ref, Tensor, Workload,
};
use crate::base::diagnostic::{did_you_mean, Diagnostic, Diagnostics, Origin};
use crate::base::dtype::{DType, Role, RoleDTypes};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::source::Source;
use crate::engine::expr::Expr;

pub(super) fn build(source: &Source) -> Result<Workload, Error> {
    let file: WorkloadFile = source.parse().map_err(Error::Invalid)?;
    let own = Arc::new(source.clone());
    let Some(template_name) = &file.template else {
        return Builder::new(Arc::clone(&own), &file).build(file, None);
    };
    let at = |field: &str, v: &Spanned<String>| Origin::of(field, v).in_file(&own);
    let invalid = |origin: Origin, message: String| {
        Error::Invalid(Diagnostics(vec![source.problem(&origin, message)]))
    };
    let template = Source::resolve_template(&template_name.value, source).map_err(|e| {
        let reason = std::error::Error::source(&e)
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        invalid(
            at("template", template_name),
            format!("cannot use this template: {e}{reason}"),
        )
    })?;
    let graph: WorkloadFile = template.parse().map_err(Error::Invalid)?;
    if graph.template.is_some() {
        return Err(invalid(
            at("template", template_name),
            format!(
                "template `{}` itself names a template; templates do not nest",
                template.name
            ),
        ));
    }
    let graph_fields = [
        ("tensors", !file.tensors.is_empty()),
        ("blocks", !file.blocks.is_empty()),
        ("fusion", !file.fusion.is_empty()),
        ("tokens_per_step", file.tokens_per_step.is_some()),
        ("sequences", file.sequences.is_some()),
        ("chips", file.chips.is_some()),
        ("stages", file.stages.is_some()),
    ];
    if let Some((field, _)) = graph_fields.iter().find(|(_, set)| *set) {
        return Err(invalid(
            at(field, template_name),
            format!("a workload with a template takes its graph from the template; `{field}` belongs in the template"),
        ));
    }
    Builder::new(Arc::new(template), &graph).build(graph, Some((own, file)))
}

struct Builder {
    /// The file the graph comes from (the template, for a workload that names one).
    source: Arc<Source>,
    problems: Vec<Diagnostic>,
    /// Param names, in file order.
    params: Vec<String>,
    exprs: Vec<Expr>,
    expr_origins: Vec<Origin>,
    /// Expression text without spaces -> index into `exprs`.
    interned: HashMap<String, usize>,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

const NAME_RULE: &str = "letters, digits, `_`, `-` and `.`, starting with a letter or `_`";

fn op_name(op: &OpFile) -> &Spanned<String> {
    match op {
        OpFile::Gemm(g) | OpFile::Gemv(g) => &g.name,
        OpFile::KvRead(r) => &r.name,
        OpFile::Elementwise(e) => &e.name,
        OpFile::Allreduce(c)
        | OpFile::Allgather(c)
        | OpFile::Reducescatter(c)
        | OpFile::Alltoall(c)
        | OpFile::Sendrecv(c) => &c.name,
    }
}

/// The collective an op file names, if it is one.
fn collective_of(op: &OpFile) -> Option<(Collective, &CollectiveFile)> {
    Some(match op {
        OpFile::Allreduce(c) => (Collective::AllReduce, c),
        OpFile::Allgather(c) => (Collective::AllGather, c),
        OpFile::Reducescatter(c) => (Collective::ReduceScatter, c),
        OpFile::Alltoall(c) => (Collective::AllToAll, c),
        OpFile::Sendrecv(c) => (Collective::SendRecv, c),
        _ => return None,
    })
}

fn op_kind(op: &OpFile) -> &'static str {
    match op {
        OpFile::Gemm(_) => "gemm",
        OpFile::Gemv(_) => "gemv",
        OpFile::KvRead(_) => "kv_read",
        OpFile::Elementwise(_) => "elementwise",
        _ => collective_of(op).map_or("", |(c, _)| c.name()),
    }
}

impl Builder {
    fn new(source: Arc<Source>, file: &WorkloadFile) -> Builder {
        Builder {
            source,
            problems: Vec::new(),
            params: file.params.keys().cloned().collect(),
            exprs: Vec::new(),
            expr_origins: Vec::new(),
            interned: HashMap::new(),
        }
    }

    /// Where `value` sits in the graph's file.
    fn at<T>(&self, field: impl Into<String>, value: &Spanned<T>) -> Origin {
        Origin::of(field, value).in_file(&self.source)
    }

    fn problem(&mut self, origin: Origin, message: impl Into<String>) {
        self.problems.push(self.source.problem(&origin, message));
    }

    fn compile(&self, text: &str) -> Result<Expr, String> {
        let params = &self.params;
        let resolve = |name: &str| -> Result<usize, String> {
            params.iter().position(|p| p == name).ok_or_else(|| {
                format!(
                    "undefined param `{name}`{}; params are declared under `params:`",
                    did_you_mean(name, params.iter().map(String::as_str))
                )
            })
        };
        Expr::parse(text, &resolve).map_err(|e| e.to_string())
    }

    /// Compiles an expression once per distinct text; `None` after recording a problem.
    fn expr(&mut self, field: &str, value: &Spanned<String>) -> Option<Field> {
        self.expr_text(&value.value, self.at(field, value))
    }

    fn expr_text(&mut self, text: &str, origin: Origin) -> Option<Field> {
        let key: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if let Some(&id) = self.interned.get(&key) {
            return Some(Field { id, origin });
        }
        match self.compile(text) {
            Ok(expr) => {
                let id = self.exprs.len();
                self.exprs.push(expr);
                self.expr_origins.push(origin.clone());
                self.interned.insert(key, id);
                Some(Field { id, origin })
            }
            Err(message) => {
                self.problem(origin, message);
                None
            }
        }
    }

    /// `Some(None)` when absent, `None` after recording a problem.
    fn opt_expr(&mut self, field: &str, value: &Option<Spanned<String>>) -> Option<Option<Field>> {
        match value {
            None => Some(None),
            Some(v) => self.expr(field, v).map(Some),
        }
    }

    fn role(&mut self, field: &str, value: &Spanned<String>) -> Option<Role> {
        value
            .value
            .parse()
            .map_err(|e: String| self.problem(self.at(field, value), e))
            .ok()
    }

    fn tensors(
        &mut self,
        prefix: &str,
        files: &IndexMap<String, TensorFile>,
        block: Option<usize>,
        out: &mut Vec<Tensor>,
    ) {
        for (name, file) in files {
            let field = format!("{prefix}tensors.{name}");
            if !valid_name(name) {
                self.problem(
                    self.at(format!("{field}.role"), &file.role),
                    format!("`{name}` is not a valid name ({NAME_RULE})"),
                );
            }
            let role = self.role(&format!("{field}.role"), &file.role);
            if file.shape.value.is_empty() {
                self.problem(
                    self.at(format!("{field}.shape"), &file.shape),
                    "a shape needs at least one dimension",
                );
            }
            let shape: Option<Vec<Field>> = file
                .shape
                .value
                .iter()
                .enumerate()
                .map(|(i, d)| self.expr(&format!("{field}.shape[{i}]"), d))
                .collect::<Vec<_>>()
                .into_iter()
                .collect();
            if let (Some(role), Some(shape)) = (role, shape) {
                out.push(Tensor {
                    name: name.clone(),
                    role,
                    shape,
                    block,
                });
            }
        }
    }

    /// Builds the graph of `file`; `model` is the workload that uses `file` as its template,
    /// whose name, param values, data types and default plan take precedence.
    fn build(
        mut self,
        file: WorkloadFile,
        model: Option<(Arc<Source>, WorkloadFile)>,
    ) -> Result<Workload, Error> {
        let params = self.params_of(&file, model.as_ref());
        let eval_order = if params.len() == self.params.len() {
            self.param_order(&params)
        } else {
            Vec::new()
        };

        let mut default_dtypes = RoleDTypes::default();
        let model_dtypes = model
            .iter()
            .flat_map(|(src, m)| m.dtypes.iter().map(move |d| (Some(src), d)));
        for (src, (role, value)) in file.dtypes.iter().map(|d| (None, d)).chain(model_dtypes) {
            let mut origin = self.at(format!("dtypes.{role}"), value);
            if let Some(src) = src {
                origin = origin.in_file(src);
            }
            match (role.parse::<Role>(), value.value.parse::<DType>()) {
                (Ok(r), Ok(d)) => default_dtypes.set(r, d),
                (Err(e), _) | (_, Err(e)) => self.problem(origin, e),
            }
        }
        let tokens_per_step = self
            .opt_expr("tokens_per_step", &file.tokens_per_step)
            .flatten();
        let sequences = self.opt_expr("sequences", &file.sequences).flatten();
        let chips = self.opt_expr("chips", &file.chips).flatten();
        let stages = self.opt_expr("stages", &file.stages).flatten();

        let mut tensors = Vec::new();
        self.tensors("", &file.tensors, None, &mut tensors);
        for (b, block) in file.blocks.iter().enumerate() {
            self.tensors(
                &format!("blocks[{b}]."),
                &block.tensors,
                Some(b),
                &mut tensors,
            );
        }
        let (names, out_roles) = self.names(&tensors, &file.blocks);

        let mut blocks = Vec::new();
        let mut ops = Vec::new();
        let mut slots = 0;
        let mut block_names = HashSet::new();
        for (b, block) in file.blocks.iter().enumerate() {
            if !block_names.insert(block.name.value.clone()) {
                self.problem(
                    self.at(format!("blocks[{b}].name"), &block.name),
                    format!("block `{}` is declared twice", block.name.value),
                );
            }
            if block.ops.is_empty() {
                self.problem(
                    self.at(format!("blocks[{b}].ops"), &block.name),
                    format!("block `{}` has no ops", block.name.value),
                );
            }
            let repeat = self
                .opt_expr(&format!("blocks[{b}].repeat"), &block.repeat)
                .flatten();
            let held = self
                .opt_expr(&format!("blocks[{b}].held"), &block.held)
                .flatten();
            let first = ops.len();
            for (o, op) in block.ops.iter().enumerate() {
                let prefix = format!("blocks[{b}].ops[{o}].{}", op_kind(op));
                let index = first + o;
                let inputs = self.inputs(&prefix, op, index, &names, &tensors, &out_roles);
                let kind = self.kind(&prefix, op);
                if let (Some(inputs), Some(kind)) = (inputs, kind) {
                    let start = slots;
                    slots += inputs.len();
                    let mut op = Op {
                        name: op_name(op).value.clone(),
                        block: b,
                        kind,
                        inputs,
                        out_role: out_roles[index],
                        slots: start..slots,
                        operands: [false; 3],
                        deps: Vec::new(),
                        origin: self.at(format!("{prefix}.name"), op_name(op)),
                    };
                    op.deps = op_deps(&op);
                    for role in op.operand_roles().collect::<Vec<_>>() {
                        op.operands[role as usize] = true;
                    }
                    ops.push(op);
                } else {
                    // Keep indices aligned with `names`; the problem is already recorded.
                    ops.push(Op {
                        name: op_name(op).value.clone(),
                        block: b,
                        kind: OpKind::KvRead {
                            flops: None,
                            out: None,
                        },
                        inputs: Vec::new(),
                        out_role: out_roles[index],
                        slots: slots..slots,
                        operands: [false; 3],
                        deps: Vec::new(),
                        origin: Origin::default(),
                    });
                }
            }
            blocks.push(Block {
                name: block.name.value.clone(),
                repeat,
                held,
                ops: first..ops.len(),
            });
        }
        if file.blocks.is_empty() {
            self.problem(
                self.at("name", &file.name),
                "a workload needs at least one block with ops under `blocks:`",
            );
        }
        self.check_acyclic(&ops, &[]);

        let consumers = consumers(&ops);
        let mut fusion_plans = vec![FusionPlan {
            name: "none".into(),
            groups: Vec::new(),
            kernels: kernels(&ops, &[], &consumers),
        }];
        for (plan_name, groups) in &file.fusion {
            if let Some(groups) = self.fusion_plan(plan_name, groups, &names, &ops) {
                fusion_plans.push(FusionPlan {
                    name: plan_name.clone(),
                    kernels: kernels(&ops, &groups, &consumers),
                    groups,
                });
            }
        }
        let model_fusion = model
            .as_ref()
            .and_then(|(src, m)| m.default_fusion.as_ref().map(|f| (Some(src), f)));
        let default_fusion = match model_fusion.or(file.default_fusion.as_ref().map(|f| (None, f)))
        {
            None => 0,
            Some((src, name)) => match fusion_plans.iter().position(|p| p.name == name.value) {
                Some(i) => i,
                None => {
                    let plans: Vec<&str> = fusion_plans.iter().map(|p| p.name.as_str()).collect();
                    let message = format!(
                        "no fusion plan `{}`{}; plans: {}",
                        name.value,
                        did_you_mean(&name.value, plans.iter().copied()),
                        plans.join(", ")
                    );
                    let mut origin = self.at("default_fusion", name);
                    if let Some(src) = src {
                        origin = origin.in_file(src);
                    }
                    self.problem(origin, message);
                    0
                }
            },
        };
        let (source, name) = match &model {
            Some((src, m)) => (Arc::clone(src), &m.name),
            None => (Arc::clone(&self.source), &file.name),
        };
        if name.value.trim().is_empty() {
            let origin = Origin::of("name", name).in_file(&source);
            self.problem(origin, "must not be empty");
        }

        if !self.problems.is_empty() {
            return Err(Error::Invalid(Diagnostics(self.problems)));
        }
        let known = ScenarioParam::ALL.map(|p| params.iter().position(|q| q.name == p.name()));
        Ok(Workload {
            known,
            id: source.id.clone(),
            name: name.value.trim().to_owned(),
            file: source.name.clone(),
            text: Arc::from(source.text.as_str()),
            params,
            eval_order,
            exprs: self.exprs,
            expr_origins: self.expr_origins,
            default_dtypes,
            tokens_per_step,
            sequences,
            chips,
            stages,
            tensors,
            blocks,
            ops,
            slot_count: slots,
            fusion_plans,
            default_fusion,
        })
    }

    /// The params of `file`, with the values `model` gives where it gives one.
    fn params_of(
        &mut self,
        file: &WorkloadFile,
        model: Option<&(Arc<Source>, WorkloadFile)>,
    ) -> Vec<Param> {
        if let Some((src, m)) = model {
            for (name, value) in &m.params {
                if !file.params.contains_key(name) {
                    let message = format!(
                        "`{name}` is not a param of the template{}; its params: {}",
                        did_you_mean(name, self.params.iter().map(String::as_str)),
                        self.params.join(", ")
                    );
                    let origin = Origin::of(format!("params.{name}"), value).in_file(src);
                    self.problem(origin, message);
                }
            }
        }
        let mut params = Vec::new();
        for (name, value) in &file.params {
            let (value, origin) = match model.and_then(|(src, m)| Some((src, m.params.get(name)?)))
            {
                Some((src, v)) => (v, Origin::of(format!("params.{name}"), v).in_file(src)),
                None => (value, self.at(format!("params.{name}"), value)),
            };
            if !valid_name(name) || name.contains(['-', '.']) {
                self.problem(
                    origin.clone(),
                    format!("`{name}` is not a valid param name (letters, digits and `_`, starting with a letter or `_`)"),
                );
            }
            match self.compile(&value.value) {
                Ok(default) => params.push(Param {
                    name: name.clone(),
                    default,
                    origin,
                }),
                Err(message) => self.problem(origin, message),
            }
        }
        params
    }

    /// Every name an op may read (tensors, then ops; names are unique across both), and the
    /// role of each op's output.
    fn names(
        &mut self,
        tensors: &[Tensor],
        blocks: &[BlockFile],
    ) -> (HashMap<String, Ref>, Vec<Role>) {
        let mut names: HashMap<String, Ref> = HashMap::new();
        for (i, t) in tensors.iter().enumerate() {
            if names.insert(t.name.clone(), Ref::Tensor(i)).is_some() {
                let origin = t
                    .shape
                    .first()
                    .map(|f| f.origin.clone())
                    .unwrap_or_default();
                self.problem(origin, format!("tensor `{}` is declared twice", t.name));
            }
        }
        let mut out_roles = Vec::new();
        for (b, block) in blocks.iter().enumerate() {
            for (o, op) in block.ops.iter().enumerate() {
                let name = op_name(op);
                let field = format!("blocks[{b}].ops[{o}].{}", op_kind(op));
                if !valid_name(&name.value) {
                    self.problem(
                        self.at(format!("{field}.name"), name),
                        format!("`{}` is not a valid op name ({NAME_RULE})", name.value),
                    );
                }
                if names
                    .insert(name.value.clone(), Ref::Op(out_roles.len()))
                    .is_some()
                {
                    self.problem(
                        self.at(format!("{field}.name"), name),
                        format!(
                            "`{}` is already the name of a tensor or op; names must be unique",
                            name.value
                        ),
                    );
                }
                let role = match op {
                    OpFile::Elementwise(e) => match &e.out_role {
                        Some(r) => self.role(&format!("{field}.out_role"), r),
                        None => None,
                    },
                    _ => None,
                };
                out_roles.push(role.unwrap_or(Role::Activation));
            }
        }
        (names, out_roles)
    }

    fn inputs(
        &mut self,
        prefix: &str,
        op: &OpFile,
        index: usize,
        names: &HashMap<String, Ref>,
        tensors: &[Tensor],
        out_roles: &[Role],
    ) -> Option<Vec<Input>> {
        let no_reads = IndexMap::new();
        let (of, reads) = match op {
            OpFile::Gemm(g) | OpFile::Gemv(g) => (&g.of, &no_reads),
            OpFile::KvRead(r) => (&r.of, &r.reads),
            OpFile::Elementwise(e) => (&e.of, &e.reads),
            _ => match collective_of(op) {
                Some((_, c)) => (&c.of, &no_reads),
                None => return None,
            },
        };
        let origin = self.at(format!("{prefix}.of"), of);
        let list = of.value.list();
        if list.is_empty() {
            self.problem(origin, "an op needs at least one input");
            return None;
        }
        let mut inputs = Vec::new();
        let mut ok = true;
        for name in &list {
            let source = match names.get(*name) {
                Some(&Ref::Op(j)) if j == index => {
                    self.problem(origin.clone(), format!("op `{name}` reads its own output"));
                    ok = false;
                    continue;
                }
                Some(source) => *source,
                None => {
                    ok = false;
                    let message = format!(
                        "unknown tensor or op `{name}`{}",
                        did_you_mean(name, names.keys().map(String::as_str))
                    );
                    self.problem(origin.clone(), message);
                    continue;
                }
            };
            let role = match source {
                Ref::Tensor(t) => tensors[t].role,
                Ref::Op(j) => out_roles[j],
                Ref::OwnWeight(_) => Role::Weight,
            };
            inputs.push(Input {
                source,
                size: ReadSize::Whole,
                role,
            });
        }
        for (name, value) in reads {
            let field = format!("{prefix}.reads.{name}");
            match list.iter().position(|n| n == name) {
                Some(i) if ok => {
                    let size = self.expr(&field, value).map(ReadSize::Explicit);
                    ok &= size.is_some();
                    inputs[i].size = size.unwrap_or(ReadSize::Whole);
                }
                Some(_) => {}
                None => {
                    ok = false;
                    let message = format!(
                        "`{name}` is not one of this op's inputs ({})",
                        list.join(", ")
                    );
                    self.problem(self.at(field, value), message);
                }
            }
        }
        if !ok {
            return None;
        }
        match op {
            OpFile::Gemm(_) | OpFile::Gemv(_) => {
                if inputs.len() > 2 {
                    let message = format!(
                        "a {} reads one input (its weight is implied) or two, found {}",
                        op_kind(op),
                        inputs.len()
                    );
                    self.problem(origin, message);
                    return None;
                }
                inputs[0].size = ReadSize::GemmLeft;
                if inputs.len() == 1 {
                    inputs.push(Input {
                        source: Ref::OwnWeight(index),
                        size: ReadSize::GemmRight,
                        role: Role::Weight,
                    });
                }
                inputs[1].size = ReadSize::GemmRight;
            }
            OpFile::Elementwise(e) if e.elements.is_none() => {
                if let (Ref::Op(j), ReadSize::Whole) = (inputs[0].source, &inputs[0].size) {
                    if j > index {
                        let message = format!(
                            "the first input `{}` is an op defined later, so `elements` cannot default to its size; write `elements:`",
                            list[0]
                        );
                        self.problem(origin, message);
                        return None;
                    }
                }
            }
            _ => {}
        }
        Some(inputs)
    }

    fn kind(&mut self, prefix: &str, op: &OpFile) -> Option<OpKind> {
        Some(match op {
            OpFile::Gemm(g) | OpFile::Gemv(g) => {
                let gemv = matches!(op, OpFile::Gemv(_));
                let m = match (&g.m, gemv) {
                    (Some(m), _) => self.expr(&format!("{prefix}.m"), m),
                    (None, true) => self.expr_text("1", self.at(format!("{prefix}.m"), &g.name)),
                    (None, false) => {
                        self.problem(
                            self.at(format!("{prefix}.name"), &g.name),
                            "missing field `m` (rows of the left matrix)",
                        );
                        None
                    }
                };
                let n = self.expr(&format!("{prefix}.n"), &g.n);
                let k = self.expr(&format!("{prefix}.k"), &g.k);
                let batch = self.opt_expr(&format!("{prefix}.batch"), &g.batch);
                OpKind::Gemm {
                    m: m?,
                    n: n?,
                    k: k?,
                    batch: batch?,
                    gemv,
                }
            }
            OpFile::KvRead(r) => {
                let flops = self.opt_expr(&format!("{prefix}.flops"), &r.flops);
                let out = self.opt_expr(&format!("{prefix}.out"), &r.out);
                OpKind::KvRead {
                    flops: flops?,
                    out: out?,
                }
            }
            OpFile::Allreduce(_)
            | OpFile::Allgather(_)
            | OpFile::Reducescatter(_)
            | OpFile::Alltoall(_)
            | OpFile::Sendrecv(_) => {
                let (collective, c) = collective_of(op)?;
                let elements = self.expr(&format!("{prefix}.elements"), &c.elements);
                let group = self.expr(&format!("{prefix}.group"), &c.group);
                let algorithm = match &c.algorithm {
                    None => Some(None),
                    Some(a) => match (a.value.as_str(), collective) {
                        ("ring", _) => Some(Some(Algorithm::Ring)),
                        ("tree", Collective::AllReduce) => Some(Some(Algorithm::Tree)),
                        (other, _) => {
                            let origin = self.at(format!("{prefix}.algorithm"), a);
                            self.problem(
                                origin,
                                format!("unknown algorithm `{other}` for {}; expected ring (or tree for an allreduce)", collective.name()),
                            );
                            None
                        }
                    },
                };
                OpKind::Collective {
                    collective,
                    elements: elements?,
                    group: group?,
                    algorithm: algorithm?,
                }
            }
            OpFile::Elementwise(e) => {
                let elements = self.opt_expr(&format!("{prefix}.elements"), &e.elements);
                let per_element =
                    self.expr(&format!("{prefix}.flops_per_element"), &e.flops_per_element);
                let out = self.opt_expr(&format!("{prefix}.out"), &e.out);
                OpKind::Elementwise {
                    elements: elements?,
                    flops_per_element: per_element?,
                    out: out?,
                }
            }
        })
    }

    fn fusion_plan(
        &mut self,
        plan_name: &str,
        groups: &Spanned<Vec<Vec<String>>>,
        names: &HashMap<String, Ref>,
        ops: &[Op],
    ) -> Option<Vec<Vec<usize>>> {
        let origin = self.at(format!("fusion.{plan_name}"), groups);
        let before = self.problems.len();
        if !valid_name(plan_name) {
            self.problem(
                origin.clone(),
                format!("`{plan_name}` is not a valid plan name ({NAME_RULE})"),
            );
        }
        let mut plan = Vec::new();
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
                    None => {
                        let message = format!(
                            "fusion plan `{plan_name}` names unknown op `{op}`{}",
                            did_you_mean(op, ops.iter().map(|o| o.name.as_str()))
                        );
                        self.problem(origin.clone(), message);
                    }
                }
            }
            if group.is_empty() {
                self.problem(origin.clone(), "a fusion group needs at least one op");
            }
            let collective = |i: &usize| matches!(ops[*i].kind, OpKind::Collective { .. });
            if members.len() > 1 && members.iter().any(collective) {
                self.problem(
                    origin.clone(),
                    format!("a group of plan `{plan_name}` holds a collective; collectives run on the interconnect and are not fused"),
                );
            }
            if members
                .windows(2)
                .any(|w| ops[w[0]].block != ops[w[1]].block)
            {
                self.problem(
                    origin.clone(),
                    format!("a group of plan `{plan_name}` spans blocks; ops fused into one kernel must repeat together"),
                );
            }
            members.sort_unstable();
            members.dedup();
            plan.push(members);
        }
        if plan_name == "none" {
            if !plan.is_empty() {
                self.problem(origin, "plan `none` means no fusion and must be empty");
            }
            return None;
        }
        if self.problems.len() > before {
            return None;
        }
        self.check_acyclic(ops, &plan);
        Some(plan)
    }

    /// Orders params so each follows those its default reads; reports a cycle.
    fn param_order(&mut self, params: &[Param]) -> Vec<usize> {
        let deps: Vec<&[usize]> = params.iter().map(|p| p.default.params()).collect();
        match topological_order(&deps) {
            Ok(order) => order,
            Err(cycle) => {
                let names: Vec<&str> = cycle.iter().map(|&i| params[i].name.as_str()).collect();
                let p = &params[cycle[0]];
                self.problem(
                    p.origin.clone(),
                    format!(
                        "params depend on each other in a cycle: {}",
                        names.join(" -> ")
                    ),
                );
                Vec::new()
            }
        }
    }

    /// Reports a cycle among ops, with each group of `groups` taken as one node.
    fn check_acyclic(&mut self, ops: &[Op], groups: &[Vec<usize>]) {
        let mut node_of: Vec<usize> = (0..ops.len()).collect();
        for (g, members) in groups.iter().enumerate() {
            for &m in members {
                node_of[m] = ops.len() + g;
            }
        }
        // deps[n]: the nodes whose output node n reads.
        let mut deps = vec![Vec::new(); ops.len() + groups.len()];
        for (i, op) in ops.iter().enumerate() {
            for input in &op.inputs {
                if let Ref::Op(j) = input.source {
                    if node_of[j] != node_of[i] {
                        deps[node_of[i]].push(node_of[j]);
                    }
                }
            }
        }
        let deps: Vec<&[usize]> = deps.iter().map(Vec::as_slice).collect();
        if let Err(cycle) = topological_order(&deps) {
            let op = |n: usize| {
                if n < ops.len() {
                    n
                } else {
                    groups[n - ops.len()][0]
                }
            };
            let names: Vec<&str> = cycle.iter().map(|&n| ops[op(n)].name.as_str()).collect();
            let message = if groups.is_empty() {
                format!("the ops read each other in a cycle: {}", names.join(" -> "))
            } else {
                format!(
                    "a fusion group would read its own output through an op outside it ({}), so it cannot be one kernel",
                    names.join(" -> ")
                )
            };
            self.problem(ops[op(cycle[0])].origin.clone(), message);
        }
    }
}

/// Orders nodes so each follows its dependencies, or returns a cycle (nodes in order).
fn topological_order(deps: &[&[usize]]) -> Result<Vec<usize>, Vec<usize>> {
    let mut order = Vec::with_capacity(deps.len());
    let mut state = vec![0u8; deps.len()]; // 0 new, 1 on the path, 2 done
    for start in 0..deps.len() {
        if state[start] != 0 {
            continue;
        }
        let mut path = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            if let Some(&dep) = deps[node].get(*next) {
                *next += 1;
                match state[dep] {
                    0 => {
                        state[dep] = 1;
                        path.push((dep, 0));
                    }
                    1 => {
                        let from = path.iter().position(|(n, _)| *n == dep).unwrap_or(0);
                        return Err(path[from..].iter().map(|(n, _)| *n).collect());
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                order.push(node);
                path.pop();
            }
        }
    }
    Ok(order)
}

/// The expressions an op's numbers come from: its dimensions and the sizes it reads.
fn op_deps(op: &Op) -> Vec<usize> {
    let mut fields: Vec<&Field> = match &op.kind {
        OpKind::Gemm { m, n, k, batch, .. } => [Some(m), Some(n), Some(k), batch.as_ref()]
            .into_iter()
            .flatten()
            .collect(),
        OpKind::KvRead { flops, out } => flops.iter().chain(out).collect(),
        OpKind::Elementwise {
            elements,
            flops_per_element,
            out,
        } => elements
            .iter()
            .chain(std::iter::once(flops_per_element))
            .chain(out)
            .collect(),
        OpKind::Collective {
            elements, group, ..
        } => vec![elements, group],
    };
    fields.extend(op.inputs.iter().filter_map(|i| match &i.size {
        ReadSize::Explicit(f) => Some(f),
        _ => None,
    }));
    let mut deps: Vec<usize> = fields.into_iter().map(|f| f.id).collect();
    deps.sort_unstable();
    deps.dedup();
    deps
}

/// For each op, the ops that read its output.
fn consumers(ops: &[Op]) -> Vec<Vec<usize>> {
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
    consumers
}

/// Cuts the ops into kernels: each group one kernel, every other op alone.
fn kernels(ops: &[Op], groups: &[Vec<usize>], consumers: &[Vec<usize>]) -> Vec<Kernel> {
    let mut group_of = vec![None; ops.len()];
    for (g, members) in groups.iter().enumerate() {
        for &m in members {
            group_of[m] = Some(g);
        }
    }
    let mut emitted = vec![false; groups.len()];
    let mut kernels: Vec<Kernel> = Vec::new();
    for (op, group) in group_of.iter().enumerate() {
        let members = match *group {
            Some(g) if emitted[g] => continue,
            Some(g) => {
                emitted[g] = true;
                groups[g].clone()
            }
            None => vec![op],
        };
        let mut reads: Vec<(Ref, KernelRead)> = Vec::new();
        let mut writes = Vec::new();
        for &i in &members {
            for (input, slot) in ops[i].inputs.iter().zip(ops[i].slots.clone()) {
                if matches!(input.source, Ref::Op(j) if members.contains(&j)) {
                    continue; // made and used inside the kernel: never touches HBM
                }
                match reads.iter_mut().find(|(s, _)| *s == input.source) {
                    Some((_, read)) => read.slots.push(slot),
                    None => {
                        let previous = kernels.last().map(|k| k.members.as_slice());
                        let after_write = matches!(
                            (input.source, previous),
                            (Ref::Op(j), Some(p)) if p.contains(&j)
                        );
                        reads.push((
                            input.source,
                            KernelRead {
                                role: input.role,
                                after_write,
                                slots: vec![slot],
                            },
                        ))
                    }
                }
            }
            if consumers[i].is_empty() || consumers[i].iter().any(|c| !members.contains(c)) {
                writes.push(i);
            }
        }
        let name = members
            .iter()
            .map(|&i| ops[i].name.as_str())
            .collect::<Vec<_>>()
            .join("+");
        kernels.push(Kernel {
            name,
            kind: if members.len() > 1 {
                KernelKind::Fused
            } else {
                ops[members[0]].kind.kernel_kind()
            },
            block: ops[members[0]].block,
            reads: reads.into_iter().map(|(_, read)| read).collect(),
            writes,
            members,
        });
    }
    kernels
}

#[cfg(test)]
mod tests {
    use super::topological_order;

    #[test]
    fn orders_dependencies_first_and_finds_cycles() {
        let deps: [&[usize]; 3] = [&[1], &[2], &[]];
        assert_eq!(topological_order(&deps), Ok(vec![2, 1, 0]));
        let cyclic: [&[usize]; 3] = [&[1], &[2], &[0]];
        assert_eq!(topological_order(&cyclic), Err(vec![0, 1, 2]));
    }
}
