//! Levers: the one-step changes a planner can make to a scenario (twice or half the batch, a
//! narrower data type for one role, another fusion plan), each priced against the scenario so
//! a report can say which one moves the step.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::base::dtype::Role;
use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::param::ScenarioParam;
use crate::base::types::TypeKey;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::timing::{price, StepReport};
use crate::core::workload::Workload;

/// One change to a scenario and what it does to the step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lever {
    /// What changes, e.g. `batch 32 -> 64`, `weight bf16 -> fp8`, `fusion none -> flash`.
    pub change: String,
    /// Throughput with the change over throughput without: tokens/s where the workload counts
    /// tokens, else the inverse ratio of step times. Above 1 is faster.
    pub throughput_ratio: f64,
    /// Time per output token of one sequence with the change over without, where the workload
    /// counts sequences. Above 1 is slower for each user.
    pub ms_per_token_ratio: Option<f64>,
    /// $ per million tokens with the change over without, where both are priced.
    pub usd_ratio: Option<f64>,
    /// Whether the changed scenario still fits the chip's memory.
    pub fits: bool,
}

/// Past these a lever is worth a line of its own under a run: 1.3x the tokens per second, or
/// under 0.77x the cost per token (the inverse, near enough).
const WORTH_THROUGHPUT: f64 = 1.3;
const WORTH_COST: f64 = 0.77;

/// The lever to try next: the fastest of those that fit and give more than 1.3x the tokens
/// per second or cost under 0.77x per token; `None` when none does.
pub fn next_step(levers: &[Lever]) -> Option<&Lever> {
    levers.iter().find(|l| {
        l.fits
            && (l.throughput_ratio > WORTH_THROUGHPUT
                || l.usd_ratio.is_some_and(|r| r < WORTH_COST))
    })
}

/// Data types tried for a role narrower than its current one, widest first.
const NARROWER: [Format; 2] = [Format::Fp8, Format::Fp4];

/// Every lever that applies to `scenario` on `chip` (a data type the chip cannot compute in,
/// or a batch of zero, is left out), fastest first. `base` is the scenario's own report.
pub fn levers(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    base: &StepReport,
) -> Result<Vec<Lever>, Error> {
    levers_until(workload, chip, scenario, base, &AtomicBool::new(false))
}

/// [`levers`], stopped with [`Error::Cancelled`] once `cancel` is set: it is read before each
/// lever is priced (a workload with many fusion plans has a lever for each).
pub(crate) fn levers_until(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    base: &StepReport,
    cancel: &AtomicBool,
) -> Result<Vec<Lever>, Error> {
    let mut candidates: Vec<(String, Scenario)> = Vec::new();
    if let Some(index) = workload.param(ScenarioParam::Batch) {
        let batch = base.params[index].1;
        for factor in [2.0, 0.5] {
            let value = (batch * factor).round();
            if value >= 1.0 && value != batch {
                let mut s = scenario.clone();
                s.set_param(index, value)?;
                candidates.push((format!("batch {batch} -> {value}"), s));
            }
        }
    }
    for role in Role::ALL {
        let current = scenario.dtypes().role(role);
        if let Some(narrower) = NARROWER
            .into_iter()
            .find(|f| f.bytes() < current.bytes() && chip.matrix_peak(f.element()).is_ok())
        {
            let mut s = scenario.clone();
            s.set_type(TypeKey::Role(role), narrower);
            candidates.push((format!("{role} {current} -> {narrower}"), s));
        }
    }
    for (index, plan) in workload.fusion_plans.iter().enumerate() {
        if index != scenario.fusion() {
            let mut s = scenario.clone();
            s.set_fusion_index(index)?;
            candidates.push((format!("fusion {} -> {}", base.fusion, plan.name), s));
        }
    }
    let mut levers = Vec::new();
    for (change, s) in candidates {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        // A type the chip lacks for one of the ops is not a lever on this chip; any other
        // failure is a real one.
        let report = match price(workload, chip, &s) {
            Ok(report) => report,
            Err(e) if e.is_unsupported() => continue,
            Err(e) => return Err(e),
        };
        let (a, b) = (&base.summary, &report.summary);
        let throughput_ratio = match (a.tokens_per_s, b.tokens_per_s) {
            (Some(before), Some(after)) if before > 0.0 => after / before,
            _ => a.step_time_s / b.step_time_s,
        };
        let ms_per_token_ratio = a.ms_per_token.zip(b.ms_per_token).map(|(x, y)| y / x);
        levers.push(Lever {
            change,
            throughput_ratio,
            ms_per_token_ratio,
            usd_ratio: (a.cost.usd_per_million_tokens)
                .zip(b.cost.usd_per_million_tokens)
                .map(|(x, y)| y / x),
            fits: b.fits,
        });
    }
    levers.sort_by(|x, y| y.throughput_ratio.total_cmp(&x.throughput_ratio));
    Ok(levers)
}
