//! A run set up, carried out and reported: each instance's budgets from a reference step (KV
//! blocks, the recurrent state's share of them, the token budget, the sequence cap), the
//! prefill side where prompts are prefilled apart, the requests checked to fit, then the
//! event loop (`run`) and the report of what it finished (`report`).

use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::ranges;
use crate::core::chip::Chip;
use crate::core::engine::Admission;
use crate::core::scenario::Scenario;
use crate::core::timing::{Iteration, IterationPricer};
use crate::core::workload::Workload;
use crate::study::request::{kv_transfer_s, SequenceBytes};

use super::clock::{Clock, StepScale};
use super::instance::BLOCK_TOKENS;
use super::report::report;
use super::requests::{requests, Arrivals, Horizon, Request};
use super::run::{PrefillSide, Run, Setup};
use super::{default_max_seqs, PrefillApart, SimConfig, SimReport};

/// Simulates `config` for `workload` on `chip` at `scenario` (types, plan, layout, mode; the
/// decode instances' where prompts are prefilled apart).
pub fn simulate(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    config: &SimConfig,
) -> Result<SimReport, Error> {
    simulate_scaled(workload, chip, scenario, config, StepScale::ONE)
}

/// [`simulate`] with every iteration's time multiplied by `scale`.
pub(super) fn simulate_scaled(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    config: &SimConfig,
    scale: StepScale,
) -> Result<SimReport, Error> {
    check_config(config)?;
    let list = requests(
        &config.arrivals,
        config.horizon,
        &config.lengths,
        config.seed,
    )?;
    // No request may pass the model's positions: the longest is checked, and named.
    if let Some(r) = (list.iter()).max_by_key(|r| r.input_tokens.saturating_add(r.output_tokens)) {
        crate::study::request::check_positions(workload, r.input_tokens, r.output_tokens)?;
    }
    let mut clock = Clock::new(
        IterationPricer::new(workload, chip, scenario)?,
        config.exact,
        config.audit,
    );
    let setup = setup(workload, chip, scenario, config, &mut clock)?;
    check_fits(&list, &setup, true)?;
    let (prefill, prefill_setup) = match &config.prefill {
        None => (None, None),
        Some(apart) => {
            let (side, s) = prefill_side(workload, chip, apart, config, &setup, &list, scale)?;
            (Some(side), Some(s))
        }
    };
    let window_s = match (&config.arrivals, config.horizon) {
        (Arrivals::Trace(_), _) | (_, Horizon::Requests { .. }) => {
            list.last().map_or(0.0, |r| r.arrival_s)
        }
        (_, Horizon::Duration { s }) => s,
    };
    let mut run = Run::new(
        config.instances,
        config.router,
        &setup,
        list.len(),
        clock.scaled(scale),
        prefill,
    );
    let end = run.events(&list, window_s)?;
    let setups = (&setup, prefill_setup.as_ref());
    Ok(report(run, &list, config, setups, window_s, end))
}

/// Refuses a run whose instances or latency bounds lie outside their ranges (before any
/// instance is made: a run makes only those its requests reach).
pub(crate) fn check_config(config: &SimConfig) -> Result<(), Error> {
    if config.instances == 0 {
        return Err(Error::value(
            "--instances: a run needs at least one instance",
        ));
    }
    let prefill = config.prefill.as_ref().map(|p| p.instances);
    if prefill == Some(0) {
        return Err(Error::value(
            "--prefill-instances 0: prompts prefilled apart need at least one prefill instance",
        ));
    }
    let counts = [
        (Some(config.instances), &ranges::SIM_INSTANCES),
        (prefill, &ranges::SIM_PREFILL_INSTANCES),
    ];
    for (n, range) in counts {
        if let Some(n) = n {
            let what = format_args!("{} {n}", range.field);
            ranges::whole(f64::from(n), range, what).map_err(Error::value)?;
        }
    }
    let bounds = [
        (config.slo.max_ttft_s, &ranges::MAX_TTFT_MS),
        (config.slo.max_tpot_s, &ranges::MAX_MS_PER_TOKEN),
    ];
    for (bound_s, range) in bounds {
        if let Some(s) = bound_s {
            (range.check_ms_as_s(s)).map_err(|e| {
                let ms = ranges::quoted(s * 1e3);
                Error::value(format!("{} {ms}: {e}", range.field))
            })?;
        }
    }
    Ok(())
}

/// The prefill instances of `apart`, their clock and each request's KV transfer time; and
/// their setup.
fn prefill_side<'a>(
    workload: &'a Workload,
    chip: &'a Chip,
    apart: &PrefillApart,
    config: &SimConfig,
    decode: &Setup,
    list: &[Request],
    scale: StepScale,
) -> Result<(PrefillSide<'a>, Setup), Error> {
    let pricer = IterationPricer::new(workload, chip, &apart.scenario)?;
    let mut clock = Clock::new(pricer, config.exact, config.audit);
    let setup = setup(workload, chip, &apart.scenario, config, &mut clock)?;
    check_fits(list, &setup, false)?;
    // The busier side of each transfer: a prefill chip's shard sent, or a decode chip's
    // received.
    let transfer_s = (list.iter())
        .map(|r| {
            let sent = setup.sequence_bytes.of(r.input_tokens);
            let received = decode.sequence_bytes.of(r.input_tokens);
            kv_transfer_s(chip, apart.link, sent.max(received))
        })
        .collect::<Result<Vec<f64>, Error>>()?;
    let side = PrefillSide::new(
        apart.instances,
        config.router,
        &setup,
        clock.scaled(scale),
        transfer_s,
    );
    Ok((side, setup))
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
            workload.evaluate(scenario.overrides(), &mut ev)?;
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
        sequence_bytes: SequenceBytes {
            kv_per_token: per_token,
            state: step.state_bytes,
        },
        kv_blocks,
        state_blocks,
        max_batched_tokens: budget.min(f64::from(u32::MAX / 2)) as u64,
        max_seqs,
        admission: (scenario.engine_on(chip)).map_or(Admission::OnDemand, |e| e.terms().admission),
    })
}

/// Refuses a run with a request whose tokens (its prompt's only, on a prefill instance) and
/// recurrent state alone need more KV blocks than an instance has.
fn check_fits(list: &[Request], setup: &Setup, decodes: bool) -> Result<(), Error> {
    let most = list
        .iter()
        .map(|r| {
            // A whole request's reservation holds its last output token's position too.
            let reserved = u64::from(setup.admission == Admission::ReserveWhole);
            r.input_tokens
                + if decodes {
                    r.output_tokens - 1 + reserved
                } else {
                    0
                }
        })
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
