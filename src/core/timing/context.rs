//! What every kernel of one scenario is priced against, and the choice of how a kernel is
//! priced: on the links or on compute and memory.

use super::collective::price_collective;
use super::kernel::price_kernel;
use super::KernelCost;
use crate::base::error::Error;
use crate::base::param::{Launch, ScenarioParam};
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::engine::Engine;
use crate::core::scenario::{Mode, Scenario};
use crate::core::workload::{Evaluation, Kernel, OpKind, Workload};

impl<'a> Context<'a> {
    pub(super) fn new(
        workload: &'a Workload,
        chip: &'a Chip,
        ev: &'a Evaluation,
        scenario: &'a Scenario,
        launch: Launch,
    ) -> Context<'a> {
        let engine = engine(scenario, chip);
        Context {
            workload,
            chip,
            ev,
            dtypes: scenario.dtypes(),
            scenario,
            mode: scenario.mode(),
            launch_s: launch_s(chip, launch, engine),
            engine,
        }
    }
}

/// The engine a scenario prices under on `chip` ([`Scenario::engine_on`]): its own, else the
/// chip file's default; none in roofline mode, where every engine prices alike.
pub(super) fn engine<'a>(scenario: &'a Scenario, chip: &'a Chip) -> Option<&'a Engine> {
    scenario.engine_on(chip)
}

/// The fixed cost of one kernel's launch as `launch` times it: none (a profiler's time of the
/// kernel alone), back to back in a CUDA graph (`launch`), or from the host one by one
/// (`eager_launch`, else `launch`); 0 where the chip file gives no figure. Under an engine an
/// eager kernel waits for the longer of the chip's eager launch and the engine's own host time
/// per kernel (`launches.eager`, the framework's dispatch, which includes the driver's launch
/// the chip's figure measures, so the two are not added).
fn launch_s(chip: &Chip, launch: Launch, engine: Option<&Engine>) -> f64 {
    match launch {
        Launch::Excluded => 0.0,
        Launch::Graph => chip.launch_s.unwrap_or(0.0),
        Launch::Eager => {
            let chip_s = chip.eager_launch_s.or(chip.launch_s).unwrap_or(0.0);
            engine.map_or(chip_s, |e| chip_s.max(e.terms().launches.eager_launch_s))
        }
    }
}

/// How the step's kernels are launched. A lone kernel's workload says how its benchmark timed
/// it (`launch_mode`: a profiler's kernel time, a graph's replay, a loop of launches from the
/// host; docs/sources.md, kernel physics 3). A model step carrying prompt tokens (`tokens`
/// above 1, or a mixed step's `prefill_tokens`) runs eagerly, one launch at a time from the
/// host: serving engines replay CUDA graphs captured for decode batches only. Any other step
/// replays its graph; under an engine (expected mode), only where the engine captured a graph
/// for a batch at least as large as the replica's sequences, else eagerly.
///
/// A batch below a captured size runs in that graph, padded to it. The padding is not priced:
/// the padded rows are empty sequences, which add no attention and only rows to GEMMs whose
/// decode time the weights' bytes set.
pub(super) fn launch(workload: &Workload, ev: &Evaluation, engine: Option<&Engine>) -> Launch {
    let value = |p| workload.param(p).map(|i| ev.params[i]);
    if let Some(code) = value(ScenarioParam::LaunchMode) {
        // A value without a mode was refused when the workload was evaluated.
        return Launch::from_code(code).unwrap_or_default();
    }
    let prompt = value(ScenarioParam::Tokens).is_some_and(|t| t > 1.0)
        || value(ScenarioParam::PrefillTokens).is_some_and(|t| t > 0.0);
    if prompt {
        return Launch::Eager;
    }
    let Some(e) = engine else {
        return Launch::Graph;
    };
    let sizes = &e.terms().launches.graph_batch_sizes;
    let replicas = value(ScenarioParam::Dp).unwrap_or(1.0).max(1.0);
    let sequences = ev.sequences.or(value(ScenarioParam::Batch)).unwrap_or(1.0) / replicas;
    match sizes.last() {
        Some(&largest) if sequences <= largest as f64 => Launch::Graph,
        _ => Launch::Eager,
    }
}

/// What every kernel of one scenario is priced against.
pub(super) struct Context<'a> {
    pub(super) workload: &'a Workload,
    pub(super) chip: &'a Chip,
    /// The scenario's numbers.
    pub(super) ev: &'a Evaluation,
    pub(super) dtypes: &'a Types,
    /// The scenario (its engine and kernel path choose each GEMM's fractions).
    pub(super) scenario: &'a Scenario,
    pub(super) mode: Mode,
    /// The fixed cost of each kernel's launch in this step: none, inside a graph or eager.
    pub(super) launch_s: f64,
    /// The serving engine, in expected mode only ([`engine`]).
    pub(super) engine: Option<&'a Engine>,
}

/// Prices one kernel: a lone collective on the links, anything else on compute and memory.
/// Also returns the seconds its FLOPs would take at the MFU reference peaks.
pub(super) fn price_any(cx: &Context, kernel: &Kernel) -> Result<(KernelCost, f64), Error> {
    if let [single] = kernel.members[..] {
        if let OpKind::Collective {
            collective,
            algorithm,
            ..
        } = cx.workload.ops[single].kind
        {
            return Ok((price_collective(cx, kernel, collective, algorithm)?, 0.0));
        }
    }
    price_kernel(cx, kernel)
}
