//! Serving rows of a case file (kind `serving`): an instance serving requests of `in=I,out=O`
//! tokens under continuous batching, at a stated concurrency or request rate, and one metric
//! measured of it (output tokens/s, TTFT, TPOT, ...). They are read and checked here; this
//! build has no serving model, so `validate` counts them and prices none.
//!
//! The load is written in the `params` column beside the workload's own params:
//! `concurrency=N` (requests in flight, as `--max-concurrency` or a closed-loop client keeps
//! them), `rate=R` (requests arriving per second) or `rate=inf` (all requests queued at once, an
//! offline maximum-throughput run). Every other `name=value` is a param of the workload
//! (`ep=8`, `max_batched_tokens=8192`).

use std::path::Path;

use crate::base::diagnostic::{Diagnostic, Diagnostics, Origin};
use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::parse::parse_set;
use crate::base::ranges;
use crate::base::source::{FileKind, Source};
use crate::base::types::TypeKey;
use crate::core::chip::Chip;
use crate::core::scenario::{Mode, Scenario};
use crate::core::workload::Workload;

use super::fields::{list, parse_dtypes, parse_measured, parse_request, parse_tp, FieldError};
use super::stack::Stack;
use super::{resolve, spec_of};

/// What a serving row measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServingMetric {
    /// Output tokens per second of the whole instance (all its chips).
    OutputTokensPerS,
    /// Output tokens per second per chip of the instance.
    OutputTokensPerSPerGpu,
    /// Time to first token, in ms.
    TtftMs,
    /// Time per output token after the first, in ms.
    TpotMs,
    /// End-to-end latency of a request, in s.
    E2eS,
    /// Requests completed per second by the instance.
    RequestsPerS,
}

impl ServingMetric {
    /// Every serving metric with the name a case file's `metric` column gives it.
    pub const ALL: [(&'static str, ServingMetric); 6] = [
        ("output_tokens_per_s", ServingMetric::OutputTokensPerS),
        (
            "output_tokens_per_s_per_gpu",
            ServingMetric::OutputTokensPerSPerGpu,
        ),
        ("ttft_ms", ServingMetric::TtftMs),
        ("tpot_ms", ServingMetric::TpotMs),
        ("e2e_s", ServingMetric::E2eS),
        ("requests_per_s", ServingMetric::RequestsPerS),
    ];

    /// The name a case file's `metric` column gives it (`output_tokens_per_s`).
    pub fn name(self) -> &'static str {
        ServingMetric::ALL
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("", |(n, _)| n)
    }

    /// The metric named `name`, if it is a serving one.
    pub fn named(name: &str) -> Option<ServingMetric> {
        ServingMetric::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
    }

    /// Whether the metric is a rate (more is faster) rather than a time.
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            ServingMetric::OutputTokensPerS
                | ServingMetric::OutputTokensPerSPerGpu
                | ServingMetric::RequestsPerS
        )
    }
}

/// How requests reach the instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// This many requests in flight at once (`concurrency=N`).
    Concurrency(u64),
    /// Requests arriving at this many per second (`rate=R`).
    RatePerS(f64),
    /// Every request queued at once (`rate=inf`): the engine runs as many as it holds.
    AllAtOnce,
}

/// The `params` keys that set the load rather than a workload param.
pub(super) const LOAD_KEYS: [&str; 2] = ["concurrency", "rate"];

/// One serving row of a case file.
#[derive(Debug, Clone, PartialEq)]
pub struct ServingCase {
    /// The row's stable id, its source's code before the first `-`.
    pub id: String,
    /// 1-based line in the case file.
    pub line: u64,
    /// The chip as the row names it: a built-in id, or a path relative to the case file.
    pub chip: String,
    /// The workload as the row names it: a built-in id, or a path relative to the case file.
    pub workload: String,
    /// The workload's param overrides (the load taken out).
    pub sets: Vec<(String, f64)>,
    /// The `dtypes` column's `key=type` settings (`weight=fp8`), in the order given.
    pub dtypes: Vec<(TypeKey, Format)>,
    /// The fusion plan by name (`None`: the workload's default).
    pub fusion: Option<String>,
    /// `(input tokens, output tokens)` of each request.
    pub request: (u64, u64),
    /// Chips of one instance's tensor-parallel group.
    pub tp: u64,
    /// How requests reach the instance, from the `params` column.
    pub load: Load,
    /// What the row measures.
    pub metric: ServingMetric,
    /// The measured value, in the metric's unit (above 0).
    pub measured: f64,
    /// Where the measurement comes from, as the row cites it.
    pub source: String,
    /// The engine and the harness it was measured with.
    pub stack: Stack,
}

/// The serving case in one row, `get` giving a column's text; the first bad field stops it.
pub(super) fn parse_serving(
    get: &dyn Fn(&str) -> String,
    id: String,
    line: u64,
    stack: Stack,
) -> Result<ServingCase, FieldError> {
    let (load, sets) = parse_load(&get("params"))?;
    let dtypes = parse_dtypes(&get("dtypes"))?;
    let request = match get("request").as_str() {
        "" => {
            return Err((
                "request",
                "a serving row needs a request (in=I,out=O)".into(),
            ))
        }
        text => parse_request(text).map_err(|e| ("request", e))?,
    };
    let tp = parse_tp(&get("tp"))?;
    let metric_name = get("metric");
    let metric = ServingMetric::named(&metric_name).ok_or_else(|| {
        (
            "metric",
            format!(
                "unknown serving metric `{metric_name}`; expected one of {}",
                ServingMetric::ALL.map(|(n, _)| n).join(", ")
            ),
        )
    })?;
    let measured = parse_measured(&get("measured"))?;
    Ok(ServingCase {
        id,
        line,
        chip: get("chip"),
        workload: get("workload"),
        sets,
        dtypes,
        fusion: Some(get("fusion")).filter(|f| !f.is_empty()),
        request,
        tp,
        load,
        metric,
        measured,
        source: get("source"),
        stack,
    })
}

/// A serving row's `params`: exactly one load (`concurrency=N`, `rate=R` or `rate=inf`), the
/// rest the workload's `name=value` overrides.
fn parse_load(text: &str) -> Result<(Load, Vec<(String, f64)>), FieldError> {
    let bad = |message: String| ("params", message);
    let mut load = None;
    let mut sets = Vec::new();
    for item in list(text) {
        let key = item.split_once('=').map_or(item, |(k, _)| k).trim();
        if !LOAD_KEYS.contains(&key) {
            let set =
                parse_set(item).map_err(|e| bad(format!("{e}; expected name=value;name=value")))?;
            sets.push(set);
            continue;
        }
        if load.is_some() {
            return Err(bad(format!(
                "`{item}`: the load is given twice; a serving row has one `concurrency=N` or `rate=R`"
            )));
        }
        let value = item.split_once('=').map_or("", |(_, v)| v).trim();
        load = Some(match key {
            "concurrency" => Load::Concurrency(parse_concurrency(value).map_err(bad)?),
            _ => parse_rate(value).map_err(bad)?,
        });
    }
    let load = load.ok_or_else(|| {
        bad("a serving row needs its load: concurrency=N (requests in flight) or rate=R (requests/s; inf for all at once)".into())
    })?;
    Ok((load, sets))
}

/// `concurrency=N`: a whole count of requests inside [`ranges::SERVING_CONCURRENCY`].
fn parse_concurrency(value: &str) -> Result<u64, String> {
    let range = ranges::SERVING_CONCURRENCY;
    value
        .parse::<u64>()
        .ok()
        .filter(|n| range.contains(*n as f64))
        .ok_or_else(|| {
            format!(
                "`concurrency={value}` is not a count of requests: {}",
                range.expected()
            )
        })
}

/// `rate=R` requests/s inside [`ranges::REQUEST_RATE`], or `rate=inf`.
fn parse_rate(value: &str) -> Result<Load, String> {
    if value.eq_ignore_ascii_case("inf") {
        return Ok(Load::AllAtOnce);
    }
    let range = ranges::REQUEST_RATE;
    value
        .parse::<f64>()
        .ok()
        .filter(|r| range.contains(*r))
        .map(Load::RatePerS)
        .ok_or_else(|| {
            format!(
                "`rate={value}` is not a request rate (or `inf`): {}",
                range.expected()
            )
        })
}

/// A serving case ready for a serving model: its chip, workload and the scenario of its
/// instance (params, `tp`, types, fusion) loaded and resolved.
pub struct PreparedServing {
    /// The chip the row names.
    pub chip: Chip,
    /// The workload the row names.
    pub workload: Workload,
    /// The instance's scenario, resolved from the row's params, `tp`, types and fusion.
    pub scenario: Scenario,
}

/// Loads what a serving `case` names and resolves its instance's scenario in `mode`, so that
/// a row naming an unknown chip, workload, param or type is refused before any model runs.
pub fn prepare_serving(
    case: &ServingCase,
    cases_file: &Path,
    mode: Mode,
) -> Result<PreparedServing, Error> {
    load(case, cases_file, mode).map_err(|(_, e)| e)
}

/// [`prepare_serving`], a failure tagged with the column it comes from (none for the
/// scenario, which params, types, fusion and `tp` make together).
fn load(
    case: &ServingCase,
    cases_file: &Path,
    mode: Mode,
) -> Result<PreparedServing, (&'static str, Error)> {
    let chip = resolve(&case.chip, FileKind::Chip, cases_file)
        .and_then(|source| Chip::load(&source))
        .map_err(|e| ("chip", e))?;
    let workload = resolve(&case.workload, FileKind::Workload, cases_file)
        .and_then(|source| Workload::load(&source))
        .map_err(|e| ("workload", e))?;
    let (sets, dtypes) = (&case.sets, &case.dtypes);
    let mut scenario = spec_of(&workload, sets, case.tp, dtypes, &case.fusion, mode)
        .and_then(|spec| Scenario::resolve(&workload, &spec))
        .map_err(|e| ("", e))?;
    // A serving row runs under the engine it names (one of the built-in engines; `unknown`
    // leaves it to `--engine` or the chip's default).
    let named = case.stack.engine.as_deref().filter(|e| *e != "unknown");
    if let Some(id) = named {
        let engine = crate::core::engine::builtin(id).map_err(|e| ("engine", e))?;
        scenario.set_engine(Some(engine));
    }
    Ok(PreparedServing {
        chip,
        workload,
        scenario,
    })
}

/// Checks that every serving case of the case file `source` (read from `cases_file`) loads
/// ([`prepare_serving`]); each that does not is a problem on its line, naming its id.
pub fn check_serving(
    cases: &[ServingCase],
    source: &Source,
    cases_file: &Path,
) -> Result<(), Error> {
    let problems: Vec<Diagnostic> = cases
        .iter()
        .filter_map(|case| {
            let (field, e) = load(case, cases_file, Mode::Expected).err()?;
            let text = e.to_string();
            let first = text.lines().next().unwrap_or(&text);
            let message = format!("serving case `{}`: {first}", case.id);
            Some(source.problem(&Origin::new(field, case.line, 0), message))
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(Diagnostics(problems)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_load_apart_from_the_params() {
        let (load, sets) = parse_load("concurrency=64;ep=8").unwrap();
        assert_eq!(load, Load::Concurrency(64));
        assert_eq!(sets, vec![("ep".to_owned(), 8.0)]);
        assert_eq!(parse_load("rate=2.5").unwrap().0, Load::RatePerS(2.5));
        assert_eq!(parse_load(" rate = inf ").unwrap().0, Load::AllAtOnce);
    }

    #[test]
    fn refuses_a_missing_doubled_or_bad_load() {
        for (text, says) in [
            ("", "needs its load"),
            ("ep=8", "needs its load"),
            ("concurrency=4;rate=1", "given twice"),
            ("concurrency=0", "`concurrency=0`"),
            ("concurrency=2.5", "`concurrency=2.5`"),
            ("concurrency=", "`concurrency=`"),
            ("rate=0", "`rate=0`"),
            ("rate=-1", "`rate=-1`"),
            ("rate=NaN", "`rate=NaN`"),
            ("rate=fast", "`rate=fast`"),
        ] {
            let (field, message) = parse_load(text).unwrap_err();
            assert_eq!(field, "params");
            assert!(message.contains(says), "{text}: {message}");
        }
    }

    #[test]
    fn names_every_metric_once() {
        for (name, metric) in ServingMetric::ALL {
            assert_eq!(metric.name(), name);
            assert_eq!(ServingMetric::named(name), Some(metric));
        }
        assert_eq!(ServingMetric::named("tokens_per_s"), None);
    }
}
