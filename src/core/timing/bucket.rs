//! Prompt buckets (expected mode, an engine that compiles its step for fixed prompt lengths:
//! Neuron, JetStream): a prompt is padded up to the next bucket and the step runs at that
//! length, while only the prompt's own tokens count as work done.

use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::core::chip::Chip;
use crate::core::cost::StepCost;
use crate::core::engine::Engine;
use crate::core::scenario::Scenario;
use crate::core::workload::{Evaluation, Workload};

use super::StepSummary;

/// A prompt step priced at its bucket: the prompt's tokens per sequence, and the bucket's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Padding {
    real: f64,
    bucket: f64,
}

/// Where `engine` pads prompts and `ev` (just evaluated at `scenario`) is a prompt step (the
/// workload's `tokens` above 1, no decode tokens beside a mixed step's `prefill_tokens`) whose
/// length lies below a bucket: evaluates the step again at the smallest bucket that holds it
/// and returns the padding. A prompt longer than every bucket runs as it is (an engine would
/// refuse it or chunk it; neither is priced here).
pub(super) fn pad(
    workload: &Workload,
    ev: &mut Evaluation,
    scenario: &Scenario,
    engine: Option<&Engine>,
) -> Result<Option<Padding>, Error> {
    let Some(buckets) = engine
        .map(|e| &e.terms().prompt_buckets)
        .filter(|b| !b.is_empty())
    else {
        return Ok(None);
    };
    let Some(index) = workload.param(ScenarioParam::Tokens) else {
        return Ok(None);
    };
    let mixed = (workload.param(ScenarioParam::PrefillTokens)).is_some_and(|i| ev.params[i] > 0.0);
    let real = ev.params[index];
    if real <= 1.0 || mixed {
        return Ok(None);
    }
    let Some(bucket) = buckets.iter().map(|&b| b as f64).find(|&b| b >= real) else {
        return Ok(None);
    };
    if bucket == real {
        return Ok(None);
    }
    let mut overrides = scenario.overrides().to_vec();
    overrides.retain(|&(i, _)| i != index);
    overrides.push((index, bucket));
    workload.evaluate(&overrides, ev)?;
    Ok(Some(Padding { real, bucket }))
}

impl Padding {
    /// Counts the prompt's own tokens in a summary priced at the bucket: the step's time stays
    /// the bucket's, its tokens (and the rates and cost per token made of them) the prompt's.
    pub(super) fn count_real_tokens(self, chip: &Chip, summary: &mut StepSummary) {
        let share = self.real / self.bucket;
        let scale = |x: &mut Option<f64>, by: f64| {
            if let Some(v) = x {
                *v *= by;
            }
        };
        scale(&mut summary.tokens_per_step, share);
        scale(&mut summary.tokens_per_s, share);
        scale(&mut summary.tokens_per_s_per_chip, share);
        scale(&mut summary.ms_per_token, 1.0 / share);
        summary.cost = StepCost::of(chip, summary.chips, summary.tokens_per_s);
    }
}
