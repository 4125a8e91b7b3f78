//! The event loop: arrivals routed to instances, iterations run back to back while an
//! instance has work, each request's first and last token recorded.

use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::engine::chip::Chip;
use crate::engine::price::{Iteration, IterationPricer};
use crate::engine::scenario::Scenario;
use crate::engine::workload::Workload;

use super::clock::{Clock, Mix};
use super::instance::{Instance, Outcomes, BLOCK_TOKENS};
use super::requests::{requests, Arrivals, Horizon, Request};
use super::stats::{Percentiles, SecondHalf};
use super::{default_max_seqs, Router, SimConfig, SimReport};
use super::{MAX_ITERATIONS, TIME_CAP_EXTRA_S, TIME_CAP_WINDOWS};

/// Each request's first and last token times (NaN until they come).
struct Times {
    first_s: Vec<f64>,
    finish_s: Vec<f64>,
    finished: u64,
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
struct Setup {
    chips_per_instance: u64,
    kv_blocks: u64,
    /// Blocks a running sequence's recurrent state takes.
    state_blocks: u64,
    max_batched_tokens: u64,
    max_seqs: u64,
}

/// Simulates `config` for `workload` on `chip` at `scenario` (types, plan, layout, mode).
pub fn simulate(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    config: &SimConfig,
) -> Result<SimReport, Error> {
    if config.instances == 0 {
        return Err(Error::value(
            "--instances: a run needs at least one instance",
        ));
    }
    let list = requests(
        &config.arrivals,
        config.horizon,
        &config.lengths,
        config.seed,
    )?;
    let mut clock = Clock::new(
        IterationPricer::new(workload, chip, scenario)?,
        config.exact,
        config.audit,
    );
    let setup = setup(workload, chip, scenario, config, &mut clock)?;
    check_fits(&list, &setup)?;
    let window_s = match (&config.arrivals, config.horizon) {
        (Arrivals::Trace(_), _) | (_, Horizon::Requests { .. }) => {
            list.last().map_or(0.0, |r| r.arrival_s)
        }
        (_, Horizon::Duration { s }) => s,
    };
    let mut run = Run {
        instances: (0..config.instances)
            .map(|_| {
                let blocks = (setup.kv_blocks, setup.state_blocks);
                Instance::new(blocks.0, blocks.1, setup.max_seqs, setup.max_batched_tokens)
            })
            .collect(),
        times: Times {
            first_s: vec![f64::NAN; list.len()],
            finish_s: vec![f64::NAN; list.len()],
            finished: 0,
        },
        clock,
        iterations: 0,
        batch_sum: 0,
        turn: 0,
        half: SecondHalf::default(),
    };
    let end = run.events(&list, config.router, window_s)?;
    Ok(report(run, &list, config, &setup, window_s, end))
}

/// The KV budget, the token budget and the sequence cap of one instance.
fn setup(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    config: &SimConfig,
    clock: &mut Clock,
) -> Result<Setup, Error> {
    // A decode step of one sequence holding `REFERENCE` positions: its KV bytes over those
    // positions are the bytes per token, its recurrent state one sequence's; the rest of its
    // footprint is what no sequence holds.
    const REFERENCE: f64 = 1024.0;
    let step = clock
        .pricer()
        .price(&Iteration::decode(1.0, REFERENCE - 1.0))?;
    let per_token = step.kv_bytes / REFERENCE;
    let fixed_bytes = step.footprint_bytes - step.kv_bytes - step.state_bytes;
    let room = step.usable_bytes - fixed_bytes;
    let fits = per_token > 0.0 && room >= per_token * BLOCK_TOKENS as f64;
    if !fits {
        return Err(Error::value(format!(
            "no room for a KV block: {:.3} GB usable, {:.3} GB of weights, workspace and reserve",
            step.usable_bytes / 1e9,
            fixed_bytes / 1e9
        )));
    }
    let kv_blocks = ((room / per_token).floor() as u64) / BLOCK_TOKENS;
    // The state is held in the same pool, in whole blocks.
    let state_blocks = (step.state_bytes / (per_token * BLOCK_TOKENS as f64)).ceil() as u64;
    let budget = match workload.param(ScenarioParam::MaxBatchedTokens) {
        None => f64::from(u32::MAX / 2),
        Some(i) => {
            let mut ev = workload.new_evaluation();
            workload.evaluate(&scenario.overrides, &mut ev)?;
            ev.params[i]
        }
    };
    if budget.is_nan() || budget < 1.0 {
        return Err(Error::value(format!(
            "max_batched_tokens {budget}: an iteration batches at least one token"
        )));
    }
    let max_seqs = config
        .max_seqs
        .unwrap_or_else(|| default_max_seqs(chip.id(), chip.capacity_bytes()));
    if max_seqs == 0 {
        return Err(Error::value("--max-seqs: at least one sequence runs"));
    }
    Ok(Setup {
        chips_per_instance: step.chips,
        kv_blocks,
        state_blocks,
        max_batched_tokens: budget.min(f64::from(u32::MAX / 2)) as u64,
        max_seqs,
    })
}

/// Refuses a run with a request whose tokens (and recurrent state) alone need more KV blocks
/// than an instance has.
fn check_fits(list: &[Request], setup: &Setup) -> Result<(), Error> {
    let most = list
        .iter()
        .map(|r| r.input_tokens + r.output_tokens - 1)
        .max()
        .unwrap_or(0);
    if most.div_ceil(BLOCK_TOKENS) + setup.state_blocks > setup.kv_blocks {
        let state = match setup.state_blocks {
            0 => String::new(),
            n => format!(", {n} blocks of them for a sequence's recurrent state"),
        };
        return Err(Error::value(format!(
            "a request of {most} tokens needs more KV cache than an instance holds ({} tokens{state})",
            setup.kv_blocks * BLOCK_TOKENS
        )));
    }
    Ok(())
}

struct Run<'a> {
    instances: Vec<Instance>,
    times: Times,
    clock: Clock<'a>,
    iterations: u64,
    /// Sequences over all iterations, for the mean batch.
    batch_sum: u64,
    /// The round-robin router's next instance.
    turn: usize,
    half: SecondHalf,
}

/// How a run ended.
struct End {
    at_s: f64,
    capped: bool,
}

impl Run<'_> {
    /// Runs every event; returns when the last request finished or a cap was reached.
    fn events(&mut self, list: &[Request], router: Router, window_s: f64) -> Result<End, Error> {
        let cap_s = TIME_CAP_WINDOWS * window_s + TIME_CAP_EXTRA_S;
        let (mut next, mut now) = (0usize, 0.0f64);
        let (mut mid_seen, mut end_seen) = (false, false);
        loop {
            let busy = (self.instances.iter().enumerate())
                .filter_map(|(k, i)| i.busy_until.map(|t| (k, t)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let arrival = list.get(next).map(|r| r.arrival_s);
            let t = match (arrival, busy) {
                (Some(a), Some((_, b))) => a.min(b),
                (Some(a), None) => a,
                (None, Some((_, b))) => b,
                (None, None) => break,
            };
            // The second half's marks, taken before the events at or after them.
            let in_system = next as u64 - self.times.finished;
            if !mid_seen && t >= window_s / 2.0 {
                (mid_seen, self.half.in_system_start) = (true, in_system);
            }
            if !end_seen && t >= window_s {
                (end_seen, self.half.in_system_end) = (true, in_system);
            }
            if t > cap_s || self.iterations >= MAX_ITERATIONS {
                return Ok(End {
                    at_s: now,
                    capped: true,
                });
            }
            now = t;
            match (arrival, busy) {
                (Some(a), b) if b.is_none_or(|(_, b)| a <= b) => {
                    let r = &list[next];
                    let k = self.route(router);
                    self.instances[k].arrive(next as u32, r.input_tokens, r.output_tokens);
                    if a >= window_s / 2.0 {
                        self.half.arrived += 1;
                    }
                    next += 1;
                    if self.instances[k].busy_until.is_none() {
                        self.start(k, now)?;
                    }
                }
                (_, Some((k, _))) => {
                    let before = self.times.finished;
                    self.instances[k].complete(now, &mut self.times);
                    if now >= window_s / 2.0 && now <= window_s {
                        self.half.finished += self.times.finished - before;
                    }
                    self.start(k, now)?;
                }
                (_, None) => unreachable!("an arrival or a busy instance"),
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

    /// The instance a new request goes to.
    fn route(&mut self, router: Router) -> usize {
        match router {
            Router::RoundRobin => {
                let k = self.turn;
                self.turn = (self.turn + 1) % self.instances.len();
                k
            }
            Router::LeastLoaded => (0..self.instances.len())
                .min_by_key(|&k| self.instances[k].load())
                .unwrap_or(0),
        }
    }

    /// Starts instance `k`'s next iteration at `now_s`, if it has work.
    fn start(&mut self, k: usize, now_s: f64) -> Result<(), Error> {
        let instance = &mut self.instances[k];
        let mix: Mix = instance.schedule();
        let seqs = mix.decode_seqs + mix.prefill_seqs;
        if seqs == 0 {
            if instance.has_work() {
                return Err(Error::value(
                    "the scheduler could run nothing with requests waiting (KV cache too small for one prompt chunk)",
                ));
            }
            return Ok(());
        }
        let dt = self.clock.time_s(&mix)?;
        self.instances[k].busy_until = Some(now_s + dt);
        self.iterations += 1;
        self.batch_sum += seqs as u64;
        Ok(())
    }
}

/// The report of a finished run.
fn report(
    run: Run,
    list: &[Request],
    config: &SimConfig,
    setup: &Setup,
    window_s: f64,
    end: End,
) -> SimReport {
    let t0 = list.first().map_or(0.0, |r| r.arrival_s);
    let simulated_s = (end.at_s - t0).max(0.0);
    let (mut ttft, mut tpot, mut e2e) = (Vec::new(), Vec::new(), Vec::new());
    let (mut output_tokens, mut good) = (0u64, 0u64);
    for (i, r) in list.iter().enumerate() {
        let (first, last) = (run.times.first_s[i], run.times.finish_s[i]);
        if last.is_nan() {
            continue;
        }
        let (t, e) = (first - r.arrival_s, last - r.arrival_s);
        let p = (e - t) / (r.output_tokens - 1) as f64;
        output_tokens += r.output_tokens;
        let meets = config.slo.max_ttft_s.is_none_or(|m| t <= m)
            && config.slo.max_tpot_s.is_none_or(|m| p <= m);
        good += meets as u64;
        ttft.push(t);
        tpot.push(p);
        e2e.push(e);
    }
    let per_s = |x: f64| {
        if simulated_s > 0.0 {
            x / simulated_s
        } else {
            0.0
        }
    };
    let finished = run.times.finished;
    let chips = setup.chips_per_instance * config.instances as u64;
    let has_slo = config.slo.max_ttft_s.is_some() || config.slo.max_tpot_s.is_some();
    SimReport {
        instances: config.instances,
        router: config.router,
        chips_per_instance: setup.chips_per_instance,
        chips,
        max_seqs: setup.max_seqs,
        max_batched_tokens: setup.max_batched_tokens,
        kv_blocks: setup.kv_blocks,
        state_blocks_per_seq: setup.state_blocks,
        requests: list.len() as u64,
        finished,
        ttft: Percentiles::of(&mut ttft),
        tpot: Percentiles::of(&mut tpot),
        e2e: Percentiles::of(&mut e2e),
        output_tokens_per_s: per_s(output_tokens as f64),
        output_tokens_per_s_per_chip: per_s(output_tokens as f64) / chips as f64,
        requests_per_s: per_s(finished as f64),
        goodput_requests_per_s: has_slo.then(|| per_s(good as f64)),
        goodput_share: has_slo.then(|| good as f64 / (finished.max(1)) as f64),
        slo: config.slo,
        mean_batch: run.batch_sum as f64 / run.iterations.max(1) as f64,
        preemptions: run.instances.iter().map(|i| i.preemptions).sum(),
        iterations: run.iterations,
        simulated_s,
        arrival_window_s: window_s,
        stable: !end.capped && !run.half.grows(),
        capped: end.capped,
        exact: config.exact,
        steps_priced: run.clock.steps_priced,
        cache_max_relative_error: run.clock.audit(),
    }
}
