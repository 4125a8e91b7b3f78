//! A fleet and its targets: the bounds a fleet plan meets (and their conservative form, at
//! the slow end of each number's band), the fleet chosen for one chip and choice of types with
//! its cost, and what simulating it found. What `slo` plans and `checked` simulates.

use serde::Serialize;

use super::{Server, ServingBand, ServingError, ServingPoint};
use crate::base::error::Error;
use crate::base::ranges;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::cost::CostView;
#[cfg(feature = "cli")]
use crate::study::plan::power::fleet_power_fit;
use crate::study::plan::power::FleetPowerFit;

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
    /// Targets with a rate inside [`ranges::REQUEST_RATE`] and bounds inside
    /// [`ranges::MAX_TTFT_MS`] and [`ranges::MAX_MS_PER_TOKEN`].
    pub fn new(
        rate_per_s: f64,
        max_ttft_s: Option<f64>,
        max_tpot_s: Option<f64>,
    ) -> Result<Slo, Error> {
        ranges::REQUEST_RATE
            .check(rate_per_s)
            .map_err(|e| Error::value(format!("--rate {}: {e}", ranges::quoted(rate_per_s))))?;
        for (range, bound) in [
            (&ranges::MAX_TTFT_MS, max_ttft_s),
            (&ranges::MAX_MS_PER_TOKEN, max_tpot_s),
        ] {
            if let Some(s) = bound {
                (range.check_ms_as_s(s)).map_err(|e| {
                    let ms = ranges::quoted(s * 1e3);
                    Error::value(format!("{} {ms}: {e}", range.field))
                })?;
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
    /// The chip's id, the file stem of its chip file.
    pub chip: String,
    /// The data type choice the fleet runs.
    pub dtypes: Types,
    /// The serving (decode) instances' parallel layout (`tp=4 pp=2`; empty for one chip).
    pub layout: String,
    /// Output tokens of each request.
    pub output_tokens: u64,
    /// The layout's tensor, pipeline and expert degrees.
    pub tp: u64,
    /// The layout's pipeline degree (1 without pipelining).
    pub pp: u64,
    /// The layout's expert degree (1 without expert parallelism).
    pub ep: u64,
    /// Instances (replicas of the layout) serving the rate.
    pub instances: u64,
    /// Prefill instances beside them, where prompts are prefilled apart (else 0).
    pub prefill_instances: u64,
    /// The prefill instances' layout, its degrees and chips (empty and 0 with prefill
    /// together).
    pub prefill_layout: String,
    /// The prefill layout's tensor degree.
    pub prefill_tp: u64,
    /// The prefill layout's pipeline degree.
    pub prefill_pp: u64,
    /// The prefill layout's expert degree.
    pub prefill_ep: u64,
    /// Chips of one prefill instance.
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
    /// The same as `cloud_usd_per_hour`, in the TCO view.
    pub tco_usd_per_hour: Option<f64>,
    /// A million output tokens at the fleet's rate (its instances rounded up, so idle
    /// capacity is paid for), in each view.
    pub cloud_usd_per_million_tokens: Option<f64>,
    /// The same as `cloud_usd_per_million_tokens`, in the TCO view.
    pub tco_usd_per_million_tokens: Option<f64>,
    /// The simulation of one instance at its share of the rate (prefill together), or of
    /// the whole fleet (prefill apart).
    pub simulated: Option<Simulated>,
    /// The 80 % band of its point's times and rates (none in roofline mode).
    #[serde(skip)]
    pub band: Option<ServingBand>,
    /// Within a power budget (`plan --rate --power-budget-mw`), or why there is no answer;
    /// `None` without a budget.
    #[serde(skip)]
    pub power: Option<Result<FleetPowerFit, String>>,
}

/// One chip and choice of types: its cheapest fleet, or why none meets the targets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetEntry {
    /// The chip's id, the file stem of its chip file.
    pub chip: String,
    /// The engine planned under (`none` in roofline mode).
    pub engine: String,
    /// The data type choice planned.
    pub dtypes: Types,
    /// The cheapest fleet, or why no layout and concurrency meets the targets.
    pub outcome: Result<Fleet, String>,
}

/// What simulating the fleet's instance found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Simulated {
    /// Instances the steady state asked for, before any were added (decode instances, and
    /// prefill ones apart).
    pub steady_instances: u64,
    /// Prefill instances the steady state asked for (0 with prefill together).
    pub steady_prefill_instances: u64,
    /// 90th percentiles at the instance count kept.
    pub ttft_p90_s: f64,
    /// 90th percentile of the time per output token, seconds, at the instance count kept.
    pub tpot_p90_s: f64,
    /// Whether they meet the bounds (false: even the most instances tried did not).
    pub met: bool,
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

/// The fewest requests in flight, up to `most` (which serves `share`), whose steady state
/// serves `share` requests per second: lower latency at the same cost.
pub(crate) fn fewest_serving(
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

/// Each fleet of `entries` within `budget_mw` at the wall ([`fleet_power_fit`]): whether it
/// fits, and the most requests per second its instances serve within it at their planned
/// load (so its latency bounds hold).
#[cfg(feature = "cli")]
pub(crate) fn fit_power_budget(
    entries: &mut [FleetEntry],
    chips: &[Chip],
    slo: &Slo,
    budget_mw: f64,
) {
    for e in entries {
        let chip = chips.iter().find(|c| c.id() == e.chip);
        if let (Ok(fleet), Some(chip)) = (&mut e.outcome, chip) {
            let sizes = (fleet.chips, fleet.instances);
            let rate = (slo.rate_per_s, fleet.output_tokens);
            fleet.power = Some(fleet_power_fit(chip, sizes, rate, budget_mw));
        }
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
