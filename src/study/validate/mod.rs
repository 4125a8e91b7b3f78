//! Predictions against measured hardware: a case file names, per row, a chip, a workload and
//! its scenario, a metric and the measured value; each case is priced and its signed error
//! reported, then the median and 90th-percentile absolute error overall and per group.
//! Reading and checking the case file itself is the `cases` module's part; serving rows
//! (`serving`) are read and their chip, workload and scenario loaded, but not priced: this
//! build has no serving model.

mod cases;
mod fields;
mod serving;
mod serving_predict;
mod stack;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

pub use cases::{read_case_file, read_cases, Case, CaseFile, Metric};
pub use fields::parse_request;
pub use serving::{
    check_serving, prepare_serving, Load, PreparedServing, ServingCase, ServingMetric,
};
pub use serving_predict::{
    serving_stats, validate_serving, validate_serving_under, ServingOutcome, ALL_AT_ONCE_MOST,
};
pub use stack::{baseline_ids, engine_ids, Library, Stack};

use crate::base::dtype::{DType, Role};
use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::param::ScenarioParam;
use crate::base::source::{is_name, FileKind, Source};
use crate::base::types::TypeKey;
use crate::core::chip::Chip;
use crate::core::engine::Engine;
use crate::core::scenario::{Mode, Scenario, ScenarioSpec};
use crate::core::timing::{price, price_request};
use crate::core::workload::Workload;

/// A case priced, or why it was skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The case, its `kind` derived from its request and `tokens` param where the file gives
    /// none.
    pub case: Case,
    /// The type most of the priced step's time computes in (the weight type of a request),
    /// for grouping.
    pub dtype: DType,
    /// The predicted value in the metric's unit, or the first line of why the case could
    /// not be priced.
    pub predicted: Result<f64, String>,
}

impl Outcome {
    /// `predicted / measured - 1`.
    pub fn error(&self) -> Option<f64> {
        self.predicted
            .as_ref()
            .ok()
            .map(|p| p / self.case.measured - 1.0)
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

/// One priced row's error, two ways: of the metric as measured (`predicted / measured - 1`),
/// and of the time (`predicted time / measured time - 1`: a rate's ratio inverted), so that a
/// signed error reads the same way whatever the metric: negative where the prediction is too
/// fast (optimistic). A 25 % too-high tokens/s is a 20 % too-short time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowError {
    /// `predicted / measured - 1` of the metric as measured.
    pub of_metric: f64,
    /// `predicted time / measured time - 1`: the metric's error, a rate's ratio inverted.
    pub of_time: f64,
}

impl RowError {
    /// The errors of `predicted` against `measured`, of a rate (more is faster) or a time.
    pub fn new(predicted: f64, measured: f64, rate: bool) -> RowError {
        let of_metric = predicted / measured - 1.0;
        let of_time = if rate {
            measured / predicted - 1.0
        } else {
            of_metric
        };
        RowError { of_metric, of_time }
    }

    /// [`RowError::new`] of a prediction, where there is one.
    pub fn of<E>(predicted: &Result<f64, E>, measured: f64, rate: bool) -> Option<RowError> {
        let predicted = *predicted.as_ref().ok()?;
        Some(RowError::new(predicted, measured, rate))
    }
}

/// Median and 90th-percentile absolute error of a group of cases.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorStats {
    /// The group's label: `all`, or what its rows share (`chip h100-sxm`, `kind decode`,
    /// `multi-chip`).
    pub group: String,
    /// Priced rows in the group.
    pub cases: usize,
    /// The median of the metric's absolute errors, as a fraction (0.1: 10 %).
    pub median_abs: f64,
    /// The 90th percentile (nearest rank) of the metric's absolute errors, as a fraction.
    pub p90_abs: f64,
    /// The median of the signed time errors (`predicted / measured time - 1`: negative where
    /// the predictions are too fast, whether the metric is a rate or a time).
    pub signed_median: f64,
}

/// Resolves a chip or workload named by a case: a path relative to the case file, a built-in,
/// or else `NAME.yaml` beside the case file (the chip file `fit --new-chip NAME` wrote there).
fn resolve(name: &str, kind: FileKind, cases_file: &Path) -> Result<Source, Error> {
    let beside = |file: &str| cases_file.parent().map(|d| d.join(file));
    if let Some(path) = beside(name).filter(|p| p.is_file()) {
        return Source::read(&path);
    }
    Source::resolve(name, kind).or_else(|e| {
        match beside(&format!("{name}.yaml")).filter(|p| p.is_file() && is_name(name)) {
            Some(path) => Source::read(&path),
            None => Err(e),
        }
    })
}

/// The engine step rows are priced under unless `validate --engine` names another: the chip
/// files' fitted constants and no engine's own terms (`engines/fitted.yaml`), the stack the
/// constants were fitted on.
pub const FITTED_ENGINE: &str = "fitted";

/// Prices every case in `mode`. A case that cannot be priced is an outcome with the reason.
pub fn validate(cases: Vec<Case>, cases_file: &Path, mode: Mode) -> Vec<Outcome> {
    validate_under(cases, cases_file, (mode, None))
}

/// [`validate`], every step row priced under `engine` (`validate --engine`; `None`: the
/// fitted stack, [`FITTED_ENGINE`], as `stepcost fit` prices the rows).
pub fn validate_under(
    cases: Vec<Case>,
    cases_file: &Path,
    (mode, engine): (Mode, Option<&Arc<Engine>>),
) -> Vec<Outcome> {
    let mut loads = Loads::default();
    cases
        .into_iter()
        .map(|case| {
            let predicted = prepare_with(&case, cases_file, mode, &mut loads).and_then(|mut p| {
                if let Some(engine) = engine {
                    p.scenario.set_engine(Some(Arc::clone(engine)));
                }
                p.predict(&p.chip)
            });
            outcome(case, predicted)
        })
        .collect()
}

/// The outcome of `case` priced as `predicted` (an error kept as its first line); its kind
/// derived where the case file leaves it empty.
pub fn outcome(mut case: Case, predicted: Result<(f64, Option<DType>), Error>) -> Outcome {
    let weight = case
        .dtypes
        .iter()
        .find(|(k, _)| *k == TypeKey::Role(Role::Weight))
        .map_or(DType::Bf16, |(_, f)| f.element());
    let (predicted, dtype) = match predicted {
        Ok((value, dtype)) => (Ok(value), dtype.unwrap_or(weight)),
        Err(e) => {
            let text = e.to_string();
            (Err(text.lines().next().unwrap_or(&text).to_owned()), weight)
        }
    };
    if case.kind.is_empty() {
        case.kind = derived_kind(&case);
    }
    Outcome {
        case,
        dtype,
        predicted,
    }
}

fn derived_kind(case: &Case) -> String {
    if case.request.is_some() {
        return "request".into();
    }
    let tokens = case
        .sets
        .iter()
        .find(|(n, _)| n == ScenarioParam::Tokens.name())
        .map(|(_, v)| *v);
    match tokens {
        Some(t) if t > 1.0 => "prefill",
        Some(_) => "decode",
        None => "kernel",
    }
    .into()
}

/// Loads the chip a case names: a built-in, or a path relative to the case file.
pub fn case_chip(case: &Case, cases_file: &Path) -> Result<Chip, Error> {
    Chip::load(&resolve(&case.chip, FileKind::Chip, cases_file)?)
}

/// The chips and workloads the cases of one case file name, each loaded once and shared by
/// every case that names it: a case file's rows name a few files many times, and a row then
/// holds its scenario alone, so that a fit of 10^5 rows loads and holds a few files, not 10^5
/// copies of them. A name that does not load is tried again by the next case naming it.
#[derive(Default)]
pub struct Loads {
    chips: HashMap<String, Arc<Chip>>,
    workloads: HashMap<String, Arc<Workload>>,
    loaded: usize,
}

impl Loads {
    /// The chip `case` names, loaded by the first case that names it.
    pub fn chip(&mut self, case: &Case, cases_file: &Path) -> Result<Arc<Chip>, Error> {
        if let Some(chip) = self.chips.get(&case.chip) {
            return Ok(Arc::clone(chip));
        }
        let chip = Arc::new(case_chip(case, cases_file)?);
        self.loaded += 1;
        self.chips.insert(case.chip.clone(), Arc::clone(&chip));
        Ok(chip)
    }

    /// Holds `chip` as the chip cases naming `name` price on: one no file describes yet.
    pub fn insert_chip(&mut self, name: &str, chip: Arc<Chip>) {
        self.chips.insert(name.to_owned(), chip);
    }

    /// The workload `case` names, loaded by the first case that names it.
    pub fn workload(&mut self, case: &Case, cases_file: &Path) -> Result<Arc<Workload>, Error> {
        if let Some(workload) = self.workloads.get(&case.workload) {
            return Ok(Arc::clone(workload));
        }
        let source = resolve(&case.workload, FileKind::Workload, cases_file)?;
        // A measured case ran, whatever the checkpoint's max_positions says (TensorRT-LLM ran
        // Llama-2-70B at 128 + 4096 tokens): it is priced as it ran.
        let workload = Arc::new(Workload::load(&source)?.without_position_limit());
        self.loaded += 1;
        self.workloads
            .insert(case.workload.clone(), Arc::clone(&workload));
        Ok(workload)
    }

    /// Files loaded so far (each chip and workload once, whatever the number of cases).
    pub fn loaded(&self) -> usize {
        self.loaded
    }
}

/// A case ready to price: its chip, workload and scenario loaded and resolved once, so that a
/// fit can price it again with other constants. The chip and workload are shared with every
/// case of the same [`Loads`].
pub struct Prepared {
    /// The chip the case names.
    pub chip: Arc<Chip>,
    workload: Arc<Workload>,
    scenario: Scenario,
    request: Option<(u64, u64)>,
    metric: Metric,
}

/// Loads what `case` names and resolves its scenario in `mode`.
pub fn prepare(case: &Case, cases_file: &Path, mode: Mode) -> Result<Prepared, Error> {
    prepare_with(case, cases_file, mode, &mut Loads::default())
}

/// [`prepare`], the chip and workload taken from `loads` (loaded there by the first case that
/// names them).
pub fn prepare_with(
    case: &Case,
    cases_file: &Path,
    mode: Mode,
    loads: &mut Loads,
) -> Result<Prepared, Error> {
    let chip = loads.chip(case, cases_file)?;
    let workload = loads.workload(case, cases_file)?;
    let spec = spec_of(
        &workload,
        &case.sets,
        case.tp,
        &case.dtypes,
        &case.fusion,
        mode,
    )?;
    let mut scenario = Scenario::resolve(&workload, &spec)?;
    // A step row is priced as `stepcost fit` fitted the chip files on it: under the fitted
    // stack (the chip's constants, no engine's own terms), until engines' host terms are
    // fitted from the rows that name them.
    scenario.set_engine(Some(crate::core::engine::builtin(FITTED_ENGINE)?));
    // A kernel row's GEMMs run in the library it names.
    scenario.set_gemm_path(case.stack.path());
    Ok(Prepared {
        chip,
        workload,
        scenario,
        request: case.request,
        metric: case.metric,
    })
}

/// The scenario a case names: its params, with `tp` set where it is above 1 (refused where
/// the workload has no `tp` param to split the step with), its types and fusion plan.
fn spec_of(
    workload: &Workload,
    sets: &[(String, f64)],
    tp: u64,
    dtypes: &[(TypeKey, Format)],
    fusion: &Option<String>,
    mode: Mode,
) -> Result<ScenarioSpec, Error> {
    let mut sets = sets.to_vec();
    if tp > 1 {
        if workload.param(ScenarioParam::Tp).is_none() {
            return Err(Error::value(format!(
                "multi-chip (tp = {tp}): workload `{}` has no `tp` param to split it",
                workload.id
            )));
        }
        sets.push((ScenarioParam::Tp.name().into(), tp as f64));
    }
    Ok(ScenarioSpec {
        sets,
        dtypes: dtypes.to_vec(),
        fusion: fusion.clone(),
        mode,
        overlap_comm: false,
        memory_utilization: None,
        engine: None,
    })
}

impl Prepared {
    /// The predicted value on `chip` (the case's own, or it with other constants), and the
    /// type most of a priced step's time computes in.
    pub fn predict(&self, chip: &Chip) -> Result<(f64, Option<DType>), Error> {
        let (workload, scenario) = (&self.workload, &self.scenario);
        let wrong_metric =
            |what: &str| Error::value(format!("metric `{}` {what}", self.metric.name()));
        if let Some((input, output)) = self.request {
            let r = price_request(workload, chip, scenario, input, output)?;
            let value = match self.metric {
                Metric::TtftMs => r.ttft_s * 1e3,
                Metric::TpotMs => r.tpot_s * 1e3,
                Metric::E2eMs => r.e2e_s * 1e3,
                Metric::TokensPerS => r.output_tokens_per_s,
                _ => {
                    return Err(wrong_metric(
                        "is a step's, not a request's; leave the request empty",
                    ))
                }
            };
            return Ok((value, None));
        }
        let report = price(workload, chip, scenario)?;
        let main = report
            .prices
            .iter()
            .max_by(|a, b| a.share.total_cmp(&b.share))
            .map(|p| p.cost.compute_dtype);
        let s = report.summary;
        let value = match self.metric {
            Metric::AttainedTflops => s.attained_flop_per_s / 1e12,
            Metric::BandwidthTbS => s.bytes / s.step_time_s / 1e12,
            Metric::StepTimeUs => s.step_time_s * 1e6,
            Metric::TokensPerS => s.tokens_per_s.ok_or_else(|| {
                Error::value(format!("workload `{}` has no tokens_per_step", workload.id))
            })?,
            _ => return Err(wrong_metric("needs a request")),
        };
        Ok((value, main))
    }
}

/// Median and 90th-percentile absolute error overall, then per chip, kind, type, layout
/// (single chip or several) and stack (the engine or kernel library a row names).
pub fn error_stats(outcomes: &[Outcome]) -> Vec<ErrorStats> {
    let mut groups: Vec<(String, Vec<RowError>)> = Vec::new();
    let mut add =
        |group: String, error: RowError| match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, errors)) => errors.push(error),
            None => groups.push((group, vec![error])),
        };
    for o in outcomes {
        if let Some(e) = o.row_error() {
            add("all".into(), e);
        }
    }
    for key in [
        |o: &Outcome| format!("chip {}", o.case.chip),
        |o: &Outcome| format!("kind {}", o.case.kind),
        |o: &Outcome| format!("dtype {}", o.dtype),
        |o: &Outcome| {
            if o.case.tp > 1 {
                "multi-chip".to_owned()
            } else {
                "single chip".to_owned()
            }
        },
    ] {
        for o in outcomes {
            if let Some(e) = o.row_error() {
                add(key(o), e);
            }
        }
    }
    for o in outcomes {
        if let (Some(e), Some(group)) = (o.row_error(), o.case.stack.group()) {
            add(group, e);
        }
    }
    groups
        .into_iter()
        .map(|(group, errors)| stats_of(group, errors))
        .collect()
}

/// The statistics of one group's errors (at least one): the absolute ones of the metric, the
/// signed ones of the time.
pub fn stats_of(group: String, errors: Vec<RowError>) -> ErrorStats {
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        }
    };
    let mut abs: Vec<f64> = errors.iter().map(|e| e.of_metric.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let n = abs.len();
    // nearest rank
    let p90 = abs[((0.9 * n as f64).ceil() as usize).clamp(1, n) - 1];
    ErrorStats {
        group,
        cases: n,
        median_abs: median(abs),
        p90_abs: p90,
        signed_median: median(errors.iter().map(|e| e.of_time).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(chip: &str, error: f64) -> Outcome {
        Outcome {
            case: Case {
                id: "x".into(),
                line: 2,
                chip: chip.into(),
                workload: "gemm".into(),
                sets: Vec::new(),
                dtypes: Vec::new(),
                fusion: None,
                request: None,
                tp: 1,
                metric: Metric::StepTimeUs,
                measured: 100.0,
                kind: "kernel".into(),
                source: String::new(),
                stack: Stack::default(),
            },
            dtype: DType::Bf16,
            predicted: Ok(100.0 * (1.0 + error)),
        }
    }

    #[test]
    fn medians_and_90th_percentiles() {
        let outcomes: Vec<Outcome> = [
            0.01, -0.02, 0.03, -0.04, 0.05, 0.06, -0.07, 0.08, 0.09, -0.5,
        ]
        .iter()
        .map(|e| outcome(if *e < 0.0 { "a" } else { "b" }, *e))
        .collect();
        let stats = error_stats(&outcomes);
        let all = &stats[0];
        assert_eq!((all.group.as_str(), all.cases), ("all", 10));
        assert!((all.median_abs - 0.055).abs() < 1e-12);
        assert!((all.p90_abs - 0.09).abs() < 1e-12);
        let a = stats.iter().find(|s| s.group == "chip a").unwrap();
        assert_eq!(a.cases, 4);
        assert!((a.median_abs - 0.055).abs() < 1e-12);
    }

    #[test]
    fn a_signed_median_reads_a_rate_and_a_time_the_same_way() {
        // Three predictions too fast, each by a fifth of the time: a time 20 % short (80 us
        // for 100) and two rates 25 % high (125 TFLOP/s, 1.25 TB/s for 100 and 1). One too
        // slow: a rate 10 % low, a time 1 / 0.9 - 1 = 11.1 % long.
        let mut rows = vec![outcome("a", -0.2)];
        for (metric, measured, predicted) in [
            (Metric::AttainedTflops, 100.0, 125.0),
            (Metric::BandwidthTbS, 1.0, 1.25),
            (Metric::TokensPerS, 100.0, 90.0),
        ] {
            let mut o = outcome("a", 0.0);
            (o.case.metric, o.case.measured, o.predicted) = (metric, measured, Ok(predicted));
            rows.push(o);
        }
        let all = &error_stats(&rows)[0];
        // The times' errors: -0.2, -0.2, -0.2, +0.111: median -0.2. (The metrics' signed
        // errors, -0.2, +0.25, +0.25, -0.1, would have a median of +0.075: too slow.)
        assert!(
            (all.signed_median + 0.2).abs() < 1e-12,
            "{}",
            all.signed_median
        );
        // |error| stays the metric's: 0.2, 0.25, 0.25, 0.1.
        assert!((all.median_abs - 0.225).abs() < 1e-12);
        let slow = rows[3].row_error().unwrap();
        assert!((slow.of_time - (1.0 / 0.9 - 1.0)).abs() < 1e-12);
    }
}
