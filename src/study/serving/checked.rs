//! A fleet's steady state checked by simulation: one instance served its share of the rate as
//! Poisson arrivals, request by request, and instances added until the 90th percentiles of
//! TTFT and TPOT meet the bounds.

use serde::Serialize;

use super::slo::{Fleet, Slo};
use super::{RequestShape, ServingQuery};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::engine::chip::Chip;
use crate::engine::workload::Workload;
use crate::study::simulate::{
    simulate, Arrivals, Horizon, LatencyBounds, Lengths, Router, SimConfig,
};

/// Requests one check simulates.
pub const CHECK_REQUESTS: u64 = 2000;
/// Instances a check adds at most before it gives up.
pub const CHECK_MOST_ADDED: u64 = 8;

/// What simulating the fleet's instance found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Simulated {
    /// Instances the steady state asked for, before any were added.
    pub steady_instances: u64,
    /// 90th percentiles at the instance count kept.
    pub ttft_p90_s: f64,
    pub tpot_p90_s: f64,
    /// Whether they meet the bounds (false: even the most instances tried did not).
    pub met: bool,
}

/// Simulates one instance of `fleet` at its share of the rate (Poisson, seed 0, requests of
/// `shape`), adding instances while the 90th percentiles miss a bound, up to
/// [`CHECK_MOST_ADDED`]; the fleet's instances, chips and cost follow what is kept.
pub fn check_fleet(
    workload: &Workload,
    chip: &Chip,
    query: &ServingQuery,
    slo: &Slo,
    shape: RequestShape,
    fleet: &mut Fleet,
) -> Result<(), Error> {
    let mut scenario = query.scenario.clone();
    scenario.dtypes = fleet.dtypes;
    for (p, size) in [
        (ScenarioParam::Tp, fleet.tp),
        (ScenarioParam::Pp, fleet.pp),
        (ScenarioParam::Ep, fleet.ep),
    ] {
        if let Some(i) = workload.param(p) {
            scenario.overrides.push((i, size as f64));
        }
    }
    let steady = fleet.instances;
    let mut instances = steady;
    loop {
        let config = SimConfig {
            arrivals: Arrivals::Poisson {
                rate_per_s: slo.rate_per_s / instances as f64,
            },
            horizon: Horizon::Requests { n: CHECK_REQUESTS },
            lengths: Lengths::new(shape.input_tokens, shape.output_tokens, 0.0)?,
            seed: 0,
            max_seqs: Some(fleet.max_concurrency),
            instances: 1,
            router: Router::RoundRobin,
            slo: LatencyBounds::default(),
            exact: false,
            audit: false,
        };
        let report = simulate(workload, chip, &scenario, &config)?;
        let met = report.stable
            && slo.max_ttft_s.is_none_or(|t| report.ttft.p90_s <= t)
            && slo.max_tpot_s.is_none_or(|t| report.tpot.p90_s <= t);
        if met || instances >= steady + CHECK_MOST_ADDED {
            fleet.simulated = Some(Simulated {
                steady_instances: steady,
                ttft_p90_s: report.ttft.p90_s,
                tpot_p90_s: report.tpot.p90_s,
                met,
            });
            fleet.set_instances(chip, instances, slo);
            return Ok(());
        }
        instances += 1;
    }
}
