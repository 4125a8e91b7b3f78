//! Prefill apart from decode: prompts on instances of their own, each prompt's KV cache sent
//! to the decode instance that then only decodes.

use super::{
    CostView, Disaggregated, Error, KvLink, RequestShape, Server, ServingError, ServingPoint,
};

impl Server<'_> {
    /// The steady state with prompts prefilled on instances of their own (the served layout's),
    /// one prompt an iteration in chunks of `max_batched_tokens`, and `concurrency` sequences
    /// decoding on a decode instance; prefill instances are counted to keep up with it. Its
    /// TTFT has no wait for a busy prefill instance, as the aggregated state has none for an
    /// iteration.
    pub fn disaggregated(
        &mut self,
        shape: RequestShape,
        concurrency: u64,
        link: KvLink,
    ) -> Result<ServingPoint, ServingError> {
        let c = concurrency.max(1) as f64;
        let (tokens_per_step, decode_iterations) = self.decode_work(shape);
        let k = (self.prompt_tokens(shape) / self.max_batched_tokens)
            .ceil()
            .max(1.0);
        let (chunk, chunk_context) = self.chunk(shape, k);
        let prefill = self.cycle(0.0, 0.0, tokens_per_step, Some((chunk, 1.0, chunk_context)))?;
        let decode = self.cycle(c, shape.mean_decode_context(), tokens_per_step, None)?;
        // The prefill step holds one sequence's cache: its bytes per position, per chip; and
        // its recurrent state (a state-space model's), which the decode instance needs too.
        let kv_per_token = prefill.summary.kv_bytes / (chunk_context + chunk);
        let sent_bytes = kv_per_token * shape.input_tokens as f64 + prefill.summary.state_bytes;
        let kv_transfer_s = self.transfer_s(link, sent_bytes)?;
        let ttft = k * prefill.time_s + kv_transfer_s;
        let decoding = decode_iterations * decode.time_s;
        let output = shape.output_tokens as f64;
        let e2e = ttft + decoding;
        let requests_per_s = c / decoding;
        let rate = requests_per_s * output;
        let prefill_instances = requests_per_s * k * prefill.time_s;
        let prefill_chips = prefill_instances * prefill.summary.chips as f64;
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
            chunks_per_prompt: k as u64,
            prompts_per_iteration: 1.0,
            ttft_s: ttft,
            tpot_s: decoding / (output - 1.0),
            e2e_s: e2e,
            output_tokens_per_s: rate,
            output_tokens_per_s_per_chip: rate / all_chips,
            tokens_per_s_per_user: (output - 1.0) / decoding,
            requests_per_s,
            chips: decode.summary.chips,
            cloud_usd_per_million_tokens: per_million(CostView::Cloud),
            tco_usd_per_million_tokens: per_million(CostView::Tco),
            tokens_per_kwh: kwh.map(|k| rate * 3600.0 / (k * all_chips)),
            usable_bytes: usable,
            fits: footprint <= usable && prefill.footprint_bytes <= usable,
            footprint_bytes: footprint,
            max_concurrency: decode.max_concurrency,
            decode: decode.summary,
            disaggregated: Some(Disaggregated {
                prefill_instances,
                prefill_chips,
                kv_transfer_s,
            }),
        })
    }

    /// Sending `bytes` of one chip's KV shard over its network (its scale-up link where it has
    /// none), or nothing over a free link.
    fn transfer_s(&self, link: KvLink, bytes: f64) -> Result<f64, Error> {
        if link == KvLink::Free {
            return Ok(0.0);
        }
        let network = self.chip.network.as_ref().map(|n| n.bandwidth_bytes_per_s);
        let scale_up = (self.chip.interconnect.as_ref()).map(|i| i.bandwidth_bytes_per_s);
        match network.or(scale_up) {
            Some(bandwidth) => Ok(bytes / bandwidth),
            None => Err(Error::value(format!(
                "{} has no network or scale-up link to send a prompt's KV cache over",
                self.chip.id()
            ))),
        }
    }
}
