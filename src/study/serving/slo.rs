//! A fleet under latency targets: per chip and choice of types, the layout, requests in
//! flight per instance and instances that serve a request rate within a TTFT and a TPOT bound
//! at the least cost, from the steady state, each chip's answer then checked by simulation
//! (`checked`).

use std::ops::ControlFlow;
use std::sync::Arc;

use super::checked::check_fleet;
use super::fleet::{fewest_serving, Fleet, FleetEntry, Slo};
use super::layouts::{servable, serve_layouts, Layout};
use super::pools::{
    check_prefill_sets, prefill_pools, price_way, ways, PrefillOption, Way, NO_PREFILL_POOL,
};
use super::query::{Disagg, ServingQuery};
use super::{Server, ServingBand, ServingError, ServingPoint};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::cost::CostView;
use crate::core::engine::Engine;
use crate::core::scenario::Mode;
use crate::core::workload::Workload;

/// [`plan_fleet`] under each of `engines` on each chip (none: each chip's default), the fp8
/// choice as each engine runs it where `engine_types` holds (see [`ServingQuery::under`]);
/// one ranking over them all.
pub fn plan_fleet_engines(
    workload: &Workload,
    chips: &[Chip],
    query: &ServingQuery,
    (engines, engine_types): (&[Arc<Engine>], bool),
    slo: &Slo,
    view: CostView,
) -> Result<Vec<FleetEntry>, Error> {
    let mut entries = Vec::new();
    for chip in chips {
        for engine in searched(query, engines) {
            let q = query.under(engine, chip, engine_types);
            entries.extend(plan_fleet(
                workload,
                std::slice::from_ref(chip),
                &q,
                slo,
                view,
            )?);
        }
    }
    sort_fleets(&mut entries, view);
    Ok(entries)
}

/// The engines a search tries: each one given, or the chip's default (`None`); one in
/// roofline mode, where every engine prices alike.
pub(super) fn searched(query: &ServingQuery, engines: &[Arc<Engine>]) -> Vec<Option<Arc<Engine>>> {
    match (query.scenario.mode(), engines.is_empty()) {
        (Mode::Roofline, _) | (_, true) => {
            vec![query.scenario.engine().map(|e| Arc::new(e.clone()))]
        }
        _ => engines.iter().cloned().map(Some).collect(),
    }
}

/// Cheapest first (the fewest chips where a chip has no cost), the infeasible after; a stable
/// sort keeps the order given among equals.
fn sort_fleets(entries: &mut [FleetEntry], view: CostView) {
    let key = |e: &FleetEntry| match &e.outcome {
        Ok(f) => (0, cost(f, view).unwrap_or(f64::INFINITY), f.chips),
        Err(_) => (1, 0.0, 0),
    };
    entries.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0)
            .then(ka.1.total_cmp(&kb.1))
            .then(ka.2.cmp(&kb.2))
    });
}

/// Per chip and types, the cheapest fleet over the query's layouts (in `view`, or the fewest
/// chips where a chip has no cost), ranked cheapest first; the infeasible after, with why.
pub fn plan_fleet(
    workload: &Workload,
    chips: &[Chip],
    query: &ServingQuery,
    slo: &Slo,
    view: CostView,
) -> Result<Vec<FleetEntry>, Error> {
    servable(workload)?;
    query.shape.check_positions(workload)?;
    check_prefill_sets(workload, query)?;
    if slo.conservative && query.scenario.mode() == Mode::Roofline {
        return Err(Error::NoBand);
    }
    let mut entries = Vec::new();
    for chip in chips {
        let band = ServingBand::of(query.scenario.mode(), chip.family());
        // A conservative plan searches on the targets its predicted numbers must meet; its
        // costs are those of the rate asked for.
        let targets = slo.at_slow_end(band);
        for dtypes in &query.dtype_choices {
            let pools = prefill_pools(workload, chip, *dtypes, query)?;
            let mut best: Option<Fleet> = None;
            let mut why = String::from(match pools.is_empty() && query.disagg == Disagg::On {
                true => NO_PREFILL_POOL,
                false => "no layout serves one request",
            });
            serve_layouts(workload, chip, *dtypes, query, &mut |layout, server| {
                let server = match server {
                    Ok(server) => server,
                    Err(e) => {
                        why = e.to_string().lines().next().unwrap_or_default().into();
                        return ControlFlow::Continue(());
                    }
                };
                for way in ways(query.disagg, &pools) {
                    match fleet_at(server, query, &targets, way, &pools) {
                        Ok(Some(at)) => {
                            let pool = match way {
                                Way::Together => None,
                                Way::Apart(i) => Some(&pools[i]),
                            };
                            let tokens = query.shape.output_tokens;
                            let mut fleet =
                                make_fleet(chip, *dtypes, layout, pool, at, &targets, tokens);
                            fleet.band = band;
                            if best.as_ref().is_none_or(|b| cheaper(&fleet, b, view)) {
                                best = Some(fleet);
                            }
                        }
                        Ok(None) => why = "no concurrency meets the bounds".into(),
                        Err(e) => why = e.to_string().lines().next().unwrap_or_default().into(),
                    }
                }
                ControlFlow::Continue(())
            })?;
            if let Some(fleet) = best.as_mut() {
                check_fleet(workload, chip, query, &targets, fleet)?;
                fleet.set_instances(chip, fleet.instances, fleet.prefill_instances, slo);
            }
            entries.push(FleetEntry {
                chip: chip.id().to_owned(),
                engine: query.scenario.engine_id_on(chip).to_owned(),
                dtypes: *dtypes,
                outcome: best.ok_or(why),
            });
        }
    }
    sort_fleets(&mut entries, view);
    Ok(entries)
}

/// The most requests in flight within the bounds (the steady state's TTFT and TPOT grow with
/// them), and the fewest that serve an instance's share of the rate once the instances are
/// counted from that most; `None` when even one request misses a bound.
fn fleet_at(
    server: &mut Server,
    query: &ServingQuery,
    slo: &Slo,
    way: Way,
    pools: &[PrefillOption],
) -> Result<Option<(ServingPoint, u64)>, ServingError> {
    let at = |server: &mut Server, c: u64| price_way(server, way, pools, query, c);
    let one = at(server, 1)?;
    if !one.fits || !slo.met_by(&one) {
        return Ok(None);
    }
    let cap = one.max_concurrency.unwrap_or(1).max(1);
    let ok = |p: &ServingPoint| p.fits && slo.met_by(p);
    let (mut lo, mut hi) = (1u64, cap + 1); // lo meets, hi does not (or is past memory)
    let top = at(server, cap)?;
    if ok(&top) {
        lo = cap;
    } else {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if ok(&at(server, mid)?) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    let most = lo;
    let at_most = at(server, most)?;
    let instances = (slo.rate_per_s / at_most.requests_per_s).ceil().max(1.0);
    let share = slo.rate_per_s / instances;
    Ok(Some((fewest_serving(server, at, share, most)?, most)))
}

fn make_fleet(
    chip: &Chip,
    dtypes: Types,
    layout: &Layout,
    pool: Option<&PrefillOption>,
    (point, most): (ServingPoint, u64),
    slo: &Slo,
    output_tokens: u64,
) -> Fleet {
    let instances = (slo.rate_per_s / point.requests_per_s).ceil().max(1.0) as u64;
    // Prefill instances busy for the whole rate (each decode instance keeps
    // `prefill_instances` of them busy at its own rate).
    let prefill_instances = point.disaggregated.map_or(0, |d| {
        (slo.rate_per_s / point.requests_per_s * d.prefill_instances)
            .ceil()
            .max(1.0) as u64
    });
    let prefill = |p: ScenarioParam| pool.map_or(0, |o| o.layout.size(p));
    let mut fleet = Fleet {
        chip: chip.id().to_owned(),
        dtypes,
        layout: layout.name.clone(),
        output_tokens,
        tp: layout.size(ScenarioParam::Tp),
        pp: layout.size(ScenarioParam::Pp),
        ep: layout.size(ScenarioParam::Ep),
        instances,
        prefill_instances,
        prefill_layout: pool.map_or(String::new(), |o| o.layout.name.clone()),
        prefill_tp: prefill(ScenarioParam::Tp),
        prefill_pp: prefill(ScenarioParam::Pp),
        prefill_ep: prefill(ScenarioParam::Ep),
        prefill_chips_per_instance: pool.map_or(0, |o| o.pool.chips),
        chips: 0,
        cloud_usd_per_hour: None,
        tco_usd_per_hour: None,
        max_concurrency: most,
        cloud_usd_per_million_tokens: None,
        tco_usd_per_million_tokens: None,
        point,
        simulated: None,
        band: None,
        power: None,
    };
    fleet.set_instances(chip, instances, prefill_instances, slo);
    fleet
}

fn cost(f: &Fleet, view: CostView) -> Option<f64> {
    match view {
        CostView::Cloud => f.cloud_usd_per_hour,
        CostView::Tco => f.tco_usd_per_hour,
    }
}

/// Cheaper in `view`; where either has no cost, fewer chips; then fewer instances.
fn cheaper(a: &Fleet, b: &Fleet, view: CostView) -> bool {
    match (cost(a, view), cost(b, view)) {
        (Some(x), Some(y)) if x != y => x < y,
        _ => (a.chips, a.instances) < (b.chips, b.instances),
    }
}
