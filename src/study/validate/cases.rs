//! Case files: what a case measures ([`Metric`]), one row of a case file ([`Case`]), and the
//! reading of the CSV into cases, every bad field reported with its line and column name.

use crate::base::diagnostic::{Diagnostic, Diagnostics, Origin};
use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::ranges;
use crate::base::source::Source;
use crate::base::types::{parse_type, TypeKey};
use crate::engine::scenario::parse_set;

/// What a case measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// FLOPs of the step over its time, in TFLOP/s.
    AttainedTflops,
    /// Bytes of the step over its time, in TB/s.
    BandwidthTbS,
    StepTimeUs,
    /// Tokens per second of the step, or output tokens per second of a request.
    TokensPerS,
    TtftMs,
    TpotMs,
    E2eMs,
}

impl Metric {
    pub const ALL: [(&'static str, Metric); 7] = [
        ("attained_tflops", Metric::AttainedTflops),
        ("bandwidth_tb_s", Metric::BandwidthTbS),
        ("step_time_us", Metric::StepTimeUs),
        ("tokens_per_s", Metric::TokensPerS),
        ("ttft_ms", Metric::TtftMs),
        ("tpot_ms", Metric::TpotMs),
        ("e2e_ms", Metric::E2eMs),
    ];

    pub fn name(self) -> &'static str {
        Metric::ALL
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("", |(n, _)| n)
    }

    fn needs_request(self) -> bool {
        matches!(self, Metric::TtftMs | Metric::TpotMs | Metric::E2eMs)
    }
}

/// One row of a case file.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub id: String,
    /// 1-based line in the case file.
    pub line: u64,
    pub chip: String,
    pub workload: String,
    pub sets: Vec<(String, f64)>,
    pub dtypes: Vec<(TypeKey, Format)>,
    pub fusion: Option<String>,
    /// `(input tokens, output tokens)` of a request.
    pub request: Option<(u64, u64)>,
    /// Chips the measurement used (tensor parallel).
    pub tp: u64,
    pub metric: Metric,
    pub measured: f64,
    /// `kernel`, `decode`, `prefill` or `request`.
    pub kind: String,
    pub source: String,
}

const COLUMNS: [&str; 13] = [
    "id", "chip", "workload", "params", "dtypes", "fusion", "request", "tp", "metric", "measured",
    "kind", "source", "notes",
];

/// Why a field of a row is wrong: the column, and what is wrong with it.
type FieldError = (&'static str, String);

/// Reads a case file: CSV with the header `id,chip,workload,params,dtypes,fusion,request,tp,
/// metric,measured,kind,source,notes`; lines starting with `#` are comments.
pub fn read_cases(source: &Source) -> Result<Vec<Case>, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(source.text.as_bytes());
    let problem = |line: u64, field: &str, message: String| {
        source.problem(&Origin::new(field, line, 0), message)
    };
    // Until its header shows the file is a case file, a problem quotes none of its lines.
    let unquoted = |message: String| {
        invalid(vec![
            source.unquoted_problem(&Origin::new("", 1, 0), message)
        ])
    };
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| unquoted(format!("not a CSV case file: {e}")))?
        .iter()
        .map(str::to_owned)
        .collect();
    let missing: Vec<&str> = COLUMNS[..12]
        .iter()
        .filter(|c| !header.iter().any(|h| h == *c))
        .copied()
        .collect();
    if !missing.is_empty() {
        return Err(unquoted(format!(
            "missing columns: {}; a case file has the columns {}",
            missing.join(", "),
            COLUMNS.join(", ")
        )));
    }
    let mut cases = Vec::new();
    let mut problems = Vec::new();
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                problems.push(problem(line, "", format!("unreadable row: {e}")));
                continue;
            }
        };
        let line = record.position().map_or(0, |p| p.line());
        let get = |name: &str| {
            header
                .iter()
                .position(|h| h == name)
                .and_then(|i| record.get(i))
                .unwrap_or("")
                .to_owned()
        };
        match parse_case(&get, line) {
            Ok(case) => cases.push(case),
            Err((field, message)) => problems.push(problem(line, field, message)),
        }
    }
    if problems.is_empty() {
        Ok(cases)
    } else {
        Err(invalid(problems))
    }
}

fn invalid(problems: Vec<Diagnostic>) -> Error {
    Error::Invalid(Diagnostics(problems))
}

/// The case in one row, `get` giving a column's text; the first bad field stops it.
fn parse_case(get: &dyn Fn(&str) -> String, line: u64) -> Result<Case, FieldError> {
    let id = get("id");
    if id.is_empty() {
        return Err(("id", "empty id".into()));
    }
    let sets = parse_sets(&get("params"))?;
    let dtypes = parse_dtypes(&get("dtypes"))?;
    let request = match get("request").as_str() {
        "" => None,
        text => Some(parse_request(text).map_err(|e| ("request", e))?),
    };
    let tp = parse_tp(&get("tp"))?;
    let metric_name = get("metric");
    let metric = parse_metric(&metric_name)?;
    if metric.needs_request() && request.is_none() {
        return Err((
            "request",
            format!("metric `{metric_name}` needs a request (in=..,out=..)"),
        ));
    }
    let measured = parse_measured(&get("measured"))?;
    let fusion = Some(get("fusion")).filter(|f| !f.is_empty());
    let kind = parse_kind(get("kind"))?;
    Ok(Case {
        id,
        line,
        chip: get("chip"),
        workload: get("workload"),
        sets,
        dtypes,
        fusion,
        request,
        tp,
        metric,
        measured,
        kind,
        source: get("source"),
    })
}

/// The non-empty items of a `;`-separated list.
fn list(text: &str) -> impl Iterator<Item = &str> {
    text.split(';').map(str::trim).filter(|s| !s.is_empty())
}

/// The `params` column: `name=value;name=value`.
fn parse_sets(text: &str) -> Result<Vec<(String, f64)>, FieldError> {
    list(text)
        .map(parse_set)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ("params", format!("{e}; expected name=value;name=value")))
}

/// The `dtypes` column: `key=type;key=type` (`weight=fp8;embed.weight=bf16`).
fn parse_dtypes(text: &str) -> Result<Vec<(TypeKey, Format)>, FieldError> {
    list(text)
        .map(parse_type)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ("dtypes", format!("{e}; expected key=type;key=type")))
}

/// The `tp` column: a chip count, 1 when empty.
fn parse_tp(text: &str) -> Result<u64, FieldError> {
    match text {
        "" => Ok(1),
        text => text
            .parse::<u64>()
            .ok()
            .filter(|t| ranges::WORKLOAD_CHIPS.contains(*t as f64))
            .ok_or((
                "tp",
                format!(
                    "`{text}` is not a chip count (1, 2, 4, ...): {}",
                    ranges::WORKLOAD_CHIPS.expected()
                ),
            )),
    }
}

/// The `metric` column: one of [`Metric::ALL`] by name.
fn parse_metric(name: &str) -> Result<Metric, FieldError> {
    Metric::ALL
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, m)| *m)
        .ok_or((
            "metric",
            format!(
                "unknown metric `{name}`; expected one of {}",
                Metric::ALL.map(|(n, _)| n).join(", ")
            ),
        ))
}

/// The `measured` column: a finite number above 0.
fn parse_measured(text: &str) -> Result<f64, FieldError> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or(("measured", format!("`{text}` is not a number above 0")))
}

/// The `kind` column: empty (derived later) or one of the known kinds.
fn parse_kind(kind: String) -> Result<String, FieldError> {
    match kind {
        k if k.is_empty() => Ok(String::new()),
        k if ["kernel", "decode", "prefill", "request"].contains(&k.as_str()) => Ok(k),
        k => Err((
            "kind",
            format!("unknown kind `{k}`; expected kernel, decode, prefill or request"),
        )),
    }
}

/// Parses `in=I,out=O` (also `in=I;out=O`).
pub fn parse_request(text: &str) -> Result<(u64, u64), String> {
    let (mut input, mut output) = (None, None);
    for part in text
        .split([',', ';'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("expected in=I,out=O, found `{text}`"))?;
        let value: u64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v| *v >= 1)
            .ok_or_else(|| format!("`{value}` is not a token count of at least 1 (in `{text}`)"))?;
        let key = key.trim();
        ranges::REQUEST_TOKENS
            .check(value as f64)
            .map_err(|e| format!("`{key}={value}` (in `{text}`) is {e}"))?;
        match key {
            "in" => input = Some(value),
            "out" => output = Some(value),
            other => {
                return Err(format!(
                    "unknown key `{other}` in `{text}`; expected in and out"
                ))
            }
        }
    }
    match (input, output) {
        (Some(i), Some(o)) => Ok((i, o)),
        _ => Err(format!("expected in=I,out=O, found `{text}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests() {
        assert_eq!(parse_request("in=2048,out=128"), Ok((2048, 128)));
        assert_eq!(parse_request("in=1; out=1"), Ok((1, 1)));
        assert!(parse_request("in=0,out=1").is_err());
        assert!(parse_request("in=5").is_err());
        assert!(parse_request("prompt=5,out=1").is_err());
    }
}
