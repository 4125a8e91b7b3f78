//! The checks of a step's serving params that a bad value would turn into a silent wrong
//! number: a mixed step's prompt tokens and sequences, the engine's host-work share, and the
//! positions a step reaches against the model's `max_positions`.

use super::Evaluation;
use crate::base::error::{Error, PastPositions};
use crate::base::param::{Launch, ScenarioParam};
use crate::core::workload::Workload;

impl Workload {
    /// A mixed step's prompt tokens and their cached positions are not negative, and prompt
    /// tokens belong to sequences of at least one token each (`prefill_seqs` above 0 and at
    /// most `prefill_tokens`), where the workload has those params; `engine_host` is a share,
    /// from 0 to 1.
    pub(super) fn check_step_params(&self, ev: &Evaluation) -> Result<(), Error> {
        let value = |p: ScenarioParam| self.param(p).map(|i| ev.params[i]);
        if let Some(v) = value(ScenarioParam::EngineHost).filter(|v| !(0.0..=1.0).contains(v)) {
            return Err(Error::value(format!(
                "param `engine_host` is {v}; it is the share of a serving engine's host work \
                 the chip waits for, from 0 (a bare compiled loop) to 1 (an engine schedules \
                 each step)"
            )));
        }
        if let Some(v) =
            value(ScenarioParam::LaunchMode).filter(|v| Launch::from_code(*v).is_none())
        {
            return Err(Error::value(format!(
                "param `launch_mode` is {v}; it says how a benchmark launched the kernel it \
                 timed: 0 (a profiler's time of the kernel alone), 1 (back to back in a CUDA \
                 graph) or 2 (one by one from the host)"
            )));
        }
        for p in [ScenarioParam::PrefillTokens, ScenarioParam::PrefillContext] {
            if let Some(v) = value(p).filter(|v| *v < 0.0) {
                return Err(Error::value(format!(
                    "param `{p}` is {v}; it must not be negative"
                )));
            }
        }
        self.check_positions(ev)?;
        let tokens = value(ScenarioParam::PrefillTokens).unwrap_or(0.0);
        match value(ScenarioParam::PrefillSeqs) {
            Some(seqs) if tokens > 0.0 && !(seqs > 0.0 && seqs <= tokens) => {
                Err(Error::value(format!(
                    "param `prefill_seqs` is {seqs} with prefill_tokens={tokens}; the prompt \
                     tokens' sequences must be above 0 and at most prefill_tokens, so that \
                     each carries a chunk of at least one token"
                )))
            }
            _ => Ok(()),
        }
    }

    /// The positions the step reaches are within the model's `max_positions`: each sequence's
    /// `context + tokens`, and in a mixed step each prompt chunk's `prefill_context +
    /// prefill_tokens / prefill_seqs`. A model without the key, or a workload without the
    /// params, is not checked.
    fn check_positions(&self, ev: &Evaluation) -> Result<(), Error> {
        let Some(limit) = self.max_positions else {
            return Ok(());
        };
        let value = |p: ScenarioParam| self.param(p).map(|i| ev.params[i]);
        let past = |positions: f64, sum: String| {
            Err(Error::PastPositions(Box::new(PastPositions {
                model: self.name.clone(),
                limit,
                positions,
                sum,
            })))
        };
        if let (Some(context), Some(tokens)) =
            (value(ScenarioParam::Context), value(ScenarioParam::Tokens))
        {
            if context + tokens > limit as f64 {
                return past(
                    context + tokens,
                    format!("context {context} + tokens {tokens}"),
                );
            }
        }
        let prompt = value(ScenarioParam::PrefillTokens).unwrap_or(0.0);
        // Sequences at 0 or fewer are refused by their own check.
        let seqs = value(ScenarioParam::PrefillSeqs).filter(|s| *s > 0.0);
        if let (true, Some(seqs)) = (prompt > 0.0, seqs) {
            let held = value(ScenarioParam::PrefillContext).unwrap_or(0.0);
            let chunk = prompt / seqs;
            if held + chunk > limit as f64 {
                return past(
                    held + chunk,
                    format!("prefill_context {held} + a prompt chunk of {chunk}"),
                );
            }
        }
        Ok(())
    }
}
