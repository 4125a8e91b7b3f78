//! A step's totals: its kernels summed, every execution counted, and the summary made of
//! them: rates, utilisations, shares, the memory footprint, and with pipeline stages the
//! schedule of the micro-batches in flight.

use super::{memory, Bound, KernelCost, StepSummary};
use crate::base::error::Error;
use crate::base::format::Scheme;
use crate::core::chip::Chip;
use crate::core::cost::StepCost;
use crate::core::scenario::Scenario;
use crate::core::workload::{Evaluation, KernelSums, Stage, Workload};

/// The step's kernels summed, every execution counted.
#[derive(Default)]
pub(super) struct Totals {
    step_time_s: f64,
    roofline_step_time_s: f64,
    flops: f64,
    /// HBM traffic: a collective's bytes cross the link, not HBM.
    bytes: f64,
    kernels: u64,
    /// Time in compute-bound kernels.
    compute_bound_s: f64,
    /// Time the FLOPs need at the MFU reference peaks.
    mfu_time_s: f64,
    /// The most activation bytes one kernel reads and writes.
    activation_bytes: f64,
    /// The scheme of the weight-multiplying kernel with the most FLOPs in the step.
    scheme: Option<(f64, Scheme)>,
    /// Time in the blocks only the first pipeline stage runs, and only the last.
    first_stage_s: f64,
    last_stage_s: f64,
    /// The serving engine's host work before the step's kernels.
    host_s: f64,
}

/// A kernel's `cost.count` executions summed as [`Totals::add`] adds them; `mfu_s` is one
/// execution's FLOPs at the reference peaks, `stage` the pipeline stage its block runs on.
pub(super) fn sums(cost: &KernelCost, mfu_s: f64, stage: Option<Stage>) -> KernelSums {
    let n = cost.count as f64;
    let time_s = cost.time_s * n;
    let only = |on: bool, x: f64| if on { x } else { 0.0 };
    KernelSums {
        executions: cost.count,
        time_s,
        roofline_time_s: cost.roofline_time_s * n,
        flops: cost.flops * n,
        // A collective's bytes cross the link, not HBM.
        hbm_bytes: only(cost.bound != Bound::Interconnect, cost.bytes * n),
        mfu_time_s: mfu_s * n,
        compute_bound_s: only(cost.bound == Bound::Compute, time_s),
        first_stage_s: only(stage == Some(Stage::First), time_s),
        last_stage_s: only(stage == Some(Stage::Last), time_s),
        activation_bytes: only(cost.count > 0, cost.activation_bytes),
        scheme: cost.scheme,
    }
}

impl Totals {
    /// Adds a kernel's executions, summed by [`sums`].
    #[inline(always)]
    pub(super) fn add(&mut self, s: &KernelSums) {
        // A sum a kernel does not have is +0: adding it leaves a total (never -0) as it was.
        self.first_stage_s += s.first_stage_s;
        self.last_stage_s += s.last_stage_s;
        self.roofline_step_time_s += s.roofline_time_s;
        self.activation_bytes = self.activation_bytes.max(s.activation_bytes);
        self.step_time_s += s.time_s;
        self.flops += s.flops;
        self.bytes += s.hbm_bytes;
        self.kernels += s.executions;
        self.mfu_time_s += s.mfu_time_s;
        if let Some(scheme) = (s.scheme).filter(|_| self.scheme.is_none_or(|(f, _)| s.flops > f)) {
            self.scheme = Some((s.flops, scheme));
        }
        self.compute_bound_s += s.compute_bound_s;
    }

    /// The kernels' time summed so far: the chip's work in the step.
    pub(super) fn kernel_s(&self) -> f64 {
        self.step_time_s
    }

    /// Adds the serving engine's host work for the step (`host::host_s`): the chip waits for
    /// it before the first stage's kernels, so it is the first stage's time.
    pub(super) fn add_host(&mut self, host_s: f64) {
        self.host_s = host_s;
        self.step_time_s += host_s;
        self.first_stage_s += host_s;
    }

    pub(super) fn check_finite(&self) -> Result<(), Error> {
        let Totals {
            step_time_s,
            flops,
            bytes,
            ..
        } = *self;
        if step_time_s.is_finite() && flops.is_finite() && bytes.is_finite() {
            Ok(())
        } else {
            Err(Error::value(format!(
                "the step's totals overflow ({step_time_s:e} s, {flops:e} FLOPs, {bytes:e} bytes): check the params"
            )))
        }
    }

    /// The time `ev.micro_batches` micro-batches take through `ev.stages` stages, each
    /// starting a stage as soon as the micro-batch before has left it: the first passes through
    /// every stage (the step, one stage after the other), each later one leaves the slowest
    /// stage one stage time after the one before, `sum + (m - 1) x slowest`. With balanced
    /// stages that is `(m + pp - 1)` stage times: throughput `pp x m / (m + pp - 1)` times the
    /// step's (GPipe's bubble, docs/sources.md X3). The layers and the stage boundaries are
    /// spread evenly over the stages; the embedding runs on the first and the head on the last.
    fn pipeline_s(&self, ev: &Evaluation) -> f64 {
        let t = self.step_time_s;
        if ev.stages <= 1.0 {
            return t;
        }
        let (first, last) = (self.first_stage_s, self.last_stage_s);
        let spread = t - first - last;
        let slowest = spread / ev.stages + first.max(last);
        t + (ev.micro_batches - 1.0) * slowest
    }

    /// The step's summary: rates, utilisations, shares, and the memory footprint.
    pub(super) fn summary(
        &self,
        workload: &Workload,
        chip: &Chip,
        ev: &mut Evaluation,
        scenario: &Scenario,
        workspace: Option<f64>,
    ) -> Result<StepSummary, Error> {
        let (dtypes, utilization) = (scenario.dtypes(), scenario.memory_utilization());
        let Totals {
            step_time_s: t,
            roofline_step_time_s,
            flops,
            bytes,
            kernels,
            compute_bound_s,
            mfu_time_s,
            activation_bytes,
            scheme,
            host_s,
            ..
        } = *self;
        let mut resident = memory::Resident::of(workload, ev, dtypes, activation_bytes);
        // Each stage keeps the KV cache (and recurrent state) of its layers for every
        // micro-batch in flight.
        let m = ev.micro_batches;
        resident.kv_bytes *= m;
        resident.kv_apart_bytes *= m;
        resident.state_bytes *= m;
        resident.state_apart_bytes *= m;
        let memory = memory::memory(workload, chip, ev, (utilization, workspace), resident)?;
        let pipeline_s = self.pipeline_s(ev);
        // Every micro-batch carries the step's tokens; one sequence's token waits for the
        // whole schedule.
        let busy = m * t / pipeline_s;
        let tokens_per_s = ev.tokens_per_step.map(|n| m * n / pipeline_s);
        // A whole number from 1 to 10^6 (the workload's evaluation checks it), so exact.
        let chips = ev.chips as u64;
        Ok(StepSummary {
            step_time_s: t,
            roofline_step_time_s,
            fraction_of_roofline: roofline_step_time_s / t,
            flops,
            bytes,
            intensity_flop_per_byte: flops / bytes,
            attained_flop_per_s: flops / t,
            mfu: mfu_time_s / t / ev.stages * busy,
            mbu: bytes / (t * chip.bandwidth_bytes_per_s) / ev.stages * busy,
            kernels,
            tokens_per_step: ev.tokens_per_step,
            tokens_per_s,
            ms_per_token: ev
                .tokens_per_step
                .zip(ev.sequences)
                .map(|(tokens, sequences)| pipeline_s * 1e3 * sequences / tokens),
            micro_batches: m,
            pipeline_time_s: pipeline_s,
            chips,
            tokens_per_s_per_chip: tokens_per_s.map(|r| r / chips as f64),
            cost: StepCost::of(chip, chips, tokens_per_s),
            compute_bound_share: compute_bound_s / t,
            memory_bound_share: 1.0 - (compute_bound_s + host_s) / t,
            host_time_s: host_s,
            weight_bytes: resident.weight_bytes,
            kv_bytes: resident.kv_bytes,
            state_bytes: resident.state_bytes,
            activation_bytes,
            workspace_bytes: memory.workspace_bytes,
            reserve_bytes: memory.reserve_bytes,
            footprint_bytes: memory.footprint_bytes,
            usable_bytes: memory.usable_bytes,
            fits: memory.footprint_bytes <= memory.usable_bytes,
            max_batch: memory.max_batch,
            scheme: scheme.map(|(_, s)| s),
        })
    }
}
