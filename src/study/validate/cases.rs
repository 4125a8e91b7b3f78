//! Case files: what a case measures ([`Metric`]), one row of a case file ([`Case`]), and the
//! reading of the CSV into cases, every bad field reported with its line and column name.
//! Serving rows (kind `serving`) are read into [`ServingCase`]s beside them.

use crate::base::diagnostic::{Diagnostic, Diagnostics, Origin};
use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::parse::parse_set;

use crate::base::source::Source;
use crate::base::types::TypeKey;

use super::fields::{list, parse_dtypes, parse_measured, parse_request, parse_tp, FieldError};
use super::serving::{parse_serving, ServingCase, ServingMetric, LOAD_KEYS};
use super::stack::{parse_stack, Stack, STACK_COLUMNS};

/// What a case measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// FLOPs of the step over its time, in TFLOP/s.
    AttainedTflops,
    /// Bytes of the step over its time, in TB/s.
    BandwidthTbS,
    /// The step's time, in microseconds.
    StepTimeUs,
    /// Tokens per second of the step, or output tokens per second of a request.
    TokensPerS,
    /// A request's time to first token (its prefill), in milliseconds.
    TtftMs,
    /// A request's time per output token after the first (its mean decode step), in
    /// milliseconds.
    TpotMs,
    /// A request's end-to-end time (its prefill and every decode step), in milliseconds.
    E2eMs,
}

impl Metric {
    /// Every metric with the name a case file's `metric` column gives it.
    pub const ALL: [(&'static str, Metric); 7] = [
        ("attained_tflops", Metric::AttainedTflops),
        ("bandwidth_tb_s", Metric::BandwidthTbS),
        ("step_time_us", Metric::StepTimeUs),
        ("tokens_per_s", Metric::TokensPerS),
        ("ttft_ms", Metric::TtftMs),
        ("tpot_ms", Metric::TpotMs),
        ("e2e_ms", Metric::E2eMs),
    ];

    /// The name a case file's `metric` column gives it (`step_time_us`).
    pub fn name(self) -> &'static str {
        Metric::ALL
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("", |(n, _)| n)
    }

    /// Whether the metric is a rate (more is faster) rather than a time.
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            Metric::AttainedTflops | Metric::BandwidthTbS | Metric::TokensPerS
        )
    }

    fn needs_request(self) -> bool {
        matches!(self, Metric::TtftMs | Metric::TpotMs | Metric::E2eMs)
    }
}

/// One row of a case file.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The row's stable id, its source's code before the first `-` (`MAMF-7`).
    pub id: String,
    /// 1-based line in the case file.
    pub line: u64,
    /// The chip as the row names it: a built-in id, or a path relative to the case file.
    pub chip: String,
    /// The workload as the row names it: a built-in id, or a path relative to the case file.
    pub workload: String,
    /// The `params` column's `name=value` settings, in the order given.
    pub sets: Vec<(String, f64)>,
    /// The `dtypes` column's `key=type` settings (`weight=fp8`), in the order given.
    pub dtypes: Vec<(TypeKey, Format)>,
    /// The fusion plan by name (`None`: the workload's default).
    pub fusion: Option<String>,
    /// `(input tokens, output tokens)` of a request.
    pub request: Option<(u64, u64)>,
    /// Chips the measurement used (tensor parallel).
    pub tp: u64,
    /// What the row measures.
    pub metric: Metric,
    /// The measured value, in the metric's unit (above 0).
    pub measured: f64,
    /// `kernel`, `decode`, `prefill` or `request`.
    pub kind: String,
    /// Where the measurement comes from, as the row cites it (a publication, a repository
    /// at a commit, an own measurement).
    pub source: String,
    /// The engine or kernel library and the harness it was measured with.
    pub stack: Stack,
}

/// The rows of a case file: the cases a step or a request prices, and the serving rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaseFile {
    /// The rows a step or a request prices, in file order.
    pub cases: Vec<Case>,
    /// The rows of kind `serving`, in file order.
    pub serving: Vec<ServingCase>,
}

/// One row, as its kind makes it.
enum Row {
    Step(Case),
    Serving(ServingCase),
}

const COLUMNS: [&str; 13] = [
    "id", "chip", "workload", "params", "dtypes", "fusion", "request", "tp", "metric", "measured",
    "kind", "source", "notes",
];

/// The cases of a case file that a step or a request prices: [`read_case_file`]'s `cases`
/// (its serving rows read and checked, then left out).
pub fn read_cases(source: &Source) -> Result<Vec<Case>, Error> {
    read_case_file(source).map(|file| file.cases)
}

/// Reads a case file: CSV with the header `id,chip,workload,params,dtypes,fusion,request,tp,
/// metric,measured,kind,source,notes` and, optionally, all four of `engine,version,library,
/// harness` (the row's stack: [`Stack`]); lines starting with `#` are comments.
pub fn read_case_file(source: &Source) -> Result<CaseFile, Error> {
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
    let has = |c: &&str| header.iter().any(|h| h == *c);
    let stack_present = STACK_COLUMNS.iter().any(&has);
    let stack_missing: Vec<&str> = STACK_COLUMNS.iter().filter(|c| !has(c)).copied().collect();
    if stack_present && !stack_missing.is_empty() {
        return Err(unquoted(format!(
            "missing columns: {}; a case file names a row's stack with all of {} or none",
            stack_missing.join(", "),
            STACK_COLUMNS.join(", ")
        )));
    }
    let mut file = CaseFile::default();
    let mut problems = Vec::new();
    let mut lines = Lines::new(&source.text);
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = lines.at(e.position());
                problems.push(problem(line, "", format!("unreadable row: {e}")));
                continue;
            }
        };
        let line = lines.at(record.position());
        let get = |name: &str| {
            header
                .iter()
                .position(|h| h == name)
                .and_then(|i| record.get(i))
                .unwrap_or("")
                .to_owned()
        };
        match parse_row(&get, line, stack_present) {
            Ok(Row::Step(case)) => file.cases.push(case),
            Ok(Row::Serving(case)) => file.serving.push(case),
            Err((field, message)) => problems.push(problem(line, field, message)),
        }
    }
    if problems.is_empty() {
        Ok(file)
    } else {
        Err(invalid(problems))
    }
}

/// The lines of a text's byte offsets, counted as the offsets grow. (The CSV reader's own line
/// count leaves out comment lines between rows, so a row after one would be misnamed.)
struct Lines<'a> {
    text: &'a [u8],
    byte: usize,
    line: u64,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        Lines {
            text: text.as_bytes(),
            byte: 0,
            line: 1,
        }
    }

    /// The 1-based line a record starting at `position` is on; 0 where there is none.
    fn at(&mut self, position: Option<&csv::Position>) -> u64 {
        let Some(position) = position else {
            return 0;
        };
        let byte =
            usize::try_from(position.byte()).map_or(self.text.len(), |b| b.min(self.text.len()));
        if byte < self.byte {
            (self.byte, self.line) = (0, 1);
        }
        let newlines = self.text[self.byte..byte]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        self.line += newlines as u64;
        self.byte = byte;
        // The reader places a record where it began reading it: at the comment or blank
        // lines before it, which it skips.
        while let Some(rest) = self.text.get(self.byte..) {
            let skipped = matches!(rest.first(), Some(b'#' | b'\n' | b'\r'));
            let Some(end) = rest.iter().position(|b| *b == b'\n').filter(|_| skipped) else {
                break;
            };
            self.byte += end + 1;
            self.line += 1;
        }
        self.line
    }
}

fn invalid(problems: Vec<Diagnostic>) -> Error {
    Error::Invalid(Diagnostics(problems))
}

/// The row on `line`, `get` giving a column's text: a serving case where its kind is
/// `serving`, a step or request case otherwise.
/// `stack`: whether the file has the stack columns.
fn parse_row(get: &dyn Fn(&str) -> String, line: u64, stack: bool) -> Result<Row, FieldError> {
    let id = get("id");
    if id.is_empty() {
        return Err(("id", "empty id".into()));
    }
    let kind = get("kind");
    // A row of no kind is a kernel's where it names a library (its kind is derived later).
    let kernel = kind == "kernel" || (kind.is_empty() && !get("library").is_empty());
    let stack = parse_stack(get, kernel, stack)?;
    if kind == "serving" {
        return parse_serving(get, id, line, stack).map(Row::Serving);
    }
    parse_case(get, id, line, stack).map(Row::Step)
}

/// The case in one row, `get` giving a column's text; the first bad field stops it.
fn parse_case(
    get: &dyn Fn(&str) -> String,
    id: String,
    line: u64,
    stack: Stack,
) -> Result<Case, FieldError> {
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
        stack,
    })
}

/// The `params` column: `name=value;name=value` (a serving row's load refused: it is not a
/// param of the workload).
fn parse_sets(text: &str) -> Result<Vec<(String, f64)>, FieldError> {
    let load = list(text).find(|item| {
        let key = item.split_once('=').map_or(*item, |(k, _)| k).trim();
        LOAD_KEYS.contains(&key)
    });
    if let Some(item) = load {
        return Err((
            "params",
            format!("`{item}` is a serving row's load; set the row's kind to serving"),
        ));
    }
    list(text)
        .map(parse_set)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ("params", format!("{e}; expected name=value;name=value")))
}

/// The `metric` column: one of [`Metric::ALL`] by name.
fn parse_metric(name: &str) -> Result<Metric, FieldError> {
    let serving = ServingMetric::named(name)
        .map_or("", |_| " (a serving metric: set the row's kind to serving)");
    Metric::ALL
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, m)| *m)
        .ok_or((
            "metric",
            format!(
                "unknown metric `{name}`{serving}; expected one of {}",
                Metric::ALL.map(|(n, _)| n).join(", ")
            ),
        ))
}

/// The `kind` column: empty (derived later) or one of the known kinds (`serving` rows are
/// read apart, by [`parse_row`]).
fn parse_kind(kind: String) -> Result<String, FieldError> {
    match kind {
        k if k.is_empty() => Ok(String::new()),
        k if ["kernel", "decode", "prefill", "request"].contains(&k.as_str()) => Ok(k),
        k => Err((
            "kind",
            format!("unknown kind `{k}`; expected kernel, decode, prefill, request or serving"),
        )),
    }
}
