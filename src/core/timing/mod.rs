//! The roofline: every kernel (an op, or a fused group of ops) priced on one chip, and the
//! step's totals.
//!
//! For a kernel: FLOPs add up over its ops; bytes are what crosses its boundary (each outside
//! input read once, each output written once unless only the kernel itself reads it); compute
//! time is each op's FLOPs over the peak of its unit in its compute type; time is the larger
//! of compute time and bytes over bandwidth, and that larger term names the bound.
//!
//! This module owns the report types and the step: [`price`] and [`price_step`] sum the kernels
//! that `kernel` (compute and memory, with expected mode's corrections) and `collective` (the
//! interconnect) price; `request` prices a whole request as a prefill and decode steps.

mod bucket;
mod collective;
mod context;
mod host;
mod iteration;
mod kernel;
mod memory;
mod provenance;
mod quant;
mod request;
mod special;
mod split_kv;
mod totals;
mod waves;

use serde::Serialize;

use crate::base::dtype::DType;
use crate::base::error::Error;
use crate::base::format::Scheme;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::cost::{Costing, StepCost};
use crate::core::scenario::{Mode, Scenario};
use crate::core::workload::{Evaluation, KernelKind, KernelSums, Workload};

use context::{price_any, Context};
pub use iteration::{Iteration, IterationPricer};
pub use memory::DEFAULT_MEMORY_UTILIZATION;
pub use provenance::{priced_by, Basis, Constant, ConstantName};
pub use request::{price_request, RequestSummary};
use totals::Totals;

/// Which limit sets a kernel's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// The compute units: the kernel's FLOPs take longer than its bytes.
    Compute,
    /// HBM bandwidth: the kernel's bytes take longer than its FLOPs.
    Memory,
    /// The fixed cost of a kernel (launch, first load, last store) outweighs both roofs: the
    /// seeds' "third limit under both roofs". Expected mode only.
    Launch,
    /// A collective: the interconnect (or network) between chips.
    Interconnect,
}

impl Bound {
    /// The bound's name, as the `bound` column writes it.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
            Bound::Launch => "launch",
            Bound::Interconnect => "interconnect",
        }
    }
}

/// The units a kernel's FLOPs run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// The matrix unit (tensor cores).
    Matrix,
    /// The vector unit, which runs elementwise work.
    Vector,
    /// A fused kernel with both matrix and vector work.
    Mixed,
}

impl Unit {
    /// The unit's name, as the `unit` column writes it.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Matrix => "matrix",
            Unit::Vector => "vector",
            Unit::Mixed => "matrix+vector",
        }
    }
}

/// One kernel on one chip, for one execution; `count` says how often the step runs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Price {
    /// The op's name, or the fused ops' names joined by `+`.
    pub name: String,
    /// The name of the block the kernel's ops belong to.
    pub block: String,
    /// `gemm`, `gemv`, `kv_read`, `elementwise`, or `fused`.
    pub kind: KernelKind,
    /// The kernel's numbers for one execution.
    #[serde(flatten)]
    pub cost: KernelCost,
    /// Arithmetic intensity: `flops / bytes`, in FLOP/byte.
    pub intensity_flop_per_byte: f64,
    /// FLOPs over time: the kernel's ceiling on this chip.
    pub attainable_flop_per_s: f64,
    /// Share of the step time, all executions counted.
    pub share: f64,
    /// The chip-file constants that priced it ([`priced_by`]).
    pub priced_by: Vec<Constant>,
}

/// The step's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSummary {
    /// The step's time: every kernel's executions, and the host time waited for.
    pub step_time_s: f64,
    /// The step on the datasheet roofline (equal to `step_time_s` in roofline mode).
    pub roofline_step_time_s: f64,
    /// `roofline_step_time_s / step_time_s`: how close to the ceiling the step gets.
    pub fraction_of_roofline: f64,
    /// FLOPs of the step, every kernel's executions counted.
    pub flops: f64,
    /// Bytes moved between HBM and the chip in the step (a collective's cross the link instead).
    pub bytes: f64,
    /// Arithmetic intensity of the step: `flops / bytes`, in FLOP/byte.
    pub intensity_flop_per_byte: f64,
    /// FLOPs per second over the step: `flops / step_time_s`.
    pub attained_flop_per_s: f64,
    /// Model FLOPs utilisation: the time the step's FLOPs need at the matrix-unit peak of
    /// each op's compute type (the vector peak where the matrix unit lacks the type), over the
    /// step time. With one compute type this is FLOPs / (step time x peak).
    pub mfu: f64,
    /// Memory bandwidth utilisation: bytes / (step time x bandwidth).
    pub mbu: f64,
    /// Kernel launches per step.
    pub kernels: u64,
    /// Tokens one micro-batch carries through the step.
    pub tokens_per_step: Option<f64>,
    /// Tokens per second, every micro-batch in flight counted.
    pub tokens_per_s: Option<f64>,
    /// Time per generated token of one sequence: the step time divided by the tokens each
    /// sequence gets in the step (the step time, in decode); with pipeline stages, the time
    /// of all the micro-batches in flight (`pipeline_time_s`), which each token waits for.
    /// Needs the workload's `sequences`.
    pub ms_per_token: Option<f64>,
    /// Micro-batches of the step's batch in flight through the pipeline stages at once (1
    /// without a pipeline): `tokens_per_s` counts them all, the KV cache holds them all.
    pub micro_batches: f64,
    /// The time those micro-batches take through every stage, bubbles included (the step
    /// time with one stage): `tokens_per_s` is their tokens over it.
    pub pipeline_time_s: f64,
    /// Chips one replica of the step runs on (the workload's `chips`, e.g. `tp * pp`).
    pub chips: u64,
    /// `tokens_per_s` over `chips`.
    pub tokens_per_s_per_chip: Option<f64>,
    /// What the step costs in the chip's cost model, for the replica's chips.
    #[serde(flatten)]
    pub cost: StepCost,
    /// Share of the step time spent in compute-bound kernels.
    pub compute_bound_share: f64,
    /// Share in memory-bound and launch-bound kernels and collectives: the kernels' time
    /// that is not compute-bound.
    pub memory_bound_share: f64,
    /// The serving engine's host work the chip waits for in the step (expected mode, a
    /// serving step: `expected.host_step` and `host_sequence`), inside `step_time_s`; 0
    /// otherwise.
    pub host_time_s: f64,
    /// Weights resident in HBM (declared weight tensors and GEMMs' implied weights).
    pub weight_bytes: f64,
    /// KV cache resident in HBM: `batch x (context + tokens)` positions.
    pub kv_bytes: f64,
    /// Recurrent state resident in HBM (a state-space layer's): one per sequence, whatever
    /// the context; 0 for a model without one.
    pub state_bytes: f64,
    /// Peak activations: the most activation bytes one kernel reads and writes.
    pub activation_bytes: f64,
    /// Activations a serving engine keeps room for: the peak activations of a step of
    /// `max_batched_tokens` new tokens of one sequence on an empty cache (or the step's own
    /// peak, if more); the step's peak where the workload has no `max_batched_tokens` param.
    pub workspace_bytes: f64,
    /// The runtime's fixed reserve on the chip (context, communication buffers, graphs).
    pub reserve_bytes: f64,
    /// Weights + KV cache + recurrent state + activation workspace + runtime reserve.
    pub footprint_bytes: f64,
    /// What the engine may use: the chip's reported capacity x memory utilisation.
    pub usable_bytes: f64,
    /// Whether the footprint fits in `usable_bytes`.
    pub fits: bool,
    /// The largest `batch` whose footprint fits at this scenario's other params and types, or
    /// `None` when the workload has no `batch` param. The KV cache (and, without
    /// `max_batched_tokens`, the activations) grow in proportion to `batch`, as they do when
    /// `batch` multiplies every activation and KV dimension (every shipped workload).
    pub max_batch: Option<u64>,
    /// How the step's main weights are multiplied (`W8A16`: weight-only fp8), from the
    /// weight-multiplying kernel with the most FLOPs; `None` when no kernel multiplies a weight.
    pub scheme: Option<Scheme>,
}

/// A priced scenario: what was priced, each kernel, and the totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepReport {
    /// The workload's id, its file stem (`llama-3.1-70b`).
    pub workload: String,
    /// The model's name (`Llama-3.1-70B`).
    pub workload_name: String,
    /// The chip's id, its file stem (`h100-sxm`).
    pub chip: String,
    /// The chip's product name (`NVIDIA H100 SXM`).
    pub chip_name: String,
    /// The chip's family (`nvidia-hopper`), where its file names one: the group of an
    /// expected-mode prediction's band.
    pub chip_family: Option<String>,
    /// The engine priced under ([`Scenario::engine_id_on`]): `none` in roofline mode.
    pub engine: String,
    /// The chip's usable memory.
    pub capacity_bytes: f64,
    /// How the chip's hours are costed.
    pub costing: Costing,
    /// The pricing mode: roofline or expected.
    pub mode: Mode,
    /// The name of the fusion plan the kernels follow.
    pub fusion: String,
    /// Every param with the value used, in the file's order.
    pub params: Vec<(String, f64)>,
    /// The format of every slot (weights, KV cache, activations, ...) in the scenario.
    pub dtypes: Types,
    /// Each kernel in the step, in the order of its first op; those of a block repeated 0
    /// times are left out.
    pub prices: Vec<Price>,
    /// The step's totals.
    pub summary: StepSummary,
    /// A whole request priced at this scenario's batch, when one was asked for
    /// ([`StepReport::with_request`]).
    pub request: Option<RequestSummary>,
    /// The images each sequence's prompt holds and their encoder's step, where images were
    /// priced (`study::images`): the step's own numbers are the language model's, its
    /// prompt longer by the images' tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<ImagesSummary>,
}

/// Images in the prompt: how many, the tokens each adds, and the vision encoder's step that
/// makes those tokens, priced on the same chip before the language model's prefill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImagesSummary {
    /// Images per sequence.
    pub images: u64,
    /// Prompt tokens one image adds.
    pub image_tokens: u64,
    /// The encoder's workload id (`llama-4-vision`).
    pub encoder: String,
    /// Images the encoder's step encodes: `images` for every sequence of the batch.
    pub encoded_images: u64,
    /// The tensor-parallel chips the encoder's step runs on.
    pub encoder_tp: u64,
    /// Why the encoder runs at another `tp` than the language model, where it does.
    pub encoder_tp_note: Option<String>,
    /// FLOPs of the encoder's step.
    pub encoder_flops: f64,
    /// The encoder's step time, in the scenario's mode.
    pub encoder_s: f64,
    /// The encoder's step and the language model's: the prefill a prompt with images waits for.
    pub prefill_s: f64,
}

impl StepReport {
    /// Adds a request of `input` prompt and `output` output tokens per sequence, priced at the
    /// same scenario.
    pub fn with_request(
        mut self,
        workload: &Workload,
        chip: &Chip,
        scenario: &Scenario,
        (input, output): (u64, u64),
    ) -> Result<StepReport, Error> {
        self.request = Some(price_request(workload, chip, scenario, input, output)?);
        Ok(self)
    }

    /// Whether the step fits the chip's usable memory, and with a request, the request's
    /// cache at its longest context too.
    pub fn fits(&self) -> bool {
        self.summary.fits && self.request.is_none_or(|r| r.fits)
    }
}

/// One kernel's numbers for one scenario, for one execution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KernelCost {
    /// Executions per step (the block's repeat count).
    pub count: u64,
    /// FLOPs of one execution (less a causal attention kernel's skipped tiles: `causal_share`).
    pub flops: f64,
    /// Bytes moved between HBM and the chip.
    pub bytes: f64,
    /// The type the kernel's largest share of FLOPs is computed in.
    pub compute_dtype: DType,
    /// The unit (or units) the kernel's FLOPs run on.
    pub unit: Unit,
    /// FLOPs over the datasheet peak of each op's unit in its compute type.
    pub compute_time_s: f64,
    /// `bytes` over the datasheet HBM bandwidth.
    pub memory_time_s: f64,
    /// The kernel's time in the scenario's mode: `roofline_time_s` in roofline mode.
    pub time_s: f64,
    /// Which limit sets `time_s`.
    pub bound: Bound,
    /// Activation bytes the kernel reads and writes: what must be live in HBM while it runs.
    pub activation_bytes: f64,
    /// `max(compute_time_s, memory_time_s)`: the kernel on the datasheet roofline.
    pub roofline_time_s: f64,
    /// Expected mode: compute time at the achievable fraction of peak, with `quantization`
    /// and dequantization included (the roofline compute time in roofline mode).
    pub expected_compute_s: f64,
    /// Expected mode: memory time at the achievable bandwidth, cache hits at cache
    /// bandwidth, block scales included (the roofline memory time in roofline mode).
    pub expected_memory_s: f64,
    /// Fixed cost of the kernel: launch, first load and last store (0 in roofline mode).
    pub launch_s: f64,
    /// Factor by which tile padding and wave quantization stretch the compute time (1: none).
    pub quantization: f64,
    /// Bytes read from the on-chip cache instead of HBM.
    pub cache_hit_bytes: f64,
    /// Bytes of scales read with block- or group-scaled formats (part of `bytes`).
    pub scale_bytes: f64,
    /// Time to widen weight-only quantized weights to the compute type, and under an engine
    /// (expected mode) a quantised KV cache the kernel reads.
    pub dequant_s: f64,
    /// Fraction of the datasheet bandwidth the kernel's HBM bytes move at: expected mode's
    /// stream fraction, less for a decode-shaped library GEMM, a fused attention kernel's own
    /// (1 in roofline mode and for collectives).
    pub memory_fraction: f64,
    /// The share of its counted FLOPs the kernel does: below 1 for a fused attention kernel
    /// of a causal block, which skips the score tiles the mask empties (in both modes; an
    /// unfused score GEMM computes the whole matrix).
    pub causal_share: f64,
    /// Expected mode: time of the separate kernels that quantise another GEMM's output into
    /// this W8A8 GEMM's input (part of `time_s`).
    pub act_quant_s: f64,
    /// Expected mode: the time a fused attention kernel's special functions (the softmax's
    /// exponentials) add to its compute, beyond what hides under its matrix work (part of
    /// `expected_compute_s`).
    pub special_s: f64,
    /// The weights' format and the type they are multiplied in, for the op of the kernel
    /// with the most FLOPs that multiplies a weight.
    pub scheme: Option<Scheme>,
    /// The choices pricing made that the numbers above do not show, for [`priced_by`].
    #[serde(skip)]
    pub basis: Basis,
}

impl KernelCost {
    /// The cost of a kernel whose block is repeated 0 times: not in the step.
    const ABSENT: KernelCost = KernelCost {
        count: 0,
        flops: 0.0,
        bytes: 0.0,
        compute_dtype: DType::Bf16,
        unit: Unit::Matrix,
        compute_time_s: 0.0,
        memory_time_s: 0.0,
        time_s: 0.0,
        bound: Bound::Memory,
        activation_bytes: 0.0,
        roofline_time_s: 0.0,
        expected_compute_s: 0.0,
        expected_memory_s: 0.0,
        launch_s: 0.0,
        quantization: 1.0,
        cache_hit_bytes: 0.0,
        scale_bytes: 0.0,
        dequant_s: 0.0,
        memory_fraction: 1.0,
        causal_share: 1.0,
        act_quant_s: 0.0,
        special_s: 0.0,
        scheme: None,
        basis: Basis {
            expected: false,
            path: None,
            small_m: false,
            attention: false,
            network: false,
        },
    };
}

/// Prices `scenario` of `workload` on `chip`: every kernel with its name, and the totals.
pub fn price(workload: &Workload, chip: &Chip, scenario: &Scenario) -> Result<StepReport, Error> {
    let mut ev = workload.new_evaluation();
    let mut costs = Vec::new();
    let summary = price_step(workload, chip, scenario, &mut ev, &mut costs)?;
    let plan = &workload.fusion_plans[scenario.fusion()];
    let prices = plan
        .kernels
        .iter()
        .zip(&costs)
        .filter(|(_, cost)| cost.count > 0) // a block repeated 0 times is not in the step
        .map(|(kernel, cost)| Price {
            name: kernel.name.clone(),
            block: workload.blocks[kernel.block].name.clone(),
            kind: kernel.kind,
            cost: *cost,
            intensity_flop_per_byte: cost.flops / cost.bytes,
            attainable_flop_per_s: cost.flops / cost.time_s,
            share: cost.time_s * cost.count as f64 / summary.step_time_s,
            priced_by: priced_by(chip, kernel.kind, cost),
        })
        .collect();
    Ok(StepReport {
        workload: workload.id.clone(),
        workload_name: workload.name.clone(),
        chip: chip.id.clone(),
        chip_name: chip.name.clone(),
        chip_family: chip.family().map(str::to_owned),
        engine: scenario.engine_id_on(chip).to_owned(),
        capacity_bytes: chip.capacity_bytes,
        costing: Costing::of(chip),
        mode: scenario.mode(),
        fusion: plan.name.clone(),
        params: workload
            .params
            .iter()
            .map(|p| p.name.clone())
            .zip(ev.params.iter().copied())
            .collect(),
        dtypes: *scenario.dtypes(),
        prices,
        summary,
        request: None,
        images: None,
    })
}

/// Prices `scenario` into reusable buffers: `ev` (from [`Workload::new_evaluation`]) is left
/// holding the scenario's numbers and `costs` one entry per kernel of the scenario's fusion
/// plan. Allocates nothing once the buffers have grown to size; a sweep calls this per scenario.
pub fn price_step(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    ev: &mut Evaluation,
    costs: &mut Vec<KernelCost>,
) -> Result<StepSummary, Error> {
    scenario.check_against(workload)?;
    let workspace = memory::profiled_workspace(workload, chip, scenario, ev);
    let engine = context::engine(scenario, chip);
    let mut padded = None;
    let evaluated = workload.evaluate(scenario.overrides(), ev).and_then(|()| {
        padded = bucket::pad(workload, ev, scenario, engine)?;
        Ok(())
    });
    if let Err(e) = evaluated {
        // Some ops may hold this scenario's numbers now: the kept costs are no longer known
        // to match the ops they were priced from.
        ev.kernel_memo.set(None, None);
        return Err(e);
    }
    let plan = &workload.fusion_plans[scenario.fusion()];
    // A sweep's next scenario usually changes one param: kernels none of whose ops changed
    // keep their costs, when the chip, types, plan, mode and launches (none, in a graph or
    // eager) are those they were priced under (overlapped transfers depend on the kernel
    // before, so they are always priced anew).
    let launch = context::launch(workload, ev, engine);
    // A prompt padded to its bucket was evaluated twice: which ops changed since the last
    // scenario priced is no longer known.
    let key = (!scenario.overlap_comm() && padded.is_none()).then(|| {
        let roofline = scenario.mode() == Mode::Roofline;
        (
            chip.id.as_str(),
            (*scenario.dtypes(), scenario.fusion(), roofline, launch),
        )
    });
    let mut memo = std::mem::take(&mut ev.kernel_memo);
    let shared = engine.and(scenario.engine_shared().or(chip.default_engine()));
    let reuse = key.is_some_and(|(chip, key)| memo.priced_under(chip, key, shared))
        && costs.len() == plan.kernels.len();
    if !reuse {
        costs.clear();
        costs.resize(plan.kernels.len(), KernelCost::ABSENT);
        memo.mfu_s.clear();
        memo.mfu_s.resize(plan.kernels.len(), 0.0);
        memo.sums.clear();
        memo.sums.resize(plan.kernels.len(), KernelSums::default());
        memo.priced.clear();
        memo.priced.resize(plan.kernels.len(), false);
    }
    let cx = Context::new(workload, chip, ev, scenario, launch);
    let mut totals = Totals::default();
    let mut previous_s = 0.0;
    for (k, kernel) in plan.kernels.iter().enumerate() {
        let count = ev.repeats[kernel.block];
        if count == 0 {
            // A kernel not priced is absent already (a kernel's cost is large to copy).
            if memo.priced[k] {
                (costs[k], memo.priced[k]) = (KernelCost::ABSENT, false);
            }
            continue;
        }
        let unchanged =
            reuse && memo.priced[k] && kernel.members.iter().all(|&i| !ev.op_changed(i));
        // An unchanged kernel keeps its price at this step's count; an unchanged collective
        // over one chip stays absent (count 0) however often its block runs.
        let stage = || workload.blocks[kernel.block].stage;
        if unchanged && costs[k].count > 0 && costs[k].count != count {
            costs[k].count = count;
            memo.sums[k] = totals::sums(&costs[k], memo.mfu_s[k], stage());
        } else if !unchanged {
            let (mut cost, mfu_s) = price_any(&cx, kernel)?;
            if scenario.overlap_comm() && cost.bound == Bound::Interconnect {
                collective::hide_transfer(&mut cost, previous_s);
            }
            memo.sums[k] = totals::sums(&cost, mfu_s, stage());
            (costs[k], memo.mfu_s[k], memo.priced[k]) = (cost, mfu_s, true);
        }
        previous_s = costs[k].time_s;
        totals.add(&memo.sums[k]);
    }
    totals.check_finite()?;
    totals.add_host(host::host_s(
        workload,
        chip,
        ev,
        scenario,
        totals.kernel_s(),
    ));
    let mut summary = totals.summary(workload, chip, ev, scenario, workspace)?;
    if let Some(padding) = padded {
        padding.count_real_tokens(chip, &mut summary);
    }
    // The memo goes back only once every cost is current: after an error it stays empty.
    memo.set(key, shared);
    ev.kernel_memo = memo;
    Ok(summary)
}

#[cfg(test)]
mod attention_tests;
#[cfg(test)]
mod engine_tests;
#[cfg(test)]
mod tests;
