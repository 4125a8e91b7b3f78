//! A serving engine's host work in a step (expected mode): scheduling, preparing the inputs,
//! launching the step (or replaying its graph), sampling and processing the outputs, which
//! the chip waits for between one step's kernels and the next's.

use crate::base::param::ScenarioParam;
use crate::core::chip::Chip;
use crate::core::scenario::Mode;
use crate::core::workload::{Evaluation, Workload};

/// The host work one replica's serving engine does for one step that the chip waits for, in
/// expected mode: the chip file's `expected.host_step`, plus `expected.host_sequence` for each
/// sequence the replica steps (the workload's `sequences` over its data-parallel replicas,
/// each with its own engine), times the workload's `engine_host` share (1 in every model
/// template; 0 for a bare compiled loop such as gpt-fast's, whose graph replays back to back).
/// A workload without that param (a lone kernel's benchmark) runs no engine; roofline mode and
/// a file without the figures price none.
pub(super) fn host_s(workload: &Workload, chip: &Chip, ev: &Evaluation, mode: Mode) -> f64 {
    let Some(a) = chip.expected().filter(|_| mode == Mode::Expected) else {
        return 0.0;
    };
    let value = |p| workload.param(p).map(|i| ev.params[i]);
    let Some(share) = value(ScenarioParam::EngineHost) else {
        return 0.0;
    };
    let replicas = value(ScenarioParam::Dp).unwrap_or(1.0).max(1.0);
    let sequences = (ev.sequences.or(value(ScenarioParam::Batch))).unwrap_or(1.0) / replicas;
    share * (a.host_step_s + a.host_sequence_s * sequences)
}
