//! One iteration of a continuous-batching engine: decode tokens for the running sequences
//! and chunks of prompts beside them, priced as one step (the weights read once for all of
//! them, each sequence's attention over its own context).

use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::core::chip::Chip;
use crate::core::engine::Engine;
use crate::core::scenario::Scenario;
use crate::core::workload::{Evaluation, Workload};

use super::{price_step, KernelCost, StepSummary};

/// What one iteration carries. Counts may be fractional: a steady state prices the mean
/// iteration, and attention's cost is linear in the context, so a mean context prices the
/// sum of the sequences' contexts exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Iteration {
    /// Sequences past their prompt, each given `decode_tokens` new tokens.
    pub decode_seqs: f64,
    /// New tokens per decoding sequence: 1, or the draft tokens plus one in a speculative
    /// verify step.
    pub decode_tokens: f64,
    /// Positions each decoding sequence already holds, on average.
    pub decode_context: f64,
    /// Prompt tokens carried, in all.
    pub prefill_tokens: f64,
    /// Sequences those prompt tokens belong to, each carrying an equal chunk.
    pub prefill_seqs: f64,
    /// Positions each prefilling sequence already holds, on average (earlier chunks, or a
    /// cached prefix).
    pub prefill_context: f64,
}

impl Iteration {
    /// An iteration of `seqs` sequences decoding one token each at `context`.
    pub fn decode(seqs: f64, context: f64) -> Iteration {
        Iteration {
            decode_seqs: seqs,
            decode_tokens: 1.0,
            decode_context: context,
            prefill_tokens: 0.0,
            prefill_seqs: 0.0,
            prefill_context: 0.0,
        }
    }

    /// This iteration with `tokens` prompt tokens of `seqs` sequences at `context` beside it.
    pub fn with_prefill(self, tokens: f64, seqs: f64, context: f64) -> Iteration {
        Iteration {
            prefill_tokens: tokens,
            prefill_seqs: seqs,
            prefill_context: context,
            ..self
        }
    }
}

/// Prices iterations of one workload on one chip at one scenario's types, plan and layout,
/// reusing its evaluation between calls (what a sweep's inner axis gains, a simulator gains
/// from iteration to iteration).
///
/// With pipeline stages, an iteration runs as the scenario's engine schedules it (expected
/// mode). Without an engine, or under one that flushes its pipeline, it is one micro-batch of
/// every running sequence through each stage in turn. Under an engine that keeps `m`
/// micro-batches in flight without a flush (`pipeline`: `micro_batches`, else one per stage),
/// the sequences are split into `m` micro-batches, each stage working on one while the others
/// are on the other stages: every sequence advances one token in
/// `max(m x slowest stage, all stages)` of one micro-batch ([`IterationPricer::iteration_s`]),
/// so that at `m = pp` balanced stages are never idle (throughput `pp` times one stage's) and
/// a token waits for the stages of its own micro-batch (latency: their sum, plus a bubble
/// where `m` stages' work exceeds it).
pub struct IterationPricer<'a> {
    workload: &'a Workload,
    chip: &'a Chip,
    /// The scenario; each iteration sets its params (every one of `batch`, `tokens`,
    /// `context` and `prefill`) over the scenario's own values.
    scenario: Scenario,
    batch: usize,
    tokens: usize,
    context: usize,
    /// `prefill_tokens`, `prefill_seqs`, `prefill_context`, where the workload has them.
    prefill: Option<[usize; 3]>,
    /// Micro-batches an iteration's sequences are split into and whether the pipeline is
    /// flushed after them; `(1, true)`: one micro-batch of all.
    schedule: (f64, bool),
    ev: Evaluation,
    costs: Vec<KernelCost>,
}

impl<'a> IterationPricer<'a> {
    /// A pricer for `workload` on `chip`; the scenario's own values of the iteration's params
    /// are replaced by each iteration's.
    pub fn new(
        workload: &'a Workload,
        chip: &'a Chip,
        scenario: &Scenario,
    ) -> Result<IterationPricer<'a>, Error> {
        let need = |p| workload.require(p, "it cannot price a serving iteration");
        let (batch, tokens, context) = (
            need(ScenarioParam::Batch)?,
            need(ScenarioParam::Tokens)?,
            need(ScenarioParam::Context)?,
        );
        let prefill = match (
            workload.param(ScenarioParam::PrefillTokens),
            workload.param(ScenarioParam::PrefillSeqs),
            workload.param(ScenarioParam::PrefillContext),
        ) {
            (Some(t), Some(s), Some(c)) => Some([t, s, c]),
            _ => None,
        };
        let mut scenario = scenario.clone();
        let mut ev = workload.new_evaluation();
        let schedule = schedule(workload, chip, &scenario, &mut ev)?;
        // Without an engine's schedule, an iteration is one pass of the running sequences
        // through every stage: serving holds its concurrency as one batch, not as
        // micro-batches of it.
        if let Some(m) = workload.param(ScenarioParam::MicroBatches) {
            scenario.set_param(m, schedule.0)?;
        }
        Ok(IterationPricer {
            workload,
            chip,
            scenario,
            batch,
            tokens,
            context,
            prefill,
            schedule,
            ev,
            costs: Vec::new(),
        })
    }

    /// The engine the iterations are priced under (expected mode only).
    pub fn engine(&self) -> Option<&Engine> {
        self.scenario.engine_on(self.chip)
    }

    /// Micro-batches an iteration's sequences are split into (1 but under an engine that
    /// keeps several in flight through pipeline stages): a summary's `max_batch` counts the
    /// sequences of one.
    pub fn micro_batches(&self) -> f64 {
        self.schedule.0
    }

    /// The time in which every sequence of an iteration priced as `summary` advances: its
    /// step time with one micro-batch; with `m` in flight and flushed, the schedule's
    /// (`pipeline_time_s`); without a flush, `max(m x slowest stage, step time)`.
    pub fn iteration_s(&self, summary: &StepSummary) -> f64 {
        let (m, flush) = self.schedule;
        let step = summary.step_time_s;
        if m <= 1.0 {
            return step;
        }
        if flush {
            return summary.pipeline_time_s;
        }
        // The flushed schedule is `step + (m - 1) x slowest`.
        let slowest = (summary.pipeline_time_s - step) / (m - 1.0);
        (m * slowest).max(step)
    }

    /// Prices one iteration. With no decoding sequence, it is a plain prefill step of the
    /// prompts' chunks; a workload without the prefill params prices only iterations that
    /// carry decode or prompt tokens alone.
    pub fn price(&mut self, it: &Iteration) -> Result<StepSummary, Error> {
        let valid = |x: f64| x.is_finite() && x >= 0.0;
        let all = [
            it.decode_seqs,
            it.decode_tokens,
            it.decode_context,
            it.prefill_tokens,
            it.prefill_seqs,
            it.prefill_context,
        ];
        if !all.into_iter().all(valid) {
            return Err(Error::value(format!(
                "an iteration's counts must be finite and not negative: {it:?}"
            )));
        }
        let prompts = it.prefill_tokens > 0.0;
        if prompts && it.prefill_seqs <= 0.0 {
            return Err(Error::value(
                "an iteration's prompt tokens need at least one sequence",
            ));
        }
        let decodes = it.decode_seqs > 0.0 && it.decode_tokens > 0.0;
        // (batch, tokens, context) and the prompt tokens beside them (tokens, seqs, context).
        let (step, beside) = match (decodes, prompts) {
            (true, false) => ([it.decode_seqs, it.decode_tokens, it.decode_context], None),
            (true, true) => (
                [it.decode_seqs, it.decode_tokens, it.decode_context],
                Some([it.prefill_tokens, it.prefill_seqs, it.prefill_context]),
            ),
            // Prompts alone: a plain prefill step of equal chunks.
            (false, true) => (
                [
                    it.prefill_seqs,
                    it.prefill_tokens / it.prefill_seqs,
                    it.prefill_context,
                ],
                None,
            ),
            (false, false) => {
                return Err(Error::value("an iteration must carry at least one token"))
            }
        };
        // Each of the micro-batches carries its share of the sequences and prompt tokens.
        let m = self.schedule.0;
        let (step, beside) = match m > 1.0 {
            false => (step, beside),
            true => (
                [step[0] / m, step[1], step[2]],
                beside.map(|[t, s, c]| [t / m, s / m, c]),
            ),
        };
        let prefill = match (self.prefill, beside) {
            (Some(params), beside) => Some(params.into_iter().zip(beside.unwrap_or([0.0; 3]))),
            (None, Some(_)) => return Err(self.missing_prefill()),
            (None, None) => None,
        };
        let shape = [self.batch, self.tokens, self.context]
            .into_iter()
            .zip(step);
        for (param, value) in shape.chain(prefill.into_iter().flatten()) {
            self.scenario.set_param(param, value)?;
        }
        price_step(
            self.workload,
            self.chip,
            &self.scenario,
            &mut self.ev,
            &mut self.costs,
        )
    }

    /// The error for a mixed iteration on a workload without the prefill params.
    fn missing_prefill(&self) -> Error {
        let consequence = "it cannot price prompt tokens beside decode tokens";
        let missing = [
            ScenarioParam::PrefillTokens,
            ScenarioParam::PrefillSeqs,
            ScenarioParam::PrefillContext,
        ]
        .into_iter()
        .find(|p| self.workload.param(*p).is_none())
        .unwrap_or(ScenarioParam::PrefillTokens);
        match self.workload.require(missing, consequence) {
            Err(e) => e,
            Ok(_) => Error::value(consequence),
        }
    }
}

/// How an iteration's sequences pass the pipeline stages of `scenario`: `(m, flush)`, the
/// micro-batches they are split into and whether the pipeline drains after them. One
/// micro-batch, flushed, without stages or without an engine (expected mode); else the
/// engine's `micro_batches`, or one per stage.
fn schedule(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    ev: &mut Evaluation,
) -> Result<(f64, bool), Error> {
    let Some(pipeline) = scenario.engine_on(chip).map(|e| e.terms().pipeline) else {
        return Ok((1.0, true));
    };
    workload.evaluate(scenario.overrides(), ev)?;
    let stages = ev.stages;
    if stages <= 1.0 {
        return Ok((1.0, true));
    }
    // A workload without the `micro_batches` param keeps one per stage in flight.
    let m = match (
        pipeline.micro_batches,
        workload.param(ScenarioParam::MicroBatches),
    ) {
        (Some(m), Some(_)) => m as f64,
        _ => stages,
    };
    Ok((m, pipeline.flush))
}
