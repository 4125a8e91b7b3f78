//! The row of the engine list: one engine's id, name and the terms a buyer compares.

use super::{Row, Value};
use crate::core::engine::{Admission, Engine};

/// One engine of `stepcost engines`.
pub(crate) struct EngineRow<'a>(pub &'a Engine);

impl EngineRow<'_> {
    /// The admission policy as files write it.
    pub(crate) fn admission(&self) -> &'static str {
        match self.0.terms().admission {
            Admission::OnDemand => "on-demand",
            Admission::ReserveWhole => "reserve-whole",
        }
    }

    /// The captured batch sizes as a range (`1-512 (51)`), or `none`.
    pub(crate) fn graphs(&self) -> String {
        let sizes = &self.0.terms().launches.graph_batch_sizes;
        match (sizes.first(), sizes.last()) {
            (Some(first), Some(last)) => format!("{first}-{last} ({})", sizes.len()),
            _ => "none".to_owned(),
        }
    }

    /// What the `fp8` choice of `plan` and `serving` runs as.
    pub(crate) fn fp8(&self) -> &'static str {
        let q = self.0.terms().quant;
        match (q.fp8_activations, q.fp8_kv_cache) {
            (true, true) => "W8A8, fp8 KV",
            (true, false) => "W8A8",
            (false, true) => "W8A16, fp8 KV",
            (false, false) => "W8A16",
        }
    }
}

impl Row for EngineRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let e = self.0;
        let t = e.terms();
        f("engine", Value::Text(e.id()));
        f("name", Value::Text(e.name()));
        f("launch", Value::Text(e.launch().name()));
        f(
            "host_overlap",
            Value::Num(t.host.map_or(t.host_overlap, |h| h.overlap)),
        );
        f("engine_host", Value::Num(t.engine_host));
        f("graphs", Value::Text(&self.graphs()));
        f(
            "eager_launch_us",
            Value::Num(t.launches.eager_launch_s * 1e6),
        );
        f("admission", Value::Text(self.admission()));
        f("max_sequences", Value::Int(t.limits.max_sequences));
        f(
            "max_batched_tokens",
            Value::Int(t.limits.max_batched_tokens),
        );
        f("block_tokens", Value::Int(t.limits.block_tokens));
        f("chunked_prefill", Value::Bool(t.limits.chunked_prefill));
        f("prompt_buckets", Value::Int(t.prompt_buckets.len() as u64));
        f("fp8_choice", Value::Text(self.fp8()));
        f("fp8_gemm_path", Value::Text(t.gemm_paths.fp8.name()));
    }
}
