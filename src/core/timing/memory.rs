//! Memory as a serving engine sees it: of the memory the device reports, the engine takes a
//! share (`memory_utilization`, vLLM's `gpu_memory_utilization`, default 0.9); from that come
//! the runtime's fixed reserve (context, communication buffers, graphs: the chip file's), the
//! weights, the activation workspace sized for `max_batched_tokens` tokens, and what is left
//! holds KV cache. A scenario fits when its KV cache fits in what is left.

use super::context::launch;
use super::Context;
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::ranges;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::workload::{Evaluation, OpKind, Workload, WorkspaceMemo};

/// vLLM's default share of device memory for the engine (`gpu_memory_utilization`,
/// docs/sources.md, serving engines).
pub const DEFAULT_MEMORY_UTILIZATION: f64 = 0.9;

/// Where a step's memory goes on one chip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Memory {
    /// Capacity x memory utilisation.
    pub(super) usable_bytes: f64,
    pub(super) reserve_bytes: f64,
    /// Activations the engine keeps room for: the peak of a step of `max_batched_tokens`
    /// tokens (or the step's own peak, if more); the step's peak where the workload has no
    /// `max_batched_tokens`.
    pub(super) workspace_bytes: f64,
    /// Weights + KV cache + recurrent state + workspace + reserve.
    pub(super) footprint_bytes: f64,
    pub(super) max_batch: Option<u64>,
}

/// The peak activations of a step of `max_batched_tokens` new tokens of one sequence on an
/// empty cache (no other prompt tokens), under `scenario`'s other params, types and fusion
/// plan: the workspace a serving engine keeps, as vLLM's profiling run measures it. Evaluated
/// into `ev` (which the caller evaluates again for its own scenario), and kept in `ev` for the
/// next scenario that differs only in batch, tokens, context or the prefill params. `None`
/// without a `max_batched_tokens` param, or where the workload has no graph at that shape.
pub(super) fn profiled_workspace(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    ev: &mut Evaluation,
) -> Option<f64> {
    let budget_param = workload.param(ScenarioParam::MaxBatchedTokens)?;
    // The profile is a plain prefill: a mixed step's prompt tokens are in its budget.
    let shape = [
        ScenarioParam::Batch,
        ScenarioParam::Tokens,
        ScenarioParam::Context,
        ScenarioParam::PrefillTokens,
        ScenarioParam::PrefillSeqs,
        ScenarioParam::PrefillContext,
    ]
    .map(|p| workload.param(p));
    let others = || (scenario.overrides().iter()).filter(|(i, _)| !shape.contains(&Some(*i)));
    if let Some(memo) = &ev.workspace_memo {
        if memo.fusion == scenario.fusion()
            && memo.types == *scenario.dtypes()
            && others().eq(memo.overrides.iter())
        {
            return memo.bytes;
        }
    }
    let budget = (scenario.overrides().iter())
        .find(|(i, _)| *i == budget_param)
        .map(|(_, v)| *v);
    let mut profile: Vec<(usize, f64)> = scenario.overrides().to_vec();
    let shape_values = [1.0, f64::NAN, 0.0, 0.0, 0.0, 0.0];
    for (param, value) in shape.into_iter().zip(shape_values) {
        if let Some(i) = param {
            profile.push((i, value));
        }
    }
    let bytes = peak_at(workload, chip, scenario, ev, profile, budget);
    // The evaluation now holds the profile's numbers: which ops changed since the last
    // priced scenario is no longer known.
    ev.kernel_memo.set(None, None);
    ev.workspace_memo = Some(WorkspaceMemo {
        overrides: others().copied().collect(),
        fusion: scenario.fusion(),
        types: *scenario.dtypes(),
        bytes,
    });
    bytes
}

/// The peak activation bytes of one kernel of `scenario` at the `profile` overrides, with the
/// `tokens` entry (NaN) set to the budget (`budget`, else the workload's default).
fn peak_at(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    ev: &mut Evaluation,
    mut profile: Vec<(usize, f64)>,
    budget: Option<f64>,
) -> Option<f64> {
    if let Some(at) = profile.iter().position(|(_, v)| v.is_nan()) {
        // The default of `max_batched_tokens` is a number or an expression of other params:
        // evaluate once to learn it, at the profile's shape (the scenario's own may be one
        // the model refuses, a context past its max_positions).
        let budget = match budget {
            Some(b) => b,
            None => {
                let shape: Vec<(usize, f64)> = profile
                    .iter()
                    .filter(|(_, v)| !v.is_nan())
                    .copied()
                    .collect();
                workload.evaluate(&shape, ev).ok()?;
                ev.params[workload.param(ScenarioParam::MaxBatchedTokens)?]
            }
        };
        profile[at].1 = budget;
    }
    workload.evaluate(&profile, ev).ok()?;
    let engine = super::context::engine(scenario, chip);
    let cx = Context::new(workload, chip, ev, scenario, launch(workload, ev, engine));
    let plan = &workload.fusion_plans[scenario.fusion()];
    let peak = (plan.kernels.iter())
        .filter(|k| ev.repeats[k.block] > 0)
        .filter(|k| !matches!(workload.ops[k.members[0]].kind, OpKind::Collective { .. }))
        .map(|k| super::kernel::activation_bytes(&cx, k))
        .fold(0.0f64, f64::max);
    Some(peak)
}

/// What a step keeps in memory on one chip, from its evaluation and its kernels.
#[derive(Debug, Clone, Copy)]
pub(super) struct Resident {
    pub(super) weight_bytes: f64,
    pub(super) kv_bytes: f64,
    /// The part of `kv_bytes` that does not grow with the batch: the cache of a mixed step's
    /// prefilling sequences.
    pub(super) kv_apart_bytes: f64,
    /// Recurrent state (a state-space layer's, per sequence), and the part of it that does
    /// not grow with the batch.
    pub(super) state_bytes: f64,
    pub(super) state_apart_bytes: f64,
    /// The step's peak activations: the most one kernel reads and writes.
    pub(super) activation_bytes: f64,
}

impl Resident {
    /// The weights and KV cache of the scenario evaluated in `ev` under `types`, beside the
    /// step's peak activations.
    pub(super) fn of(
        workload: &Workload,
        ev: &mut Evaluation,
        types: &Types,
        activation_bytes: f64,
    ) -> Resident {
        let (weight_bytes, kv_bytes, kv_apart_bytes) = workload.resident_bytes_kept(ev, types);
        let (state_bytes, state_apart_bytes) = workload.state_split(ev, types);
        Resident {
            weight_bytes,
            kv_bytes,
            kv_apart_bytes,
            state_bytes,
            state_apart_bytes,
            activation_bytes,
        }
    }
}

/// The step's resident bytes and its peak activation bytes, laid out in `chip`'s memory;
/// `workspace` is the profiled workspace ([`profiled_workspace`]).
pub(super) fn memory(
    workload: &Workload,
    chip: &Chip,
    ev: &Evaluation,
    (utilization, workspace): (f64, Option<f64>),
    resident: Resident,
) -> Result<Memory, Error> {
    let Resident {
        weight_bytes,
        kv_bytes,
        kv_apart_bytes,
        state_bytes,
        state_apart_bytes,
        activation_bytes,
    } = resident;
    let usable_bytes = chip.capacity_bytes() * utilization;
    let reserve_bytes = chip.runtime_reserve_bytes();
    // With a workspace sized apart from the batch, only the KV cache grows with it, and of
    // that only the batch's sequences' cache.
    let kv_growing_bytes = kv_bytes - kv_apart_bytes + (state_bytes - state_apart_bytes);
    let kv_apart_bytes = kv_apart_bytes + state_apart_bytes;
    let (workspace_bytes, growing_bytes) = match workspace {
        Some(w) => (w.max(activation_bytes), kv_growing_bytes),
        None => (activation_bytes, kv_growing_bytes + activation_bytes),
    };
    let fixed = match workspace {
        Some(_) => workspace_bytes + kv_apart_bytes,
        None => kv_apart_bytes, // the activations grow with the batch: in `growing_bytes`
    };
    let room = usable_bytes - reserve_bytes - weight_bytes - fixed;
    let max_batch = max_batch(workload, ev, room, growing_bytes)?;
    Ok(Memory {
        usable_bytes,
        reserve_bytes,
        workspace_bytes,
        footprint_bytes: weight_bytes + kv_bytes + state_bytes + workspace_bytes + reserve_bytes,
        max_batch,
    })
}

/// The largest `batch` whose bytes that grow with it (`growing_bytes` at the evaluated batch)
/// fit in `room` with the other bytes that grow with it; `None` without a `batch` param. A
/// count beyond what an integer column holds exactly is an error, never a saturated number.
fn max_batch(
    workload: &Workload,
    ev: &Evaluation,
    room: f64,
    growing_bytes: f64,
) -> Result<Option<u64>, Error> {
    let Some(b) = workload.param(ScenarioParam::Batch) else {
        return Ok(None);
    };
    let batch = ev.params[b];
    let per_sequence = growing_bytes / batch;
    if room < 0.0 || batch <= 0.0 {
        return Ok(Some(0));
    }
    let most = (room / per_sequence).floor();
    if per_sequence > 0.0 && most <= ranges::MAX_COUNT {
        return Ok(Some(most as u64));
    }
    Err(Error::value(format!(
        "the largest batch that fits is a count too large ({most:e}, above 2^53): at batch \
         {batch} the step holds {growing_bytes:e} bytes that grow with the batch, \
         {per_sequence:e} per sequence"
    )))
}
