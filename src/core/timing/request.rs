//! A whole request: the prompt's prefill, then one decode step per further output token with
//! the context growing, each priced as a step at the scenario's batch. With pipeline stages,
//! each step is the schedule of the micro-batches in flight (`StepSummary::pipeline_time_s`),
//! which a sequence's every token waits for, and every micro-batch's sequences count.

use serde::Serialize;

use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::workload::Workload;

use super::{price_step, StepSummary};

/// A whole request at a batch: the prompt's prefill, then one decode step per further output
/// token with the context growing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RequestSummary {
    /// Prompt tokens per sequence.
    pub input_tokens: u64,
    /// Output tokens per sequence (the first comes from the prefill).
    pub output_tokens: u64,
    /// Time to first token: the prefill of `input_tokens` with an empty cache.
    pub ttft_s: f64,
    /// Time per output token after the first: the mean decode step.
    pub tpot_s: f64,
    /// End to end: the prefill and every decode step.
    pub e2e_s: f64,
    /// Output tokens of every sequence over the end-to-end time.
    pub output_tokens_per_s: f64,
    /// The most memory the request holds: its prefill's, or its last decode step's, when
    /// every sequence's KV cache has grown to `input + output - 1` tokens.
    pub footprint_bytes: f64,
    /// Whether that fits the chip's usable memory: a request whose cache outgrows it cannot
    /// run at this batch, however well the scenario's own context fits.
    pub fits: bool,
}

impl RequestSummary {
    /// The context each sequence's cache reaches at the request's end: its prompt and every
    /// output token but the last, which no step reads back.
    pub fn end_context(&self) -> u64 {
        self.input_tokens + self.output_tokens - 1
    }
}

/// Decode steps summed exactly up to this many; beyond it, a composite trapezoid over this
/// many evenly spaced steps (decode time is smooth in the context: a KV read that grows
/// linearly, and kernels that change bound at most a few times).
const EXACT_DECODE_STEPS: u64 = 256;

/// Prices a request of `input` prompt tokens and `output` output tokens per sequence at the
/// scenario's batch: TTFT is a prefill (`tokens = input`, `context = 0`), then decode steps
/// (`tokens = 1`) with `context` from `input` to `input + output - 2`.
pub fn price_request(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    input: u64,
    output: u64,
) -> Result<RequestSummary, Error> {
    let param = |p| workload.require(p, "it cannot price a request");
    let (tokens, context) = (
        param(ScenarioParam::Tokens)?,
        param(ScenarioParam::Context)?,
    );
    if input == 0 || output == 0 {
        return Err(Error::value(
            "a request needs at least one input and one output token",
        ));
    }
    let mut ev = workload.new_evaluation();
    let mut costs = Vec::new();
    let mut s = scenario.clone();
    let mut step = |t: f64, c: f64| -> Result<StepSummary, Error> {
        s.set_param(tokens, t)?;
        s.set_param(context, c)?;
        price_step(workload, chip, &s, &mut ev, &mut costs)
    };
    let prefill = step(input as f64, 0.0)?;
    let decode_steps = output - 1;
    // The most memory any priced step holds: the decode steps include the last (context
    // `input + output - 2`, one more token appended), where the cache is largest; a prompt
    // alone may need more for its activations.
    let mut footprint = prefill.footprint_bytes;
    let decode = decode_time(decode_steps, input as f64, |c| {
        let s = step(1.0, c)?;
        footprint = footprint.max(s.footprint_bytes);
        Ok(s.pipeline_time_s)
    })?;
    let sequences = prefill.tokens_per_step.map_or(1.0, |t| t / input as f64);
    let sequences = sequences * prefill.micro_batches;
    let e2e = prefill.pipeline_time_s + decode;
    Ok(RequestSummary {
        input_tokens: input,
        output_tokens: output,
        ttft_s: prefill.pipeline_time_s,
        tpot_s: if decode_steps > 0 {
            decode / decode_steps as f64
        } else {
            0.0
        },
        e2e_s: e2e,
        output_tokens_per_s: sequences * output as f64 / e2e,
        footprint_bytes: footprint,
        fits: footprint <= prefill.usable_bytes,
    })
}

/// Total time of `steps` decode steps whose context starts at `first` and grows by one each
/// step, `step_s(context)` being one step's time: summed exactly up to [`EXACT_DECODE_STEPS`],
/// else a composite trapezoid over that many intervals scaled to `steps`. Either way the
/// first and the last step are among those priced.
fn decode_time(
    steps: u64,
    first: f64,
    mut step_s: impl FnMut(f64) -> Result<f64, Error>,
) -> Result<f64, Error> {
    if steps <= EXACT_DECODE_STEPS {
        let mut total = 0.0;
        for j in 0..steps {
            total += step_s(first + j as f64)?;
        }
        return Ok(total);
    }
    let intervals = EXACT_DECODE_STEPS as f64;
    let last = (steps - 1) as f64;
    let mut previous = step_s(first)?;
    let mut area = 0.0;
    for i in 1..=EXACT_DECODE_STEPS {
        let next = step_s(first + last * i as f64 / intervals)?;
        area += (previous + next) / 2.0;
        previous = next;
    }
    Ok(area / intervals * steps as f64)
}
