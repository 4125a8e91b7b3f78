//! One serving instance: its queue, its running sequences and their KV blocks, and the
//! scheduler that composes each iteration, after vLLM V1's with chunked prefill. A model with
//! recurrent state (a state-space model's, the same size at any context) gives each running
//! sequence, a prompt being prefilled included, `state_blocks` blocks more for it from
//! admission until it finishes or is preempted.
//!
//! A sequence holds `tokens` known tokens (its prompt and what it has generated) of which
//! `computed` are in its KV cache. An iteration gives it `tokens - computed` new tokens (one,
//! decoding) or a chunk of them (a prompt); when all are computed it samples a token. Each
//! iteration, in order:
//!
//! 1. every running sequence with one token to compute decodes it, oldest admission first;
//! 2. running sequences part-way through their prompt, then the waiting queue from its
//!    front, fill what is left of `max_batched_tokens` with prompt chunks (a new sequence is
//!    admitted only while fewer than `max_seqs` run and its chunk's and state's blocks are
//!    free);
//! 3. a running sequence that needs a KV block when none is free preempts the most recently
//!    admitted running sequence not yet given tokens this iteration (itself, if it is the
//!    last): its blocks are freed and it returns to the front of the queue, to recompute its
//!    prompt and every token it had generated (vLLM's recompute preemption).
//!
//! Where prompts are prefilled apart, a request joins the queue once its KV cache has
//! arrived, its prompt computed and its first token sampled, and is admitted decoding.
//!
//! Under an engine that reserves whole requests (TensorRT-LLM's GUARANTEED_NO_EVICT), a
//! sequence is admitted only where the blocks of its whole prompt and output are free, and
//! holds them all from admission: it never needs another block, so none is preempted.

use std::collections::VecDeque;

use super::clock::Mix;
use super::pool::Member;
use crate::core::engine::Admission;

/// Tokens a KV block holds (vLLM's default `--block-size` on GPUs).
pub const BLOCK_TOKENS: u64 = 16;

/// A request being served.
#[derive(Debug, Clone, Copy)]
struct Seq {
    /// Index of its request in the run.
    request: u32,
    tokens: u64,
    computed: u64,
    generated: u64,
    output: u64,
    blocks: u64,
    /// Tokens given it in the iteration in flight.
    scheduled: u64,
}

/// What an instance's finished iteration produced, per request.
pub(super) trait Outcomes {
    fn first_token(&mut self, request: u32, at_s: f64);
    fn finished(&mut self, request: u32, at_s: f64);
}

/// One instance's state.
#[derive(Debug, Clone)]
pub(super) struct Instance {
    waiting: VecDeque<Seq>,
    running: Vec<Seq>,
    free_blocks: u64,
    /// Blocks each running sequence's recurrent state takes (0 without one).
    state_blocks: u64,
    max_seqs: usize,
    max_batched_tokens: u64,
    admission: Admission,
    /// When the iteration in flight ends.
    pub busy_until: Option<f64>,
    pub preemptions: u64,
}

impl Member for Instance {
    /// Requests in flight and queued: what a least-loaded router compares.
    fn load(&self) -> usize {
        self.waiting.len() + self.running.len()
    }
}

fn blocks_for(tokens: u64) -> u64 {
    tokens.div_ceil(BLOCK_TOKENS)
}

impl Instance {
    pub(super) fn new(
        kv_blocks: u64,
        state_blocks: u64,
        max_seqs: u64,
        max_batched_tokens: u64,
        admission: Admission,
    ) -> Instance {
        Instance {
            waiting: VecDeque::new(),
            running: Vec::new(),
            free_blocks: kv_blocks,
            state_blocks,
            max_seqs: max_seqs as usize,
            max_batched_tokens,
            admission,
            busy_until: None,
            preemptions: 0,
        }
    }

    pub(super) fn has_work(&self) -> bool {
        self.load() > 0
    }

    /// Queues a request.
    pub(super) fn arrive(&mut self, request: u32, input_tokens: u64, output_tokens: u64) {
        self.waiting.push_back(Seq {
            request,
            tokens: input_tokens,
            computed: 0,
            generated: 0,
            output: output_tokens,
            blocks: 0,
            scheduled: 0,
        });
    }

    /// Queues a request whose prompt was prefilled elsewhere and whose KV cache has arrived:
    /// its first token is sampled, the next one decodes.
    pub(super) fn arrive_prefilled(&mut self, request: u32, input_tokens: u64, output_tokens: u64) {
        self.waiting.push_back(Seq {
            request,
            tokens: input_tokens + 1,
            computed: input_tokens,
            generated: 1,
            output: output_tokens,
            blocks: 0,
            scheduled: 0,
        });
    }

    /// Composes the next iteration (empty when there is nothing to run).
    pub(super) fn schedule(&mut self) -> Mix {
        let mut budget = self.max_batched_tokens;
        let mut mix = Mix::default();
        // 1. Decodes, oldest admission first.
        let (mut i, mut partial) = (0, 0);
        while i < self.running.len() && budget > 0 {
            let s = self.running[i];
            if s.tokens - s.computed != 1 {
                partial += 1;
                i += 1;
                continue;
            }
            // Most decodes land inside a block they hold.
            if s.computed + 1 > s.blocks * BLOCK_TOKENS && !self.make_room(i, 1) {
                partial += 1; // those after it are unseen
                break;
            }
            self.running[i].scheduled = 1;
            mix.decode_seqs += 1;
            mix.decode_context_sum += s.computed;
            budget -= 1;
            i += 1;
        }
        // 2. Prompts part-way through, in admission order (where pass 1 passed any, or stopped
        // before seeing them all).
        let mut i = 0;
        while partial > 0 && i < self.running.len() && budget > 0 {
            let s = self.running[i];
            let left = s.tokens - s.computed;
            if left <= 1 || s.scheduled > 0 {
                i += 1;
                continue;
            }
            let chunk = left.min(budget);
            if !self.make_room(i, chunk) {
                break;
            }
            self.running[i].scheduled = chunk;
            add_prompt(&mut mix, chunk, s.computed);
            budget -= chunk;
            i += 1;
        }
        // 3. The queue, from its front.
        while budget > 0 && self.running.len() < self.max_seqs {
            let Some(front) = self.waiting.front() else {
                break;
            };
            let chunk = (front.tokens - front.computed).min(budget);
            let need = match self.admission {
                Admission::OnDemand => blocks_for(front.computed + chunk),
                // Its prompt and output: the tokens known less those generated, and all of
                // its output.
                Admission::ReserveWhole => {
                    blocks_for(front.tokens - front.generated + front.output)
                }
            };
            if need + self.state_blocks > self.free_blocks {
                break;
            }
            let mut s = self.waiting.pop_front().expect("a front");
            self.free_blocks -= need + self.state_blocks;
            s.blocks = need;
            s.scheduled = chunk;
            // A cache that came from a prefill instance is admitted decoding.
            if s.computed > 0 && chunk == 1 && s.tokens - s.computed == 1 {
                mix.decode_seqs += 1;
                mix.decode_context_sum += s.computed;
            } else {
                add_prompt(&mut mix, chunk, s.computed);
            }
            budget -= chunk;
            self.running.push(s);
        }
        mix
    }

    /// Gives running sequence `i` the blocks for `new` more tokens, preempting the most
    /// recently admitted sequences not yet scheduled this iteration while none are free.
    /// False when `i` itself was preempted, or only scheduled sequences are left to preempt.
    fn make_room(&mut self, i: usize, new: u64) -> bool {
        let s = self.running[i];
        let need = blocks_for(s.computed + new).saturating_sub(s.blocks);
        while self.free_blocks < need {
            let last = self.running.len() - 1;
            if last != i && self.running[last].scheduled > 0 {
                return false;
            }
            let mut victim = self.running.pop().expect("a running sequence");
            self.free_blocks += victim.blocks + self.state_blocks;
            victim.blocks = 0;
            victim.computed = 0;
            self.waiting.push_front(victim);
            self.preemptions += 1;
            if last == i {
                return false;
            }
        }
        self.free_blocks -= need;
        self.running[i].blocks += need;
        true
    }

    /// Ends the iteration in flight at `now_s`: computed tokens advance, sequences whose
    /// tokens are all computed sample one, and finished ones leave with their blocks.
    pub(super) fn complete(&mut self, now_s: f64, out: &mut impl Outcomes) {
        // Advance in place, and move sequences only when one finished (most iterations
        // finish none).
        let mut done = 0;
        for s in &mut self.running {
            s.computed += s.scheduled;
            if s.scheduled == 0 || s.computed < s.tokens {
                s.scheduled = 0;
                continue;
            }
            s.scheduled = 0;
            s.generated += 1;
            s.tokens += 1;
            if s.generated == 1 {
                out.first_token(s.request, now_s);
            }
            if s.generated == s.output {
                out.finished(s.request, now_s);
                self.free_blocks += s.blocks + self.state_blocks;
                done += 1;
            }
        }
        if done > 0 {
            self.running.retain(|s| s.generated < s.output);
        }
        self.busy_until = None;
    }
}

fn add_prompt(mix: &mut Mix, chunk: u64, prior: u64) {
    mix.prefill_tokens += chunk as u32;
    mix.prefill_seqs += 1;
    mix.prefill_context_sum += prior;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log(Vec<(u32, &'static str, f64)>);

    impl Outcomes for Log {
        fn first_token(&mut self, request: u32, at_s: f64) {
            self.0.push((request, "first", at_s));
        }

        fn finished(&mut self, request: u32, at_s: f64) {
            self.0.push((request, "finished", at_s));
        }
    }

    #[test]
    fn reserving_whole_requests_admits_only_those_whose_whole_cache_is_free() {
        // Ten blocks (160 tokens). Three requests of a 16-token prompt and 48 output tokens:
        // on demand each takes the one block of its prompt, all three run; reserved, each
        // takes the 4 blocks of 16 + 48 tokens, so two run and the third waits.
        let running = |admission| {
            let mut inst = Instance::new(10, 0, 8, 100, admission);
            for r in 0..3 {
                inst.arrive(r, 16, 48);
            }
            let mix = inst.schedule();
            (mix.prefill_seqs, inst.free_blocks, inst.waiting.len())
        };
        assert_eq!(running(Admission::OnDemand), (3, 7, 0));
        assert_eq!(running(Admission::ReserveWhole), (2, 2, 1));
        // Reserved, a request runs to its end without another block: none is preempted
        // where on demand the cache fills (four blocks, two requests of 30 + 10 tokens: 3
        // blocks each, so only one is admitted).
        let mut inst = Instance::new(4, 0, 8, 100, Admission::ReserveWhole);
        inst.arrive(0, 30, 10);
        inst.arrive(1, 30, 10);
        let mut log = Log::default();
        for t in 1..=20 {
            inst.schedule();
            inst.complete(f64::from(t), &mut log);
        }
        assert_eq!(inst.preemptions, 0);
        let finished: Vec<u32> = (log.0.iter())
            .filter(|(_, what, _)| *what == "finished")
            .map(|(r, ..)| *r)
            .collect();
        assert_eq!(finished, vec![0, 1]);
        assert_eq!(inst.free_blocks, 4);
    }

    #[test]
    fn a_full_cache_preempts_the_newest_sequence_and_requeues_it_at_the_front() {
        // Four blocks (64 tokens); two prompts of 30 tokens take two blocks each.
        let mut inst = Instance::new(4, 0, 8, 100, Admission::OnDemand);
        inst.arrive(0, 30, 10);
        inst.arrive(1, 30, 10);
        let mut log = Log::default();
        let first = inst.schedule();
        assert_eq!(
            (first.prefill_tokens, first.prefill_seqs, first.decode_seqs),
            (60, 2, 0)
        );
        inst.complete(1.0, &mut log);
        assert_eq!(log.0, vec![(0, "first", 1.0), (1, "first", 1.0)]);
        // Contexts 30 and 31 fit the 32 positions each holds.
        for t in [2.0, 3.0] {
            let mix = inst.schedule();
            assert_eq!((mix.decode_seqs, mix.prefill_seqs), (2, 0));
            inst.complete(t, &mut log);
        }
        // Request 0 needs a third block and none is free: request 1, admitted last, gives
        // its two back and waits to recompute its 30 + 3 tokens (3 blocks; 1 is free).
        let mix = inst.schedule();
        assert_eq!(inst.preemptions, 1);
        assert_eq!((mix.decode_seqs, mix.decode_context_sum), (1, 32));
        assert_eq!(mix.prefill_seqs, 0);
        assert_eq!((inst.running.len(), inst.waiting.len()), (1, 1));
        assert_eq!(inst.waiting[0].tokens - inst.waiting[0].computed, 33);
        assert_eq!(inst.free_blocks, 1);
    }

    #[test]
    fn a_request_prefilled_elsewhere_is_admitted_decoding_at_its_prompts_context() {
        let mut inst = Instance::new(1000, 0, 8, 64, Admission::OnDemand);
        inst.arrive_prefilled(0, 100, 3);
        let mut log = Log::default();
        // Its cache holds the 100 prompt positions; the sampled first token decodes.
        let mix = inst.schedule();
        assert_eq!((mix.decode_seqs, mix.decode_context_sum), (1, 100));
        assert_eq!((mix.prefill_seqs, mix.prefill_tokens), (0, 0));
        assert_eq!(inst.free_blocks, 1000 - 101u64.div_ceil(BLOCK_TOKENS));
        inst.complete(1.0, &mut log);
        let mix = inst.schedule();
        assert_eq!(mix.decode_context_sum, 101);
        inst.complete(2.0, &mut log);
        // Two decoded tokens after the prefill's: done, with no first token reported here.
        assert_eq!(log.0, vec![(0, "finished", 2.0)]);
        assert_eq!(inst.free_blocks, 1000);
    }

    #[test]
    fn decodes_come_first_and_prompts_fill_what_is_left_of_the_budget() {
        let mut inst = Instance::new(1000, 0, 8, 64, Admission::OnDemand);
        inst.arrive(0, 10, 5);
        let mut log = Log::default();
        inst.schedule();
        inst.complete(1.0, &mut log);
        inst.arrive(1, 100, 5);
        // One decode token, then 63 of the new prompt's 100; the next iteration its last 37.
        let mix = inst.schedule();
        assert_eq!((mix.decode_seqs, mix.prefill_tokens), (1, 63));
        inst.complete(2.0, &mut log);
        let mix = inst.schedule();
        assert_eq!((mix.decode_seqs, mix.prefill_tokens), (1, 37));
        assert_eq!(mix.prefill_context_sum, 63);
        inst.complete(3.0, &mut log);
        assert_eq!(log.0.last(), Some(&(1, "first", 3.0)));
    }
}
