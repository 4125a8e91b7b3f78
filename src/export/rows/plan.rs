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
        let price_basis = e.costing.price_basis.as_deref().unwrap_or("");
        f("price_basis", Value::Text(price_basis));
        f(
            "cloud_usd_per_million_tokens",
            opt(|p| p.cloud_usd_per_million_tokens),
        );
        f(
            "tco_usd_per_million_tokens",
            opt(|p| p.tco_usd_per_million_tokens),
        );
        f(
            "tokens_per_s_per_mw",
            opt(|p| p.summary.cost.tokens_per_s_per_mw),
        );
        let part = |g: fn(&crate::core::cost::TcoParts) -> f64| {
            p.and_then(|p| p.summary.cost.parts.map(|x| g(&x.times(p.replicas as f64))))
                .into()
        };
        f("capex_usd_per_hour", part(|p| p.capex_usd_per_hour));
        f("network_usd_per_hour", part(|p| p.network_usd_per_hour));
        f("power_usd_per_hour", part(|p| p.power_usd_per_hour));
        f("colo_usd_per_hour", part(|p| p.colo_usd_per_hour));
        let fit = p
            .and_then(|p| p.power.as_ref())
            .and_then(|r| r.as_ref().ok());
        f("power_budget_mw", fit.map(|x| x.budget_mw).into());
        f("kw_per_chip", fit.map(|x| x.kw_per_chip).into());
        f(
            "chips_in_budget",
            fit.map_or(Value::Empty, |x| Value::Int(x.chips)),
        );
        f("tokens_per_s_in_budget", fit.map(|x| x.tokens_per_s).into());
        f(
            "usd_per_million_tokens_in_budget",
            fit.and_then(|x| x.usd_per_million_tokens).into(),
        );
        f("fleet_mw", fit.and_then(|x| x.fleet_mw).into());
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
