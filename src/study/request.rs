//! A request as serving and the simulator both take it: its shape (prompt and output
//! tokens), and what moving its sequence between a disaggregated prefill instance and a
//! decode instance holds and costs. Below both: `serving` prices requests in steady state,
//! `simulate` one by one as they arrive, and `serving` checks a fleet by simulating it.

use serde::Serialize;

use crate::base::error::{Error, PastPositions};
use crate::core::chip::Chip;
use crate::core::workload::Workload;

/// A request's shape: prompt and output tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RequestShape {
    /// Prompt tokens, all processed by the prefill; at least 1.
    pub input_tokens: u64,
    /// Output tokens, the first from the prefill and the rest decoded one a step; at least 2.
    pub output_tokens: u64,
}

impl RequestShape {
    /// A shape serving can price: at least one prompt token and two output tokens (one
    /// from the prefill, at least one decoded).
    pub fn new(input_tokens: u64, output_tokens: u64) -> Result<RequestShape, Error> {
        if input_tokens == 0 || output_tokens < 2 {
            return Err(Error::value(format!(
                "serving needs a request of at least 1 input and 2 output tokens, not in={input_tokens},out={output_tokens}"
            )));
        }
        Ok(RequestShape {
            input_tokens,
            output_tokens,
        })
    }

    /// Refuses a request whose prompt and output pass the model's `max_positions`, as an
    /// engine refuses a prompt + max_tokens above its max_model_len (vLLM); a model without
    /// the key takes any.
    pub fn check_positions(&self, workload: &Workload) -> Result<(), Error> {
        check_positions(workload, self.input_tokens, self.output_tokens)
    }

    /// The mean context of a request's decode steps (contexts `I` to `I + O - 2`).
    pub fn mean_decode_context(&self) -> f64 {
        self.input_tokens as f64 + (self.output_tokens as f64 - 2.0) / 2.0
    }
}

/// Refuses a request of `input_tokens` + `output_tokens` past `workload`'s `max_positions`.
pub(crate) fn check_positions(
    workload: &Workload,
    input_tokens: u64,
    output_tokens: u64,
) -> Result<(), Error> {
    let total = input_tokens.saturating_add(output_tokens);
    match workload.max_positions() {
        Some(limit) if total > limit => Err(Error::PastPositions(Box::new(PastPositions {
            model: workload.name().to_owned(),
            limit,
            positions: total as f64,
            sum: format!("request in {input_tokens} + out {output_tokens}"),
        }))),
        _ => Ok(()),
    }
}

/// How a disaggregated prompt's KV cache reaches its decode instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum KvLink {
    /// Over the chip's scale-out network (its scale-up link where it has no network), each
    /// chip sending its shard.
    #[default]
    Priced,
    /// At no cost (a bound: what disaggregation gives at best).
    Free,
}

/// What one chip holds of one sequence: KV bytes per cached position, and the recurrent
/// state (a state-space model's, the same at any context; 0 without one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SequenceBytes {
    /// KV cache bytes per cached position, on one chip.
    pub kv_per_token: f64,
    /// Recurrent-state bytes on one chip, whatever the context; 0 without a state.
    pub state: f64,
}

impl SequenceBytes {
    /// A sequence of `tokens` positions: its KV cache and its state.
    pub fn of(&self, tokens: u64) -> f64 {
        self.kv_per_token * tokens as f64 + self.state
    }
}

/// Sending a prompt's sequence between the pools, `bytes_per_chip` on the busiest chip's
/// side (the larger of what each prefill chip sends and each decode chip receives: a pool of
/// fewer chips holds a larger shard of the cache on each), over the chip's network (its
/// scale-up link where it has none); nothing over a free link.
pub(crate) fn kv_transfer_s(chip: &Chip, link: KvLink, bytes_per_chip: f64) -> Result<f64, Error> {
    if link == KvLink::Free {
        return Ok(0.0);
    }
    let network = chip.network.as_ref().map(|n| n.bandwidth_bytes_per_s);
    let scale_up = (chip.interconnect.as_ref()).map(|i| i.bandwidth_bytes_per_s);
    match network.or(scale_up) {
        Some(bandwidth) => Ok(bytes_per_chip / bandwidth),
        None => Err(Error::value(format!(
            "{} has no network or scale-up link to send a prompt's KV cache over",
            chip.id()
        ))),
    }
}
