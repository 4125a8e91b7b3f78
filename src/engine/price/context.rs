//! What every kernel of one scenario is priced against, and the choice of how a kernel is
//! priced: on the links or on compute and memory.

use super::collective::price_collective;
use super::kernel::price_kernel;
use super::KernelCost;
use crate::base::error::Error;
use crate::base::param::ScenarioParam;
use crate::base::types::Types;
use crate::engine::chip::Chip;
use crate::engine::scenario::{Mode, Scenario};
use crate::engine::workload::{Evaluation, Kernel, OpKind, Workload};

impl<'a> Context<'a> {
    pub(super) fn new(
        workload: &'a Workload,
        chip: &'a Chip,
        ev: &'a Evaluation,
        scenario: &'a Scenario,
    ) -> Context<'a> {
        Context {
            workload,
            chip,
            ev,
            dtypes: &scenario.dtypes,
            mode: scenario.mode,
            launch_s: chip.kernel_launch_s(eager(workload, ev)),
        }
    }
}

/// Whether the step carries prompt tokens (`tokens` above 1, or a mixed step's
/// `prefill_tokens`), and so runs its kernels launched one by one from the host: serving
/// engines replay CUDA graphs captured for decode batches only, and run a step with prompt
/// tokens eagerly (docs/sources.md, kernel physics 3). A workload without these params (a lone
/// kernel) is neither.
pub(super) fn eager(workload: &Workload, ev: &Evaluation) -> bool {
    let value = |p| workload.param(p).map_or(0.0, |i| ev.params[i]);
    value(ScenarioParam::Tokens) > 1.0 || value(ScenarioParam::PrefillTokens) > 0.0
}

/// What every kernel of one scenario is priced against.
pub(super) struct Context<'a> {
    pub(super) workload: &'a Workload,
    pub(super) chip: &'a Chip,
    /// The scenario's numbers.
    pub(super) ev: &'a Evaluation,
    pub(super) dtypes: &'a Types,
    pub(super) mode: Mode,
    /// The fixed cost of each kernel's launch in this step: eager or inside a graph.
    pub(super) launch_s: f64,
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
