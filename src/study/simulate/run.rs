//! The event loop: arrivals routed to instances (to prefill instances first, where prompts
//! are prefilled apart, and on to decode instances once each prompt's KV cache has arrived),
//! iterations run back to back while an instance has work, each request's first and last
//! token recorded. The next event is the earliest of the next arrival, the pools' first
//! iteration ends (`pool`) and the first cache in flight: O(log instances) an event.

use crate::base::error::Error;
use crate::core::engine::Admission;
use crate::study::request::SequenceBytes;

use super::clock::{Clock, Mix};
use super::instance::{Instance, Outcomes};
use super::pool::Pool;
use super::prefill::{PrefillInstance, Transfers};
use super::requests::Request;
use super::stats::SecondHalf;
use super::Router;
use super::{MAX_ITERATIONS, TIME_CAP_EXTRA_S, TIME_CAP_WINDOWS};

/// Each request's first and last token times (NaN until they come).
pub(super) struct Times {
    pub first_s: Vec<f64>,
    pub finish_s: Vec<f64>,
    pub finished: u64,
}

impl Outcomes for Times {
    fn first_token(&mut self, request: u32, at_s: f64) {
        self.first_s[request as usize] = at_s;
    }

    fn finished(&mut self, request: u32, at_s: f64) {
        self.finish_s[request as usize] = at_s;
        self.finished += 1;
    }
}

/// An instance's fixed quantities, from a reference step.
pub(super) struct Setup {
    pub chips_per_instance: u64,
    /// What one chip holds of a sequence: KV bytes per position and recurrent state.
    pub sequence_bytes: SequenceBytes,
    pub kv_blocks: u64,
    /// Blocks a running sequence's recurrent state takes.
    pub state_blocks: u64,
    pub max_batched_tokens: u64,
    pub max_seqs: u64,
    /// How the engine admits requests into the cache.
    pub admission: Admission,
}

/// The prefill instances of a run that prefills apart, and the caches in flight from them.
pub(super) struct PrefillSide<'a> {
    instances: Pool<PrefillInstance>,
    /// An idle prefill instance, copied as a request first reaches one.
    fresh: PrefillInstance,
    pub clock: Clock<'a>,
    transfers: Transfers,
    /// Each request's KV transfer time.
    transfer_s: Vec<f64>,
    /// Prompts the last prefill iteration finished (reused).
    done: Vec<u32>,
}

impl<'a> PrefillSide<'a> {
    /// `instances` prefill instances of `setup` behind `router`, idle, with each request's
    /// KV transfer time.
    pub(super) fn new(
        instances: u32,
        router: Router,
        setup: &Setup,
        clock: Clock<'a>,
        transfer_s: Vec<f64>,
    ) -> Self {
        PrefillSide {
            instances: Pool::new(instances as usize, router),
            fresh: PrefillInstance::new(setup.max_batched_tokens),
            clock,
            transfers: Transfers::default(),
            transfer_s,
            done: Vec::new(),
        }
    }
}

pub(super) struct Run<'a> {
    /// The decode (or, with prefill together, all) instances, made as requests reach them.
    pub instances: Pool<Instance>,
    /// An idle instance, copied as a request first reaches one.
    fresh: Instance,
    pub times: Times,
    pub clock: Clock<'a>,
    /// Decode (or, with prefill together, all) iterations, and the prefill instances'.
    pub iterations: u64,
    pub prefill_iterations: u64,
    /// Sequences over all decode iterations, for the mean batch.
    pub batch_sum: u64,
    pub half: SecondHalf,
    pub prefill: Option<PrefillSide<'a>>,
}

impl<'a> Run<'a> {
    /// `instances` decode (or, with prefill together, all) instances of `setup` behind
    /// `router`, idle, for `requests` requests, none of them arrived.
    pub(super) fn new(
        instances: u32,
        router: Router,
        setup: &Setup,
        requests: usize,
        clock: Clock<'a>,
        prefill: Option<PrefillSide<'a>>,
    ) -> Self {
        Run {
            instances: Pool::new(instances as usize, router),
            fresh: Instance::new(
                setup.kv_blocks,
                setup.state_blocks,
                setup.max_seqs,
                setup.max_batched_tokens,
                setup.admission,
            ),
            times: Times {
                first_s: vec![f64::NAN; requests],
                finish_s: vec![f64::NAN; requests],
                finished: 0,
            },
            clock,
            iterations: 0,
            prefill_iterations: 0,
            batch_sum: 0,
            half: SecondHalf::default(),
            prefill,
        }
    }
}

/// How a run ended.
pub(super) struct End {
    pub at_s: f64,
    pub capped: bool,
}

/// What happens next: on a tie, an arrival first, then a prefill iteration's end, a cache's
/// arrival and a decode iteration's end.
#[derive(Debug, Clone, Copy)]
enum Event {
    Arrival,
    Prefill(usize),
    Transfer,
    Decode(usize),
}

impl Run<'_> {
    /// The next event and its time, if any is left.
    fn next_event(&self, arrival: Option<f64>) -> Option<(f64, Event)> {
        let mut next: Option<(f64, Event)> = arrival.map(|a| (a, Event::Arrival));
        let mut consider = |t: f64, e: Event| {
            if next.is_none_or(|(n, _)| t < n) {
                next = Some((t, e));
            }
        };
        if let Some(p) = &self.prefill {
            if let Some((k, t)) = p.instances.next() {
                consider(t, Event::Prefill(k));
            }
            if let Some((t, _)) = p.transfers.next() {
                consider(t, Event::Transfer);
            }
        }
        if let Some((k, t)) = self.instances.next() {
            consider(t, Event::Decode(k));
        }
        next
    }

    /// Runs every event; returns when the last request finished or a cap was reached.
    pub(super) fn events(&mut self, list: &[Request], window_s: f64) -> Result<End, Error> {
        let cap_s = TIME_CAP_WINDOWS * window_s + TIME_CAP_EXTRA_S;
        let (mut next, mut now) = (0usize, 0.0f64);
        let (mut mid_seen, mut end_seen) = (false, false);
        while let Some((t, event)) = self.next_event(list.get(next).map(|r| r.arrival_s)) {
            // The second half's marks, taken before the events at or after them.
            let in_system = next as u64 - self.times.finished;
            if !mid_seen && t >= window_s / 2.0 {
                (mid_seen, self.half.in_system_start) = (true, in_system);
            }
            if !end_seen && t >= window_s {
                (end_seen, self.half.in_system_end) = (true, in_system);
            }
            let iterations = self.iterations + self.prefill_iterations;
            if t > cap_s || iterations >= MAX_ITERATIONS {
                return Ok(End {
                    at_s: now,
                    capped: true,
                });
            }
            now = t;
            match event {
                Event::Arrival => {
                    if t >= window_s / 2.0 {
                        self.half.arrived += 1;
                    }
                    self.arrive(next as u32, &list[next])?;
                    next += 1;
                }
                Event::Prefill(k) => self.prefilled(k, now)?,
                Event::Transfer => self.transferred(list, now)?,
                Event::Decode(k) => {
                    self.instances.pop();
                    let before = self.times.finished;
                    let times = &mut self.times;
                    self.instances.update(k, |i| i.complete(now, times));
                    if now >= window_s / 2.0 && now <= window_s {
                        self.half.finished += self.times.finished - before;
                    }
                    self.start(k, now)?;
                }
            }
        }
        if !end_seen {
            self.half.in_system_end = next as u64 - self.times.finished;
        }
        Ok(End {
            at_s: now,
            capped: false,
        })
    }

    /// Request `i` arrives: to a prefill instance where prompts are prefilled apart, else to
    /// a serving instance.
    fn arrive(&mut self, i: u32, r: &Request) -> Result<(), Error> {
        let now = r.arrival_s;
        if let Some(p) = &mut self.prefill {
            let k = p.instances.route(|| p.fresh.clone());
            p.instances.update(k, |inst| inst.arrive(i, r.input_tokens));
            if p.instances.get(k).busy_until.is_none() {
                self.start_prefill(k, now)?;
            }
            return Ok(());
        }
        self.route_to_instance(now, |inst| inst.arrive(i, r.input_tokens, r.output_tokens))
    }

    /// Routes a request to a serving (with prefill apart, a decode) instance, which `enter`
    /// queues it on, and starts that instance if it was idle.
    fn route_to_instance(
        &mut self,
        now_s: f64,
        enter: impl FnOnce(&mut Instance),
    ) -> Result<(), Error> {
        let k = self.instances.route(|| self.fresh.clone());
        self.instances.update(k, enter);
        if self.instances.get(k).busy_until.is_none() {
            self.start(k, now_s)?;
        }
        Ok(())
    }

    /// Prefill instance `k`'s iteration ends at `now_s`: the first token of each prompt it
    /// finished counts once the prompt's cache reaches the decode side.
    fn prefilled(&mut self, k: usize, now_s: f64) -> Result<(), Error> {
        let p = self.prefill.as_mut().expect("a prefill side");
        p.instances.pop();
        p.done.clear();
        let done = &mut p.done;
        p.instances.update(k, |inst| inst.complete(done));
        for &r in &p.done {
            let at_s = now_s + p.transfer_s[r as usize];
            self.times.first_s[r as usize] = at_s;
            p.transfers.send(r, at_s);
        }
        self.start_prefill(k, now_s)
    }

    /// The earliest cache in flight arrives: its request joins a decode instance's queue.
    fn transferred(&mut self, list: &[Request], now_s: f64) -> Result<(), Error> {
        let p = self.prefill.as_mut().expect("a prefill side");
        let Some((_, r)) = p.transfers.next() else {
            return Ok(());
        };
        p.transfers.pop();
        let request = &list[r as usize];
        self.route_to_instance(now_s, |inst| {
            inst.arrive_prefilled(r, request.input_tokens, request.output_tokens)
        })
    }

    /// Starts prefill instance `k`'s next iteration at `now_s`, if it has prompts.
    fn start_prefill(&mut self, k: usize, now_s: f64) -> Result<(), Error> {
        let p = self.prefill.as_mut().expect("a prefill side");
        let mix = p.instances.update(k, PrefillInstance::schedule);
        if mix.prefill_seqs == 0 {
            return Ok(());
        }
        let end_s = now_s + p.clock.time_s(&mix)?;
        p.instances.update(k, |inst| inst.busy_until = Some(end_s));
        p.instances.busy_until(k, end_s);
        self.prefill_iterations += 1;
        Ok(())
    }

    /// Starts instance `k`'s next iteration at `now_s`, if it has work.
    fn start(&mut self, k: usize, now_s: f64) -> Result<(), Error> {
        let mix: Mix = self.instances.update(k, Instance::schedule);
        let seqs = mix.decode_seqs + mix.prefill_seqs;
        if seqs == 0 {
            if self.instances.get(k).has_work() {
                return Err(Error::value(
                    "the scheduler could run nothing with requests waiting (KV cache too small for one prompt chunk)",
                ));
            }
            return Ok(());
        }
        let end_s = now_s + self.clock.time_s(&mix)?;
        self.instances
            .update(k, |inst| inst.busy_until = Some(end_s));
        self.instances.busy_until(k, end_s);
        self.iterations += 1;
        self.batch_sum += seqs as u64;
        Ok(())
    }
}
