//! The API's handlers. Each reads its request (JSON, within the body limit), loads the
//! workload and chips, asks the study, and hands the result to the exporter the command
//! line uses for the same answer; the work runs on a blocking thread.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::State as Extract;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::budget::{too_large, Answer, Budget, Held};
use super::command;
use super::error::ApiError;
use super::guard::{Cancel, CancelOnDrop, Guard};
use super::request::{FormatName, ScenarioRequest};
use super::state::{self, State};
use crate::base::error::Error;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::timing::StepReport;
use crate::core::workload::Workload;
use crate::export::rows::Shape;
use crate::export::stream::StreamFormat;
use crate::export::{self as exporter, svg, OutputFormat};
use crate::study::compare::{compare_until, Compared};
use crate::study::{fix, lever, models};

type Shared = Extract<Arc<Guard>>;

/// Reads the body as a JSON request: 413 past the body limit, 400 with the parser's message
/// (and its line and column) for anything that is not the request's fields.
async fn read<T: DeserializeOwned>(guard: &Guard, body: Body) -> Result<T, ApiError> {
    let limit = guard.state.limits.body_bytes;
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|e| {
        // The limit's error is the one whose message says so (its type is not axum's).
        let mut cause: Option<&dyn std::error::Error> = Some(&e);
        while let Some(c) = cause {
            if c.to_string() == "length limit exceeded" {
                return ApiError::with_status(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the request body is larger than the limit of {limit} bytes"),
                );
            }
            cause = c.source();
        }
        ApiError::bad(format!("cannot read the request body: {e}"))
    })?;
    serde_json::from_slice(&bytes).map_err(|e| ApiError::bad(format!("malformed request: {e}")))
}

/// Runs `job` on a blocking thread; a panic is an internal error (500), not a dead server.
async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let run = move || std::panic::catch_unwind(AssertUnwindSafe(job));
    match tokio::task::spawn_blocking(run).await {
        Ok(Ok(result)) => result,
        _ => Err(ApiError::with_status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error (a bug in stepcost); please report it with the request",
        )),
    }
}

/// An answer's bytes, with its type and, for a download, its file's name.
struct Reply {
    content_type: &'static str,
    file: Option<&'static str>,
    body: Vec<u8>,
}

fn bytes(content_type: &'static str, body: Vec<u8>) -> Reply {
    Reply {
        content_type,
        file: None,
        body,
    }
}

fn download(content_type: &'static str, file: &'static str, body: Vec<u8>) -> Reply {
    Reply {
        content_type,
        file: Some(file),
        body,
    }
}

fn json_bytes(value: &Value) -> Result<Reply, ApiError> {
    let body = serde_json::to_vec(value).map_err(anyhow::Error::from)?;
    Ok(bytes("application/json", body))
}

impl Reply {
    /// The response, its body holding `room` among the answers held until it is sent.
    fn into_response(self, room: tokio::sync::OwnedSemaphorePermit) -> Response {
        let mut response = Response::new(Body::new(Held::new(self.body, room)));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(self.content_type),
        );
        let disposition = self.file.map(|f| format!("attachment; filename=\"{f}\""));
        if let Some(Ok(value)) = disposition.map(HeaderValue::try_from) {
            headers.insert(header::CONTENT_DISPOSITION, value);
        }
        response
    }

    /// The response of a list (`GET`): small, and the same for every request.
    fn into_plain(self) -> Response {
        ([(header::CONTENT_TYPE, self.content_type)], self.body).into_response()
    }
}

/// Does a request's work within its budget, in two steps on blocking threads: `plan` loads
/// and counts it (refused past the budget, before any pricing); then, once room is held for
/// its answer, `work` prices it and writes the answer, reading the request's cancel flag,
/// which is set when the request is dropped (at its time limit, or when its client goes).
async fn budgeted<P: Send + 'static>(
    guard: &Guard,
    plan: impl FnOnce(&State) -> Result<(P, Budget), ApiError> + Send + 'static,
    work: impl FnOnce(&State, P, &AtomicBool) -> Result<Reply, ApiError> + Send + 'static,
) -> Result<Response, ApiError> {
    let state = Arc::clone(&guard.state);
    let cancel = Cancel::default();
    let _stop = CancelOnDrop(cancel.clone());
    let shared = Arc::clone(&state);
    let (planned, budget) = blocking(move || {
        let (planned, budget) = plan(&shared)?;
        budget.check(&shared.limits)?;
        Ok((planned, budget))
    })
    .await?;
    let room = state.hold(budget.answer_bytes).await?;
    let shared = Arc::clone(&state);
    let reply = blocking(move || work(&shared, planned, cancel.flag())).await?;
    let limit = state.limits.answer_bytes;
    if reply.body.len() as u64 > limit {
        return Err(too_large(format!(
            "the answer is larger than the limit of {limit} bytes"
        )));
    }
    let room = state.resize(room, reply.body.len())?;
    Ok(reply.into_response(room))
}

/// An exporter's bytes, or its I/O error (into memory: none is expected).
fn written(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Result<Vec<u8>, ApiError> {
    let mut buffer = Vec::new();
    write(&mut buffer).map_err(anyhow::Error::from)?;
    Ok(buffer)
}

/// `GET /api/chips`: the built-in chips as `stepcost chips --format json` lists them.
pub(crate) async fn chips() -> Result<Response, ApiError> {
    blocking(|| {
        let chips = Chip::load_all(&["all"])?;
        let json =
            written(|b| exporter::write_chips(b, &chips, OutputFormat::Json, &Shape::default()))?;
        Ok(bytes("application/json", json).into_plain())
    })
    .await
}

/// `GET /api/engines`: the built-in engines as `stepcost engines --format json` lists them.
pub(crate) async fn engines() -> Result<Response, ApiError> {
    blocking(|| {
        let engines = (crate::core::engine::builtin_ids())
            .map(crate::core::engine::builtin)
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&crate::core::engine::Engine> = engines.iter().map(|e| &**e).collect();
        let json =
            written(|b| exporter::write_engines(b, &refs, OutputFormat::Json, &Shape::default()))?;
        Ok(bytes("application/json", json).into_plain())
    })
    .await
}

/// `GET /api/workloads`: the built-in workloads as `stepcost workloads --format json` lists
/// them, each with its params, their defaults and its fusion plans.
pub(crate) async fn workloads(Extract(guard): Shared) -> Result<Response, ApiError> {
    let state = Arc::clone(&guard.state);
    blocking(move || {
        let list = models::builtin_workloads()?;
        let json = written(|b| {
            exporter::write_workloads(b, &list, OutputFormat::Json, &Shape::default())
        })?;
        let mut rows: Vec<Value> = serde_json::from_slice(&json).map_err(anyhow::Error::from)?;
        for row in &mut rows {
            let id = row["workload"].as_str().unwrap_or_default().to_owned();
            let request = ScenarioRequest {
                workload: Some(id),
                ..ScenarioRequest::default()
            };
            let workload = state.workload(&request)?;
            let facts = models::facts(&workload)?;
            if let (Value::Object(row), Ok(Value::Object(facts))) =
                (row, serde_json::to_value(facts))
            {
                row.extend(facts);
            }
        }
        Ok(json_bytes(&Value::Array(rows))?.into_plain())
    })
    .await
}

/// `POST /api/workload`: one workload (built-in or pasted), loaded and checked: its name,
/// params and fusion plans, or the command line's error for the text.
pub(crate) async fn workload(Extract(guard): Shared, body: Body) -> Result<Response, ApiError> {
    let request: ScenarioRequest = read(&guard, body).await?;
    let state = Arc::clone(&guard.state);
    blocking(move || {
        let workload = state.workload(&request)?;
        let facts = serde_json::to_value(models::facts(&workload)?).map_err(anyhow::Error::from)?;
        let mut value = json!({ "workload": workload.id(), "name": workload.name() });
        if let (Value::Object(value), Value::Object(facts)) = (&mut value, facts) {
            value.extend(facts);
        }
        Ok(json_bytes(&value)?.into_plain())
    })
    .await
}

/// The request's workload and chips, loaded and counted for `answer`.
struct Loaded {
    workload: Arc<Workload>,
    chips: Vec<Chip>,
}

fn load(
    state: &State,
    request: &ScenarioRequest,
    answer: Answer,
) -> Result<(Loaded, Budget), ApiError> {
    let workload = state.workload(request)?;
    let chips = state::chips(request)?;
    let budget = Budget::of(answer, &workload, chips.len(), 1);
    Ok((Loaded { workload, chips }, budget))
}

/// The request's scenario priced on its chips; `cancel` stops it between chips.
fn priced(
    loaded: Loaded,
    request: &ScenarioRequest,
    cancel: &AtomicBool,
) -> Result<Compared, ApiError> {
    let spec = request.spec()?;
    let Loaded { workload, chips } = loaded;
    Ok(compare_until(
        Workload::clone(&workload),
        chips,
        &spec,
        cancel,
    )?)
}

/// A chip's verdict: whether the scenario fits, and the line the command line prints under
/// its table: the cheapest changes that make it fit, or the next step worth taking. `cancel`
/// stops it between levers.
fn verdict(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    report: &StepReport,
    cancel: &AtomicBool,
) -> Result<Value, ApiError> {
    let fixes = || fix::fixes(workload, chip, scenario, report);
    let advice = match exporter::unfit_warning(report, fixes) {
        Some(warning) => Some(warning),
        None => {
            let levers = lever::levers_until(workload, chip, scenario, report, cancel)?;
            lever::next_step(&levers).map(exporter::next_step_line)
        }
    };
    Ok(json!({ "chip": report.chip, "fits": report.fits(), "advice": advice }))
}

/// The JSON answer of `run` and `compare`: the rows the command line prints with
/// `--format json`, each chip's verdict, and the command line itself.
fn envelope(
    compared: &Compared,
    request: &ScenarioRequest,
    rows: Value,
    cancel: &AtomicBool,
) -> Result<Reply, ApiError> {
    let verdicts = (compared.reports.iter())
        .map(|(chip, report)| {
            // Each verdict prices the scenario again with each lever and fix.
            if cancel.load(Ordering::Relaxed) {
                return Err(ApiError::from(Error::Cancelled));
            }
            verdict(&compared.workload, chip, &compared.scenario, report, cancel)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let axes = &request.sweep;
    let has_sweep = !(axes.set.is_empty() && axes.dtype.is_empty() && axes.fusion.is_empty());
    json_bytes(&json!({
        "workload": compared.workload.id(),
        "name": compared.workload.name(),
        "rows": rows,
        "verdicts": verdicts,
        "command": command::scenario(request),
        "sweep_command": has_sweep.then(|| command::sweep(request, None)),
    }))
}

fn not_parquet() -> ApiError {
    ApiError::bad("format `parquet` is a sweep's (POST /api/sweep); this answer is JSON or CSV")
}

/// `POST /api/run`: one chip, as `stepcost run` prices it.
pub(crate) async fn run(Extract(guard): Shared, body: Body) -> Result<Response, ApiError> {
    let request = Arc::new(read::<ScenarioRequest>(&guard, body).await?);
    let asked = Arc::clone(&request);
    let plan = move |state: &State| {
        let names = asked.chips.names();
        if names.len() > 1 || names.iter().any(|n| n == "all") {
            let names = names.join(",");
            return Err(ApiError::bad(format!(
                "`run` prices one chip, and --chip {names} names several; price them side by \
                 side with POST /api/compare"
            )));
        }
        load(state, &asked, Answer::Verdicts)
    };
    budgeted(&guard, plan, move |_, loaded, cancel| {
        let compared = priced(loaded, &request, cancel)?;
        let Some((_, report)) = compared.reports.first() else {
            return Err(ApiError::bad("give `chips`: one built-in chip name"));
        };
        match request.format.unwrap_or(FormatName::Json) {
            FormatName::Csv => {
                let csv = written(|b| exporter::write_run(b, report, false, OutputFormat::Csv))?;
                Ok(bytes("text/csv; charset=utf-8", csv))
            }
            FormatName::Json => {
                let json = written(|b| exporter::write_run(b, report, false, OutputFormat::Json))?;
                let row: Value = serde_json::from_slice(&json).map_err(anyhow::Error::from)?;
                envelope(&compared, &request, Value::Array(vec![row]), cancel)
            }
            FormatName::Parquet => Err(not_parquet()),
        }
    })
    .await
}

/// `POST /api/compare`: one scenario on several chips, as `stepcost compare` prices it.
pub(crate) async fn compare_chips(
    Extract(guard): Shared,
    body: Body,
) -> Result<Response, ApiError> {
    let request = Arc::new(read::<ScenarioRequest>(&guard, body).await?);
    let asked = Arc::clone(&request);
    let plan = move |state: &State| load(state, &asked, Answer::Verdicts);
    budgeted(&guard, plan, move |_, loaded, cancel| {
        let format = match request.format.unwrap_or(FormatName::Json) {
            FormatName::Csv => OutputFormat::Csv,
            FormatName::Json => OutputFormat::Json,
            FormatName::Parquet => return Err(not_parquet()),
        };
        let compared = priced(loaded, &request, cancel)?;
        let reports: Vec<StepReport> = compared.reports.iter().map(|(_, r)| r.clone()).collect();
        let out = written(|b| exporter::write_compare(b, &reports, format))?;
        if format == OutputFormat::Csv {
            return Ok(download("text/csv; charset=utf-8", "compare.csv", out));
        }
        let rows: Value = serde_json::from_slice(&out).map_err(anyhow::Error::from)?;
        envelope(&compared, &request, rows, cancel)
    })
    .await
}

/// `POST /api/plot/roofline`: the roofline picture `stepcost plot roofline` draws.
pub(crate) async fn plot_roofline(
    Extract(guard): Shared,
    body: Body,
) -> Result<Response, ApiError> {
    let request = Arc::new(read::<ScenarioRequest>(&guard, body).await?);
    let asked = Arc::clone(&request);
    let plan = move |state: &State| load(state, &asked, Answer::Roofline);
    budgeted(&guard, plan, move |_, loaded, cancel| {
        let compared = priced(loaded, &request, cancel)?;
        let picture = svg::roofline(&compared.pairs())?;
        Ok(bytes("image/svg+xml", picture.into_bytes()))
    })
    .await
}

/// `POST /api/sweep`: the grid's rows as `stepcost sweep` writes them (CSV, JSON Lines or
/// Parquet), at most the server's scenarios per request.
pub(crate) async fn sweep(Extract(guard): Shared, body: Body) -> Result<Response, ApiError> {
    let request = Arc::new(read::<ScenarioRequest>(&guard, body).await?);
    let (stream, kind, file) = match request.format.unwrap_or(FormatName::Csv) {
        FormatName::Csv => (StreamFormat::Csv, "text/csv; charset=utf-8", "sweep.csv"),
        FormatName::Json => (StreamFormat::JsonLines, "application/jsonl", "sweep.jsonl"),
        #[cfg(feature = "parquet")]
        FormatName::Parquet => (
            StreamFormat::Parquet,
            "application/vnd.apache.parquet",
            "sweep.parquet",
        ),
        #[cfg(not(feature = "parquet"))]
        FormatName::Parquet => return Err(ApiError::bad(
            "format `parquet`: this stepcost was built without Parquet (cargo feature `parquet`)",
        )),
    };
    let asked = Arc::clone(&request);
    let plan = move |state: &State| super::sweep::plan(state, &asked, stream, false);
    budgeted(&guard, plan, move |state, planned, cancel| {
        let rows = super::sweep::rows(state, &request, planned, cancel)?;
        Ok(download(kind, file, rows))
    })
    .await
}

/// `POST /api/plot/sweep`: a sweep drawn as `stepcost plot sweep` draws its CSV (by default
/// tokens/s against batch, a line per chip).
pub(crate) async fn plot_sweep(Extract(guard): Shared, body: Body) -> Result<Response, ApiError> {
    let request = Arc::new(read::<ScenarioRequest>(&guard, body).await?);
    let asked = Arc::clone(&request);
    let plan = move |state: &State| super::sweep::plan(state, &asked, StreamFormat::Csv, true);
    budgeted(&guard, plan, move |state, planned, cancel| {
        let csv = super::sweep::rows(state, &request, planned, cancel)?;
        let chart = &request.chart;
        let options = svg::SweepChart {
            x: chart.x.clone().unwrap_or_else(|| "batch".to_owned()),
            y: chart.y.clone().unwrap_or_else(|| "tokens_per_s".to_owned()),
            series: chart
                .series
                .clone()
                .unwrap_or_else(|| vec!["chip".to_owned()]),
            filter: None,
            include_unfit: false,
            log_x: chart.log_x,
            log_y: chart.log_y,
            label: None,
        };
        let picture = svg::sweep(&csv[..], "sweep", &options)?;
        Ok(bytes("image/svg+xml", picture.into_bytes()))
    })
    .await
}

/// Any other path: a JSON 404 that lists the API.
pub(crate) async fn not_found() -> ApiError {
    ApiError::with_status(
        StatusCode::NOT_FOUND,
        "no such page; the API is GET /api/chips, GET /api/engines, GET /api/workloads, POST /api/workload, \
         /api/run, /api/compare, /api/sweep, /api/plot/roofline, /api/plot/sweep (docs/api.md)",
    )
}
