//! What an iteration costs: each composition priced through one reused `IterationPricer`,
//! exactly or from a cache.
//!
//! The cache. An iteration is keyed on its exact counts (decoding sequences, prompt tokens,
//! prompt sequences) and priced at the grid points of [`CONTEXT_GRID`] tokens below and above
//! each of its mean contexts (decoding and prompt), interpolated linearly between them. Attention's
//! FLOPs and KV bytes are linear in the context, so within one bound regime of each kernel the
//! interpolation is exact; where a kernel turns from memory- to compute-bound inside a cell it
//! is off by at most the kink's share of that cell (the error a run measures with
//! `audit`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::base::error::Error;
use crate::core::timing::{Iteration, IterationPricer};

/// Context grid step of the cache, in tokens: fine beside the contexts served (thousands of
/// tokens), coarse enough that a run of growing contexts reuses each point for 128 steps.
pub const CONTEXT_GRID: f64 = 128.0;

/// An iteration's composition, as the scheduler counts it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Mix {
    pub decode_seqs: u32,
    /// Sum of the decoding sequences' contexts (positions already in their KV cache).
    pub decode_context_sum: u64,
    pub prefill_tokens: u32,
    pub prefill_seqs: u32,
    /// Sum of the prompt sequences' prior contexts.
    pub prefill_context_sum: u64,
}

impl Mix {
    fn decode_context(&self) -> f64 {
        mean(self.decode_context_sum, self.decode_seqs)
    }

    fn prefill_context(&self) -> f64 {
        mean(self.prefill_context_sum, self.prefill_seqs)
    }

    fn iteration(&self, decode_context: f64, prefill_context: f64) -> Iteration {
        Iteration::decode(self.decode_seqs as f64, decode_context).with_prefill(
            self.prefill_tokens as f64,
            self.prefill_seqs as f64,
            prefill_context,
        )
    }
}

fn mean(sum: u64, n: u32) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum as f64 / n as f64
    }
}

/// Prices iterations.
pub(super) struct Clock<'a> {
    pricer: IterationPricer<'a>,
    exact: bool,
    cache: HashMap<(u32, u32, u32, u32, u32), f64, BuildHasherDefault<Mixer>>,
    /// Iterations priced exactly against the cache's answer: the largest relative error.
    audit: Option<f64>,
    /// Steps priced by the pricer (cache misses, or every iteration when exact).
    pub steps_priced: u64,
    /// What each iteration's time is multiplied by: one, or an end of its 80 % band.
    scale: StepScale,
}

/// Multipliers of iteration times: a decode-only iteration's, and one carrying prompt tokens'
/// (an end of the decode and of the prefill step's 80 % band).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StepScale {
    pub decode: f64,
    pub prefill: f64,
}

impl StepScale {
    /// Times as priced.
    pub(super) const ONE: StepScale = StepScale {
        decode: 1.0,
        prefill: 1.0,
    };

    fn of(&self, mix: &Mix) -> f64 {
        if mix.prefill_tokens > 0 {
            self.prefill
        } else {
            self.decode
        }
    }
}

impl<'a> Clock<'a> {
    pub(super) fn new(pricer: IterationPricer<'a>, exact: bool, audit: bool) -> Clock<'a> {
        Clock {
            pricer,
            exact,
            cache: HashMap::default(),
            audit: audit.then_some(0.0),
            steps_priced: 0,
            scale: StepScale::ONE,
        }
    }

    /// The same clock, its iteration times multiplied by `scale`.
    pub(super) fn scaled(self, scale: StepScale) -> Clock<'a> {
        Clock { scale, ..self }
    }

    /// The largest relative error of the cache against exact pricing over the iterations
    /// priced, where auditing.
    pub(super) fn audit(&self) -> Option<f64> {
        self.audit
    }

    /// The pricer (for summaries of reference steps).
    pub(super) fn pricer(&mut self) -> &mut IterationPricer<'a> {
        &mut self.pricer
    }

    /// One iteration's time.
    pub(super) fn time_s(&mut self, mix: &Mix) -> Result<f64, Error> {
        Ok(self.priced_s(mix)? * self.scale.of(mix))
    }

    fn priced_s(&mut self, mix: &Mix) -> Result<f64, Error> {
        if self.exact {
            return self.exact_s(mix);
        }
        let cached = self.cached_s(mix)?;
        if let Some(worst) = self.audit {
            let exact = self.exact_s(mix)?;
            self.audit = Some(worst.max((cached - exact).abs() / exact));
        }
        Ok(cached)
    }

    fn exact_s(&mut self, mix: &Mix) -> Result<f64, Error> {
        self.steps_priced += 1;
        let it = mix.iteration(mix.decode_context(), mix.prefill_context());
        let summary = self.pricer.price(&it)?;
        Ok(self.pricer.iteration_s(&summary))
    }

    fn cached_s(&mut self, mix: &Mix) -> Result<f64, Error> {
        let cell = |context: f64| {
            let x = context / CONTEXT_GRID;
            let i = x.floor();
            (i as u32, x - i)
        };
        let (di, df) = cell(mix.decode_context());
        let (pi, pf) = cell(mix.prefill_context());
        // The decoding and the prompt sequences' attention are kernels of their own, each
        // depending on its own context only: the step time is a sum of a function of each, so
        // three corners price it (a fourth would add nothing).
        let base = self.corner_s(mix, di, pi)?;
        let mut total = base;
        if df > 0.0 {
            total += df * (self.corner_s(mix, di + 1, pi)? - base);
        }
        if pf > 0.0 {
            total += pf * (self.corner_s(mix, di, pi + 1)? - base);
        }
        Ok(total)
    }

    /// The iteration of `mix`'s counts at grid contexts `di` and `pi`.
    fn corner_s(&mut self, mix: &Mix, di: u32, pi: u32) -> Result<f64, Error> {
        let key = (
            mix.decode_seqs,
            mix.prefill_tokens,
            mix.prefill_seqs,
            di,
            pi,
        );
        if let Some(t) = self.cache.get(&key) {
            return Ok(*t);
        }
        self.steps_priced += 1;
        let it = mix.iteration(di as f64 * CONTEXT_GRID, pi as f64 * CONTEXT_GRID);
        let summary = self.pricer.price(&it)?;
        let t = self.pricer.iteration_s(&summary);
        self.cache.insert(key, t);
        Ok(t)
    }
}

/// A multiply-rotate hasher for the cache's small integer keys (the standard library's
/// SipHash costs more than the rest of a cached iteration).
#[derive(Default)]
pub(super) struct Mixer(u64);

impl Hasher for Mixer {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        // An odd constant near 2^64 over the golden ratio spreads consecutive keys.
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}
