//! The blocks and their ops: each op's kind and dimensions checked and compiled, its inputs
//! resolved (`inputs`), its read slots numbered, and the expressions it depends on listed; and
//! the check that the ops do not read each other in a cycle.

use std::collections::HashSet;

use serde_saphyr::Spanned;

use super::names::Scope;
use super::Builder;
use crate::base::diagnostic::Origin;
use crate::core::workload::file::{
    BlockFile, CausalFile, CollectiveFile, GemmFile, OpFile, ScanFile,
};
use crate::core::workload::graph::op_cycle;
use crate::core::workload::{
    Algorithm, Block, Causal, Collective, Field, Op, OpKind, ReadSize, ScanDims, ScanRule, Stage,
};

/// The blocks of the step, their ops (every op of the file, one index each), and how many
/// read slots the ops use in all.
pub(super) struct Graph {
    pub(super) blocks: Vec<Block>,
    pub(super) ops: Vec<Op>,
    pub(super) slot_count: usize,
}

impl Builder {
    /// Builds every block and its ops, in file order.
    pub(super) fn graph(&mut self, files: &[BlockFile], scope: &Scope) -> Graph {
        let mut graph = Graph {
            blocks: Vec::new(),
            ops: Vec::new(),
            slot_count: 0,
        };
        let mut block_names = HashSet::new();
        for (b, block) in files.iter().enumerate() {
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
            let stage = self.stage(b, &block.stage);
            let causal = self.causal(b, block.causal.as_ref());
            let first = graph.ops.len();
            for (o, op) in block.ops.iter().enumerate() {
                self.push_op(&mut graph, (b, o), op, scope);
            }
            // The mask's share is part of each op's numbers: it changes with these fields.
            if let Some(c) = &causal {
                let mask = [&c.queries, &c.context].into_iter().chain(&c.window);
                for op in &mut graph.ops[first..] {
                    op.mask_deps = (mask.clone().map(|f| f.id))
                        .filter(|k| !op.deps.contains(k))
                        .collect();
                    op.mask_deps.sort_unstable();
                    op.mask_deps.dedup();
                }
            }
            graph.blocks.push(Block {
                name: block.name.value.clone(),
                repeat,
                held,
                stage,
                causal,
                ops: first..graph.ops.len(),
            });
        }
        graph
    }

    /// Builds op `o` of block `b` onto `graph`; an op with a problem keeps its index (aligned
    /// with the scope's names) as a placeholder, the problem already recorded.
    fn push_op(&mut self, graph: &mut Graph, (b, o): (usize, usize), file: &OpFile, scope: &Scope) {
        let prefix = format!("blocks[{b}].ops[{o}].{}", file.tag());
        let index = graph.ops.len();
        let inputs = self.inputs(&prefix, file, index, scope);
        let kind = self.kind(&prefix, file);
        let start = graph.slot_count;
        let (Some(inputs), Some(kind)) = (inputs, kind) else {
            graph.ops.push(Op {
                name: file.name().value.clone(),
                block: b,
                kind: OpKind::KvRead {
                    flops: None,
                    out: None,
                },
                inputs: Vec::new(),
                out_role: scope.out_roles[index],
                out_slot: scope.out_roles[index].into(),
                slots: start..start,
                operands: [false; 8],
                deps: Vec::new(),
                mask_deps: Vec::new(),
                origin: Origin::default(),
            });
            return;
        };
        graph.slot_count += inputs.len();
        let mut op = Op {
            name: file.name().value.clone(),
            block: b,
            kind,
            inputs,
            out_role: scope.out_roles[index],
            out_slot: scope.out_roles[index].into(),
            slots: start..graph.slot_count,
            operands: [false; 8],
            deps: Vec::new(),
            mask_deps: Vec::new(),
            origin: self.at(format!("{prefix}.name"), file.name()),
        };
        op.deps = op_deps(&op);
        graph.ops.push(op);
    }

    /// The kind of `op` (at `prefix`) with its dimensions compiled; `None` after recording a
    /// problem.
    fn kind(&mut self, prefix: &str, op: &OpFile) -> Option<OpKind> {
        match op {
            OpFile::Gemm(g) => self.gemm(prefix, g, false),
            OpFile::Gemv(g) => self.gemm(prefix, g, true),
            OpFile::KvRead(r) => {
                let flops = self.opt_expr(&format!("{prefix}.flops"), &r.flops);
                let out = self.opt_expr(&format!("{prefix}.out"), &r.out);
                Some(OpKind::KvRead {
                    flops: flops?,
                    out: out?,
                })
            }
            OpFile::Elementwise(e) => {
                let elements = self.opt_expr(&format!("{prefix}.elements"), &e.elements);
                let per_element =
                    self.expr(&format!("{prefix}.flops_per_element"), &e.flops_per_element);
                let out = self.opt_expr(&format!("{prefix}.out"), &e.out);
                Some(OpKind::Elementwise {
                    elements: elements?,
                    flops_per_element: per_element?,
                    out: out?,
                })
            }
            OpFile::Scan(s) => self.scan(prefix, s),
            _ => {
                let (collective, c) = op.collective()?;
                self.collective(prefix, collective, c)
            }
        }
    }

    /// A state-space scan: each of its sizes compiled.
    fn scan(&mut self, prefix: &str, s: &ScanFile) -> Option<OpKind> {
        let mut field =
            |name: &str, value: &Spanned<String>| self.expr(&format!("{prefix}.{name}"), value);
        let sequences = field("sequences", &s.sequences);
        let tokens = field("tokens", &s.tokens);
        let heads = field("heads", &s.heads);
        let head_dim = field("head_dim", &s.head_dim);
        let state = field("state", &s.state);
        let groups = field("groups", &s.groups);
        let chunk = field("chunk", &s.chunk);
        let rule = match &s.rule {
            None => Some(ScanRule::default()),
            Some(text) => match ScanRule::parse(&text.value) {
                Ok(rule) => Some(rule),
                Err(e) => {
                    self.problem(self.at(format!("{prefix}.rule"), text), e);
                    None
                }
            },
        };
        Some(OpKind::Scan(Box::new(ScanDims {
            sequences: sequences?,
            tokens: tokens?,
            heads: heads?,
            head_dim: head_dim?,
            state: state?,
            groups: groups?,
            chunk: chunk?,
            rule: rule?,
        })))
    }

    /// A GEMM, or a GEMV (whose `m` is 1 unless it says otherwise).
    fn gemm(&mut self, prefix: &str, g: &GemmFile, gemv: bool) -> Option<OpKind> {
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
        Some(OpKind::Gemm {
            m: m?,
            n: n?,
            k: k?,
            batch: batch?,
            gemv,
        })
    }

    /// Block `b`'s causal mask, if it has one; `None` (recorded) for a field with a problem.
    fn causal(&mut self, b: usize, file: Option<&CausalFile>) -> Option<Causal> {
        let file = file?;
        let prefix = format!("blocks[{b}].causal");
        let queries = self.expr(&format!("{prefix}.queries"), &file.queries);
        let context = self.expr(&format!("{prefix}.context"), &file.context);
        let window = self.opt_expr(&format!("{prefix}.window"), &file.window);
        Some(Causal {
            queries: queries?,
            context: context?,
            window: window?,
        })
    }

    /// The stage block `b` names, if any; `None` (recorded) for a name that is none.
    fn stage(&mut self, b: usize, stage: &Option<Spanned<String>>) -> Option<Stage> {
        let s = stage.as_ref()?;
        match s.value.as_str() {
            "first" => Some(Stage::First),
            "last" => Some(Stage::Last),
            other => {
                let origin = self.at(format!("blocks[{b}].stage"), s);
                self.problem(
                    origin,
                    format!("unknown stage `{other}`; expected first or last"),
                );
                None
            }
        }
    }

    /// A collective of `elements` over `group` chips, by the algorithm it names if any.
    fn collective(
        &mut self,
        prefix: &str,
        collective: Collective,
        c: &CollectiveFile,
    ) -> Option<OpKind> {
        let elements = self.expr(&format!("{prefix}.elements"), &c.elements);
        let group = self.expr(&format!("{prefix}.group"), &c.group);
        let span = self.opt_expr(&format!("{prefix}.span"), &c.span);
        let algorithm = self.algorithm(prefix, collective, &c.algorithm);
        Some(OpKind::Collective {
            collective,
            elements: elements?,
            group: group?,
            span: span?,
            algorithm: algorithm?,
        })
    }

    /// The algorithm a collective names: `Some(None)` when it names none (the fastest is
    /// chosen when pricing), `None` after recording a problem.
    fn algorithm(
        &mut self,
        prefix: &str,
        collective: Collective,
        algorithm: &Option<Spanned<String>>,
    ) -> Option<Option<Algorithm>> {
        let a = match algorithm {
            None => return Some(None),
            Some(a) => a,
        };
        match (a.value.as_str(), collective) {
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
        }
    }

    /// Reports a cycle among ops, with each group of `groups` taken as one node.
    pub(super) fn check_acyclic(&mut self, ops: &[Op], groups: &[Vec<usize>]) {
        let Some(cycle) = op_cycle(ops, groups) else {
            return;
        };
        let names: Vec<&str> = cycle.iter().map(|&i| ops[i].name.as_str()).collect();
        let message = if groups.is_empty() {
            format!("the ops read each other in a cycle: {}", names.join(" -> "))
        } else {
            format!(
                "a fusion group would read its own output through an op outside it ({}), so it cannot be one kernel",
                names.join(" -> ")
            )
        };
        self.problem(ops[cycle[0]].origin.clone(), message);
    }
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
        OpKind::Scan(d) => vec![
            &d.sequences,
            &d.tokens,
            &d.heads,
            &d.head_dim,
            &d.state,
            &d.groups,
            &d.chunk,
        ],
        OpKind::Collective {
            elements,
            group,
            span,
            ..
        } => [elements, group].into_iter().chain(span).collect(),
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
