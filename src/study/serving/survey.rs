//! Serving surveyed: every chip, choice of types and layout asked for, at every concurrency,
//! and the frontier of what they offer.

use std::ops::ControlFlow;
use std::sync::Arc;

use serde::Serialize;

use super::layouts::{servable, serve_layouts};
use super::pools::{
    check_prefill_sets, prefill_pools, price_way, ways, PrefillOption, Way, NO_PREFILL_POOL,
};
use super::query::{Disagg, LayoutChoice, ServingQuery};
use super::{frontier, Server, ServingBand, ServingError, ServingPoint};
use crate::base::error::Error;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::engine::Engine;
use crate::core::workload::Workload;

/// One priced point: chip, types, layout and concurrency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingRow {
    /// The chip's id, the file stem of its chip file.
    pub chip: String,
    /// The engine priced under (`none` in roofline mode).
    pub engine: String,
    /// The data type choice priced.
    pub dtypes: Types,
    /// `tp=4 ep=2`; empty for one chip.
    pub layout: String,
    /// The prefill pool's layout, where prefill is apart.
    pub prefill_layout: Option<String>,
    /// The concurrency asked for, where memory capped it to the point's.
    pub capped_from: Option<u64>,
    /// The steady state at the point's concurrency.
    pub point: ServingPoint,
    /// The 80 % band of its times and rates (none in roofline mode).
    #[serde(skip)]
    pub band: Option<ServingBand>,
}

/// Why a chip, types and layout gave no row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    /// The chip's id, the file stem of its chip file.
    pub chip: String,
    /// The data type choice tried.
    pub dtypes: Types,
    /// The layout tried (`tp=4 ep=2`; empty for one chip, `any layout` where no prefill
    /// pool serves).
    pub layout: String,
    /// Why it gave no row: the first line of the error, or that one request does not fit.
    pub why: String,
}

/// A survey's rows in the order chips, types, layouts and concurrencies were given, and what
/// was left out.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Survey {
    /// Every point priced.
    pub rows: Vec<ServingRow>,
    /// What gave no row: every layout tried for the scenario's own layout, else for a search
    /// only the last (largest) layout's reason, and only where no layout served.
    pub skipped: Vec<Skipped>,
}

/// [`survey`] under each of `engines` on each chip (none: each chip's default), the fp8
/// choice as each engine runs it where `engine_types` holds (see [`ServingQuery::under`]);
/// rows by chip, then engine.
pub fn survey_engines(
    workload: &Workload,
    chips: &[Chip],
    query: &ServingQuery,
    (engines, engine_types): (&[Arc<Engine>], bool),
) -> Result<Survey, Error> {
    let mut all = Survey::default();
    for chip in chips {
        for engine in super::slo::searched(query, engines) {
            let q = query.under(engine, chip, engine_types);
            let one = survey(workload, std::slice::from_ref(chip), &q)?;
            all.rows.extend(one.rows);
            all.skipped.extend(one.skipped);
        }
    }
    Ok(all)
}

/// Prices `query` on every chip.
pub fn survey(workload: &Workload, chips: &[Chip], query: &ServingQuery) -> Result<Survey, Error> {
    if query.concurrency.is_empty() || query.concurrency.contains(&0) {
        return Err(Error::value(
            "--concurrency: give one or more numbers of requests in flight, each at least 1",
        ));
    }
    query.options.check()?;
    servable(workload)?;
    query.shape.check_positions(workload)?;
    check_prefill_sets(workload, query)?;
    let mut survey = Survey::default();
    for chip in chips {
        for dtypes in &query.dtype_choices {
            let (mut found, mut reasons) = (false, Vec::new());
            let pools = prefill_pools(workload, chip, *dtypes, query)?;
            if query.disagg == Disagg::On && pools.is_empty() {
                survey.skipped.push(Skipped {
                    chip: chip.id().to_owned(),
                    dtypes: *dtypes,
                    layout: "any layout".to_owned(),
                    why: NO_PREFILL_POOL.to_owned(),
                });
                continue;
            }
            serve_layouts(workload, chip, *dtypes, query, &mut |layout, server| {
                let priced = server.and_then(|s| serve_concurrencies(s, query, &pools));
                let why =
                    match priced {
                        Ok(points) if !points.is_empty() => {
                            found = true;
                            survey.rows.extend(points.into_iter().map(
                                |(capped_from, way, point)| ServingRow {
                                    chip: chip.id().to_owned(),
                                    engine: query.scenario.engine_id_on(chip).to_owned(),
                                    dtypes: *dtypes,
                                    layout: layout.name.clone(),
                                    prefill_layout: prefill_name(way, &pools),
                                    capped_from,
                                    point,
                                    band: ServingBand::of(query.scenario.mode(), chip.family()),
                                },
                            ));
                            return match query.layouts {
                                LayoutChoice::Smallest => ControlFlow::Break(()),
                                _ => ControlFlow::Continue(()),
                            };
                        }
                        Ok(_) => "one request does not fit".to_owned(),
                        Err(e) => first_line(&e.to_string()),
                    };
                reasons.push(Skipped {
                    chip: chip.id().to_owned(),
                    dtypes: *dtypes,
                    layout: layout.name.clone(),
                    why,
                });
                ControlFlow::Continue(())
            })?;
            // Layouts that did not serve are news only when none did; of a search, the
            // largest one's reason says the most.
            if !found {
                match query.layouts {
                    LayoutChoice::Given => survey.skipped.extend(reasons),
                    _ => survey.skipped.extend(reasons.pop()),
                }
            }
        }
    }
    Ok(survey)
}

/// A priced point: the concurrency asked for where it was capped, the way it was priced, and
/// the point.
type Priced = (Option<u64>, Way, ServingPoint);

/// Every concurrency of `query` on one server, each way it prices (prefill apart on each of
/// `pools`); one above the most that fits is priced at that most instead (once). Empty when
/// one request does not fit.
fn serve_concurrencies(
    server: &mut Server,
    query: &ServingQuery,
    pools: &[PrefillOption],
) -> Result<Vec<Priced>, ServingError> {
    let mut points: Vec<Priced> = Vec::new();
    for &c in &query.concurrency {
        for way in ways(query.disagg, pools) {
            let at = |server: &mut Server, c| price_way(server, way, pools, query, c);
            at_concurrency(server, c, way, &mut points, at)?;
        }
    }
    Ok(points)
}

/// The name of the prefill pool a point of `way` was priced with.
fn prefill_name(way: Way, pools: &[PrefillOption]) -> Option<String> {
    match way {
        Way::Together => None,
        Way::Apart(i) => Some(pools[i].layout.name.clone()),
    }
}

/// Prices `c` in flight with `at` into `points`; where they do not fit, the most that do
/// instead (once).
fn at_concurrency(
    server: &mut Server,
    c: u64,
    way: Way,
    points: &mut Vec<Priced>,
    at: impl Fn(&mut Server, u64) -> Result<ServingPoint, ServingError>,
) -> Result<(), ServingError> {
    // Over the token budget is as out of reach as over memory.
    let served = |r: Result<ServingPoint, ServingError>| match r {
        Ok(p) => Ok(Some(p)),
        Err(ServingError::OverBudget { .. }) => Ok(None),
        Err(e) => Err(e),
    };
    let point = served(at(server, c))?;
    if let Some(p) = point.as_ref().filter(|p| p.fits) {
        points.push((None, way, p.clone()));
        return Ok(());
    }
    // The most in flight that fit: memory's estimate bounds it, then a bisection (fitting
    // gets no easier as sequences are added).
    let one = match served(at(server, 1))? {
        Some(one) if one.fits => one,
        _ => return Ok(()),
    };
    let (mut lo, mut hi) = (1, c);
    if let Some(most) = one.max_concurrency.filter(|m| (1..c).contains(m)) {
        match served(at(server, most))? {
            Some(p) if p.fits => lo = most,
            _ => hi = most,
        }
    }
    let mut best = None;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match served(at(server, mid))? {
            Some(p) if p.fits => (lo, best) = (mid, Some(p)),
            _ => hi = mid,
        }
    }
    let best = match best {
        Some(p) => p,
        None if lo == 1 => one,
        None => at(server, lo)?,
    };
    let seen = |(_, w, p): &Priced| p.concurrency == lo && *w == way;
    if !points.iter().any(seen) {
        points.push((Some(c), way, best));
    }
    Ok(())
}

/// The points of `rows` on each chip's frontier of tokens per second per user against output
/// tokens per second per chip, chips in their first row's order, each by interactivity rising.
pub fn frontier_rows(rows: &[ServingRow]) -> Vec<ServingRow> {
    let mut chips: Vec<&str> = Vec::new();
    for r in rows {
        if !chips.contains(&r.chip.as_str()) {
            chips.push(&r.chip);
        }
    }
    let mut kept = Vec::new();
    for chip in chips {
        let mine: Vec<&ServingRow> = rows.iter().filter(|r| r.chip == chip).collect();
        let best = frontier(
            &mine,
            |r| r.point.tokens_per_s_per_user,
            |r| r.point.output_tokens_per_s_per_chip,
        );
        kept.extend(best.into_iter().map(|i| mine[i].clone()));
    }
    kept
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}
