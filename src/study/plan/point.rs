//! One layout's answer: the largest batch that fits and meets the latency bound, by
//! bisection, and the replicas and chips a target needs at it.

use super::{PlanError, PlanPoint, PlanRequest, MAX_BATCH};
use crate::base::error::Error;
use crate::base::ranges;
use crate::core::chip::Chip;
use crate::core::cost::CostView;
use crate::core::timing::StepSummary;
use crate::study::band::Band;

/// The replicas a target needs (one without a target) at `per_replica` tokens per second,
/// and their chips. Counts are checked, never saturated: a target that needs more chips than a
/// count holds exactly is a reason on this entry, not a clamped number priced as if it were
/// true.
fn replicas(
    request: &PlanRequest,
    per_replica: f64,
    chips_per_replica: u64,
) -> Result<(u64, u64), PlanError> {
    let replicas = match request.target_tokens_per_s {
        Some(target) => (target / per_replica).ceil().max(1.0),
        None => 1.0,
    };
    let too_many = |e: String| PlanError::Infeasible(e);
    let replicas = ranges::whole(
        replicas,
        &ranges::PLAN_CHIPS,
        "the number of replicas needed",
    )
    .map_err(too_many)?;
    let chips = ranges::whole(
        replicas as f64 * chips_per_replica as f64,
        &ranges::PLAN_CHIPS,
        "the number of chips needed",
    )
    .map_err(too_many)?;
    Ok((replicas, chips))
}

/// The best point at one layout; with a conservative request, on the slow end of `band`: each
/// step's time taken as its band's high end for the latency bound, the replicas and the costs.
pub(super) fn best_point(
    request: &PlanRequest,
    chip: &Chip,
    band: Option<Band>,
    at: &mut dyn FnMut(u64) -> Result<StepSummary, Error>,
) -> Result<PlanPoint, PlanError> {
    let slow = match (request.conservative, band) {
        (true, Some(b)) => b.high,
        _ => 1.0, // as PlanPoint::slow_factor
    };
    let human = crate::base::units::human;
    let one = at(1)?;
    let max_batch = one.max_batch.unwrap_or(MAX_BATCH).min(MAX_BATCH);
    if !one.fits || max_batch == 0 {
        return Err(PlanError::Infeasible(format!(
            "does not fit: batch 1 needs {} of the {} usable",
            human(one.footprint_bytes, "B"),
            human(one.usable_bytes, "B")
        )));
    }
    let latency = |s: &StepSummary| s.ms_per_token.unwrap_or(s.step_time_s * 1e3) * slow;
    if let Some(limit) = request.max_ms_per_token {
        if latency(&one) > limit {
            return Err(PlanError::Infeasible(format!(
                "too slow: {:.3} ms per token at batch 1, over the {limit} ms bound",
                latency(&one)
            )));
        }
    }
    let ok = |s: &StepSummary| s.fits && request.max_ms_per_token.is_none_or(|l| latency(s) <= l);
    // Fitting and meeting the bound only get harder as the batch grows: the largest batch
    // that does both is found by bisection, starting from the memory's own limit.
    let (mut lo, mut best) = (1, one);
    let top = at(max_batch)?;
    if ok(&top) {
        lo = max_batch;
        best = top;
    } else {
        let mut hi = max_batch; // fails
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let s = at(mid)?;
            if ok(&s) {
                lo = mid;
                best = s;
            } else {
                hi = mid;
            }
        }
    }
    let per_replica = best.tokens_per_s.unwrap_or(1.0 / best.step_time_s) / slow;
    let (replicas, chips) = replicas(request, per_replica, best.chips)?;
    // With a target, what its tokens cost: every chip's hours, the last replica's spare
    // capacity included, over the tokens asked for; without, one replica's at its capacity.
    let per_million = |view: CostView| {
        let usd = chip.cost_model().with_view(view).usd_per_hour(chip).ok()?;
        match request.target_tokens_per_s {
            Some(target) => Some(usd * chips as f64 / 3600.0 / target * 1e6),
            None => best
                .tokens_per_s
                .map(|rate| usd * best.chips as f64 / 3600.0 / (rate / slow) * 1e6),
        }
    };
    Ok(PlanPoint {
        layout: String::new(),
        tp: best.chips,
        replicas,
        batch: lo,
        max_batch,
        chips,
        usd_per_hour: chip.usd_per_hour().ok().map(|p| p * chips as f64),
        cloud_usd_per_million_tokens: per_million(CostView::Cloud),
        tco_usd_per_million_tokens: per_million(CostView::Tco),
        power: None,
        summary: best,
        band,
    })
}
