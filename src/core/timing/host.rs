//! A serving engine's host work in a step (expected mode): scheduling, preparing the inputs,
//! launching the step (or replaying its graph), sampling and processing the outputs, which
//! the chip waits for between one step's kernels and the next's, less what the engine hides
//! behind the chip's work.

use crate::base::param::ScenarioParam;
use crate::core::chip::Chip;
use crate::core::engine::Engine;
use crate::core::scenario::{Mode, Scenario};
use crate::core::workload::{Evaluation, Workload};

/// The host work one replica's serving engine does for one step that the chip waits for, in
/// expected mode. The work is `H = share x (step + sequence x sequences)`: `step` and
/// `sequence` the engine's host terms (its `host`, else the chip file's fitted
/// `expected.host_step` and `expected.host_sequence`), `sequences` those the replica steps
/// (the workload's `sequences` over its data-parallel replicas, each with its own engine),
/// `share` the workload's `engine_host` (1 in every model template; 0 for a bare compiled loop
/// such as gpt-fast's, whose graph replays back to back), or where the scenario does not set
/// it, the engine's default.
///
/// An engine that overlaps (`host.overlap`, a share `o`) prepares step `n + 1` while the chip
/// runs step `n`: `o x H` can hide, but only behind the chip's own work, `gpu_s`. The chip
/// waits for `H - min(o x H, gpu_s)`: at `o = 1` the step takes `max(gpu_s, H)`, as an
/// asynchronous scheduler's does; at `o = 0` it takes `gpu_s + H`, the synchronous loop.
/// A workload without the `engine_host` param (a lone kernel's benchmark) runs no engine;
/// roofline mode and a chip file without the figures price none.
pub(super) fn host_s(
    workload: &Workload,
    chip: &Chip,
    ev: &Evaluation,
    scenario: &Scenario,
    gpu_s: f64,
) -> f64 {
    let mode = scenario.mode();
    let Some(a) = chip.expected().filter(|_| mode == Mode::Expected) else {
        return 0.0;
    };
    let value = |p| workload.param(p).map(|i| ev.params[i]);
    let Some(index) = workload.param(ScenarioParam::EngineHost) else {
        return 0.0;
    };
    let engine = scenario.engine_on(chip);
    let set = || scenario.overrides().iter().any(|&(i, _)| i == index);
    let share = match engine {
        Some(e) if !set() => e.terms().engine_host,
        _ => ev.params[index],
    };
    let replicas = value(ScenarioParam::Dp).unwrap_or(1.0).max(1.0);
    let sequences = (ev.sequences.or(value(ScenarioParam::Batch))).unwrap_or(1.0) / replicas;
    let (step_s, sequence_s, overlap) = terms(engine, a.host_step_s, a.host_sequence_s);
    let work_s = share * (step_s + sequence_s * sequences);
    work_s - (overlap * work_s).min(gpu_s)
}

/// The host terms `(step, sequence, overlap)`: the engine's, else the chip's fitted step and
/// sequence terms with the engine's `host_overlap` hidden (nothing without an engine).
fn terms(engine: Option<&Engine>, chip_step_s: f64, chip_sequence_s: f64) -> (f64, f64, f64) {
    match engine.map(|e| (e.terms().host, e.terms().host_overlap)) {
        Some((Some(h), _)) => (h.step_s, h.sequence_s, h.overlap),
        Some((None, overlap)) => (chip_step_s, chip_sequence_s, overlap),
        None => (chip_step_s, chip_sequence_s, 0.0),
    }
}
