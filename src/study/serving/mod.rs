//! Serving in steady state: continuous batching with a fixed number of requests in flight,
//! each replaced as it finishes (a closed loop, as a load generator's `--max-concurrency`
//! keeps it), priced from the step pricer.
//!
//! The model. `C` requests are in flight, each of `I` prompt tokens and `O` output tokens.
//! The engine runs iterations of at most `max_batched_tokens` tokens. A prompt is prefilled in
//! `k` chunks, riding in iterations beside the decode tokens of the other sequences; an
//! iteration that carries prompts carries `q` of them (one, unless prompts arrive faster than
//! iterations run), and the rest of the iterations only decode. Over one generation (the time
//! in which each of the `C` slots finishes one request) the decode tokens balance:
//!
//! - prefill iterations: `P = C k / q`, each with `C - q` decoding sequences;
//! - decode-only iterations: `N = D - k (C - q) / q`, each with all `C` decoding, where `D`
//!   is the decode iterations a request needs (`O - 1`, or fewer with speculation);
//! - `q = max(1, k C / (D + k))`: the fewest prompts per iteration with `N >= 0`.
//!
//! A generation lasts `G = N T_decode + P T_prefill`. A request arriving finds the other
//! requests' iteration under way, at a point independent of it, and waits out its rest,
//! `W = T_decode / 2` on average (arrivals a generation's `C`-th apart land past the prefill
//! iterations the previous arrival set off; `T_prefill / 2` where every iteration carries
//! prompts; none at `C = 1`, where the engine is idle). TTFT is `W` plus the `k` iterations its prompt rides in, the
//! end-to-end latency `W + G` (Little's law, the waiting request counted in flight: `C / (W
//! + G)` finish per second; the iterations are priced at all `C`, which overstates their
//! batch by `W / G`, about `1 / 2O`); TPOT spreads the rest of `G` over the `O - 1` later
//! tokens.
//! Decoding sequences are priced at their mean context, `I + (O - 2) / 2` (the mean of the
//! contexts a request's decode steps see), and a prompt's chunks at their mean prior context:
//! attention is linear in the context, so means price sums exactly. At `C = 1` this is a
//! request priced alone: a prefill, then `O - 1` decode steps.

mod band;
mod checked;
mod disagg;
#[cfg(test)]
mod engine_tests;
mod fleet;
mod frontier;
mod layouts;
mod pools;
mod query;
mod slo;
mod survey;

use serde::Serialize;

use crate::base::error::Error;
use crate::core::chip::Chip;
use crate::core::cost::{CostView, StepCost};
use crate::core::engine::{Admission, SpecCycle};
use crate::core::timing::{Iteration, IterationPricer, StepSummary};

pub use band::ServingBand;
pub use checked::{CHECK_MOST_ADDED, CHECK_REQUESTS};
pub use disagg::PrefillPool;
pub use frontier::frontier;
// The request and its KV cache's trip live below serving and the simulator, which share them.
pub use crate::study::request::{KvLink, RequestShape};
// The command line's `plan --power-budget-mw` with `--rate`.
#[cfg(feature = "cli")]
pub(crate) use fleet::fit_power_budget;
pub use fleet::{Fleet, FleetEntry, Simulated, Slo};
pub use layouts::one_layer_draft;
pub use query::{Disagg, Draft, LayoutChoice, ServingQuery};
pub use slo::{plan_fleet, plan_fleet_engines};
pub use survey::{frontier_rows, survey, survey_engines, ServingRow, Skipped, Survey};

/// Speculative decoding: `draft_tokens` drafted per verify step, each accepted with
/// probability `acceptance` (independently, until the first rejection).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Speculation {
    draft_tokens: u32,
    acceptance: f64,
}

impl Speculation {
    /// At least one draft token (at most 16) and an acceptance rate in [0, 1].
    pub fn new(draft_tokens: u32, acceptance: f64) -> Result<Speculation, Error> {
        if !(1..=16).contains(&draft_tokens) {
            return Err(Error::value(format!(
                "--spec-k {draft_tokens}: draft tokens per step must be 1 to 16"
            )));
        }
        if !(0.0..=1.0).contains(&acceptance) {
            return Err(Error::value(format!(
                "--spec-accept {acceptance}: an acceptance rate is between 0 and 1"
            )));
        }
        Ok(Speculation {
            draft_tokens,
            acceptance,
        })
    }

    /// Tokens drafted per verify step (`K`), 1 to 16.
    pub fn draft_tokens(&self) -> u32 {
        self.draft_tokens
    }

    /// The chance each draft token is accepted (`A`), in [0, 1].
    pub fn acceptance(&self) -> f64 {
        self.acceptance
    }

    /// Tokens a verify step yields on average: the accepted drafts plus the target's own,
    /// `(1 - A^(K+1)) / (1 - A)` (`K + 1` when every draft is accepted).
    pub fn tokens_per_verify(&self) -> f64 {
        let (a, k) = (self.acceptance, self.draft_tokens as i32);
        if a >= 1.0 {
            (k + 1) as f64
        } else {
            (1.0 - a.powi(k + 1)) / (1.0 - a)
        }
    }
}

/// What changes a request's work besides its shape.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ServingOptions {
    /// Share of each prompt found in the prefix cache, whose prefill is skipped; in [0, 1).
    pub prefix_hit: f64,
    /// Speculative decoding, where a draft model proposes tokens (none: one token a step).
    pub speculation: Option<Speculation>,
}

impl ServingOptions {
    /// Whether the options can be served: a prefix-cache hit rate in [0, 1).
    pub fn check(&self) -> Result<(), Error> {
        if !(0.0..1.0).contains(&self.prefix_hit) {
            return Err(Error::value(format!(
                "--prefix-hit {}: a prefix-cache hit rate is at least 0 and below 1",
                self.prefix_hit
            )));
        }
        Ok(())
    }
}

/// Steady-state serving of one workload on one chip at one scenario (layout, types, plan,
/// mode): the target's iterations, and the draft's where decoding speculates.
pub struct Server<'a> {
    chip: &'a Chip,
    target: IterationPricer<'a>,
    draft: Option<IterationPricer<'a>>,
    max_batched_tokens: f64,
    options: ServingOptions,
    /// The engine's admission policy and speculative cycle (expected mode); without an
    /// engine, pages on demand and the draft's every step priced whole.
    admission: Admission,
    spec: SpecCycle,
}

/// One concurrency's steady state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingPoint {
    /// Requests in flight.
    pub concurrency: u64,
    /// Prompt chunks per request (`k`).
    pub chunks_per_prompt: u64,
    /// Prompts an iteration that carries prompts carries (`q`).
    pub prompts_per_iteration: f64,
    /// Time to first token, seconds: the wait for the iteration under way, then the `k`
    /// iterations the prompt rides in.
    pub ttft_s: f64,
    /// Time per output token after the first.
    pub tpot_s: f64,
    /// End-to-end latency of one request, seconds: its wait plus one generation.
    pub e2e_s: f64,
    /// Output tokens per second of the whole replica.
    pub output_tokens_per_s: f64,
    /// `output_tokens_per_s` over the replica's chips.
    pub output_tokens_per_s_per_chip: f64,
    /// What one user sees: 1 / TPOT.
    pub tokens_per_s_per_user: f64,
    /// Requests the replica finishes per second (Little's law: `C / E2E`).
    pub requests_per_s: f64,
    /// Chips one replica runs on.
    pub chips: u64,
    /// A million output tokens in each cost view, where the chip has that cost.
    pub cloud_usd_per_million_tokens: Option<f64>,
    /// The same as `cloud_usd_per_million_tokens`, in the TCO view.
    pub tco_usd_per_million_tokens: Option<f64>,
    /// Output tokens per kWh the replica's chips draw, the facility's PUE included, where the
    /// chip's power is known.
    pub tokens_per_kwh: Option<f64>,
    /// The decode iteration's memory: weights (the draft's too), KV at the mean context,
    /// recurrent state, workspace and reserve.
    pub footprint_bytes: f64,
    /// What the engine may use on a chip: the chip's reported capacity x memory utilisation.
    pub usable_bytes: f64,
    /// Whether the larger of the decode and prefill iterations' footprints fits in
    /// `usable_bytes`.
    pub fits: bool,
    /// The most requests in flight whose KV cache at the mean context and recurrent state (a
    /// state-space model's, one per sequence) fit.
    pub max_concurrency: Option<u64>,
    /// The decode-only iteration's summary (at `C` sequences, the mean context).
    pub decode: StepSummary,
    /// Where prompts are prefilled on instances of their own.
    pub disaggregated: Option<Disaggregated>,
}

/// Prefill on instances of its own, the KV cache (and a state-space model's recurrent state)
/// sent to the decode instance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Disaggregated {
    /// Prefill instances one decode instance keeps busy (the pools' ratio, x:1).
    pub prefill_instances: f64,
    /// Their chips, beside the decode instance's `chips` (the pools' x:y split of chips).
    pub prefill_chips: f64,
    /// Chips of one prefill instance (its own layout's).
    pub prefill_instance_chips: u64,
    /// Sending one prompt's KV cache (and recurrent state) from the prefill to the decode
    /// instance.
    pub kv_transfer_s: f64,
}

/// Why a concurrency cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ServingError {
    /// An iteration could not be priced.
    #[error("{0}")]
    Price(#[from] Error),
    /// The decode tokens alone exceed what one iteration may batch.
    #[error("{concurrency} sequences decoding {tokens_per_seq} token(s) each exceed max_batched_tokens={max_batched_tokens}")]
    OverBudget {
        /// Requests in flight asked for.
        concurrency: u64,
        /// Tokens each decoding sequence is given an iteration (`K + 1` with speculation).
        tokens_per_seq: f64,
        /// The engine's limit on tokens an iteration batches.
        max_batched_tokens: f64,
    },
}

impl<'a> Server<'a> {
    /// A server of `target` iterations (and `draft` ones, with speculation) on `chip`,
    /// batching at most `max_batched_tokens` tokens an iteration.
    pub fn new(
        chip: &'a Chip,
        target: IterationPricer<'a>,
        draft: Option<IterationPricer<'a>>,
        max_batched_tokens: f64,
        options: ServingOptions,
    ) -> Result<Server<'a>, Error> {
        options.check()?;
        if options.speculation.is_some() != draft.is_some() {
            return Err(Error::value(
                "speculative decoding needs both a draft and its --spec-k and --spec-accept",
            ));
        }
        if max_batched_tokens.is_nan() || max_batched_tokens < 1.0 {
            return Err(Error::value(format!(
                "max_batched_tokens {max_batched_tokens}: an iteration batches at least one token"
            )));
        }
        let terms = target.engine().map(|e| e.terms());
        let admission = terms.map_or(Admission::OnDemand, |t| t.admission);
        let spec = terms.map_or(
            SpecCycle {
                draft_host_once: false,
                absorbed_mla_verify: false,
            },
            |t| t.spec,
        );
        Ok(Server {
            chip,
            target,
            draft,
            max_batched_tokens,
            options,
            admission,
            spec,
        })
    }

    /// The steady state at `concurrency` requests in flight.
    pub fn steady_state(
        &mut self,
        shape: RequestShape,
        concurrency: u64,
    ) -> Result<ServingPoint, ServingError> {
        let c = concurrency.max(1) as f64;
        let (tokens_per_step, decode_iterations) = self.decode_work(shape);
        let prompt = self.prompt_tokens(shape);
        let (k, q) = self.chunking(c, prompt, tokens_per_step, decode_iterations, concurrency)?;
        let context = shape.mean_decode_context();
        let (chunk, chunk_context) = self.chunk(shape, k as f64);
        let decode = self.cycle(c, context, tokens_per_step, None)?;
        let prefill = self.cycle(
            c - q,
            context,
            tokens_per_step,
            Some((q * chunk, q, chunk_context)),
        )?;
        let prefill_iterations = c * k as f64 / q;
        let decode_only = (decode_iterations - k as f64 * (c - q) / q).max(0.0);
        let generation = decode_only * decode.time_s + prefill_iterations * prefill.time_s;
        let reserved = self.reserved(shape, c, tokens_per_step)?;
        // An arrival waits out the iteration the other requests keep running, half of it on
        // average: a decode-only one where there are any (a prompt's own prefill iterations
        // follow its arrival, so the next arrival, a generation's C-th later, lands past
        // them), else one carrying prompts. Alone (C = 1) it finds the engine idle.
        let wait = match (c > 1.0, decode_only > 0.0) {
            (false, _) => 0.0,
            (true, true) => decode.time_s / 2.0,
            (true, false) => prefill.time_s / 2.0,
        };
        let prompt_s = k as f64 * prefill.time_s;
        let ttft = wait + prompt_s;
        let e2e = wait + generation;
        let output = shape.output_tokens as f64;
        let tpot = (generation - prompt_s) / (output - 1.0);
        let rate = c * output / e2e;
        let chips = decode.summary.chips;
        let footprint = decode.footprint_bytes.max(prefill.footprint_bytes);
        let (footprint, max_concurrency) = match &reserved {
            None => (footprint, decode.max_concurrency),
            Some(r) => (footprint.max(r.footprint_bytes), r.max_concurrency),
        };
        let per_million = |view: CostView| {
            let usd = self
                .chip
                .cost_model()
                .with_view(view)
                .usd_per_hour(self.chip);
            usd.ok().map(|u| u * chips as f64 / 3600.0 / rate * 1e6)
        };
        Ok(ServingPoint {
            concurrency,
            chunks_per_prompt: k,
            prompts_per_iteration: q,
            ttft_s: ttft,
            tpot_s: tpot,
            e2e_s: e2e,
            output_tokens_per_s: rate,
            output_tokens_per_s_per_chip: rate / chips as f64,
            tokens_per_s_per_user: 1.0 / tpot,
            requests_per_s: c / e2e,
            chips,
            cloud_usd_per_million_tokens: per_million(CostView::Cloud),
            tco_usd_per_million_tokens: per_million(CostView::Tco),
            tokens_per_kwh: StepCost::of(self.chip, chips, Some(rate)).tokens_per_kwh,
            usable_bytes: decode.summary.usable_bytes,
            fits: footprint <= decode.summary.usable_bytes,
            footprint_bytes: footprint,
            max_concurrency,
            decode: decode.summary,
            disaggregated: None,
        })
    }

    /// The prompt tokens a request prefills: those not found in the prefix cache.
    fn prompt_tokens(&self, shape: RequestShape) -> f64 {
        shape.input_tokens as f64 * (1.0 - self.options.prefix_hit)
    }

    /// In `k` chunks, each chunk's tokens and its mean prior context: the cached prefix, then
    /// the chunks before it.
    fn chunk(&self, shape: RequestShape, k: f64) -> (f64, f64) {
        let prompt = self.prompt_tokens(shape);
        let chunk = prompt / k;
        let cached = shape.input_tokens as f64 - prompt;
        (chunk, cached + (k - 1.0) / 2.0 * chunk)
    }

    /// Tokens a decoding sequence is given an iteration, and the iterations a request's
    /// `O - 1` later tokens take: one token each, or with speculation `K + 1` verified for
    /// `(1 - A^(K+1)) / (1 - A)` kept.
    fn decode_work(&self, shape: RequestShape) -> (f64, f64) {
        let later = shape.output_tokens as f64 - 1.0;
        match self.options.speculation {
            None => (1.0, later),
            Some(s) => (s.draft_tokens as f64 + 1.0, later / s.tokens_per_verify()),
        }
    }

    /// The fewest chunks per prompt (`k`) whose iterations fit `max_batched_tokens`, and the
    /// prompts an iteration carries (`q`).
    fn chunking(
        &self,
        c: f64,
        prompt: f64,
        tokens_per_step: f64,
        decode_iterations: f64,
        concurrency: u64,
    ) -> Result<(u64, f64), ServingError> {
        let budget = self.max_batched_tokens;
        let over = ServingError::OverBudget {
            concurrency,
            tokens_per_seq: tokens_per_step,
            max_batched_tokens: budget,
        };
        let q_of = |k: f64| (k * c / (decode_iterations + k)).clamp(1.0, c);
        let tokens = |k: f64| {
            let q = q_of(k);
            (c - q) * tokens_per_step + q * prompt / k
        };
        // Tokens per iteration fall as k grows (smaller chunks, and more of the prompts'
        // sequences out of the decode): the first k that fits, by doubling then bisection.
        let most = prompt.ceil().max(1.0) as u64;
        let mut lo = ((prompt / budget).ceil() as u64).max(1);
        if tokens(lo as f64) > budget {
            let mut hi = lo;
            loop {
                if hi >= most {
                    if tokens(most as f64) > budget {
                        return Err(over);
                    }
                    hi = most;
                    break;
                }
                lo = hi;
                hi = (hi * 2).min(most);
                if tokens(hi as f64) <= budget {
                    break;
                }
            }
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if tokens(mid as f64) <= budget {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            lo = hi;
        }
        Ok((lo, q_of(lo as f64)))
    }

    /// One decode cycle for `seqs` decoding sequences at `context` (and prompts beside them):
    /// the target's step, after the draft's steps when decoding speculates.
    fn cycle(
        &mut self,
        seqs: f64,
        context: f64,
        tokens_per_step: f64,
        prompts: Option<(f64, f64, f64)>,
    ) -> Result<Cycle, Error> {
        let mut it = Iteration::decode(seqs, context);
        it.decode_tokens = tokens_per_step;
        if let Some((tokens, n, prior)) = prompts {
            it = it.with_prefill(tokens, n, prior);
        }
        let summary = self.target.price(&it)?;
        let mut time_s = self.target.iteration_s(&summary);
        let mut footprint_bytes = summary.footprint_bytes;
        // `max_batch` counts one micro-batch's sequences.
        let m = self.target.micro_batches();
        let mut max_concurrency = (summary.max_batch).map(|b| {
            if m > 1.0 {
                (b as f64 * m).floor() as u64
            } else {
                b
            }
        });
        if let (Some(draft), Some(spec)) = (&mut self.draft, self.options.speculation) {
            let drafted = draft.price(&Iteration::decode(seqs.max(1.0), context))?;
            if seqs > 0.0 {
                time_s += self.draft_s(spec, &drafted);
            }
            // The draft's weights, cache and recurrent state sit beside the target's; a
            // sequence holds its cache and its state in both.
            let held = |s: &StepSummary| s.kv_bytes + s.state_bytes;
            footprint_bytes += drafted.weight_bytes + held(&drafted);
            let per_seq_bytes = (held(&summary) + held(&drafted)) / seqs.max(1.0);
            let room = summary.usable_bytes - (footprint_bytes - held(&summary) - held(&drafted));
            max_concurrency = (per_seq_bytes > 0.0)
                .then(|| (room / per_seq_bytes).floor().max(0.0) as u64)
                .or(max_concurrency);
        }
        Ok(Cycle {
            time_s,
            footprint_bytes,
            max_concurrency,
            summary,
        })
    }
}

impl Server<'_> {
    /// Under an engine that reserves each request's whole prompt and output, the decode cycle
    /// of `c` requests at that whole context: what each request in flight holds of the cache,
    /// rather than its mean context's. `None` where pages come on demand.
    fn reserved(
        &mut self,
        shape: RequestShape,
        c: f64,
        tokens_per_step: f64,
    ) -> Result<Option<Cycle>, Error> {
        match self.admission {
            Admission::OnDemand => Ok(None),
            Admission::ReserveWhole => {
                let whole = shape.input_tokens as f64 + output_positions(shape);
                let cycle = self.cycle(c, whole - tokens_per_step, tokens_per_step, None)?;
                Ok(Some(cycle))
            }
        }
    }

    /// The draft's `K` steps of a verify cycle, each priced as `drafted`: `K` whole steps, or
    /// under an engine that pays the draft's host work once per cycle (`spec.draft_host_once`:
    /// the drafts run back to back in one graph, scheduled with the verify step), `K` times
    /// its chip time and its host time once.
    fn draft_s(&self, spec: Speculation, drafted: &StepSummary) -> f64 {
        let k = spec.draft_tokens as f64;
        let Some(draft) = &self.draft else {
            return 0.0;
        };
        let step = draft.iteration_s(drafted);
        match self.spec.draft_host_once {
            false => k * step,
            true => k * (step - drafted.host_time_s) + drafted.host_time_s,
        }
    }
}

/// Positions a request's output adds to its cache, the last token's included: what an engine
/// that reserves the whole request holds for it.
fn output_positions(shape: RequestShape) -> f64 {
    shape.output_tokens as f64
}

/// One iteration of the steady state, the draft's steps included.
struct Cycle {
    time_s: f64,
    footprint_bytes: f64,
    max_concurrency: Option<u64>,
    summary: StepSummary,
}
