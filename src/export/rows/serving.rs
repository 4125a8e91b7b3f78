//! The row of a serving survey: one chip, choice of types, layout and concurrency in steady
//! state.

use super::{Row, Value};
use crate::study::serving::{
    Fleet, FleetEntry, RequestShape, ServingBand, ServingOptions, ServingPoint, ServingRow, Slo,
};

/// One steady-state point of `serving`.
pub(crate) struct ServingCsvRow<'a> {
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
        f("engine", Value::Text(&r.engine));
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
        let ends = (r.band).map(|b| Ends::of(b, p, self.shape.output_tokens));
        visit_banded(p, ends.as_ref(), f);
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
pub(crate) struct FleetCsvRow<'a> {
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
        f("engine", Value::Text(&e.engine));
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
        let point = fleet.map(|x| &x.point);
        let ends = fleet.and_then(|x| Some(Ends::of(x.band?, &x.point, x.output_tokens)));
        visit_fleet_banded(point, ends.as_ref(), f);
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
        visit_power_budget(fleet, f);
        f(
            "note",
            Value::Text(e.outcome.as_ref().err().map_or("", String::as_str)),
        );
    }
}

/// A fleet within the power budget (empty without one, or where the chip has no power).
fn visit_power_budget(fleet: Option<&Fleet>, f: &mut dyn FnMut(&str, Value<'_>)) {
    let fit = fleet
        .and_then(|x| x.power.as_ref())
        .and_then(|r| r.as_ref().ok());
    f("power_budget_mw", fit.map(|x| x.budget_mw).into());
    f("kw_per_chip", fit.map(|x| x.kw_per_chip).into());
    f("fleet_mw", fit.map(|x| x.fleet_mw).into());
    f(
        "fits_power_budget",
        fit.map_or(Value::Empty, |x| Value::Bool(x.fits())),
    );
    f(
        "instances_in_budget",
        fit.map_or(Value::Empty, |x| Value::Int(x.instances)),
    );
    f(
        "requests_per_s_in_budget",
        fit.map(|x| x.requests_per_s).into(),
    );
    f("tokens_per_s_in_budget", fit.map(|x| x.tokens_per_s).into());
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

/// A point at the fast and the slow ends of its 80 % band.
struct Ends {
    fast: ServingPoint,
    slow: ServingPoint,
}

impl Ends {
    fn of(band: ServingBand, p: &ServingPoint, output_tokens: u64) -> Ends {
        Ends {
            fast: band.at_end(p, output_tokens, false),
            slow: band.at_end(p, output_tokens, true),
        }
    }
}

/// A number of a point and the ends of its band: `NAME_UNIT`, then `NAME_low_UNIT` and
/// `NAME_high_UNIT` (a unit in the name stays last: `ttft_low_ms`; a rate or a cost whose
/// name has no unit suffix ends with them: `requests_per_s_low`). A time's low end is the
/// fast point's, a rate's the slow point's. Empty ends without a band (roofline mode).
struct Banded {
    name: &'static str,
    unit: &'static str,
    get: fn(&ServingPoint) -> Option<f64>,
    rate: bool,
}

const fn time(
    name: &'static str,
    unit: &'static str,
    get: fn(&ServingPoint) -> Option<f64>,
) -> Banded {
    Banded {
        name,
        unit,
        get,
        rate: false,
    }
}

const fn rate(name: &'static str, get: fn(&ServingPoint) -> Option<f64>) -> Banded {
    Banded {
        name,
        unit: "",
        get,
        rate: true,
    }
}

impl Banded {
    fn visit(
        &self,
        p: Option<&ServingPoint>,
        ends: Option<&Ends>,
        f: &mut dyn FnMut(&str, Value<'_>),
    ) {
        let (name, unit) = (self.name, self.unit);
        f(&format!("{name}{unit}"), p.and_then(self.get).into());
        let (low, high) = match ends {
            Some(e) if self.rate => (Some(&e.slow), Some(&e.fast)),
            Some(e) => (Some(&e.fast), Some(&e.slow)),
            None => (None, None),
        };
        f(&format!("{name}_low{unit}"), low.and_then(self.get).into());
        f(
            &format!("{name}_high{unit}"),
            high.and_then(self.get).into(),
        );
    }
}

/// The banded numbers of a serving row, in its column order.
const SERVING_BANDED: [Banded; 10] = [
    time("ttft", "_ms", |p| Some(p.ttft_s * 1e3)),
    time("tpot", "_ms", |p| Some(p.tpot_s * 1e3)),
    time("e2e", "_s", |p| Some(p.e2e_s)),
    rate("tokens_per_s_per_user", |p| Some(p.tokens_per_s_per_user)),
    rate("output_tokens_per_s", |p| Some(p.output_tokens_per_s)),
    rate("output_tokens_per_s_per_chip", |p| {
        Some(p.output_tokens_per_s_per_chip)
    }),
    rate("requests_per_s", |p| Some(p.requests_per_s)),
    time("cloud_usd_per_million_tokens", "", |p| {
        p.cloud_usd_per_million_tokens
    }),
    time("tco_usd_per_million_tokens", "", |p| {
        p.tco_usd_per_million_tokens
    }),
    rate("tokens_per_kwh", |p| p.tokens_per_kwh),
];

fn visit_banded(p: &ServingPoint, ends: Option<&Ends>, f: &mut dyn FnMut(&str, Value<'_>)) {
    for b in &SERVING_BANDED {
        b.visit(Some(p), ends, f);
    }
}

/// The banded numbers of a fleet row: its instance's point (costs are the fleet's own).
const FLEET_BANDED: [Banded; 5] = [
    time("ttft", "_ms", |p| Some(p.ttft_s * 1e3)),
    time("tpot", "_ms", |p| Some(p.tpot_s * 1e3)),
    time("e2e", "_s", |p| Some(p.e2e_s)),
    rate("requests_per_s_per_instance", |p| Some(p.requests_per_s)),
    rate("output_tokens_per_s_per_chip", |p| {
        Some(p.output_tokens_per_s_per_chip)
    }),
];

fn visit_fleet_banded(
    p: Option<&ServingPoint>,
    ends: Option<&Ends>,
    f: &mut dyn FnMut(&str, Value<'_>),
) {
    for b in &FLEET_BANDED {
        b.visit(p, ends, f);
    }
}
