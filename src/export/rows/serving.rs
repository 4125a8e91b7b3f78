//! The row of a serving survey: one chip, choice of types, layout and concurrency in steady
//! state.

use super::{Row, Value};
use crate::study::serving::{Fleet, FleetEntry, RequestShape, ServingOptions, ServingRow, Slo};

/// One steady-state point of `serving`.
pub struct ServingCsvRow<'a> {
    pub workload: &'a str,
    pub shape: RequestShape,
    pub options: ServingOptions,
    pub row: &'a ServingRow,
}

impl Row for ServingCsvRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let (r, p) = (self.row, &self.row.point);
        f("workload", Value::Text(self.workload));
        f("chip", Value::Text(&r.chip));
        super::visit_types(&r.dtypes, f);
        f("layout", Value::Text(&r.layout));
        f("chips", Value::Int(p.chips));
        let apart = p.disaggregated;
        f(
            "prefill_layout",
            r.prefill_layout
                .as_deref()
                .map_or(Value::Empty, Value::Text),
        );
        f(
            "prefill_chips_per_instance",
            apart.map_or(Value::Empty, |d| Value::Int(d.prefill_instance_chips)),
        );
        f(
            "prefill_instances",
            apart.map(|d| d.prefill_instances).into(),
        );
        f("prefill_chips", apart.map(|d| d.prefill_chips).into());
        f(
            "kv_transfer_ms",
            apart.map(|d| d.kv_transfer_s * 1e3).into(),
        );
        f("input_tokens", Value::Int(self.shape.input_tokens));
        f("output_tokens", Value::Int(self.shape.output_tokens));
        f("prefix_hit", Value::Num(self.options.prefix_hit));
        let spec = self.options.speculation;
        f(
            "spec_k",
            spec.map_or(Value::Empty, |s| Value::Int(s.draft_tokens().into())),
        );
        f("spec_accept", spec.map(|s| s.acceptance()).into());
        f("concurrency", Value::Int(p.concurrency));
        f(
            "capped_from",
            r.capped_from.map_or(Value::Empty, Value::Int),
        );
        f("ttft_ms", Value::Num(p.ttft_s * 1e3));
        f("tpot_ms", Value::Num(p.tpot_s * 1e3));
        f("e2e_s", Value::Num(p.e2e_s));
        f("tokens_per_s_per_user", Value::Num(p.tokens_per_s_per_user));
        f("output_tokens_per_s", Value::Num(p.output_tokens_per_s));
        f(
            "output_tokens_per_s_per_chip",
            Value::Num(p.output_tokens_per_s_per_chip),
        );
        f("requests_per_s", Value::Num(p.requests_per_s));
        f(
            "cloud_usd_per_million_tokens",
            p.cloud_usd_per_million_tokens.into(),
        );
        f(
            "tco_usd_per_million_tokens",
            p.tco_usd_per_million_tokens.into(),
        );
        f("tokens_per_kwh", p.tokens_per_kwh.into());
        f("chunks_per_prompt", Value::Int(p.chunks_per_prompt));
        f("prompts_per_iteration", Value::Num(p.prompts_per_iteration));
        f("footprint_bytes", Value::Num(p.footprint_bytes));
        f("usable_bytes", Value::Num(p.usable_bytes));
        f(
            "headroom_bytes",
            Value::Num(p.usable_bytes - p.footprint_bytes),
        );
        f(
            "max_concurrency",
            p.max_concurrency.map_or(Value::Empty, Value::Int),
        );
        f("fits", Value::Bool(p.fits));
    }
}

/// One chip and choice of types of a fleet plan: its cheapest fleet, or why none.
pub struct FleetCsvRow<'a> {
    pub workload: &'a str,
    pub shape: RequestShape,
    pub slo: &'a Slo,
    pub entry: &'a FleetEntry,
}

impl Row for FleetCsvRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let e = self.entry;
        let fleet = e.outcome.as_ref().ok();
        let int = |g: fn(&Fleet) -> u64| fleet.map_or(Value::Empty, |x| Value::Int(g(x)));
        let num = |g: fn(&Fleet) -> f64| fleet.map_or(Value::Empty, |x| Value::Num(g(x)));
        let opt = |g: fn(&Fleet) -> Option<f64>| fleet.and_then(g).into();
        f("workload", Value::Text(self.workload));
        f("chip", Value::Text(&e.chip));
        super::visit_types(&e.dtypes, f);
        f("input_tokens", Value::Int(self.shape.input_tokens));
        f("output_tokens", Value::Int(self.shape.output_tokens));
        f("rate_per_s", Value::Num(self.slo.rate_per_s));
        f("max_ttft_ms", self.slo.max_ttft_s.map(|t| t * 1e3).into());
        f("max_tpot_ms", self.slo.max_tpot_s.map(|t| t * 1e3).into());
        f(
            "layout",
            fleet.map_or(Value::Empty, |x| Value::Text(&x.layout)),
        );
        f("chips_per_instance", int(|x| x.point.chips));
        f("instances", int(|x| x.instances));
        visit_prefill_pool(fleet, f);
        f("chips", int(|x| x.chips));
        f("concurrency", int(|x| x.point.concurrency));
        f("max_concurrency", int(|x| x.max_concurrency));
        f("ttft_ms", num(|x| x.point.ttft_s * 1e3));
        f("tpot_ms", num(|x| x.point.tpot_s * 1e3));
        f("e2e_s", num(|x| x.point.e2e_s));
        f(
            "requests_per_s_per_instance",
            num(|x| x.point.requests_per_s),
        );
        f(
            "output_tokens_per_s_per_chip",
            num(|x| x.point.output_tokens_per_s_per_chip),
        );
        let sim = fleet.and_then(|x| x.simulated);
        f(
            "simulated_ttft_p90_ms",
            sim.map(|s| s.ttft_p90_s * 1e3).into(),
        );
        f(
            "simulated_tpot_p90_ms",
            sim.map(|s| s.tpot_p90_s * 1e3).into(),
        );
        f(
            "simulated_met",
            sim.map_or(Value::Empty, |s| Value::Bool(s.met)),
        );
        f(
            "steady_state_instances",
            sim.map_or(Value::Empty, |s| Value::Int(s.steady_instances)),
        );
        f(
            "steady_state_prefill_instances",
            sim.map_or(Value::Empty, |s| Value::Int(s.steady_prefill_instances)),
        );
        f("cloud_usd_per_hour", opt(|x| x.cloud_usd_per_hour));
        f("tco_usd_per_hour", opt(|x| x.tco_usd_per_hour));
        f(
            "cloud_usd_per_million_tokens",
            opt(|x| x.cloud_usd_per_million_tokens),
        );
        f(
            "tco_usd_per_million_tokens",
            opt(|x| x.tco_usd_per_million_tokens),
        );
        f("footprint_bytes", num(|x| x.point.footprint_bytes));
        f(
            "note",
            Value::Text(e.outcome.as_ref().err().map_or("", String::as_str)),
        );
    }
}

/// A fleet's prefill pool: its layout and chips per instance (empty with prefill together),
/// its instances and chips.
fn visit_prefill_pool(fleet: Option<&Fleet>, f: &mut dyn FnMut(&str, Value<'_>)) {
    let apart = fleet.filter(|x| x.prefill_instances > 0);
    f(
        "prefill_layout",
        apart.map_or(Value::Empty, |x| Value::Text(&x.prefill_layout)),
    );
    f(
        "prefill_chips_per_instance",
        apart.map_or(Value::Empty, |x| Value::Int(x.prefill_chips_per_instance)),
    );
    let int = |g: fn(&Fleet) -> u64| fleet.map_or(Value::Empty, |x| Value::Int(g(x)));
    f("prefill_instances", int(|x| x.prefill_instances));
    f(
        "prefill_chips",
        int(|x| x.prefill_instances * x.prefill_chips_per_instance),
    );
}
