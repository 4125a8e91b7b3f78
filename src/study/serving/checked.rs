//! A fleet's steady state checked by simulation: Poisson arrivals served request by request
//! (one instance at its share of the rate, or a disaggregated fleet whole), and instances
//! added until the 90th percentiles of TTFT and TPOT meet the bounds.

use super::fleet::{fewest_serving, Fleet, Simulated, Slo};
use super::layouts::server_for;
use super::query::ServingQuery;
use super::{KvLink, RequestShape, Server, ServingError};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::workload::Workload;
use crate::study::simulate::{
    simulate, Arrivals, Horizon, LatencyBounds, Lengths, PrefillApart, Router, SimConfig,
    MAX_REQUESTS,
};

/// Requests one check simulates.
pub const CHECK_REQUESTS: u64 = 2000;
/// Instances a check adds at most before it gives up.
pub const CHECK_MOST_ADDED: u64 = 8;

/// Simulates `fleet` at the rate (Poisson, seed 0, requests of the query's shape), adding
/// instances while the 90th percentiles miss a bound, up to [`CHECK_MOST_ADDED`]; the
/// fleet's instances, chips and cost follow what is kept, and with prefill together so does
/// its steady state (each instance's share of the rate, at the fewest in flight that serve it).
///
/// With prefill together, one instance at its share of the rate ([`CHECK_REQUESTS`]
/// requests) stands for all; an instance is added while a bound is missed. With prefill
/// apart the whole fleet is simulated (its two pools' instances, [`CHECK_REQUESTS`] requests
/// per decode instance up to [`MAX_REQUESTS`] in all, each pool routing to its least-loaded instance): a missed TTFT adds
/// a prefill instance (TTFT is the prefill side's), a missed TPOT or a growing queue a
/// decode instance.
pub(super) fn check_fleet(
    workload: &Workload,
    chip: &Chip,
    query: &ServingQuery,
    slo: &Slo,
    fleet: &mut Fleet,
) -> Result<(), Error> {
    let scenario = fleet_scenario(workload, query, fleet, false)?;
    let apart = fleet.prefill_instances > 0;
    let prefill_scenario = match apart {
        true => Some(fleet_scenario(workload, query, fleet, true)?),
        false => None,
    };
    let (steady, steady_prefill) = (fleet.instances, fleet.prefill_instances);
    let (mut decode, mut prefill) = (steady, steady_prefill);
    loop {
        let config = check_config(query.shape, slo, fleet, decode, prefill, &prefill_scenario)?;
        let report = simulate(workload, chip, &scenario, &config)?;
        let ttft_met = slo.max_ttft_s.is_none_or(|t| report.ttft.p90_s <= t);
        let tpot_met = slo.max_tpot_s.is_none_or(|t| report.tpot.p90_s <= t);
        let met = report.stable && ttft_met && tpot_met;
        let added = decode + prefill - steady - steady_prefill;
        if met || added >= CHECK_MOST_ADDED {
            fleet.simulated = Some(Simulated {
                steady_instances: steady,
                steady_prefill_instances: steady_prefill,
                ttft_p90_s: report.ttft.p90_s,
                tpot_p90_s: report.tpot.p90_s,
                met,
            });
            if !apart && decode > steady {
                // The steady-state columns follow the instances kept: each now serves a
                // smaller share of the rate, with fewer requests in flight.
                let mut server = server_for(workload, chip, &scenario, query).map_err(plain)?;
                let share = slo.rate_per_s / decode as f64;
                let at = |s: &mut Server, c| s.steady_state(query.shape, c);
                fleet.point =
                    fewest_serving(&mut server, at, share, fleet.max_concurrency).map_err(plain)?;
            }
            fleet.set_instances(chip, decode, prefill, slo);
            return Ok(());
        }
        match (apart, ttft_met) {
            (true, false) => prefill += 1,
            _ => decode += 1,
        }
    }
}

/// A serving error as the plan's: its pricing error, or what the budget refused.
fn plain(e: ServingError) -> Error {
    match e {
        ServingError::Price(e) => e,
        other => Error::value(other.to_string()),
    }
}

/// The scenario of the fleet's decode (or prefill) instances: the query's, at the fleet's
/// types and that pool's layout.
fn fleet_scenario(
    workload: &Workload,
    query: &ServingQuery,
    fleet: &Fleet,
    prefill: bool,
) -> Result<Scenario, Error> {
    let mut scenario = query.scenario.clone();
    scenario.set_types(fleet.dtypes);
    let sizes = match prefill {
        false => [fleet.tp, fleet.pp, fleet.ep],
        true => [fleet.prefill_tp, fleet.prefill_pp, fleet.prefill_ep],
    };
    let params = [ScenarioParam::Tp, ScenarioParam::Pp, ScenarioParam::Ep];
    for (p, size) in params.into_iter().zip(sizes) {
        if let Some(i) = workload.param(p) {
            scenario.set_param(i, size as f64)?;
        }
    }
    Ok(scenario)
}

/// One check's run: `decode` instances (one at its share, with prefill together) and
/// `prefill` ones apart.
fn check_config(
    shape: RequestShape,
    slo: &Slo,
    fleet: &Fleet,
    decode: u64,
    prefill: u64,
    prefill_scenario: &Option<Scenario>,
) -> Result<SimConfig, Error> {
    let apart = prefill_scenario.as_ref().map(|scenario| PrefillApart {
        instances: prefill as u32,
        scenario: scenario.clone(),
        link: KvLink::Priced,
    });
    let (rate_per_s, instances, router, n) = match apart {
        None => (
            slo.rate_per_s / decode as f64,
            1,
            Router::RoundRobin,
            CHECK_REQUESTS,
        ),
        Some(_) => (
            slo.rate_per_s,
            decode as u32,
            Router::LeastLoaded,
            // At most what one run holds: past 10,000 decode instances each gets fewer.
            (CHECK_REQUESTS * decode).min(MAX_REQUESTS as u64),
        ),
    };
    Ok(SimConfig {
        arrivals: Arrivals::Poisson { rate_per_s },
        horizon: Horizon::Requests { n },
        lengths: Lengths::new(shape.input_tokens, shape.output_tokens, 0.0)?,
        seed: 0,
        max_seqs: Some(fleet.max_concurrency),
        instances,
        router,
        slo: LatencyBounds::default(),
        exact: false,
        audit: false,
        prefill: apart,
    })
}
