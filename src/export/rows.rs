//! Flat rows for CSV and JSON: each row kind lists its columns once, in order, as a visitor,
//! so the header, the CSV line and the JSON object can never disagree, and `run` and `sweep`
//! print the same row for the same scenario.

use std::io::Write;

use crate::base::dtype::RoleDTypes;
use crate::engine::chip::Chip;
use crate::engine::price::{KernelCost, RequestSummary, StepSummary};
use crate::engine::scenario::Mode;
use crate::study::plan::{PlanEntry, PlanPoint};
use crate::study::validate::{ErrorStats, Outcome};

/// One value of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Text(&'a str),
    Num(f64),
    Int(u64),
    Bool(bool),
    /// No value (a step without `tokens_per_step` has no tokens per second).
    Empty,
}

impl From<Option<f64>> for Value<'_> {
    fn from(v: Option<f64>) -> Self {
        v.map_or(Value::Empty, Value::Num)
    }
}

/// A row: calls `f(column, value)` for each column, always in the same order.
pub trait Row {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>));
}

/// Column names of a workload's params in rows: the param's name, or `param_NAME` where the
/// name is already one of the fixed columns of a summary or kernel row.
pub fn param_columns<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let label = ScenarioLabel {
        workload: "",
        chip: "",
        mode: Mode::Roofline,
        fusion: "",
        dtypes: RoleDTypes::default(),
        param_columns: &[],
        params: &[],
    };
    let mut fixed: Vec<String> = Vec::new();
    let mut collect = |name: &str, _: Value<'_>| fixed.push(name.to_owned());
    CompareRow {
        summary: SummaryRow {
            label,
            outcome: Err(""),
            request: None,
        },
        relative_speed: None,
    }
    .visit(&mut collect);
    KernelRow {
        label,
        kernel: None,
        cost: None,
        step_time_s: 0.0,
        error: "",
    }
    .visit(&mut collect);
    names
        .into_iter()
        .map(|name| {
            if fixed.iter().any(|f| f == name) {
                format!("param_{name}")
            } else {
                name.to_owned()
            }
        })
        .collect()
}

/// What was priced: the columns that identify a scenario.
#[derive(Debug, Clone, Copy)]
pub struct ScenarioLabel<'a> {
    pub workload: &'a str,
    pub chip: &'a str,
    pub mode: Mode,
    pub fusion: &'a str,
    pub dtypes: RoleDTypes,
    /// From [`param_columns`].
    pub param_columns: &'a [String],
    pub params: &'a [f64],
}

impl ScenarioLabel<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        f("workload", Value::Text(self.workload));
        f("chip", Value::Text(self.chip));
        f("mode", Value::Text(self.mode.name()));
        f("fusion", Value::Text(self.fusion));
        f("weight_dtype", Value::Text(self.dtypes.weight.name()));
        f(
            "activation_dtype",
            Value::Text(self.dtypes.activation.name()),
        );
        f("kv_dtype", Value::Text(self.dtypes.kv.name()));
    }

    /// The params' columns: after the metrics, so that a metric's column does not move with
    /// the number of params a workload has.
    fn visit_params(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        for (name, value) in self.param_columns.iter().zip(self.params) {
            f(name, Value::Num(*value));
        }
    }
}

/// A scenario's totals, or why it could not be priced.
pub struct SummaryRow<'a> {
    pub label: ScenarioLabel<'a>,
    pub outcome: Result<&'a StepSummary, &'a str>,
    /// The request priced with the scenario, if one was asked for.
    pub request: Option<&'a RequestSummary>,
}

impl<'a> SummaryRow<'a> {
    /// The row of a scenario that could not be priced.
    pub fn error(label: ScenarioLabel<'a>, error: &'a str) -> SummaryRow<'a> {
        SummaryRow {
            label,
            outcome: Err(error),
            request: None,
        }
    }
}

impl Row for SummaryRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        self.label.visit(f);
        self.visit_metrics(f);
        self.label.visit_params(f);
        f("error", Value::Text(self.outcome.err().unwrap_or("")));
    }
}

impl SummaryRow<'_> {
    fn visit_metrics(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let s = self.outcome.ok();
        let num = |g: fn(&StepSummary) -> f64| s.map_or(Value::Empty, |s| Value::Num(g(s)));
        let opt = |g: fn(&StepSummary) -> Option<f64>| s.and_then(g).into();
        f("step_time_us", num(|s| s.step_time_s * 1e6));
        f(
            "roofline_step_time_us",
            num(|s| s.roofline_step_time_s * 1e6),
        );
        f("fraction_of_roofline", num(|s| s.fraction_of_roofline));
        f("flops", num(|s| s.flops));
        f("bytes", num(|s| s.bytes));
        f(
            "intensity_flop_per_byte",
            num(|s| s.intensity_flop_per_byte),
        );
        f("attained_tflops", num(|s| s.attained_flop_per_s / 1e12));
        f("mfu", num(|s| s.mfu));
        f("mbu", num(|s| s.mbu));
        f("kernels", s.map_or(Value::Empty, |s| Value::Int(s.kernels)));
        f("tokens_per_step", opt(|s| s.tokens_per_step));
        f("tokens_per_s", opt(|s| s.tokens_per_s));
        f("ms_per_token", opt(|s| s.ms_per_token));
        f(
            "chips_per_replica",
            s.map_or(Value::Empty, |s| Value::Int(s.chips)),
        );
        f("tokens_per_s_per_chip", opt(|s| s.tokens_per_s_per_chip));
        f("usd_per_million_tokens", opt(|s| s.usd_per_million_tokens));
        f("compute_bound_share", num(|s| s.compute_bound_share));
        f("memory_bound_share", num(|s| s.memory_bound_share));
        f("weight_bytes", num(|s| s.weight_bytes));
        f("kv_bytes", num(|s| s.kv_bytes));
        f("activation_bytes", num(|s| s.activation_bytes));
        f("footprint_bytes", num(|s| s.footprint_bytes));
        f("fits", s.map_or(Value::Empty, |s| Value::Bool(s.fits)));
        let max_batch = s.and_then(|s| s.max_batch);
        f("max_batch", max_batch.map_or(Value::Empty, Value::Int));
        let r = self.request.filter(|_| s.is_some());
        let req = |g: fn(&RequestSummary) -> f64| r.map_or(Value::Empty, |r| Value::Num(g(r)));
        f(
            "input_tokens",
            r.map_or(Value::Empty, |r| Value::Int(r.input_tokens)),
        );
        f(
            "output_tokens",
            r.map_or(Value::Empty, |r| Value::Int(r.output_tokens)),
        );
        f("ttft_ms", req(|r| r.ttft_s * 1e3));
        f("tpot_ms", req(|r| r.tpot_s * 1e3));
        f("e2e_ms", req(|r| r.e2e_s * 1e3));
        f("output_tokens_per_s", req(|r| r.output_tokens_per_s));
    }
}

/// What names a kernel in rows.
#[derive(Debug, Clone, Copy)]
pub struct KernelName<'a> {
    pub name: &'a str,
    pub block: &'a str,
    pub kind: &'a str,
}

/// A scenario on one of several chips, with its speed relative to the first chip's.
pub struct CompareRow<'a> {
    pub summary: SummaryRow<'a>,
    /// First chip's step time over this chip's: above 1 is faster than the first chip.
    pub relative_speed: Option<f64>,
}

impl Row for CompareRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let s = &self.summary;
        s.label.visit(f);
        s.visit_metrics(f);
        f("relative_speed", self.relative_speed.into());
        s.label.visit_params(f);
        f("error", Value::Text(s.outcome.err().unwrap_or("")));
    }
}

/// One kernel of a scenario (long format: the scenario's columns repeated on every kernel),
/// or the scenario's error with empty kernel columns.
pub struct KernelRow<'a> {
    pub label: ScenarioLabel<'a>,
    pub kernel: Option<KernelName<'a>>,
    pub cost: Option<&'a KernelCost>,
    /// The step time, for the kernel's share.
    pub step_time_s: f64,
    pub error: &'a str,
}

impl<'a> KernelRow<'a> {
    /// The one row of a scenario that could not be priced: its error, no kernel.
    pub fn error(label: ScenarioLabel<'a>, error: &'a str) -> KernelRow<'a> {
        KernelRow {
            label,
            kernel: None,
            cost: None,
            step_time_s: 0.0,
            error,
        }
    }
}

impl Row for KernelRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        self.label.visit(f);
        let (k, c) = (self.kernel, self.cost);
        let text =
            |g: fn(&KernelCost) -> &'static str| c.map_or(Value::Empty, |c| Value::Text(g(c)));
        let num = |g: fn(&KernelCost) -> f64| c.map_or(Value::Empty, |c| Value::Num(g(c)));
        f("op", k.map_or(Value::Empty, |k| Value::Text(k.name)));
        f("block", k.map_or(Value::Empty, |k| Value::Text(k.block)));
        f("kind", k.map_or(Value::Empty, |k| Value::Text(k.kind)));
        f("count", c.map_or(Value::Empty, |c| Value::Int(c.count)));
        f("flops", num(|c| c.flops));
        f("bytes", num(|c| c.bytes));
        f("intensity_flop_per_byte", num(|c| c.flops / c.bytes));
        f("compute_dtype", text(|c| c.compute_dtype.name()));
        f("unit", text(|c| c.unit.name()));
        f("bound", text(|c| c.bound.name()));
        f("compute_time_us", num(|c| c.compute_time_s * 1e6));
        f("memory_time_us", num(|c| c.memory_time_s * 1e6));
        f("time_us", num(|c| c.time_s * 1e6));
        f("attainable_tflops", num(|c| c.flops / c.time_s / 1e12));
        f("roofline_time_us", num(|c| c.roofline_time_s * 1e6));
        f("expected_compute_us", num(|c| c.expected_compute_s * 1e6));
        f("expected_memory_us", num(|c| c.expected_memory_s * 1e6));
        f("launch_us", num(|c| c.launch_s * 1e6));
        f("quantization", num(|c| c.quantization));
        f("cache_hit_bytes", num(|c| c.cache_hit_bytes));
        f("scale_bytes", num(|c| c.scale_bytes));
        f("dequant_us", num(|c| c.dequant_s * 1e6));
        let t = self.step_time_s;
        f(
            "share",
            c.map_or(Value::Empty, |c| Value::Num(c.time_s * c.count as f64 / t)),
        );
        self.label.visit_params(f);
        f("error", Value::Text(self.error));
    }
}

/// One chip and choice of types in a plan.
pub struct PlanRow<'a> {
    pub workload: &'a str,
    pub entry: &'a PlanEntry,
    pub target_tokens_per_s: f64,
    pub max_ms_per_token: Option<f64>,
}

impl Row for PlanRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let e = self.entry;
        let p = e.outcome.as_ref().ok();
        let num = |g: fn(&PlanPoint) -> f64| p.map_or(Value::Empty, |p| Value::Num(g(p)));
        let opt = |g: fn(&PlanPoint) -> Option<f64>| p.and_then(g).into();
        f("workload", Value::Text(self.workload));
        f("chip", Value::Text(&e.chip));
        f("weight_dtype", Value::Text(e.dtypes.weight.name()));
        f("activation_dtype", Value::Text(e.dtypes.activation.name()));
        f("kv_dtype", Value::Text(e.dtypes.kv.name()));
        f("target_tokens_per_s", Value::Num(self.target_tokens_per_s));
        f("max_ms_per_token", self.max_ms_per_token.into());
        f("layout", p.map_or(Value::Empty, |p| Value::Text(&p.layout)));
        f(
            "chips_per_replica",
            p.map_or(Value::Empty, |p| Value::Int(p.tp)),
        );
        f(
            "replicas",
            p.map_or(Value::Empty, |p| Value::Int(p.replicas)),
        );
        f("batch", p.map_or(Value::Empty, |p| Value::Int(p.batch)));
        f(
            "max_batch",
            p.map_or(Value::Empty, |p| Value::Int(p.max_batch)),
        );
        f("step_time_us", num(|p| p.summary.step_time_s * 1e6));
        f("ms_per_token", opt(|p| p.summary.ms_per_token));
        f(
            "tokens_per_s_per_chip",
            opt(|p| p.summary.tokens_per_s_per_chip),
        );
        f("chips", p.map_or(Value::Empty, |p| Value::Int(p.chips)));
        f("usd_per_hour", opt(|p| p.usd_per_hour));
        f(
            "usd_per_million_tokens",
            opt(|p| p.summary.usd_per_million_tokens),
        );
        f("footprint_bytes", num(|p| p.summary.footprint_bytes));
        f(
            "note",
            Value::Text(e.outcome.as_ref().err().map_or("", String::as_str)),
        );
    }
}

/// One validation case: measured, predicted, signed error, or why it was skipped.
pub struct CaseRow<'a>(pub &'a Outcome);

impl Row for CaseRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let o = self.0;
        let c = &o.case;
        f("id", Value::Text(&c.id));
        f("chip", Value::Text(&c.chip));
        f("workload", Value::Text(&c.workload));
        f("kind", Value::Text(&c.kind));
        f("dtype", Value::Text(o.dtype.name()));
        f("metric", Value::Text(c.metric.name()));
        f("measured", Value::Num(c.measured));
        f("predicted", o.predicted.as_ref().ok().copied().into());
        f("error", o.error().into());
        f(
            "skipped",
            Value::Text(o.predicted.as_ref().err().map_or("", String::as_str)),
        );
        f("source", Value::Text(&c.source));
    }
}

/// Error statistics of a group of validation cases.
pub struct StatsRow<'a>(pub &'a ErrorStats);

impl Row for StatsRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        f("group", Value::Text(&self.0.group));
        f("cases", Value::Int(self.0.cases as u64));
        f("median_abs_error", Value::Num(self.0.median_abs));
        f("p90_abs_error", Value::Num(self.0.p90_abs));
    }
}

/// A chip and one data type of its matrix unit.
pub struct ChipRow<'a> {
    pub chip: &'a Chip,
    pub dtype: crate::base::dtype::DType,
    pub peak_flop_per_s: f64,
}

impl Row for ChipRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let c = self.chip;
        let bw = c.bandwidth_bytes_per_s;
        f("chip", Value::Text(&c.id));
        f("name", Value::Text(&c.name));
        f("dtype", Value::Text(self.dtype.name()));
        f("peak_tflops", Value::Num(self.peak_flop_per_s / 1e12));
        f("bandwidth_tb_s", Value::Num(bw / 1e12));
        f("ridge_flop_per_byte", Value::Num(self.peak_flop_per_s / bw));
        f("capacity_bytes", Value::Num(c.capacity_bytes));
        let vector = c.vector_peak(self.dtype).ok().map(|(_, p)| p / 1e12);
        f("vector_tflops", vector.into());
        f("cache_bytes", c.cache.as_ref().map(|x| x.size_bytes).into());
        f("launch_us", c.launch_s.map(|s| s * 1e6).into());
        f("usd_per_hour", c.price_usd_per_hour.into());
    }
}

/// Appends a number: integers without a fraction, others in the shortest form that reads
/// back exactly. Never NaN or infinite (an empty cell instead).
fn push_number(out: &mut Vec<u8>, x: f64) {
    if !x.is_finite() {
        return;
    }
    // `as` saturates, and below 2^53 every integer is exact: a cheap integer test.
    let whole = x as i64;
    if whole as f64 == x && x.abs() < 9.007_199_254_740_992e15 {
        out.extend_from_slice(itoa::Buffer::new().format(whole).as_bytes());
    } else {
        out.extend_from_slice(ryu::Buffer::new().format_finite(x).as_bytes());
    }
}

fn push_csv_text(out: &mut Vec<u8>, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        out.push(b'"');
        for byte in text.bytes() {
            if byte == b'"' {
                out.push(b'"');
            }
            out.push(byte);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

/// Appends the CSV header line of `row`'s columns.
pub fn csv_header(out: &mut Vec<u8>, row: &dyn Row) {
    let mut first = true;
    row.visit(&mut |name, _| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        push_csv_text(out, name);
    });
    out.push(b'\n');
}

/// Appends `row` as one CSV line.
pub fn csv_line(out: &mut Vec<u8>, row: &dyn Row) {
    let mut first = true;
    row.visit(&mut |_, value| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        match value {
            Value::Text(s) => push_csv_text(out, s),
            Value::Num(x) => push_number(out, x),
            Value::Int(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
            Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            Value::Empty => {}
        }
    });
    out.push(b'\n');
}

fn push_json_string(out: &mut Vec<u8>, text: &str) {
    // Writing a &str to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

/// Appends `row` as one JSON object on one line (JSON Lines).
pub fn json_line(out: &mut Vec<u8>, row: &dyn Row) {
    out.push(b'{');
    let mut first = true;
    row.visit(&mut |name, value| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        push_json_string(out, name);
        out.push(b':');
        match value {
            Value::Text(s) => push_json_string(out, s),
            Value::Num(x) if x.is_finite() => push_number(out, x),
            Value::Int(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
            Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            Value::Num(_) | Value::Empty => out.extend_from_slice(b"null"),
        }
    });
    out.extend_from_slice(b"}\n");
}

/// `row` as a JSON object, for documents that nest rows.
pub fn json_value(row: &dyn Row) -> serde_json::Value {
    let mut line = Vec::new();
    json_line(&mut line, row);
    serde_json::from_slice(&line).unwrap_or(serde_json::Value::Null)
}

/// Writes rows as CSV (with a header) or JSON Lines to `out`.
pub fn write_rows<'a>(
    out: &mut dyn Write,
    rows: impl IntoIterator<Item = &'a dyn Row>,
    json: bool,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        if json {
            json_line(&mut buffer, row);
        } else {
            if i == 0 {
                csv_header(&mut buffer, row);
            }
            csv_line(&mut buffer, row);
        }
    }
    out.write_all(&buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Example;

    impl Row for Example {
        fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
            f("text", Value::Text("a, \"quoted\" word"));
            f("int", Value::Num(8192.0));
            f("float", Value::Num(0.25));
            f("big", Value::Num(1e300));
            f("empty", Value::Empty);
            f("nan", Value::Num(f64::NAN));
            f("yes", Value::Bool(true));
        }
    }

    #[test]
    fn csv_and_json_agree_and_escape() {
        let mut csv = Vec::new();
        csv_header(&mut csv, &Example);
        csv_line(&mut csv, &Example);
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "text,int,float,big,empty,nan,yes\n\"a, \"\"quoted\"\" word\",8192,0.25,1e300,,,true\n"
        );
        let mut json = Vec::new();
        json_line(&mut json, &Example);
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(value["text"], "a, \"quoted\" word");
        assert_eq!(value["int"], 8192);
        assert_eq!(value["float"], 0.25);
        assert!(value["nan"].is_null() && value["empty"].is_null());
    }
}
