//! Validation: a parsed workload file becomes a [`Workload`], or every problem found is
//! reported with its line and field. This module resolves a template, holds the `Builder`
//! with its primitives (expressions compiled once per distinct text, problems recorded in
//! file order) and drives the passes: `params`, `names`, `ops` (with `inputs`) and `fusion`.

mod fusion;
mod groups;
mod inputs;
mod names;
mod ops;
mod params;
mod values;

use std::collections::HashMap;
use std::sync::Arc;

use serde_saphyr::Spanned;

use super::file::WorkloadFile;
use super::{Field, Workload};
use crate::base::diagnostic::{did_you_mean, Diagnostic, Diagnostics, Origin};
use crate::base::dtype::Role;
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::source::Source;
use crate::base::types::WeightGroup;
use crate::core::expr::Expr;

/// Where a workload's `template:` is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Templates {
    /// A path relative to the workload's file, an existing file, else a built-in (the
    /// command line's rule, [`Source::resolve_template`]).
    Files,
    /// The built-in templates only: for text that no file on disk may stand in for.
    BuiltIn,
}

pub(super) fn build(source: &Source, templates: Templates) -> Result<Workload, Error> {
    let file = super::file::read(source)?;
    let vision = vision(source, &file, templates)?;
    let mut workload = build_graph(source, file, templates)?;
    workload.vision = vision.map(Arc::new);
    Ok(workload)
}

/// The vision encoder a model file links (`vision:`), found as a template is (a path relative
/// to the file, else a built-in workload); one that is neither is an error naming it. It is
/// loaded only when images are priced.
fn vision(
    source: &Source,
    file: &WorkloadFile,
    templates: Templates,
) -> Result<Option<Source>, Error> {
    let Some(name) = &file.vision else {
        return Ok(None);
    };
    let kind = crate::base::source::FileKind::Workload;
    let found = match (templates, Source::template_path(&name.value, source)) {
        (Templates::Files, Some(path)) => Source::read(&path),
        (Templates::Files, None) => Source::resolve(&name.value, kind),
        (Templates::BuiltIn, _) => Source::builtin(&name.value, kind),
    };
    found.map(Some).map_err(|e| {
        let reason = std::error::Error::source(&e)
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        let origin = Origin::of("vision", name).in_file(&Arc::new(source.clone()));
        let message = format!("cannot use this vision encoder: {e}{reason}");
        Error::Invalid(Diagnostics(vec![source.problem(&origin, message)]))
    })
}

/// The workload's graph: its own, or its template's with its own param values.
fn build_graph(
    source: &Source,
    file: WorkloadFile,
    templates: Templates,
) -> Result<Workload, Error> {
    let own = Arc::new(source.clone());
    let Some(template_name) = &file.template else {
        return Builder::new(Arc::clone(&own), &file).build(file, None);
    };
    let at = |field: &str, v: &Spanned<String>| Origin::of(field, v).in_file(&own);
    let invalid = |origin: Origin, message: String| {
        Error::Invalid(Diagnostics(vec![source.problem(&origin, message)]))
    };
    let name = &template_name.value;
    let template = match templates {
        Templates::Files => Source::resolve_template(name, source),
        Templates::BuiltIn => Source::builtin(name, crate::base::source::FileKind::Template),
    };
    let template = template.map_err(|e| {
        let reason = std::error::Error::source(&e)
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        invalid(
            at("template", template_name),
            format!("cannot use this template: {e}{reason}"),
        )
    })?;
    let graph = super::file::read(&template)?;
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
        ("groups", !file.groups.is_empty()),
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

/// The workload that names a template: its file, and what it says over the template's.
type Model = (Arc<Source>, WorkloadFile);

/// Problems listed in full; past these a file's problems are only counted. Each listed problem
/// quotes its line and may look through every name for a suggestion, so listing them all would
/// take time quadratic in the size of a file with many errors.
const LISTED_PROBLEMS: usize = 100;

/// What the passes have built so far, and every problem they found.
struct Builder {
    /// The file the graph comes from (the template, for a workload that names one).
    source: Arc<Source>,
    /// The first [`LISTED_PROBLEMS`] problems, in the order found.
    problems: Vec<Diagnostic>,
    /// Problems found past those, counted only.
    unlisted: usize,
    /// Param names, in file order.
    params: Vec<String>,
    /// Param name -> index into `params`.
    param_index: HashMap<String, usize>,
    exprs: Vec<Expr>,
    expr_origins: Vec<Origin>,
    /// Expression text without spaces -> index into `exprs`.
    interned: HashMap<String, usize>,
    /// Weight tensor or GEMM name -> the weight group it is in (`groups:`).
    groups: HashMap<String, WeightGroup>,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

const NAME_RULE: &str = "letters, digits, `_`, `-` and `.`, starting with a letter or `_`";

impl Builder {
    fn new(source: Arc<Source>, file: &WorkloadFile) -> Builder {
        Builder {
            source,
            problems: Vec::new(),
            unlisted: 0,
            params: file.params.keys().cloned().collect(),
            param_index: file
                .params
                .keys()
                .enumerate()
                .map(|(i, name)| (name.clone(), i))
                .collect(),
            exprs: Vec::new(),
            expr_origins: Vec::new(),
            interned: HashMap::new(),
            groups: HashMap::new(),
        }
    }

    /// Where `value` sits in the graph's file.
    fn at<T>(&self, field: impl Into<String>, value: &Spanned<T>) -> Origin {
        Origin::of(field, value).in_file(&self.source)
    }

    fn problem(&mut self, origin: Origin, message: impl Into<String>) {
        if self.listing() {
            self.problems.push(self.source.problem(&origin, message));
        } else {
            self.unlisted += 1;
        }
    }

    /// Whether the next problem is listed in full (so worth a costly message).
    fn listing(&self) -> bool {
        self.problems.len() < LISTED_PROBLEMS
    }

    /// Problems found so far, listed or not.
    fn problem_count(&self) -> usize {
        self.problems.len() + self.unlisted
    }

    /// ` (did you mean `x`?)` for a problem that will be listed; nothing past the listed ones,
    /// which are never shown.
    fn did_you_mean<'a>(
        &self,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
    ) -> String {
        if !self.listing() {
            return String::new();
        }
        did_you_mean(name, candidates)
    }

    /// The problems found, the count of those not listed last; `None` when there are none.
    fn diagnostics(&mut self) -> Option<Diagnostics> {
        if self.problems.is_empty() {
            return None;
        }
        let mut problems = std::mem::take(&mut self.problems);
        if self.unlisted > 0 {
            problems.push(Diagnostic::at(
                &self.source.name,
                None,
                &Origin::default(),
                format!(
                    "{} more problems not listed (the first {LISTED_PROBLEMS} are above)",
                    self.unlisted
                ),
            ));
        }
        Some(Diagnostics(problems))
    }

    fn compile(&self, text: &str) -> Result<Expr, String> {
        let resolve = |name: &str| -> Result<usize, String> {
            self.param_index.get(name).copied().ok_or_else(|| {
                format!(
                    "undefined param `{name}`{}; params are declared under `params:`",
                    self.did_you_mean(name, self.params.iter().map(String::as_str))
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

    /// Builds the graph of `file`; `model` is the workload that uses `file` as its template,
    /// whose name, param values, data types and default plan take precedence.
    fn build(mut self, file: WorkloadFile, model: Option<Model>) -> Result<Workload, Error> {
        let model = model.as_ref();
        let params = self.params_of(&file, model);
        let eval_order = if params.len() == self.params.len() {
            self.param_order(&params)
        } else {
            Vec::new()
        };
        let default_dtypes = self.dtypes(&file, model);
        let tokens_per_step = self
            .opt_expr("tokens_per_step", &file.tokens_per_step)
            .flatten();
        let sequences = self.opt_expr("sequences", &file.sequences).flatten();
        let chips = self.opt_expr("chips", &file.chips).flatten();
        let stages = self.opt_expr("stages", &file.stages).flatten();
        let wholes = (file.whole.iter().enumerate())
            .filter_map(|(i, w)| {
                Some((self.expr(&format!("whole[{i}].of"), &w.of)?, w.why.clone()))
            })
            .collect();

        let max_positions = self.max_positions(&file, model);
        self.groups = self.weight_groups(&file);
        let tensors = self.declared_tensors(&file);
        let scope = self.scope(&tensors, &file.blocks);
        let ops::Graph {
            blocks,
            mut ops,
            slot_count,
        } = self.graph(&file.blocks, &scope);
        values::assign(&tensors, &mut ops);
        if file.blocks.is_empty() {
            self.problem(
                self.at("name", &file.name),
                "a workload needs at least one block with ops under `blocks:`",
            );
        }
        self.check_groups(&file, &scope.names, &tensors, &ops);
        self.check_acyclic(&ops, &[]);
        let fusion_plans = self.fusion_plans(&file.fusion, &scope.names, &ops);
        let default_fusion = self.default_fusion(&fusion_plans, &file, model);
        let (source, name) = self.identity(&file, model);

        if let Some(problems) = self.diagnostics() {
            return Err(Error::Invalid(problems));
        }
        let known = ScenarioParam::ALL.map(|p| params.iter().position(|q| q.name == p.name()));
        let derived_order = (eval_order.iter().copied())
            .filter(|&i| !params[i].default.params().is_empty())
            .collect();
        let mut workload = Workload {
            known,
            id: source.id.clone(),
            name,
            file: source.name.clone(),
            text: Arc::from(source.text.as_str()),
            params,
            eval_order,
            derived_order,
            exprs: self.exprs,
            expr_origins: self.expr_origins,
            default_dtypes,
            tokens_per_step,
            sequences,
            chips,
            stages,
            wholes,
            max_positions,
            tensors,
            blocks,
            ops,
            slot_count,
            fusion_plans,
            default_fusion,
            follows_batch: Vec::new(),
            vision: None,
        };
        workload.follows_batch = workload.tensors_following_batch();
        Ok(workload)
    }

    /// The model's position limit: the model file's `max_positions`, else its template's; a
    /// whole number from 1.
    fn max_positions(&mut self, file: &WorkloadFile, model: Option<&Model>) -> Option<u64> {
        let (source, value) =
            match model.and_then(|(src, m)| Some((src, m.max_positions.as_ref()?))) {
                Some((src, v)) => (Arc::clone(src), v),
                None => (Arc::clone(&self.source), file.max_positions.as_ref()?),
            };
        let v = value.value;
        if v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v <= 1e15 {
            return Some(v as u64);
        }
        let origin = Origin::of("max_positions", value).in_file(&source);
        self.problem(
            origin,
            format!("is {v}; expected a whole number of positions from 1 (the model's max_position_embeddings)"),
        );
        None
    }

    /// The file the workload is named after (the model, for one with a template), and its
    /// name, which must not be empty.
    fn identity(&mut self, file: &WorkloadFile, model: Option<&Model>) -> (Arc<Source>, String) {
        let (source, name) = match model {
            Some((src, m)) => (Arc::clone(src), &m.name),
            None => (Arc::clone(&self.source), &file.name),
        };
        if name.value.trim().is_empty() {
            let origin = Origin::of("name", name).in_file(&source);
            self.problem(origin, "must not be empty");
        }
        (source, name.value.trim().to_owned())
    }
}
