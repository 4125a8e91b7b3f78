//! The row of a plan: one chip and choice of types, with the layout and cost that meet the
//! target, or why none does.

use super::{Row, Value};
use crate::study::plan::{PlanEntry, PlanPoint};

/// One chip and choice of types in a plan.
pub(crate) struct PlanRow<'a> {
    pub workload: &'a str,
    pub entry: &'a PlanEntry,
    pub target_tokens_per_s: Option<f64>,
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
        f("engine", Value::Text(&e.engine));
        super::visit_types(&e.dtypes, f);
        f("target_tokens_per_s", self.target_tokens_per_s.into());
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
        let time = |end: fn((f64, f64)) -> f64| {
            let band = p.and_then(|p| p.band.map(|b| b.time(p.summary.step_time_s * 1e6)));
            band.map_or(Value::Empty, |b| Value::Num(end(b)))
        };
        f("step_time_low_us", time(|b| b.0));
        f("step_time_high_us", time(|b| b.1));
        f("ms_per_token", opt(|p| p.summary.ms_per_token));
        f(
            "tokens_per_s_per_chip",
            opt(|p| p.summary.tokens_per_s_per_chip),
        );
        f("chips", p.map_or(Value::Empty, |p| Value::Int(p.chips)));
        f("usd_per_hour", opt(|p| p.usd_per_hour));
        f(
            "usd_per_million_tokens",
            opt(|p| p.usd_per_million(p.summary.cost.basis)),
        );
        let basis = p.map_or(Value::Empty, |p| Value::Text(p.summary.cost.basis.name()));
        f("cost_basis", basis);
        f(
            "cloud_usd_per_million_tokens",
            opt(|p| p.cloud_usd_per_million_tokens),
        );
        f(
            "tco_usd_per_million_tokens",
            opt(|p| p.tco_usd_per_million_tokens),
        );
        f("footprint_bytes", num(|p| p.summary.footprint_bytes));
        let mut buf = super::SchemeText::default();
        let scheme = p.and_then(|p| p.summary.scheme).map(|s| buf.of(s));
        f("scheme", scheme.map_or(Value::Empty, Value::Text));
        f(
            "note",
            Value::Text(e.outcome.as_ref().err().map_or("", String::as_str)),
        );
    }
}
