//! The built-in workloads as a list: each model's size (parameters in all and per decoded
//! token, layers, hidden width) and the types its checkpoint ships in; the kernel
//! microbenchmarks apart.

use crate::base::builtin;
use crate::base::error::Error;
use crate::base::source::{FileKind, Source};
use crate::base::types::Types;
use crate::core::workload::Workload;

/// A model (a step of a network of layers) or a kernel microbenchmark (one op or a few).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkloadKind {
    Model,
    Kernel,
}

impl WorkloadKind {
    /// The name in the `kind` column.
    pub(crate) fn name(self) -> &'static str {
        match self {
            WorkloadKind::Model => "model",
            WorkloadKind::Kernel => "kernel",
        }
    }
}

/// One workload of the list.
#[derive(Debug, Clone)]
pub(crate) struct WorkloadSummary {
    /// The name that selects it (the file stem).
    pub id: String,
    /// The model's own name.
    pub name: String,
    /// A model is a workload with a `layers` param; any other is a kernel.
    pub kind: WorkloadKind,
    /// Weight elements in all and read per decoded token (see
    /// [`Workload::parameter_counts`]).
    pub total_params: f64,
    pub active_params: f64,
    /// The `layers` and `hidden` params' defaults, where it has them.
    pub layers: Option<f64>,
    pub hidden: Option<f64>,
    /// The checkpoint's types (the file's `dtypes`, bf16 where it names none).
    pub types: Types,
}

/// Every built-in workload, models first, each group in name order.
pub(crate) fn builtin_workloads() -> Result<Vec<WorkloadSummary>, Error> {
    let mut list = builtin::WORKLOADS
        .iter()
        .map(|(id, _)| summary(&Workload::load(&Source::resolve(id, FileKind::Workload)?)?))
        .collect::<Result<Vec<_>, Error>>()?;
    list.sort_by_key(|w| w.kind == WorkloadKind::Kernel);
    Ok(list)
}

/// A workload's summary at its defaults.
pub(crate) fn summary(workload: &Workload) -> Result<WorkloadSummary, Error> {
    let counts = workload.parameter_counts()?;
    let mut ev = workload.new_evaluation();
    workload.evaluate(&[], &mut ev)?;
    let default = |name: &str| {
        let index = workload.param_names().position(|n| n == name)?;
        Some(ev.params[index])
    };
    let layers = default("layers");
    Ok(WorkloadSummary {
        id: workload.id().to_owned(),
        name: workload.name().to_owned(),
        kind: match layers {
            Some(_) => WorkloadKind::Model,
            None => WorkloadKind::Kernel,
        },
        total_params: counts.total,
        active_params: counts.active,
        layers,
        hidden: default("hidden"),
        types: workload.default_dtypes,
    })
}

/// What a person choosing a scenario of `workload` needs to know: its params with their
/// defaults (and whether `--set` may change them), and its fusion plans. (The web page's.)
#[cfg_attr(not(feature = "ui"), allow(dead_code))]
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct WorkloadFacts {
    pub params: Vec<ParamFact>,
    /// `none` first.
    pub fusion_plans: Vec<String>,
    pub default_fusion: String,
}

/// A param, its value when nothing is set, and whether it may be set (a derived one may not).
#[cfg_attr(not(feature = "ui"), allow(dead_code))]
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct ParamFact {
    pub name: String,
    pub default: f64,
    pub settable: bool,
}

/// The facts of `workload` at its defaults.
#[cfg_attr(not(feature = "ui"), allow(dead_code))]
pub(crate) fn facts(workload: &Workload) -> Result<WorkloadFacts, Error> {
    let mut ev = workload.new_evaluation();
    workload.evaluate(&[], &mut ev)?;
    let params = (workload.param_names().enumerate())
        .map(|(i, name)| ParamFact {
            name: name.to_owned(),
            default: ev.params[i],
            settable: workload.settable_param_index(name).is_ok(),
        })
        .collect();
    let plans: Vec<String> = workload.fusion_plan_names().map(str::to_owned).collect();
    Ok(WorkloadFacts {
        default_fusion: plans
            .get(workload.default_fusion)
            .cloned()
            .unwrap_or_default(),
        fusion_plans: plans,
        params,
    })
}
