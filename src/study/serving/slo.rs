//! A fleet under latency targets: per chip and choice of types, the layout, requests in
//! flight per instance and instances that serve a request rate within a TTFT and a TPOT bound
//! at the least cost, from the steady state, each chip's answer then checked by simulation
//! (`checked`).

use std::ops::ControlFlow;

use serde::Serialize;

use super::checked::{check_fleet, Simulated};
use super::survey::{servable, serve_layouts};
use super::Server;
use super::{ServingError, ServingPoint, ServingQuery};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::types::Types;
use crate::engine::chip::Chip;
use crate::engine::cost::CostView;
use crate::engine::workload::Workload;

/// The fleet's targets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Slo {
    /// Requests per second the fleet serves.
    pub rate_per_s: f64,
    /// Most time to first token.
    pub max_ttft_s: Option<f64>,
    /// Most time per output token after the first.
    pub max_tpot_s: Option<f64>,
}

impl Slo {
    /// Targets with a positive, finite rate and bounds.
    pub fn new(
        rate_per_s: f64,
        max_ttft_s: Option<f64>,
        max_tpot_s: Option<f64>,
    ) -> Result<Slo, Error> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(rate_per_s) {
            return Err(Error::value(format!(
                "--rate {rate_per_s}: a request rate is a positive number of requests per second"
            )));
        }
        for (flag, bound) in [
            ("--max-ttft-ms", max_ttft_s),
            ("--max-ms-per-token", max_tpot_s),
        ] {
            if bound.is_some_and(|b| !positive(b)) {
                return Err(Error::value(format!("{flag}: a bound is a positive time")));
            }
        }
        Ok(Slo {
            rate_per_s,
            max_ttft_s,
            max_tpot_s,
        })
    }

    /// Whether `p` meets both bounds.
    pub fn met_by(&self, p: &ServingPoint) -> bool {
        self.max_ttft_s.is_none_or(|t| p.ttft_s <= t)
            && self.max_tpot_s.is_none_or(|t| p.tpot_s <= t)
    }
}

/// The cheapest fleet of one chip and choice of types.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    pub chip: String,
    pub dtypes: Types,
    pub layout: String,
    /// Output tokens of each request.
    pub output_tokens: u64,
    /// The layout's tensor, pipeline and expert degrees.
    pub tp: u64,
    pub pp: u64,
    pub ep: u64,
    /// Instances (replicas of the layout) serving the rate.
    pub instances: u64,
    /// Prefill instances beside them, of the same layout, where prompts are prefilled apart.
    pub prefill_instances: u64,
    /// Chips in all: instances (both kinds) x chips per instance.
    pub chips: u64,
    /// One instance's steady state at the requests in flight it is given: the fewest that
    /// serve its share of the rate.
    pub point: ServingPoint,
    /// The most requests in flight one instance may hold within the bounds.
    pub max_concurrency: u64,
    /// What the fleet costs per hour in each view, where the chip has that cost.
    pub cloud_usd_per_hour: Option<f64>,
    pub tco_usd_per_hour: Option<f64>,
    /// A million output tokens at the fleet's rate (its instances rounded up, so idle
    /// capacity is paid for), in each view.
    pub cloud_usd_per_million_tokens: Option<f64>,
    pub tco_usd_per_million_tokens: Option<f64>,
    /// The simulation of one instance at its share of the rate, where it ran (prefill
    /// together only).
    pub simulated: Option<Simulated>,
}

/// One chip and choice of types: its cheapest fleet, or why none meets the targets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetEntry {
    pub chip: String,
    pub dtypes: Types,
    pub outcome: Result<Fleet, String>,
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
    let mut entries = Vec::new();
    for chip in chips {
        for dtypes in &query.dtype_choices {
            let mut best: Option<Fleet> = None;
            let mut why = String::from("no layout serves one request");
            serve_layouts(workload, chip, *dtypes, query, &mut |layout, server| {
                let server = match server {
                    Ok(server) => server,
                    Err(e) => {
                        why = e.to_string().lines().next().unwrap_or_default().into();
                        return ControlFlow::Continue(());
                    }
                };
                for &apart in query.disagg.ways() {
                    match fleet_at(server, query, slo, apart) {
                        Ok(Some((point, most))) => {
                            let mut fleet = make_fleet(
                                chip,
                                *dtypes,
                                &layout.name,
                                point,
                                most,
                                slo,
                                query.shape.output_tokens,
                            );
                            fleet.tp = layout.size(ScenarioParam::Tp);
                            fleet.pp = layout.size(ScenarioParam::Pp);
                            fleet.ep = layout.size(ScenarioParam::Ep);
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
            if let Some(fleet) = best.as_mut().filter(|f| f.prefill_instances == 0) {
                check_fleet(workload, chip, query, slo, query.shape, fleet)?;
            }
            entries.push(FleetEntry {
                chip: chip.id().to_owned(),
                dtypes: *dtypes,
                outcome: best.ok_or(why),
            });
        }
    }
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
    Ok(entries)
}

/// The most requests in flight within the bounds (the steady state's TTFT and TPOT grow with
/// them), and the fewest that serve an instance's share of the rate once the instances are
/// counted from that most; `None` when even one request misses a bound.
fn fleet_at(
    server: &mut Server,
    query: &ServingQuery,
    slo: &Slo,
    apart: bool,
) -> Result<Option<(ServingPoint, u64)>, ServingError> {
    let shape = query.shape;
    let at = |server: &mut Server, c: u64| match apart {
        true => server.disaggregated(shape, c, query.kv_link),
        false => server.steady_state(shape, c),
    };
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
    // The fewest in flight that serve the share: lower latency at the same cost.
    let (mut lo, mut hi) = (0u64, most); // lo too few, hi enough
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if at(server, mid)?.requests_per_s >= share {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Some((at(server, hi)?, most)))
}

fn make_fleet(
    chip: &Chip,
    dtypes: Types,
    layout: &str,
    point: ServingPoint,
    most: u64,
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
    let mut fleet = Fleet {
        chip: chip.id().to_owned(),
        dtypes,
        layout: layout.to_owned(),
        output_tokens,
        tp: 1,
        pp: 1,
        ep: 1,
        instances,
        prefill_instances,
        chips: 0,
        cloud_usd_per_hour: None,
        tco_usd_per_hour: None,
        max_concurrency: most,
        cloud_usd_per_million_tokens: None,
        tco_usd_per_million_tokens: None,
        point,
        simulated: None,
    };
    fleet.set_instances(chip, instances, slo);
    fleet
}

impl Fleet {
    /// `n` serving instances (beside the prefill ones): the chips in all, their cost per hour
    /// and a million tokens at the rate the fleet serves, in each view.
    pub(crate) fn set_instances(&mut self, chip: &Chip, n: u64, slo: &Slo) {
        self.instances = n;
        self.chips = (n + self.prefill_instances) * self.point.chips;
        let tokens_per_hour = slo.rate_per_s * self.output_tokens as f64 * 3600.0;
        let per_hour = |view: CostView| {
            let usd = chip.cost_model().with_view(view).usd_per_hour(chip).ok()?;
            Some(usd * self.chips as f64)
        };
        let (cloud, tco) = (per_hour(CostView::Cloud), per_hour(CostView::Tco));
        let per_million = |usd: Option<f64>| usd.map(|u| u / tokens_per_hour * 1e6);
        self.cloud_usd_per_million_tokens = per_million(cloud);
        self.tco_usd_per_million_tokens = per_million(tco);
        (self.cloud_usd_per_hour, self.tco_usd_per_hour) = (cloud, tco);
    }
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
