//! Prefill apart from decode: prompts on instances of their own (of their own layout), each
//! prompt's KV cache (and recurrent state) sent to the decode instance that then only decodes.
//!
//! A prefill pool's cost does not depend on the decode side's concurrency: [`PrefillPool`] is
//! priced once per prefill layout and request shape, then paired with any decode server.

use serde::Serialize;

use super::{
    CostView, Disaggregated, Error, KvLink, RequestShape, Server, ServingError, ServingPoint,
};
use crate::core::timing::Iteration;
use crate::study::request::{kv_transfer_s, SequenceBytes};

/// Positions of the reference decode step whose KV cache gives a pool's bytes per token.
const REFERENCE_POSITIONS: f64 = 1024.0;

/// One prompt's prefill on an instance of the prefill pool: what pairing it with a decode
/// instance needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrefillPool {
    /// Iterations a prompt takes (chunks of `max_batched_tokens`), and each one's time.
    pub chunks: u64,
    /// Seconds one of those iterations takes.
    pub chunk_time_s: f64,
    /// Chips of one prefill instance.
    pub chips: u64,
    /// What one chip of the instance holds of a prompt's sequence (what it sends).
    pub sequence_bytes_per_chip: SequenceBytes,
    /// Whether one prompt's prefill fits the instance's memory.
    pub fits: bool,
}

impl PrefillPool {
    /// One prompt's prefill time on the instance.
    pub fn prompt_s(&self) -> f64 {
        self.chunks as f64 * self.chunk_time_s
    }
}

impl Server<'_> {
    /// This server as a prefill pool for prompts of `shape`: one prompt an iteration, in
    /// chunks of `max_batched_tokens`, no decode tokens beside it.
    pub fn prefill_pool(&mut self, shape: RequestShape) -> Result<PrefillPool, ServingError> {
        let (tokens_per_step, _) = self.decode_work(shape);
        let k = (self.prompt_tokens(shape) / self.max_batched_tokens)
            .ceil()
            .max(1.0);
        let (chunk, chunk_context) = self.chunk(shape, k);
        let prefill = self.cycle(0.0, 0.0, tokens_per_step, Some((chunk, 1.0, chunk_context)))?;
        Ok(PrefillPool {
            chunks: k as u64,
            chunk_time_s: prefill.time_s,
            chips: prefill.summary.chips,
            sequence_bytes_per_chip: self.sequence_bytes_per_chip()?,
            fits: prefill.footprint_bytes <= prefill.summary.usable_bytes,
        })
    }

    /// What one chip holds of a sequence (a chip's share under the layout: heads split by tp,
    /// replicated past the KV heads, layers split by pp): its KV bytes per position and its
    /// recurrent state.
    pub(crate) fn sequence_bytes_per_chip(&mut self) -> Result<SequenceBytes, Error> {
        let step = (self.target).price(&Iteration::decode(1.0, REFERENCE_POSITIONS - 1.0))?;
        Ok(SequenceBytes {
            kv_per_token: step.kv_bytes / REFERENCE_POSITIONS,
            state: step.state_bytes,
        })
    }

    /// The steady state with prompts prefilled on instances of this server's own layout.
    pub fn disaggregated(
        &mut self,
        shape: RequestShape,
        concurrency: u64,
        link: KvLink,
    ) -> Result<ServingPoint, ServingError> {
        let pool = self.prefill_pool(shape)?;
        self.disaggregated_with(&pool, shape, concurrency, link)
    }

    /// The steady state with prompts prefilled on `pool`'s instances and `concurrency`
    /// sequences decoding on this server's instance; prefill instances are counted to keep
    /// up with it. Its TTFT has no wait for a busy prefill instance, as the aggregated state
    /// has none for an iteration.
    pub fn disaggregated_with(
        &mut self,
        pool: &PrefillPool,
        shape: RequestShape,
        concurrency: u64,
        link: KvLink,
    ) -> Result<ServingPoint, ServingError> {
        let c = concurrency.max(1) as f64;
        let (tokens_per_step, decode_iterations) = self.decode_work(shape);
        let decode = self.cycle(c, shape.mean_decode_context(), tokens_per_step, None)?;
        // The busier side of the transfer: a prefill chip's shard sent, or a decode chip's
        // received.
        let sent = pool.sequence_bytes_per_chip.of(shape.input_tokens);
        let received = self.sequence_bytes_per_chip()?.of(shape.input_tokens);
        let kv_transfer_s = kv_transfer_s(self.chip, link, sent.max(received))?;
        let ttft = pool.prompt_s() + kv_transfer_s;
        let decoding = decode_iterations * decode.time_s;
        let output = shape.output_tokens as f64;
        let requests_per_s = c / decoding;
        let rate = requests_per_s * output;
        let prefill_instances = requests_per_s * pool.prompt_s();
        let prefill_chips = prefill_instances * pool.chips as f64;
        let all_chips = decode.summary.chips as f64 + prefill_chips;
        let per_million = |view: CostView| {
            let usd = self
                .chip
                .cost_model()
                .with_view(view)
                .usd_per_hour(self.chip);
            usd.ok().map(|u| u * all_chips / 3600.0 / rate * 1e6)
        };
        let footprint = decode.footprint_bytes;
        let usable = decode.summary.usable_bytes;
        let kwh = self.chip.cost_model().kwh_per_hour(self.chip);
        Ok(ServingPoint {
            concurrency,
            chunks_per_prompt: pool.chunks,
            prompts_per_iteration: 1.0,
            ttft_s: ttft,
            tpot_s: decoding / (output - 1.0),
            e2e_s: ttft + decoding,
            output_tokens_per_s: rate,
            output_tokens_per_s_per_chip: rate / all_chips,
            tokens_per_s_per_user: (output - 1.0) / decoding,
            requests_per_s,
            chips: decode.summary.chips,
            cloud_usd_per_million_tokens: per_million(CostView::Cloud),
            tco_usd_per_million_tokens: per_million(CostView::Tco),
            tokens_per_kwh: kwh.map(|k| rate * 3600.0 / (k * all_chips)),
            usable_bytes: usable,
            fits: footprint <= usable && pool.fits,
            footprint_bytes: footprint,
            max_concurrency: decode.max_concurrency,
            decode: decode.summary,
            disaggregated: Some(Disaggregated {
                prefill_instances,
                prefill_chips,
                prefill_instance_chips: pool.chips,
                kv_transfer_s,
            }),
        })
    }
}
