//! Capacity planning: for each chip and choice of data types, the batch that gives the most
//! tokens per second per chip while a decode step stays within a latency bound and the step's
//! memory fits one chip, then the chips a throughput target needs and what they cost.

use std::sync::Arc;

use crate::base::dtype::Role;
use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::param::ScenarioParam;
use crate::base::ranges;
use crate::base::types::{TypeKey, Types};
use crate::core::chip::Chip;
use crate::core::cost::{CostView, Costing};
use crate::core::engine::Engine;
use crate::core::scenario::{Mode, Scenario};
use crate::core::timing::{price_step, KernelCost, StepSummary};
use crate::core::workload::{Evaluation, Workload};
use crate::study::band::{self, Band};

mod engines;
pub(crate) mod nodes;
mod point;
pub(crate) mod power;

use engines::{choices_on, engines_searched};
pub use engines::{engine_types, leaves_types_to_engine};
use point::best_point;

/// How a plan's entries are ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlanSort {
    /// Cheapest first: $ per million tokens in the chosen cost view (with a target, $ per
    /// hour of the whole deployment, the same order); unpriced entries after, by chips.
    #[default]
    Cost,
    /// Fewest chips for the target first (needs a target).
    Chips,
    /// Least time per output token first.
    Latency,
}

/// What a planner asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRequest {
    /// Tokens per second the deployment must serve; without one, each entry is one replica
    /// at its best batch, ranked by what a million tokens cost.
    pub target_tokens_per_s: Option<f64>,
    /// Most milliseconds per output token a sequence may see (none: no bound).
    pub max_ms_per_token: Option<f64>,
    /// The scenario priced; its `batch` is what the plan chooses.
    pub scenario: Scenario,
    /// The data type choices to try, each on every chip.
    pub dtype_choices: Vec<Types>,
    /// The engines to search, each on every chip (`--engine`, a list or all the built-ins);
    /// empty: each chip's default engine. Roofline mode prices under none.
    pub engines: Vec<Arc<Engine>>,
    /// Whether a choice of fp8 weights with 16-bit activations is expanded as each engine
    /// runs it ([`engine_types`]): true where the choices leave the activations' and the
    /// cache's types to the engine (no `--dtype activation=` or `kv=` axis).
    pub engine_types: bool,
    /// How the entries are ranked.
    pub sort: PlanSort,
    /// Plan on the slow end of each step's 80 % band (expected mode): the latency bound, the
    /// replicas a target needs, the costs and the ranking all take the band's high step time.
    pub conservative: bool,
    /// Whether answers list the choices that cannot meet the request (nothing fits, or too
    /// slow), with why; otherwise they are only counted.
    pub include_unfit: bool,
    /// The scenario's params a reader must know to read the answer (tokens, context,
    /// max_batched_tokens, engine_host), with their values, as `assumptions` finds them.
    pub assumed: Vec<(String, f64)>,
    /// A power budget at the wall, in MW: each point says the most it serves within it and,
    /// with a target, whether the fleet fits ([`power::PowerFit`]).
    pub power_budget_mw: Option<f64>,
}

/// The values `scenario` gives the params that change what a decode step costs but that a
/// plan's command line need not name: tokens per sequence, context, the engine's batched
/// tokens and its share of host work.
pub fn assumptions(workload: &Workload, scenario: &Scenario) -> Result<Vec<(String, f64)>, Error> {
    let mut ev = workload.new_evaluation();
    workload.evaluate(scenario.overrides(), &mut ev)?;
    let shown = [
        ScenarioParam::Tokens,
        ScenarioParam::Context,
        ScenarioParam::MaxBatchedTokens,
        ScenarioParam::EngineHost,
    ];
    // Roofline mode prices no host work.
    let priced =
        |p: &ScenarioParam| *p != ScenarioParam::EngineHost || scenario.mode() == Mode::Expected;
    Ok(shown
        .into_iter()
        .filter(priced)
        .filter_map(|p| {
            workload
                .param(p)
                .map(|i| (p.name().to_owned(), ev.params[i]))
        })
        .collect())
}

/// Every combination of the types in `axes` over `base`, in the order the axes list them, each
/// applied as one scenario's `--dtype` settings are ([`Types::apply`]: a 16-bit float named
/// alone is the model's type); with no axes, the checkpoint's own types (`base`), then every
/// weight in bf16, then in fp8.
pub fn dtype_choices(base: Types, axes: &[(TypeKey, Vec<Format>)]) -> Vec<Types> {
    let applied = |keys: &[(TypeKey, Format)]| {
        let mut d = base;
        d.apply(keys.iter().copied());
        d
    };
    if axes.is_empty() {
        let mut choices = vec![base];
        for weight in [Format::Bf16, Format::Fp8] {
            let d = applied(&[(TypeKey::Role(Role::Weight), weight)]);
            if !choices.contains(&d) {
                choices.push(d);
            }
        }
        return choices;
    }
    let mut combinations: Vec<Vec<(TypeKey, Format)>> = vec![Vec::new()];
    for (key, types) in axes {
        combinations = combinations
            .iter()
            .flat_map(|keys| {
                types.iter().map(move |t| {
                    let mut keys = keys.clone();
                    keys.push((*key, *t));
                    keys
                })
            })
            .collect();
    }
    combinations.iter().map(|keys| applied(keys)).collect()
}

/// The best batch on one chip with one choice of types.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanPoint {
    /// The parallel layout (`tp=4 pp=2`; empty for one chip).
    pub layout: String,
    /// Chips per replica.
    pub tp: u64,
    /// Replicas the target needs; `chips` is their chips in all.
    pub replicas: u64,
    /// The batch chosen: the largest that fits and meets the latency bound.
    pub batch: u64,
    /// The largest batch whose footprint fits, latency aside.
    pub max_batch: u64,
    /// The step priced at the chosen batch.
    pub summary: StepSummary,
    /// The 80 % band of its step (none in roofline mode).
    pub band: Option<Band>,
    /// Chips the target needs: replicas x chips per replica.
    pub chips: u64,
    /// What those chips cost per hour in the chip's cost view, where it has a cost.
    pub usd_per_hour: Option<f64>,
    /// A million tokens in each view, whichever one ranks the plan: with a target, the
    /// chips' hours over the tokens it asks for (spare capacity paid for); without, one
    /// replica's at its capacity.
    pub cloud_usd_per_million_tokens: Option<f64>,
    /// The same as `cloud_usd_per_million_tokens`, in the TCO view.
    pub tco_usd_per_million_tokens: Option<f64>,
    /// Within the request's power budget, or why there is no answer; `None` without a budget.
    pub power: Option<Result<power::PowerFit, String>>,
}

/// One chip and type choice: its best point, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanEntry {
    /// The chip's id, the file stem of its chip file.
    pub chip: String,
    /// The engine planned under (`none` in roofline mode).
    pub engine: String,
    /// How the chip's hours are costed.
    pub costing: Costing,
    /// The data type choice planned.
    pub dtypes: Types,
    /// The best point, or why no batch and layout meets the request (the last layout's
    /// reason).
    pub outcome: Result<PlanPoint, String>,
}

/// Largest batch the search considers.
const MAX_BATCH: u64 = 1 << 20;

/// Plans `request` on every chip and type choice; for a workload with parallel params, every
/// layout within the chip's scale-up domain is tried and the cheapest kept, and where none
/// fits, the multi-node layouts (tensor within the node, pipeline or expert across) are each an
/// entry of their own. Entries come sorted: chips with a price by cost per hour, then chips
/// without one by chips needed, then the choices that cannot meet the request, with the
/// reason.
pub fn plan(
    workload: &Workload,
    chips: &[Chip],
    request: &PlanRequest,
) -> Result<Vec<PlanEntry>, Error> {
    let batch = workload.require(ScenarioParam::Batch, "there is no batch to plan")?;
    if request.conservative && request.scenario.mode() == Mode::Roofline {
        return Err(Error::NoBand);
    }
    if request.sort == PlanSort::Chips && request.target_tokens_per_s.is_none() {
        return Err(Error::value(
            "ranking by chips needs a target: give --target-tokens-per-s N (without one, each \
             chip is one replica)",
        ));
    }
    let numbers = [
        (&ranges::TARGET_TOKENS_PER_S, request.target_tokens_per_s),
        (&ranges::MAX_MS_PER_TOKEN, request.max_ms_per_token),
        (&ranges::POWER_BUDGET_MW, request.power_budget_mw),
    ];
    for (range, value) in numbers {
        if let Some(Err(e)) = value.map(|v| range.check(v)) {
            return Err(Error::value(format!(
                "{} {}: {e}",
                range.field,
                value.unwrap_or(0.0)
            )));
        }
    }
    let kinds: Vec<ScenarioParam> = (ScenarioParam::LAYOUT.into_iter())
        .filter(|d| workload.param(*d).is_some())
        .collect();
    let mut planner = Planner {
        workload,
        request,
        batch,
        dims: kinds.iter().filter_map(|d| workload.param(*d)).collect(),
        kinds,
        ev: workload.new_evaluation(),
        costs: Vec::new(),
        scenario: request.scenario.clone(),
    };
    let mut entries = Vec::new();
    for chip in chips {
        // Layouts within one scale-up domain: powers of two per dimension, their product at
        // most the domain's chips.
        let domain = chip
            .interconnect
            .as_ref()
            .and_then(|i| i.domain)
            .unwrap_or(1);
        let layouts = layouts(planner.dims.len(), domain);
        for engine in engines_searched(request) {
            planner.scenario.set_engine(engine);
            for dtypes in choices_on(request, &planner.scenario, chip) {
                let entry = planner.entry(chip, &layouts, dtypes);
                let spill = entry.outcome.is_err() && chip.network.is_some() && domain > 1;
                entries.push(entry);
                if spill {
                    entries.extend(planner.beyond_one_node(chip, domain, dtypes));
                }
            }
        }
    }
    if let Some(mw) = request.power_budget_mw {
        let target = request.target_tokens_per_s.is_some();
        for e in &mut entries {
            let chip = chips.iter().find(|c| c.id() == e.chip);
            if let (Ok(point), Some(chip)) = (&mut e.outcome, chip) {
                point.power = Some(power::power_fit(point, chip, mw, target));
            }
        }
    }
    sort_entries(&mut entries, request);
    Ok(entries)
}

/// What stays the same while one workload is planned on every chip, and the buffers its
/// pricings reuse.
struct Planner<'a> {
    workload: &'a Workload,
    request: &'a PlanRequest,
    /// The batch param.
    batch: usize,
    /// The parallel dimensions the workload has (tensor, pipeline, expert), and their params.
    kinds: Vec<ScenarioParam>,
    dims: Vec<usize>,
    ev: Evaluation,
    costs: Vec<KernelCost>,
    /// The request's scenario under the engine being searched.
    scenario: Scenario,
}

impl Planner<'_> {
    /// Where no layout within one node of `domain` chips fits: an entry per multi-node
    /// layout ([`nodes::layouts_over`]) over the fewest nodes at which one fits, and over twice
    /// as many, so that the larger deployments are ranked beside the smallest; none when no
    /// node count tried fits.
    fn beyond_one_node(&mut self, chip: &Chip, domain: u64, dtypes: Types) -> Vec<PlanEntry> {
        let mut found: Vec<PlanEntry> = Vec::new();
        for nodes in nodes::NODE_COUNTS {
            let layouts = nodes::layouts_over(&self.kinds, domain, nodes);
            let at_nodes: Vec<PlanEntry> = (layouts.iter())
                .map(|layout| self.entry(chip, std::slice::from_ref(layout), dtypes))
                .collect();
            // The node counts double: the one after the fewest that fit is twice as many.
            let smallest_found = !found.is_empty();
            if smallest_found || at_nodes.iter().any(|e| e.outcome.is_ok()) {
                found.extend(at_nodes);
            }
            if smallest_found {
                break;
            }
        }
        found
    }

    /// The cheapest of the best points of `chip` with `dtypes` over `layouts`, or why none
    /// meets the request (the last layout's reason).
    fn entry(&mut self, chip: &Chip, layouts: &[Vec<u64>], dtypes: Types) -> PlanEntry {
        let mut best: Option<PlanPoint> = None;
        let mut reason = String::new();
        for layout in layouts {
            match self.best_at(chip, dtypes, layout) {
                Ok(mut point) => {
                    point.layout = layout_name(self.workload, &self.dims, layout);
                    let target = self.request.target_tokens_per_s.is_some();
                    let view = chip.cost_model().view();
                    let better = (best.as_ref()).is_none_or(|b| better(&point, b, target, view));
                    if better {
                        best = Some(point);
                    }
                }
                Err(PlanError::Price(e)) => reason = first_line(&e.to_string()),
                Err(PlanError::Infeasible(why)) => {
                    reason = match layout_name(self.workload, &self.dims, layout) {
                        name if name.is_empty() => why,
                        name => format!("at {name}: {why}"),
                    }
                }
            }
        }
        PlanEntry {
            chip: chip.id.clone(),
            engine: self.scenario.engine_id_on(chip).to_owned(),
            costing: Costing::of(chip),
            dtypes,
            outcome: best.ok_or(reason),
        }
    }

    /// The best point of `chip` with `dtypes` at one layout: a size per parallel dimension.
    fn best_at(
        &mut self,
        chip: &Chip,
        dtypes: Types,
        layout: &[u64],
    ) -> Result<PlanPoint, PlanError> {
        let mut scenario = self.scenario.clone();
        scenario.set_types(dtypes);
        for (&param, &size) in self.dims.iter().zip(layout) {
            scenario.set_param(param, size as f64)?;
        }
        let (workload, batch) = (self.workload, self.batch);
        let (ev, costs) = (&mut self.ev, &mut self.costs);
        let mut at = |b: u64| -> Result<StepSummary, Error> {
            scenario.set_param(batch, b as f64)?;
            price_step(workload, chip, &scenario, ev, costs)
        };
        let tokens = (self.request.assumed.iter())
            .find(|(name, _)| name == ScenarioParam::Tokens.name())
            .map(|(_, v)| *v);
        let band = band::of_step(self.request.scenario.mode(), tokens, chip.family());
        best_point(self.request, chip, band, &mut at)
    }
}

/// By `sort`: priced entries by what they cost ([`PlanPoint::cost`]), by chips, or by
/// time per output token; unpriced ones after the priced (cost), then the infeasible. A stable
/// sort keeps the order given among equals.
fn sort_entries(entries: &mut [PlanEntry], request: &PlanRequest) {
    let (sort, target) = (request.sort, request.target_tokens_per_s.is_some());
    let key = |e: &PlanEntry| match (&e.outcome, sort) {
        (Err(_), _) => (3, 0.0),
        (Ok(p), PlanSort::Cost) => match p.cost(target, e.costing.model.view()) {
            Some(usd) => (0, usd),
            None => (1, p.chips as f64),
        },
        (Ok(p), PlanSort::Chips) => (0, p.chips as f64),
        (Ok(p), PlanSort::Latency) => {
            let ms = p.summary.ms_per_token.unwrap_or(f64::INFINITY);
            (0, ms * p.slow_factor(request.conservative))
        }
    };
    entries.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
}

/// Every layout of `dims` parallel dimensions: powers of two whose product is at most `domain`.
pub(crate) fn layouts(dims: usize, domain: u64) -> Vec<Vec<u64>> {
    let mut all = vec![Vec::new()];
    for _ in 0..dims {
        all = all
            .into_iter()
            .flat_map(|prefix: Vec<u64>| {
                let used: u64 = prefix.iter().product();
                (0..7)
                    .map(|p| 1u64 << p)
                    .filter(move |s| used * s <= domain.max(1))
                    .map(move |s| {
                        let mut next = prefix.clone();
                        next.push(s);
                        next
                    })
            })
            .collect();
    }
    all
}

/// `tp=4 pp=2`, naming only the dimensions above 1.
pub(crate) fn layout_name(workload: &Workload, dims: &[usize], layout: &[u64]) -> String {
    dims.iter()
        .zip(layout)
        .filter(|(_, s)| **s > 1)
        .map(|(d, s)| format!("{}={s}", workload.params[*d].name))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether layout `a` is the better answer than `b` on one chip: cheaper where both are
/// priced ([`PlanPoint::cost`]), else more tokens per second per chip.
fn better(a: &PlanPoint, b: &PlanPoint, target: bool, view: CostView) -> bool {
    match (a.cost(target, view), b.cost(target, view)) {
        (Some(x), Some(y)) => x < y,
        _ => {
            let rate = |p: &PlanPoint| p.summary.tokens_per_s_per_chip.unwrap_or(0.0);
            rate(a) > rate(b)
        }
    }
}

impl PlanPoint {
    /// What its step time is multiplied by where a plan is conservative: the slow end of its
    /// band (1 without one, or where the plan is not conservative).
    pub fn slow_factor(&self, conservative: bool) -> f64 {
        match (conservative, self.band) {
            (true, Some(b)) => b.high,
            _ => 1.0,
        }
    }

    /// What ranks it by cost: with a target, what the chips it needs cost per hour (whole
    /// replicas, so not quite in proportion to $ per token); without, $ per million tokens.
    pub fn cost(&self, target: bool, view: CostView) -> Option<f64> {
        match target {
            true => self.usd_per_hour,
            false => self.usd_per_million(view),
        }
    }

    /// A million tokens in `view`, where priced.
    pub fn usd_per_million(&self, view: CostView) -> Option<f64> {
        match view {
            CostView::Cloud => self.cloud_usd_per_million_tokens,
            CostView::Tco => self.tco_usd_per_million_tokens,
        }
    }
}

enum PlanError {
    Price(Error),
    Infeasible(String),
}

impl From<Error> for PlanError {
    fn from(e: Error) -> Self {
        PlanError::Price(e)
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or(text).to_owned()
}
