//! Serving surveyed: every chip, choice of types and layout asked for, at every concurrency,
//! and the frontier of what they offer.

use std::ops::ControlFlow;

use serde::Serialize;

use super::pools::{check_prefill_sets, prefill_pools, price_way, ways, PrefillOption, Way};
use super::{
    frontier, KvLink, RequestShape, Server, ServingBand, ServingError, ServingOptions, ServingPoint,
};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::timing::IterationPricer;
use crate::core::workload::Workload;
use crate::study::plan::nodes::{layouts_over, NODE_COUNTS};
use crate::study::plan::{layout_name, layouts};

/// Why prefill apart has no pool: one prompt fits no layout's memory.
pub(crate) const NO_PREFILL_POOL: &str = "no layout tried fits one prompt's prefill";

/// Which layouts a survey prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutChoice {
    /// The scenario's own (`--set tp=4`).
    Given,
    /// Per chip and types, the layout of fewest chips on which one request fits, as
    /// practitioners start.
    Smallest,
    /// Every layout within the chip's scale-up domain, and past it over 2 to 16 domains on
    /// a chip with a network (a frontier's search).
    All,
}

/// Whether prompts are prefilled where sequences decode, on instances of their own, or both
/// ways (each point priced both ways).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Disagg {
    #[default]
    Off,
    On,
    Auto,
}

impl Disagg {
    /// Whether prefill is apart, for each way a point is priced.
    pub fn ways(self) -> &'static [bool] {
        match self {
            Disagg::Off => &[false],
            Disagg::On => &[true],
            Disagg::Auto => &[false, true],
        }
    }
}

/// The model that drafts tokens for speculative decoding.
pub enum Draft<'a> {
    /// A one-layer step of the served model itself, with its embedding and head (DeepSeek-V3's
    /// multi-token-prediction module, or an EAGLE-style head).
    OneLayer,
    /// Another workload, priced at its own scenario on the same chips.
    Workload(&'a Workload, &'a Scenario),
}

/// What a serving survey asks.
pub struct ServingQuery<'a> {
    pub shape: RequestShape,
    /// Requests in flight, each priced.
    pub concurrency: Vec<u64>,
    /// The scenario priced; its types are replaced by each choice, its layout by each
    /// layout the choice tries.
    pub scenario: Scenario,
    pub dtype_choices: Vec<Types>,
    pub layouts: LayoutChoice,
    pub options: ServingOptions,
    /// The drafter, with `options.speculation`.
    pub draft: Option<Draft<'a>>,
    pub disagg: Disagg,
    /// How a disaggregated prompt's cache reaches its decode instance.
    pub kv_link: KvLink,
    /// The prefill pool's layout where prefill is apart (`tp=2`: degrees not named are 1);
    /// empty to choose it as [`LayoutChoice`] chooses the decode layout.
    pub prefill_sets: Vec<(String, f64)>,
}

/// One priced point: chip, types, layout and concurrency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingRow {
    pub chip: String,
    pub dtypes: Types,
    /// `tp=4 ep=2`; empty for one chip.
    pub layout: String,
    /// The prefill pool's layout, where prefill is apart.
    pub prefill_layout: Option<String>,
    /// The concurrency asked for, where memory capped it to the point's.
    pub capped_from: Option<u64>,
    pub point: ServingPoint,
    /// The 80 % band of its times and rates (none in roofline mode).
    #[serde(skip)]
    pub band: Option<ServingBand>,
}

/// Why a chip, types and layout gave no row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub chip: String,
    pub dtypes: Types,
    pub layout: String,
    pub why: String,
}

/// A survey's rows in the order chips, types, layouts and concurrencies were given, and what
/// was left out.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Survey {
    pub rows: Vec<ServingRow>,
    pub skipped: Vec<Skipped>,
}

/// Prices `query` on every chip.
pub fn survey(workload: &Workload, chips: &[Chip], query: &ServingQuery) -> Result<Survey, Error> {
    if query.concurrency.is_empty() || query.concurrency.contains(&0) {
        return Err(Error::value(
            "--concurrency: give one or more numbers of requests in flight, each at least 1",
        ));
    }
    query.options.check()?;
    servable(workload)?;
    check_prefill_sets(workload, query)?;
    let mut survey = Survey::default();
    for chip in chips {
        for dtypes in &query.dtype_choices {
            let (mut found, mut reasons) = (false, Vec::new());
            let pools = prefill_pools(workload, chip, *dtypes, query)?;
            if query.disagg == Disagg::On && pools.is_empty() {
                survey.skipped.push(Skipped {
                    chip: chip.id().to_owned(),
                    dtypes: *dtypes,
                    layout: "any layout".to_owned(),
                    why: NO_PREFILL_POOL.to_owned(),
                });
                continue;
            }
            serve_layouts(workload, chip, *dtypes, query, &mut |layout, server| {
                let priced = server.and_then(|s| serve_concurrencies(s, query, &pools));
                let why =
                    match priced {
                        Ok(points) if !points.is_empty() => {
                            found = true;
                            survey.rows.extend(points.into_iter().map(
                                |(capped_from, way, point)| ServingRow {
                                    chip: chip.id().to_owned(),
                                    dtypes: *dtypes,
                                    layout: layout.name.clone(),
                                    prefill_layout: prefill_name(way, &pools),
                                    capped_from,
                                    point,
                                    band: ServingBand::of(query.scenario.mode, chip.family()),
                                },
                            ));
                            return match query.layouts {
                                LayoutChoice::Smallest => ControlFlow::Break(()),
                                _ => ControlFlow::Continue(()),
                            };
                        }
                        Ok(_) => "one request does not fit".to_owned(),
                        Err(e) => first_line(&e.to_string()),
                    };
                reasons.push(Skipped {
                    chip: chip.id().to_owned(),
                    dtypes: *dtypes,
                    layout: layout.name.clone(),
                    why,
                });
                ControlFlow::Continue(())
            })?;
            // Layouts that did not serve are news only when none did; of a search, the
            // largest one's reason says the most.
            if !found {
                match query.layouts {
                    LayoutChoice::Given => survey.skipped.extend(reasons),
                    _ => survey.skipped.extend(reasons.pop()),
                }
            }
        }
    }
    Ok(survey)
}

/// Whether `workload` has the params serving sets (sequences, their new tokens, their
/// context), or which it lacks.
pub(crate) fn servable(workload: &Workload) -> Result<(), Error> {
    for p in [
        ScenarioParam::Batch,
        ScenarioParam::Tokens,
        ScenarioParam::Context,
    ] {
        workload.require(p, "it cannot serve requests")?;
    }
    Ok(())
}

/// The parallel degrees `scenario` gives the `dims` params.
fn given_layout(
    workload: &Workload,
    dims: &[usize],
    scenario: &Scenario,
) -> Result<Vec<u64>, Error> {
    let mut ev = workload.new_evaluation();
    workload.evaluate(&scenario.overrides, &mut ev)?;
    Ok(dims
        .iter()
        .map(|&d| ev.params[d].round().max(1.0) as u64)
        .collect())
}

/// A layout as [`serve_layouts`] names it: `tp=4 ep=2`, and each parallel degree.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub name: String,
    pub sizes: Vec<(ScenarioParam, u64)>,
}

impl Layout {
    /// The degree of `p` (1 where the layout does not set it).
    pub fn size(&self, p: ScenarioParam) -> u64 {
        (self.sizes.iter())
            .find(|(q, _)| *q == p)
            .map_or(1, |(_, s)| *s)
    }
}

/// What [`serve_layouts`] calls per layout: its server, or why none could be made; a break
/// ends the layouts.
pub(crate) type VisitLayout<'f> =
    dyn FnMut(&Layout, Result<&mut Server, ServingError>) -> ControlFlow<()> + 'f;

/// Calls `f` with the name and the server (or why none could be made) of each layout `query`
/// tries on `chip` with `dtypes`: every one within the chip's scale-up domain, fewest chips
/// first, or the scenario's own; until `f` breaks.
pub(crate) fn serve_layouts(
    workload: &Workload,
    chip: &Chip,
    dtypes: Types,
    query: &ServingQuery,
    f: &mut VisitLayout,
) -> Result<(), Error> {
    let named: Vec<(ScenarioParam, usize)> = (ScenarioParam::LAYOUT.iter())
        .filter_map(|d| Some((*d, workload.param(*d)?)))
        .collect();
    let dims: Vec<usize> = named.iter().map(|(_, i)| *i).collect();
    let kinds: Vec<ScenarioParam> = named.iter().map(|(p, _)| *p).collect();
    for layout in layouts_of(workload, chip, (&dims, &kinds), query)? {
        let mut scenario = query.scenario.clone();
        scenario.dtypes = dtypes;
        let sizes = layout.iter().map(|&s| s as f64);
        scenario.overrides.extend(dims.iter().copied().zip(sizes));
        let server = server_for(workload, chip, &scenario, query);
        let named = Layout {
            name: layout_name(workload, &dims, &layout),
            sizes: named.iter().map(|(p, _)| *p).zip(layout).collect(),
        };
        let flow = match server {
            Ok(mut server) => f(&named, Ok(&mut server)),
            Err(e) => f(&named, Err(e)),
        };
        if flow.is_break() {
            break;
        }
    }
    Ok(())
}

/// The layouts `query` tries on `chip`: the scenario's own, or every one within the chip's
/// scale-up domain, fewest chips first (tensor parallelism first among as many), then, on a
/// chip with a network to reach past its domain, those over 2 to 16 domains as practitioners
/// lay them (tensor parallelism within a node by pipeline stages or expert groups across
/// nodes, or wide expert parallelism: [`layouts_over`]). `dims` are the parallel params'
/// indices and kinds.
fn layouts_of(
    workload: &Workload,
    chip: &Chip,
    (dims, kinds): (&[usize], &[ScenarioParam]),
    query: &ServingQuery,
) -> Result<Vec<Vec<u64>>, Error> {
    if query.layouts == LayoutChoice::Given {
        return Ok(vec![given_layout(workload, dims, &query.scenario)?]);
    }
    let domain = (chip.interconnect.as_ref())
        .and_then(|i| i.domain)
        .unwrap_or(1);
    let mut all = layouts(dims.len(), domain);
    // Fewest chips first; among as many chips, tensor parallelism before pipeline stages or
    // expert groups, as engines lay out one node by default (vLLM's and SGLang's `--tp`): a
    // decode step's pipeline runs its stages one after another, so the smallest search's
    // first fit must not be `pp=8` where `tp=8` serves on the same chips.
    let tp = kinds.iter().position(|k| *k == ScenarioParam::Tp);
    all.sort_by_key(|l| {
        let chips: u64 = l.iter().product();
        (chips, chips / tp.map_or(1, |i| l[i]))
    });
    if chip.network.is_some() {
        for nodes in NODE_COUNTS {
            for layout in layouts_over(kinds, domain, nodes) {
                if !all.contains(&layout) {
                    all.push(layout);
                }
            }
        }
    }
    Ok(all)
}

/// The server of `scenario`: the target's iterations, the draft's, and the token budget.
pub(super) fn server_for<'a>(
    workload: &'a Workload,
    chip: &'a Chip,
    scenario: &Scenario,
    query: &'a ServingQuery,
) -> Result<Server<'a>, ServingError> {
    let target = IterationPricer::new(workload, chip, scenario)?;
    let draft = match &query.draft {
        None => None,
        Some(Draft::OneLayer) => Some(IterationPricer::new(
            workload,
            chip,
            &one_layer_draft(workload, scenario),
        )?),
        Some(Draft::Workload(w, s)) => {
            let mut s = (*s).clone();
            copy_layout(workload, scenario, w, &mut s);
            Some(IterationPricer::new(w, chip, &s)?)
        }
    };
    let budget = max_batched_tokens(workload, scenario)?;
    Ok(Server::new(chip, target, draft, budget, query.options)?)
}

/// A priced point: the concurrency asked for where it was capped, the way it was priced, and
/// the point.
type Priced = (Option<u64>, Way, ServingPoint);

/// Every concurrency of `query` on one server, each way it prices (prefill apart on each of
/// `pools`); one above the most that fits is priced at that most instead (once). Empty when
/// one request does not fit.
fn serve_concurrencies(
    server: &mut Server,
    query: &ServingQuery,
    pools: &[PrefillOption],
) -> Result<Vec<Priced>, ServingError> {
    let mut points: Vec<Priced> = Vec::new();
    for &c in &query.concurrency {
        for way in ways(query.disagg, pools) {
            let at = |server: &mut Server, c| price_way(server, way, pools, query, c);
            at_concurrency(server, c, way, &mut points, at)?;
        }
    }
    Ok(points)
}

/// The name of the prefill pool a point of `way` was priced with.
fn prefill_name(way: Way, pools: &[PrefillOption]) -> Option<String> {
    match way {
        Way::Together => None,
        Way::Apart(i) => Some(pools[i].layout.name.clone()),
    }
}

/// Prices `c` in flight with `at` into `points`; where they do not fit, the most that do
/// instead (once).
fn at_concurrency(
    server: &mut Server,
    c: u64,
    way: Way,
    points: &mut Vec<Priced>,
    at: impl Fn(&mut Server, u64) -> Result<ServingPoint, ServingError>,
) -> Result<(), ServingError> {
    // Over the token budget is as out of reach as over memory.
    let served = |r: Result<ServingPoint, ServingError>| match r {
        Ok(p) => Ok(Some(p)),
        Err(ServingError::OverBudget { .. }) => Ok(None),
        Err(e) => Err(e),
    };
    let point = served(at(server, c))?;
    if let Some(p) = point.as_ref().filter(|p| p.fits) {
        points.push((None, way, p.clone()));
        return Ok(());
    }
    // The most in flight that fit: memory's estimate bounds it, then a bisection (fitting
    // gets no easier as sequences are added).
    let one = match served(at(server, 1))? {
        Some(one) if one.fits => one,
        _ => return Ok(()),
    };
    let (mut lo, mut hi) = (1, c);
    if let Some(most) = one.max_concurrency.filter(|m| (1..c).contains(m)) {
        match served(at(server, most))? {
            Some(p) if p.fits => lo = most,
            _ => hi = most,
        }
    }
    let mut best = None;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match served(at(server, mid))? {
            Some(p) if p.fits => (lo, best) = (mid, Some(p)),
            _ => hi = mid,
        }
    }
    let best = match best {
        Some(p) => p,
        None if lo == 1 => one,
        None => at(server, lo)?,
    };
    let seen = |(_, w, p): &Priced| p.concurrency == lo && *w == way;
    if !points.iter().any(seen) {
        points.push((Some(c), way, best));
    }
    Ok(())
}

/// The scenario of a one-layer draft of `workload`: one layer, of the kind its last layers
/// are (no dense-FFN or sliding-window layers; in a hybrid state-space model, whose layers
/// are single mixers counted by kind, the Mamba-2 and MLP layers its pattern ends with).
pub fn one_layer_draft(workload: &Workload, scenario: &Scenario) -> Scenario {
    let mut s = scenario.clone();
    for (name, value) in [
        ("layers", 1.0),
        ("dense_layers", 0.0),
        ("local_layers", 0.0),
        ("mamba_layers", 1.0),
        ("attn_layers", 0.0),
        ("mlp_layers", 1.0),
    ] {
        if let Ok(i) = workload.param_index(name) {
            s.overrides.push((i, value));
        }
    }
    s
}

/// Gives `draft`'s scenario the parallel degrees `scenario` gives `workload`, where the draft
/// has the same params: a draft runs on the target's chips.
fn copy_layout(workload: &Workload, scenario: &Scenario, draft: &Workload, into: &mut Scenario) {
    let mut ev = workload.new_evaluation();
    if workload.evaluate(&scenario.overrides, &mut ev).is_err() {
        return;
    }
    for p in [ScenarioParam::Tp, ScenarioParam::Pp] {
        if let (Some(from), Some(to)) = (workload.param(p), draft.param(p)) {
            into.overrides.push((to, ev.params[from]));
        }
    }
}

/// The workload's `max_batched_tokens` at `scenario`, or no limit where it has none.
fn max_batched_tokens(workload: &Workload, scenario: &Scenario) -> Result<f64, Error> {
    let Some(i) = workload.param(ScenarioParam::MaxBatchedTokens) else {
        return Ok(f64::INFINITY);
    };
    let mut ev = workload.new_evaluation();
    workload.evaluate(&scenario.overrides, &mut ev)?;
    Ok(ev.params[i])
}

/// The points of `rows` on each chip's frontier of tokens per second per user against output
/// tokens per second per chip, chips in their first row's order, each by interactivity rising.
pub fn frontier_rows(rows: &[ServingRow]) -> Vec<ServingRow> {
    let mut chips: Vec<&str> = Vec::new();
    for r in rows {
        if !chips.contains(&r.chip.as_str()) {
            chips.push(&r.chip);
        }
    }
    let mut kept = Vec::new();
    for chip in chips {
        let mine: Vec<&ServingRow> = rows.iter().filter(|r| r.chip == chip).collect();
        let best = frontier(
            &mine,
            |r| r.point.tokens_per_s_per_user,
            |r| r.point.output_tokens_per_s_per_chip,
        );
        kept.extend(best.into_iter().map(|i| mine[i].clone()));
    }
    kept
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}
