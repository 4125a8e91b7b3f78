//! Serving rows priced by the steady-state model (`study::serving`): each row's load as
//! requests in flight, its metric read off the steady state, and the errors grouped apart from
//! the step and request rows'.

use std::path::Path;
use std::sync::Arc;

use super::serving::{prepare_serving, Load, ServingCase, ServingMetric};
use super::{stats_of, ErrorStats, RowError};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::core::engine::Engine;
use crate::core::scenario::Mode;
use crate::core::timing::IterationPricer;
use crate::study::serving::{RequestShape, Server, ServingError, ServingOptions, ServingPoint};

/// Requests in flight an `rate=inf` row is priced at, at most: the engine holds as many as
/// memory and its token budget allow, up to this many (vLLM's `max_num_seqs` for its API
/// server on GPUs of 70 GiB or more; docs/sources.md, SE-4).
pub const ALL_AT_ONCE_MOST: u64 = 1024;

/// One serving row and what the model predicts for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServingOutcome {
    /// The serving row.
    pub case: ServingCase,
    /// The requests in flight priced.
    pub concurrency: Option<u64>,
    /// The predicted value in the metric's unit, or the first line of why the row could not
    /// be priced.
    pub predicted: Result<f64, String>,
}

impl ServingOutcome {
    /// `predicted / measured - 1`, where priced.
    pub fn error(&self) -> Option<f64> {
        self.row_error().map(|e| e.of_metric)
    }

    /// The error of the metric and of the time it stands for, where priced.
    pub fn row_error(&self) -> Option<RowError> {
        RowError::of(
            &self.predicted,
            self.case.measured,
            self.case.metric.is_rate(),
        )
    }
}

/// Prices every serving row in `mode`; one that cannot be priced is an outcome with why.
pub fn validate_serving(
    cases: &[ServingCase],
    cases_file: &Path,
    mode: Mode,
) -> Vec<ServingOutcome> {
    validate_serving_under(cases, cases_file, (mode, None))
}

/// [`validate_serving`], a row naming no engine priced under `engine` (`validate
/// --engine`; `None`: its chip's default).
pub fn validate_serving_under(
    cases: &[ServingCase],
    cases_file: &Path,
    (mode, engine): (Mode, Option<&Arc<Engine>>),
) -> Vec<ServingOutcome> {
    cases
        .iter()
        .map(|case| match predict(case, cases_file, (mode, engine)) {
            Ok((c, value)) => ServingOutcome {
                case: case.clone(),
                concurrency: Some(c),
                predicted: Ok(value),
            },
            Err(e) => ServingOutcome {
                case: case.clone(),
                concurrency: None,
                predicted: Err(e.to_string().lines().next().unwrap_or_default().to_owned()),
            },
        })
        .collect()
}

/// The group a serving row falls in by one grouping, where it has one.
type GroupKey<'a> = &'a dyn Fn(&ServingOutcome) -> Option<String>;

/// Median and 90th-percentile error overall, per metric, then per engine.
pub fn serving_stats(outcomes: &[ServingOutcome]) -> Vec<ErrorStats> {
    let mut groups: Vec<(String, Vec<RowError>)> = vec![("all serving".into(), Vec::new())];
    for o in outcomes {
        if let Some(e) = o.row_error() {
            groups[0].1.push(e);
        }
    }
    let keys: [GroupKey; 2] = [
        &|o| Some(format!("metric {}", o.case.metric.name())),
        &|o| o.case.stack.group(),
    ];
    for key in keys {
        for o in outcomes {
            let (Some(e), Some(key)) = (o.row_error(), key(o)) else {
                continue;
            };
            match groups.iter_mut().find(|(g, _)| *g == key) {
                Some((_, errors)) => errors.push(e),
                None => groups.push((key, vec![e])),
            }
        }
    }
    groups
        .into_iter()
        .filter(|(_, e)| !e.is_empty())
        .map(|(g, e)| stats_of(g, e))
        .collect()
}

fn predict(
    case: &ServingCase,
    cases_file: &Path,
    (mode, engine): (Mode, Option<&Arc<Engine>>),
) -> Result<(u64, f64), ServingError> {
    let mut prepared = prepare_serving(case, cases_file, mode)?;
    if prepared.scenario.engine().is_none() {
        prepared.scenario.set_engine(engine.cloned());
    }
    let (workload, chip) = (&prepared.workload, &prepared.chip);
    let target = IterationPricer::new(workload, chip, &prepared.scenario)?;
    let budget = match workload.param(ScenarioParam::MaxBatchedTokens) {
        Some(i) => {
            let mut ev = workload.new_evaluation();
            workload.evaluate(prepared.scenario.overrides(), &mut ev)?;
            ev.params[i]
        }
        None => f64::INFINITY,
    };
    let mut server = Server::new(chip, target, None, budget, ServingOptions::default())?;
    let shape = RequestShape::new(case.request.0, case.request.1)?;
    let c = match case.load {
        Load::Concurrency(c) => c,
        Load::RatePerS(rate) => concurrency_for_rate(&mut server, shape, rate)?,
        Load::AllAtOnce => most_in_flight(&mut server, shape, ALL_AT_ONCE_MOST)?,
    };
    let p = server.steady_state(shape, c)?;
    Ok((c, metric(&p, case.metric)))
}

fn metric(p: &ServingPoint, m: ServingMetric) -> f64 {
    match m {
        ServingMetric::OutputTokensPerS => p.output_tokens_per_s,
        ServingMetric::OutputTokensPerSPerGpu => p.output_tokens_per_s_per_chip,
        ServingMetric::TtftMs => p.ttft_s * 1e3,
        ServingMetric::TpotMs => p.tpot_s * 1e3,
        ServingMetric::E2eS => p.e2e_s,
        ServingMetric::RequestsPerS => p.requests_per_s,
    }
}

/// The most requests in flight, up to `cap`, that fit memory and the token budget.
fn most_in_flight(server: &mut Server, shape: RequestShape, cap: u64) -> Result<u64, ServingError> {
    let fits = |s: &mut Server, c| match s.steady_state(shape, c) {
        Ok(p) => Ok(p.fits),
        Err(ServingError::OverBudget { .. }) => Ok(false),
        Err(e) => Err(e),
    };
    if !fits(server, 1)? {
        return Err(Error::value("one request does not fit").into());
    }
    let (mut lo, mut hi) = (1, cap + 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(server, mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The fewest requests in flight that serve `rate` requests per second (Little's law in the
/// steady state); the most that fit when none does, the instance then saturated.
fn concurrency_for_rate(
    server: &mut Server,
    shape: RequestShape,
    rate: f64,
) -> Result<u64, ServingError> {
    let most = most_in_flight(server, shape, ALL_AT_ONCE_MOST)?;
    let (mut lo, mut hi) = (0, most);
    if server.steady_state(shape, most)?.requests_per_s < rate {
        return Ok(most);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if server.steady_state(shape, mid)?.requests_per_s >= rate {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}
