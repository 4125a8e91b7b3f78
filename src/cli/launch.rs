//! The serving engines' launch settings of a planned fleet (`plan --rate`), and the step's
//! token budget that both `plan --rate` and `serving` state in their header. A leaf: it
//! imports no other module of the command line.

use anyhow::Result;

use crate::base::dtype::{DType, Role};
use crate::base::param::ScenarioParam;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::workload::Workload;
use crate::export::launch::{launch, Launch, LaunchLayout, Vendor};
use crate::study::plan;
use crate::study::serving::{Fleet, RequestShape, ServingQuery};

/// The workload's `max_batched_tokens` at `scenario`, as the header's `assumes:` shows it.
pub(crate) fn batched_tokens(
    workload: &Workload,
    scenario: &Scenario,
) -> Result<Vec<(String, f64)>> {
    Ok(plan::assumptions(workload, scenario)?
        .into_iter()
        .filter(|(n, _)| n == ScenarioParam::MaxBatchedTokens.name())
        .collect())
}

/// The launch settings of the fleet's instances: one set, or with prefill apart one per
/// pool under its name.
pub(crate) fn launches(
    decode: LaunchLayout,
    fleet: &Fleet,
    shape: RequestShape,
) -> Result<Vec<(Option<&'static str>, LaunchLayout, Launch)>> {
    if fleet.prefill_instances == 0 {
        let settings = launch(&decode)?;
        return Ok(vec![(None, decode, settings)]);
    }
    let prefill = prefill_launch(&decode, fleet, shape);
    let (p, d) = (launch(&prefill)?, launch(&decode)?);
    Ok(vec![
        (Some("prefill pool"), prefill, p),
        (Some("decode pool"), decode, d),
    ])
}

/// The prefill pool's launch settings: the decode pool's with the prefill layout, its
/// instances, and as many sequences as prompts fit a step's token budget.
fn prefill_launch(decode: &LaunchLayout, fleet: &Fleet, shape: RequestShape) -> LaunchLayout {
    let prompts = (decode.max_batched_tokens / shape.input_tokens.max(1)).max(1);
    LaunchLayout {
        tp: fleet.prefill_tp,
        pp: fleet.prefill_pp,
        ep: fleet.prefill_ep,
        dp: fleet.prefill_instances,
        max_seqs: prompts,
        ..decode.clone()
    }
}

/// The fleet's instance as serving engines' launch settings: its layout, the most requests in
/// flight within the bounds, the step's token budget, the types and the chip's vendor.
pub(crate) fn launch_layout(
    workload: &Workload,
    chips: &[Chip],
    fleet: &Fleet,
    checkpoint: Types,
    budget: f64,
    query: &ServingQuery,
) -> LaunchLayout {
    let chip = chips.iter().find(|c| c.id() == fleet.chip);
    LaunchLayout {
        model_name: workload.name.clone(),
        model_id: None,
        checkpoint: checkpoint.role(Role::Weight),
        weight: fleet.dtypes.role(Role::Weight),
        kv: fleet.dtypes.role(Role::Kv),
        activation: fleet.dtypes.role(Role::Activation),
        fp8_math: chip.is_some_and(|c| c.matrix_peak(DType::Fp8).is_ok()),
        tp: fleet.tp,
        pp: fleet.pp,
        ep: fleet.ep,
        dp: fleet.instances,
        moe: workload.param(ScenarioParam::Ep).is_some(),
        max_seqs: fleet.max_concurrency,
        max_batched_tokens: budget as u64,
        memory_utilization: query.scenario.memory_utilization(),
        vendor: Vendor::of_family(chip.and_then(|c| c.family())),
    }
}
