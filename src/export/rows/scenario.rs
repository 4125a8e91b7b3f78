//! The rows of a priced scenario: what identifies it ([`ScenarioLabel`], whose params'
//! columns [`param_columns`] names), its totals alone or against other chips, and its kernels
//! one per row.

use super::what_if::WhatIfCells;
use super::{Row, RowInline, SchemeText, Value};
use crate::base::types::Types;
use crate::core::scenario::Mode;
use crate::core::timing::{Constant, KernelCost, RequestSummary, StepSummary};
use crate::study::band::Band;
use crate::study::serving::ServingBand;

/// Column names of a workload's params in rows: the param's name, or `param_NAME` where the
/// name is already one of the fixed columns of a summary or kernel row.
pub(crate) fn param_columns<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let label = ScenarioLabel {
        workload: "",
        chip: "",
        engine: "",
        mode: Mode::Roofline,
        fusion: "",
        dtypes: Types::default(),
        param_columns: &[],
        params: &[],
        what_if: WhatIfCells::NONE,
    };
    let mut fixed: Vec<String> = Vec::new();
    let mut collect = |name: &str, _: Value<'_>| fixed.push(name.to_owned());
    CompareRow {
        summary: SummaryRow {
            label,
            outcome: Err(""),
            request: None,
            band: None,
            request_band: None,
        },
        relative_speed: None,
    }
    .visit(&mut collect);
    KernelRow {
        label,
        kernel: None,
        cost: None,
        priced_by: &[],
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
pub(crate) struct ScenarioLabel<'a> {
    pub workload: &'a str,
    pub chip: &'a str,
    /// The engine priced under (`none` in roofline mode).
    pub engine: &'a str,
    pub mode: Mode,
    pub fusion: &'a str,
    pub dtypes: Types,
    /// From [`param_columns`].
    pub param_columns: &'a [String],
    pub params: &'a [f64],
    /// The chip fields a what-if sweep changes, after the params.
    pub what_if: WhatIfCells<'a>,
}

impl ScenarioLabel<'_> {
    fn visit<F: FnMut(&str, Value<'_>) + ?Sized>(&self, f: &mut F) {
        f("workload", Value::Text(self.workload));
        f("chip", Value::Text(self.chip));
        f("engine", Value::Text(self.engine));
        f("mode", Value::Text(self.mode.name()));
        f("fusion", Value::Text(self.fusion));
        super::visit_types(&self.dtypes, f);
    }

    /// The params' columns, then the swept chip fields': after the metrics, so that a
    /// metric's column does not move with the number of params a workload has.
    fn visit_params<F: FnMut(&str, Value<'_>) + ?Sized>(&self, f: &mut F) {
        for (name, value) in self.param_columns.iter().zip(self.params) {
            f(name, Value::Num(*value));
        }
        self.what_if.visit(f);
    }
}

/// A scenario's totals, or why it could not be priced.
pub(crate) struct SummaryRow<'a> {
    pub label: ScenarioLabel<'a>,
    pub outcome: Result<&'a StepSummary, &'a str>,
    /// The request priced with the scenario, if one was asked for.
    pub request: Option<&'a RequestSummary>,
    /// The 80 % band of an expected-mode prediction (none in roofline mode).
    pub band: Option<Band>,
    /// The 80 % bands of the request's numbers, as a serving point's take them (none in
    /// roofline mode; unused without a request).
    pub request_band: Option<ServingBand>,
}

impl<'a> SummaryRow<'a> {
    /// The row of a scenario that could not be priced.
    pub(crate) fn error(label: ScenarioLabel<'a>, error: &'a str) -> SummaryRow<'a> {
        SummaryRow {
            label,
            outcome: Err(error),
            request: None,
            band: None,
            request_band: None,
        }
    }
}

impl Row for SummaryRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        self.visit_inline(f);
    }
}

impl RowInline for SummaryRow<'_> {
    fn visit_inline<F: FnMut(&str, Value<'_>) + ?Sized>(&self, f: &mut F) {
        self.label.visit(f);
        self.visit_metrics(f);
        self.label.visit_params(f);
        f("error", Value::Text(self.outcome.err().unwrap_or("")));
    }
}

impl SummaryRow<'_> {
    fn visit_metrics<F: FnMut(&str, Value<'_>) + ?Sized>(&self, f: &mut F) {
        let s = self.outcome.ok();
        let num = |g: fn(&StepSummary) -> f64| s.map_or(Value::Empty, |s| Value::Num(g(s)));
        let opt = |g: fn(&StepSummary) -> Option<f64>| s.and_then(g).into();
        f("step_time_us", num(|s| s.step_time_s * 1e6));
        let band = self.band;
        let time = |end: fn((f64, f64)) -> f64| {
            (s.zip(band)).map_or(Value::Empty, |(s, b)| {
                Value::Num(end(b.time(s.step_time_s * 1e6)))
            })
        };
        f("step_time_low_us", time(|b| b.0));
        f("step_time_high_us", time(|b| b.1));
        f(
            "roofline_step_time_us",
            num(|s| s.roofline_step_time_s * 1e6),
        );
        f("fraction_of_roofline", num(|s| s.fraction_of_roofline));
        f("host_time_us", num(|s| s.host_time_s * 1e6));
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
        let rate = |end: fn((f64, f64)) -> f64| {
            let r = s.and_then(|s| s.tokens_per_s).zip(band);
            r.map_or(Value::Empty, |(r, b)| Value::Num(end(b.rate(r))))
        };
        f("tokens_per_s_low", rate(|b| b.0));
        f("tokens_per_s_high", rate(|b| b.1));
        f("ms_per_token", opt(|s| s.ms_per_token));
        f(
            "chips_per_replica",
            s.map_or(Value::Empty, |s| Value::Int(s.chips)),
        );
        f("tokens_per_s_per_chip", opt(|s| s.tokens_per_s_per_chip));
        f("usd_per_hour", opt(|s| s.cost.usd_per_hour));
        f(
            "usd_per_million_tokens",
            opt(|s| s.cost.usd_per_million_tokens),
        );
        f(
            "cost_basis",
            s.map_or(Value::Empty, |s| Value::Text(s.cost.basis.name())),
        );
        let price_basis = s.and_then(|s| s.cost.price_basis.as_deref());
        f("price_basis", Value::Text(price_basis.unwrap_or("")));
        let note = s.and_then(|s| {
            (s.cost.note.as_ref().map(|n| n.to_string())).or_else(|| s.cost.caveat.clone())
        });
        f("cost_note", Value::Text(note.as_deref().unwrap_or("")));
        f("tokens_per_kwh", opt(|s| s.cost.tokens_per_kwh));
        f("tokens_per_s_per_mw", opt(|s| s.cost.tokens_per_s_per_mw));
        let part = |g: fn(&crate::core::cost::TcoParts) -> f64| {
            s.and_then(|s| s.cost.parts.as_ref()).map(g).into()
        };
        f("capex_usd_per_hour", part(|p| p.capex_usd_per_hour));
        f("network_usd_per_hour", part(|p| p.network_usd_per_hour));
        f("power_usd_per_hour", part(|p| p.power_usd_per_hour));
        f("colo_usd_per_hour", part(|p| p.colo_usd_per_hour));
        f("compute_bound_share", num(|s| s.compute_bound_share));
        f("memory_bound_share", num(|s| s.memory_bound_share));
        f("weight_bytes", num(|s| s.weight_bytes));
        f("kv_bytes", num(|s| s.kv_bytes));
        f("state_bytes", num(|s| s.state_bytes));
        f("activation_bytes", num(|s| s.activation_bytes));
        f("workspace_bytes", num(|s| s.workspace_bytes));
        f("reserve_bytes", num(|s| s.reserve_bytes));
        f("footprint_bytes", num(|s| s.footprint_bytes));
        f("usable_bytes", num(|s| s.usable_bytes));
        // With a request, its cache at its longest context must fit too (`StepReport::fits`).
        let request_fits = self.request.is_none_or(|r| r.fits);
        f(
            "fits",
            s.map_or(Value::Empty, |s| Value::Bool(s.fits && request_fits)),
        );
        let max_batch = s.and_then(|s| s.max_batch);
        f("max_batch", max_batch.map_or(Value::Empty, Value::Int));
        let mut buf = SchemeText::default();
        let scheme = s.and_then(|s| s.scheme).map(|x| buf.of(x));
        f("scheme", scheme.map_or(Value::Empty, Value::Text));
        self.visit_request(f);
    }

    /// A request's columns, where one was priced with the scenario: each number, then the ends
    /// of its band (a time's low end the fast one, a rate's the slow one).
    fn visit_request<F: FnMut(&str, Value<'_>) + ?Sized>(&self, f: &mut F) {
        let r = self.request.filter(|_| self.outcome.is_ok());
        let int = |g: fn(&RequestSummary) -> u64| r.map_or(Value::Empty, |r| Value::Int(g(r)));
        f("input_tokens", int(|r| r.input_tokens));
        f("output_tokens", int(|r| r.output_tokens));
        let ends = r.zip(self.request_band).map(|(r, b)| Ends {
            fast: b.request_at_end(r, false),
            slow: b.request_at_end(r, true),
        });
        for banded in &REQUEST_BANDED {
            banded.visit(r, ends.as_ref(), f);
        }
    }
}

/// A request at the fast and at the slow end of its band.
struct Ends {
    fast: RequestSummary,
    slow: RequestSummary,
}

/// A request's number and the names of its band's ends (`docs/columns.md`: the unit stays
/// last, `ttft_low_ms`; a rate ends with them, `output_tokens_per_s_low`).
struct RequestBanded {
    names: [&'static str; 3],
    get: fn(&RequestSummary) -> f64,
    rate: bool,
}

impl RequestBanded {
    fn visit<F: FnMut(&str, Value<'_>) + ?Sized>(
        &self,
        r: Option<&RequestSummary>,
        ends: Option<&Ends>,
        f: &mut F,
    ) {
        let num =
            |r: Option<&RequestSummary>| r.map_or(Value::Empty, |r| Value::Num((self.get)(r)));
        let (low, high) = match ends {
            Some(e) if self.rate => (Some(&e.slow), Some(&e.fast)),
            Some(e) => (Some(&e.fast), Some(&e.slow)),
            None => (None, None),
        };
        let [name, low_name, high_name] = self.names;
        f(name, num(r));
        f(low_name, num(low));
        f(high_name, num(high));
    }
}

/// The banded numbers of a request, in their column order.
const REQUEST_BANDED: [RequestBanded; 4] = [
    RequestBanded {
        names: ["ttft_ms", "ttft_low_ms", "ttft_high_ms"],
        get: |r| r.ttft_s * 1e3,
        rate: false,
    },
    RequestBanded {
        names: ["tpot_ms", "tpot_low_ms", "tpot_high_ms"],
        get: |r| r.tpot_s * 1e3,
        rate: false,
    },
    RequestBanded {
        names: ["e2e_ms", "e2e_low_ms", "e2e_high_ms"],
        get: |r| r.e2e_s * 1e3,
        rate: false,
    },
    RequestBanded {
        names: [
            "output_tokens_per_s",
            "output_tokens_per_s_low",
            "output_tokens_per_s_high",
        ],
        get: |r| r.output_tokens_per_s,
        rate: true,
    },
];

/// What names a kernel in rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelName<'a> {
    pub name: &'a str,
    pub block: &'a str,
    pub kind: &'a str,
}

/// A scenario on one of several chips, with its speed relative to the first chip's.
pub(crate) struct CompareRow<'a> {
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
pub(crate) struct KernelRow<'a> {
    pub label: ScenarioLabel<'a>,
    pub kernel: Option<KernelName<'a>>,
    pub cost: Option<&'a KernelCost>,
    /// The chip-file constants that priced it (`timing::priced_by`).
    pub priced_by: &'a [Constant],
    /// The step time, for the kernel's share.
    pub step_time_s: f64,
    pub error: &'a str,
}

impl<'a> KernelRow<'a> {
    /// The one row of a scenario that could not be priced: its error, no kernel.
    pub(crate) fn error(label: ScenarioLabel<'a>, error: &'a str) -> KernelRow<'a> {
        KernelRow {
            label,
            kernel: None,
            cost: None,
            priced_by: &[],
            step_time_s: 0.0,
            error,
        }
    }
}

impl Row for KernelRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        self.visit_inline(f);
    }
}

impl RowInline for KernelRow<'_> {
    fn visit_inline<F: FnMut(&str, Value<'_>) + ?Sized>(&self, f: &mut F) {
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
        f("memory_fraction", num(|c| c.memory_fraction));
        f("causal_share", num(|c| c.causal_share));
        f("act_quant_us", num(|c| c.act_quant_s * 1e6));
        f("special_us", num(|c| c.special_s * 1e6));
        let t = self.step_time_s;
        f(
            "share",
            c.map_or(Value::Empty, |c| Value::Num(c.time_s * c.count as f64 / t)),
        );
        f("roofline_share", num(|c| c.roofline_time_s / c.time_s));
        let priced_by = c.map(|_| constants_cell(self.priced_by));
        f(
            "priced_by",
            priced_by.as_deref().map_or(Value::Empty, Value::Text),
        );
        self.label.visit_params(f);
        f("error", Value::Text(self.error));
    }
}

/// The constants behind a kernel as one cell: `name=value` joined by `;`, each value as
/// [`constant_value`] writes it.
pub(crate) fn constants_cell(constants: &[Constant]) -> String {
    let mut cell = String::new();
    for (i, c) in constants.iter().enumerate() {
        if i > 0 {
            cell.push(';');
        }
        cell.push_str(&format!("{}={}", c.name, constant_value(c.value)));
    }
    cell
}

/// A constant's value in SI units, in its shortest form, with an exponent outside 1e-4 to
/// 1e6 (`9.89e14` FLOP/s, `0.8489742`, `8e-7` s).
pub(crate) fn constant_value(v: f64) -> String {
    match v != 0.0 && !(1e-4..1e6).contains(&v.abs()) {
        true => format!("{v:e}"),
        false => format!("{v}"),
    }
}
