//! A finished run's report: each finished request's latencies, the rates over the simulated
//! time, goodput and the queue's stability.

use super::requests::Request;
use super::run::{End, Run, Setup};
use super::stats::Percentiles;
use super::{SimConfig, SimReport};

/// The report of a finished run.
pub(super) fn report(
    run: Run,
    list: &[Request],
    config: &SimConfig,
    setups: (&Setup, Option<&Setup>),
    window_s: f64,
    end: End,
) -> SimReport {
    let (setup, prefill) = setups;
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
    let prefill_instances = config.prefill.as_ref().map_or(0, |p| p.instances);
    let prefill_chips_per_instance = prefill.map_or(0, |p| p.chips_per_instance);
    let chips = setup.chips_per_instance * config.instances as u64
        + prefill_chips_per_instance * prefill_instances as u64;
    let has_slo = config.slo.max_ttft_s.is_some() || config.slo.max_tpot_s.is_some();
    SimReport {
        instances: config.instances,
        router: config.router,
        chips_per_instance: setup.chips_per_instance,
        prefill_instances,
        prefill_chips_per_instance,
        prefill_iterations: run.prefill_iterations,
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
        preemptions: run.instances.made().iter().map(|i| i.preemptions).sum(),
        iterations: run.iterations + run.prefill_iterations,
        simulated_s,
        arrival_window_s: window_s,
        stable: !end.capped && !run.half.grows(),
        capped: end.capped,
        exact: config.exact,
        steps_priced: run.clock.steps_priced
            + run.prefill.as_ref().map_or(0, |p| p.clock.steps_priced),
        cache_max_relative_error: match (run.clock.audit(), run.prefill.as_ref()) {
            (Some(a), Some(p)) => Some(a.max(p.clock.audit().unwrap_or(0.0))),
            (audit, _) => audit,
        },
    }
}
