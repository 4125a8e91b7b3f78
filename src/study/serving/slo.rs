//! A fleet under latency targets: per chip and choice of types, the layout, requests in
//! flight per instance and instances that serve a request rate within a TTFT and a TPOT bound
//! at the least cost, from the steady state, each chip's answer then checked by simulation
//! (`checked`).

use std::ops::ControlFlow;

use serde::Serialize;

use super::checked::{check_fleet, Simulated};
use super::pools::{check_prefill_sets, prefill_pools, price_way, ways, PrefillOption, Way};
use super::survey::{servable, serve_layouts, Layout, NO_PREFILL_POOL};
use super::{Disagg, ServingError, ServingPoint, ServingQuery};
use super::{Server, ServingBand};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::cost::CostView;
use crate::core::scenario::Mode;
use crate::core::workload::Workload;

/// The fleet's targets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Slo {
    /// Requests per second the fleet serves.
    pub rate_per_s: f64,
    /// Most time to first token.
    pub max_ttft_s: Option<f64>,
    /// Most time per output token after the first.
    pub max_tpot_s: Option<f64>,
    /// Whether the bounds and the rate hold at the slow end of each number's 80 % band
    /// (expected mode): [`Slo::at_slow_end`].
    pub conservative: bool,
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
            conservative: false,
        })
    }

    /// The same targets, met at the slow end of each number's band where `conservative`.
    pub fn with_conservative(self, conservative: bool) -> Slo {
        Slo {
            conservative,
            ..self
        }
    }

    /// The targets a point's predicted numbers must meet for its numbers at the slow end of
    /// `band` to meet these: TTFT times the prefill band's high end within the TTFT bound,
    /// TPOT times the decode band's within the TPOT bound, and the rate served at requests/s
    /// over the request band's high end (over the larger of the other two where there is no
    /// request band: a whole request is made of its prefill and its decode). The same
    /// targets where the plan is not conservative or there is no band.
    pub fn at_slow_end(&self, band: Option<ServingBand>) -> Slo {
        let Some(b) = band.filter(|_| self.conservative) else {
            return *self;
        };
        let rate = (b.request).map_or(b.prefill.high.max(b.decode.high), |r| r.high);
        Slo {
            rate_per_s: self.rate_per_s * rate,
            max_ttft_s: self.max_ttft_s.map(|t| t / b.prefill.high),
            max_tpot_s: self.max_tpot_s.map(|t| t / b.decode.high),
            conservative: false,
        }
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
    /// Prefill instances beside them, where prompts are prefilled apart (else 0).
    pub prefill_instances: u64,
    /// The prefill instances' layout, its degrees and chips (empty and 0 with prefill
    /// together).
    pub prefill_layout: String,
    pub prefill_tp: u64,
    pub prefill_pp: u64,
    pub prefill_ep: u64,
    pub prefill_chips_per_instance: u64,
    /// Chips in all: each pool's instances x its chips per instance.
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
    /// The simulation of one instance at its share of the rate (prefill together), or of
    /// the whole fleet (prefill apart).
    pub simulated: Option<Simulated>,
    /// The 80 % band of its point's times and rates (none in roofline mode).
    #[serde(skip)]
    pub band: Option<ServingBand>,
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

/// The fewest requests in flight, up to `most` (which serves `share`), whose steady state
/// serves `share` requests per second: lower latency at the same cost.
pub(super) fn fewest_serving(
    server: &mut Server,
    at: impl Fn(&mut Server, u64) -> Result<ServingPoint, ServingError>,
    share: f64,
    most: u64,
) -> Result<ServingPoint, ServingError> {
    let (mut lo, mut hi) = (0u64, most); // lo too few, hi enough
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if at(server, mid)?.requests_per_s >= share {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    at(server, hi)
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
    };
    fleet.set_instances(chip, instances, prefill_instances, slo);
    fleet
}

impl Fleet {
    /// `n` serving (decode) instances and `prefill` prefill instances: the chips in all,
    /// their cost per hour and a million tokens at the rate the fleet serves, in each view.
    pub(crate) fn set_instances(&mut self, chip: &Chip, n: u64, prefill: u64, slo: &Slo) {
        (self.instances, self.prefill_instances) = (n, prefill);
        self.chips = n * self.point.chips + prefill * self.prefill_chips_per_instance;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::band::Band;

    #[test]
    fn a_conservative_slo_asks_the_predicted_numbers_for_the_slow_end_s_margin() {
        let band = |low: f64, high: f64| Band { low, high };
        let mut bands = ServingBand {
            prefill: band(0.8, 1.25),
            decode: band(0.9, 1.6),
            request: Some(band(0.9, 1.28)),
        };
        let slo = Slo::new(10.0, Some(0.5), Some(0.04)).unwrap();
        // Not conservative, or no band (roofline mode): the targets as given.
        assert_eq!(slo.at_slow_end(Some(bands)), slo);
        let slo = slo.with_conservative(true);
        assert_eq!(slo.at_slow_end(None), slo);
        // TTFT 0.5 s over 1.25, TPOT 40 ms over 1.6, 10 requests/s times 1.28.
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12, "{a} against {b}");
        let t = slo.at_slow_end(Some(bands));
        close(t.max_ttft_s.unwrap(), 0.4);
        close(t.max_tpot_s.unwrap(), 0.025);
        close(t.rate_per_s, 12.8);
        // Without a request band, the slower of its parts' high ends: 1.6.
        bands.request = None;
        close(slo.at_slow_end(Some(bands)).rate_per_s, 16.0);
    }
}
