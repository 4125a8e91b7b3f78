//! Prefill apart: instances that only prefill, and the KV transfers in flight to the decode
//! instances.
//!
//! A prefill instance keeps a queue of prompts and runs iterations back to back while it has
//! any: each takes prompts from the queue's front up to `max_batched_tokens` tokens (the last
//! one in chunks where it does not fit), with no decode tokens beside them. A prompt whose
//! last chunk is computed samples the first token there, and its KV cache is sent to a decode
//! instance, which admits it once it has arrived and its blocks are free. Its memory holds the
//! prompts of one iteration (each run is refused up front where one prompt's cache does not
//! fit an instance).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::clock::Mix;
use super::pool::Member;

/// A prompt waiting or being prefilled.
#[derive(Debug, Clone, Copy)]
struct Prompt {
    request: u32,
    tokens: u64,
    computed: u64,
    scheduled: u64,
}

/// One prefill instance's state.
#[derive(Debug, Clone)]
pub(super) struct PrefillInstance {
    queue: VecDeque<Prompt>,
    max_batched_tokens: u64,
    /// When the iteration in flight ends.
    pub busy_until: Option<f64>,
}

impl Member for PrefillInstance {
    /// Prompts queued or being prefilled: what a least-loaded router compares.
    fn load(&self) -> usize {
        self.queue.len()
    }
}

impl PrefillInstance {
    pub(super) fn new(max_batched_tokens: u64) -> PrefillInstance {
        PrefillInstance {
            queue: VecDeque::new(),
            max_batched_tokens,
            busy_until: None,
        }
    }

    pub(super) fn arrive(&mut self, request: u32, input_tokens: u64) {
        self.queue.push_back(Prompt {
            request,
            tokens: input_tokens,
            computed: 0,
            scheduled: 0,
        });
    }

    /// Composes the next iteration: prompt chunks from the queue's front within the budget
    /// (empty when the queue is).
    pub(super) fn schedule(&mut self) -> Mix {
        let mut budget = self.max_batched_tokens;
        let mut mix = Mix::default();
        for p in self.queue.iter_mut() {
            if budget == 0 {
                break;
            }
            let chunk = (p.tokens - p.computed).min(budget);
            p.scheduled = chunk;
            mix.prefill_tokens += chunk as u32;
            mix.prefill_seqs += 1;
            mix.prefill_context_sum += p.computed;
            budget -= chunk;
        }
        mix
    }

    /// Ends the iteration in flight: chunks advance, and the prompts now whole leave the
    /// queue (a prefix of it: only the last prompt of an iteration may be partial), into
    /// `done`.
    pub(super) fn complete(&mut self, done: &mut Vec<u32>) {
        for p in self.queue.iter_mut() {
            if p.scheduled == 0 {
                break;
            }
            p.computed += p.scheduled;
            p.scheduled = 0;
        }
        while let Some(p) = self.queue.front().filter(|p| p.computed == p.tokens) {
            done.push(p.request);
            self.queue.pop_front();
        }
        self.busy_until = None;
    }
}

/// KV caches on their way to a decode instance, earliest arrival first (then request order).
#[derive(Debug, Default)]
pub(super) struct Transfers(BinaryHeap<Reverse<(u64, u32)>>);

impl Transfers {
    /// `request`'s cache arrives at `at_s` (a time at least 0, whose bits order as it does).
    pub(super) fn send(&mut self, request: u32, at_s: f64) {
        self.0.push(Reverse((at_s.max(0.0).to_bits(), request)));
    }

    /// The next arrival: when, and which request.
    pub(super) fn next(&self) -> Option<(f64, u32)> {
        self.0
            .peek()
            .map(|Reverse((t, r))| (f64::from_bits(*t), *r))
    }

    pub(super) fn pop(&mut self) {
        self.0.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_fill_the_budget_in_order_and_the_last_is_chunked() {
        let mut p = PrefillInstance::new(100);
        p.arrive(0, 30);
        p.arrive(1, 50);
        p.arrive(2, 40);
        // 30 + 50 + the first 20 of 40.
        let mix = p.schedule();
        assert_eq!((mix.prefill_tokens, mix.prefill_seqs), (100, 3));
        assert_eq!(mix.decode_seqs, 0);
        let mut done = Vec::new();
        p.complete(&mut done);
        assert_eq!(done, vec![0, 1]);
        // The rest of the third, at its prior context of 20.
        let mix = p.schedule();
        assert_eq!((mix.prefill_tokens, mix.prefill_context_sum), (20, 20));
        p.complete(&mut done);
        assert_eq!(done, vec![0, 1, 2]);
        assert_eq!(p.load(), 0);
    }

    #[test]
    fn transfers_arrive_earliest_first() {
        let mut t = Transfers::default();
        t.send(3, 2.5);
        t.send(1, 0.5);
        t.send(2, 2.5);
        assert_eq!(t.next(), Some((0.5, 1)));
        t.pop();
        assert_eq!(t.next(), Some((2.5, 2)));
        t.pop();
        assert_eq!(t.next(), Some((2.5, 3)));
    }
}
