//! The layouts a query tries on a chip (the scenario's own, or every one within the chip's
//! scale-up domain and past it over nodes, fewest chips first) and the server of each: the
//! target's iterations, the draft's, and the token budget. A survey, a fleet plan and the
//! prefill pools walk them alike.

use std::ops::ControlFlow;

use super::query::{Draft, LayoutChoice, ServingQuery};
use super::{Server, ServingError, Speculation};
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::timing::IterationPricer;
use crate::core::workload::Workload;
use crate::study::plan::nodes::{layouts_over, NODE_COUNTS};
use crate::study::plan::{layout_name, layouts};

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
    workload.evaluate(scenario.overrides(), &mut ev)?;
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
    pub(super) fn size(&self, p: ScenarioParam) -> u64 {
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
        scenario.set_types(dtypes);
        for (&param, &size) in dims.iter().zip(&layout) {
            scenario.set_param(param, size as f64)?;
        }
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
    let verify = absorbed_verify(workload, chip, scenario, query.options.speculation)?;
    let scenario = verify.as_ref().unwrap_or(scenario);
    let target = IterationPricer::new(workload, chip, scenario)?;
    let draft = match &query.draft {
        None => None,
        Some(Draft::OneLayer) => Some(IterationPricer::new(
            workload,
            chip,
            &one_layer_draft(workload, scenario)?,
        )?),
        Some(Draft::Workload(w, s)) => {
            let mut s = (*s).clone();
            copy_layout(workload, scenario, w, &mut s)?;
            Some(IterationPricer::new(w, chip, &s)?)
        }
    };
    let budget = max_batched_tokens(workload, scenario)?;
    Ok(Server::new(chip, target, draft, budget, query.options)?)
}

/// With `speculation`, under an engine that verifies an MLA model's `K + 1` drafted tokens in the absorbed
/// (decode) form (`spec.absorbed_mla_verify`, expected mode), the target's scenario with the
/// workload's `absorbed_max_tokens` raised to `K + 1`, so that a verify step is priced as
/// FlashMLA runs it rather than decompressed as a prompt; `None` where nothing changes.
pub(super) fn absorbed_verify(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    speculation: Option<Speculation>,
) -> Result<Option<Scenario>, Error> {
    let (Some(spec), Some(engine)) = (speculation, scenario.engine_on(chip)) else {
        return Ok(None);
    };
    let Ok(i) = workload.param_index("absorbed_max_tokens") else {
        return Ok(None);
    };
    if !engine.terms().spec.absorbed_mla_verify {
        return Ok(None);
    }
    let mut ev = workload.new_evaluation();
    workload.evaluate(scenario.overrides(), &mut ev)?;
    let verify = f64::from(spec.draft_tokens()) + 1.0;
    if ev.params[i] >= verify {
        return Ok(None);
    }
    let mut s = scenario.clone();
    s.set_param(i, verify)?;
    Ok(Some(s))
}

/// The scenario of a one-layer draft of `workload`: one layer, of the kind its last layers
/// are (no dense-FFN or sliding-window layers; in a hybrid state-space model, whose layers
/// are single mixers counted by kind, the Mamba-2 and MLP layers its pattern ends with).
pub fn one_layer_draft(workload: &Workload, scenario: &Scenario) -> Result<Scenario, Error> {
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
            s.set_param(i, value)?;
        }
    }
    Ok(s)
}

/// Gives `draft`'s scenario the parallel degrees `scenario` gives `workload`, where the draft
/// has the same params: a draft runs on the target's chips.
fn copy_layout(
    workload: &Workload,
    scenario: &Scenario,
    draft: &Workload,
    into: &mut Scenario,
) -> Result<(), Error> {
    let mut ev = workload.new_evaluation();
    if workload.evaluate(scenario.overrides(), &mut ev).is_err() {
        return Ok(());
    }
    for p in [ScenarioParam::Tp, ScenarioParam::Pp] {
        if let (Some(from), Some(to)) = (workload.param(p), draft.param(p)) {
            into.set_param(to, ev.params[from])?;
        }
    }
    Ok(())
}

/// The workload's `max_batched_tokens` at `scenario`, or no limit where it has none.
fn max_batched_tokens(workload: &Workload, scenario: &Scenario) -> Result<f64, Error> {
    let Some(i) = workload.param(ScenarioParam::MaxBatchedTokens) else {
        return Ok(f64::INFINITY);
    };
    let mut ev = workload.new_evaluation();
    workload.evaluate(scenario.overrides(), &mut ev)?;
    Ok(ev.params[i])
}
