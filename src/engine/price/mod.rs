//! The roofline: every kernel (an op, or a fused group of ops) priced on one chip, and the
//! step's totals.
//!
//! For a kernel: FLOPs add up over its ops; bytes are what crosses its boundary (each outside
//! input read once, each output written once unless only the kernel itself reads it); compute
//! time is each op's FLOPs over the peak of its unit in its compute type; time is the larger
//! of compute time and bytes over bandwidth, and that larger term names the bound.

use serde::Serialize;

use crate::base::dtype::{DType, Role, RoleDTypes};
use crate::base::error::{Error, Unsupported};
use crate::base::param::ScenarioParam;
use crate::engine::chip::{Achievable, Chip};
use crate::engine::scenario::{Mode, Scenario};
use crate::engine::workload::{
    Algorithm, Collective, Evaluation, GemmDims, Kernel, KernelKind, OpKind, Workload,
};

/// Which limit sets a kernel's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Compute,
    Memory,
    /// The fixed cost of a kernel (launch, first load, last store) outweighs both roofs: the
    /// seeds' "third limit under both roofs". Expected mode only.
    Launch,
    /// A collective: the interconnect (or network) between chips.
    Interconnect,
}

impl Bound {
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
    Matrix,
    Vector,
    /// A fused kernel with both matrix and vector work.
    Mixed,
}

impl Unit {
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
    pub block: String,
    /// `gemm`, `gemv`, `kv_read`, `elementwise`, or `fused`.
    pub kind: KernelKind,
    #[serde(flatten)]
    pub cost: KernelCost,
    pub intensity_flop_per_byte: f64,
    /// FLOPs over time: the kernel's ceiling on this chip.
    pub attainable_flop_per_s: f64,
    /// Share of the step time, all executions counted.
    pub share: f64,
}

/// The step's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSummary {
    pub step_time_s: f64,
    /// The step on the datasheet roofline (equal to `step_time_s` in roofline mode).
    pub roofline_step_time_s: f64,
    /// `roofline_step_time_s / step_time_s`: how close to the ceiling the step gets.
    pub fraction_of_roofline: f64,
    pub flops: f64,
    pub bytes: f64,
    pub intensity_flop_per_byte: f64,
    pub attained_flop_per_s: f64,
    /// Model FLOPs utilisation: the time the step's FLOPs need at the matrix-unit peak of
    /// each op's compute type (the vector peak where the matrix unit lacks the type), over the
    /// step time. With one compute type this is FLOPs / (step time x peak).
    pub mfu: f64,
    /// Memory bandwidth utilisation: bytes / (step time x bandwidth).
    pub mbu: f64,
    /// Kernel launches per step.
    pub kernels: u64,
    pub tokens_per_step: Option<f64>,
    pub tokens_per_s: Option<f64>,
    /// Time per generated token of one sequence: the step time divided by the tokens each
    /// sequence gets in the step (the step time, in decode). Needs the workload's `sequences`.
    pub ms_per_token: Option<f64>,
    /// Chips one replica of the step runs on (the workload's `chips`, e.g. `tp * pp`).
    pub chips: u64,
    pub tokens_per_s_per_chip: Option<f64>,
    /// Cost of a million tokens at the chip's indicative price.
    pub usd_per_million_tokens: Option<f64>,
    /// Share of the step time spent in compute-bound kernels.
    pub compute_bound_share: f64,
    pub memory_bound_share: f64,
    /// Weights resident in HBM (declared weight tensors and GEMMs' implied weights).
    pub weight_bytes: f64,
    /// KV cache resident in HBM: `batch x (context + tokens)` positions.
    pub kv_bytes: f64,
    /// Peak activations: the most activation bytes one kernel reads and writes.
    pub activation_bytes: f64,
    /// Weights + KV cache + peak activations.
    pub footprint_bytes: f64,
    /// Whether the footprint fits the chip's usable memory.
    pub fits: bool,
    /// The largest `batch` whose footprint fits at this scenario's other params and types, or
    /// `None` when the workload has no `batch` param. KV cache and activations are taken to
    /// grow in proportion to `batch`, as they do when `batch` multiplies every activation and
    /// KV dimension (every shipped workload).
    pub max_batch: Option<u64>,
}

/// A priced scenario: what was priced, each kernel, and the totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepReport {
    pub workload: String,
    pub workload_name: String,
    pub chip: String,
    pub chip_name: String,
    /// The chip's usable memory.
    pub capacity_bytes: f64,
    pub mode: Mode,
    pub fusion: String,
    /// Every param with the value used, in the file's order.
    pub params: Vec<(String, f64)>,
    pub dtypes: RoleDTypes,
    pub prices: Vec<Price>,
    pub summary: StepSummary,
    /// A whole request priced at this scenario's batch, when one was asked for
    /// ([`StepReport::with_request`]).
    pub request: Option<RequestSummary>,
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
}

/// One kernel's numbers for one scenario, for one execution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KernelCost {
    /// Executions per step (the block's repeat count).
    pub count: u64,
    pub flops: f64,
    /// Bytes moved between HBM and the chip.
    pub bytes: f64,
    /// The type the kernel's largest share of FLOPs is computed in.
    pub compute_dtype: DType,
    pub unit: Unit,
    pub compute_time_s: f64,
    pub memory_time_s: f64,
    pub time_s: f64,
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
    /// Bytes of block scales read with 4-bit weights.
    pub scale_bytes: f64,
    /// Time to widen weight-only quantized weights to the compute type.
    pub dequant_s: f64,
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
    };
}

/// Prices `scenario` of `workload` on `chip`: every kernel with its name, and the totals.
pub fn price(workload: &Workload, chip: &Chip, scenario: &Scenario) -> Result<StepReport, Error> {
    let mut ev = workload.new_evaluation();
    let mut costs = Vec::new();
    let summary = price_step(workload, chip, scenario, &mut ev, &mut costs)?;
    let plan = &workload.fusion_plans[scenario.fusion];
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
        })
        .collect();
    Ok(StepReport {
        workload: workload.id.clone(),
        workload_name: workload.name.clone(),
        chip: chip.id.clone(),
        chip_name: chip.name.clone(),
        capacity_bytes: chip.capacity_bytes,
        mode: scenario.mode,
        fusion: plan.name.clone(),
        params: workload
            .params
            .iter()
            .map(|p| p.name.clone())
            .zip(ev.params.iter().copied())
            .collect(),
        dtypes: scenario.dtypes,
        prices,
        summary,
        request: None,
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
    workload.evaluate(&scenario.overrides, ev)?;
    let plan = &workload.fusion_plans[scenario.fusion];
    costs.clear();
    let mut step_time_s = 0.0;
    let mut flops = 0.0;
    let mut bytes = 0.0;
    let mut kernels = 0;
    let mut compute_bound_s = 0.0;
    let mut mfu_time_s = 0.0;
    let mut activation_bytes = 0.0f64;
    let mut roofline_step_time_s = 0.0;
    let mut previous_s = 0.0;
    for kernel in &plan.kernels {
        if ev.repeats[kernel.block] == 0 {
            costs.push(KernelCost::ABSENT);
            continue;
        }
        let (mut cost, mfu_s) =
            price_kernel(workload, chip, ev, &scenario.dtypes, kernel, scenario.mode)?;
        if scenario.overlap_comm && cost.bound == Bound::Interconnect {
            // The transfer hides behind the kernel before it (chunked, as overlapping
            // implementations pipeline it); only what sticks out, and the launch, remain.
            let transfer = cost.time_s - cost.launch_s;
            cost.time_s = cost.launch_s + (transfer - previous_s).max(0.0);
        }
        previous_s = cost.time_s;
        let n = cost.count as f64;
        roofline_step_time_s += cost.roofline_time_s * n;
        if cost.count > 0 {
            activation_bytes = activation_bytes.max(cost.activation_bytes);
        }
        step_time_s += cost.time_s * n;
        flops += cost.flops * n;
        if cost.bound != Bound::Interconnect {
            bytes += cost.bytes * n; // a collective's bytes cross the link, not HBM
        }
        kernels += cost.count;
        mfu_time_s += mfu_s * n;
        if cost.bound == Bound::Compute {
            compute_bound_s += cost.time_s * n;
        }
        costs.push(cost);
    }
    if !(step_time_s.is_finite() && flops.is_finite() && bytes.is_finite()) {
        return Err(Error::value(format!(
            "the step's totals overflow ({step_time_s} s, {flops} FLOPs, {bytes} bytes): check the params"
        )));
    }
    let t = step_time_s;
    let (weight_bytes, kv_bytes) = workload.resident_bytes(ev, &scenario.dtypes);
    let tokens_per_s = ev.tokens_per_step.map(|n| n / t);
    let chips = ev.chips as u64;
    let footprint_bytes = weight_bytes + kv_bytes + activation_bytes;
    let max_batch = workload.param(ScenarioParam::Batch).map(|b| {
        let batch = ev.params[b];
        let per_sequence = (kv_bytes + activation_bytes) / batch;
        let room = chip.capacity_bytes - weight_bytes;
        if room < 0.0 || batch <= 0.0 {
            0
        } else if per_sequence > 0.0 {
            (room / per_sequence).floor().min(u64::MAX as f64) as u64
        } else {
            u64::MAX
        }
    });
    Ok(StepSummary {
        step_time_s: t,
        roofline_step_time_s,
        fraction_of_roofline: roofline_step_time_s / t,
        flops,
        bytes,
        intensity_flop_per_byte: flops / bytes,
        attained_flop_per_s: flops / t,
        mfu: mfu_time_s / t / ev.stages,
        mbu: bytes / (t * chip.bandwidth_bytes_per_s) / ev.stages,
        kernels,
        tokens_per_step: ev.tokens_per_step,
        tokens_per_s,
        ms_per_token: ev
            .tokens_per_step
            .zip(ev.sequences)
            .map(|(tokens, sequences)| t * 1e3 * sequences / tokens),
        chips,
        tokens_per_s_per_chip: tokens_per_s.map(|r| r / chips as f64),
        usd_per_million_tokens: tokens_per_s
            .zip(chip.price_usd_per_hour)
            .map(|(rate, usd_per_hour)| usd_per_hour * chips as f64 / 3600.0 / rate * 1e6),
        compute_bound_share: compute_bound_s / t,
        memory_bound_share: 1.0 - compute_bound_s / t,
        weight_bytes,
        kv_bytes,
        activation_bytes,
        footprint_bytes,
        fits: footprint_bytes <= chip.capacity_bytes,
        max_batch,
    })
}

/// Operations per weight element to dequantize a weight-only quantized matrix before the
/// matrix unit uses it (convert and scale): an assumption, no source gives a figure.
const DEQUANT_OPS_PER_WEIGHT: f64 = 2.0;

/// Bytes of block scales per weight element for 4-bit weights: one bf16 scale per group of
/// 128 (Marlin's g = 128, whose ideal speed-up over bf16 is 3.87x, not 4x).
const FOUR_BIT_SCALE_BYTES: f64 = 2.0 / 128.0;

/// A kernel's compute and memory overlap imperfectly: expected mode takes the smooth maximum
/// `(t_c^2 + t_m^2)^(1/2)`, so a kernel at its ridge takes 1.41x its slower roof while a large
/// GEMM whose loads are a tenth of its compute loses 0.5 %. (An exponent of 2 agrees with the
/// large-GEMM measurements and, within their spread, with the near-ridge B200 GEMM of
/// vllm-project/vllm issue #35467 (docs/sources.md, kernel physics 2); 1, no overlap at all,
/// would cost large GEMMs 10-20 %.)
fn overlapped(t_compute: f64, t_memory: f64) -> f64 {
    (t_compute * t_compute + t_memory * t_memory).sqrt()
}

/// Prices one kernel; also returns the seconds its FLOPs would take at the MFU reference
/// peaks.
fn price_kernel(
    workload: &Workload,
    chip: &Chip,
    ev: &Evaluation,
    dtypes: &RoleDTypes,
    kernel: &Kernel,
    mode: Mode,
) -> Result<(KernelCost, f64), Error> {
    if let [single] = kernel.members[..] {
        if let OpKind::Collective {
            collective,
            algorithm,
            ..
        } = workload.ops[single].kind
        {
            let cost = price_collective(
                workload, chip, ev, dtypes, kernel, collective, algorithm, mode,
            )?;
            return Ok((cost, 0.0));
        }
    }
    let achievable = match mode {
        Mode::Roofline => None,
        Mode::Expected => Some(
            (chip.expected.as_ref()).ok_or_else(|| Error::NoExpected(chip.id.as_str().into()))?,
        ),
    };
    let mut flops = 0.0;
    let mut compute_time_s = 0.0;
    let mut expected_compute_s = 0.0;
    let mut unquantized_compute_s = 0.0;
    let mut dequant_s = 0.0;
    let mut mfu_time_s = 0.0;
    let (mut matrix, mut vector) = (false, false);
    let mut main: Option<(f64, DType)> = None;
    for &i in &kernel.members {
        let op = &workload.ops[i];
        let op_flops = ev.flops[i];
        let dtype = op.compute_dtype(dtypes);
        let on_matrix = op.kind.matrix_unit();
        if op_flops > 0.0 {
            let unsupported = |reason: String| {
                Error::Unsupported(Box::new(Unsupported {
                    op: op.name.clone(),
                    dtype,
                    chip: chip.id.clone(),
                    reason: format!("computes in {dtype}, but chip {reason}"),
                }))
            };
            let peak = if on_matrix {
                chip.matrix_peak(dtype).map_err(unsupported)?
            } else {
                chip.vector_peak(dtype).map_err(unsupported)?.1
            };
            let reference = if on_matrix {
                peak
            } else {
                chip.matrix_peak(dtype).unwrap_or(0.0).max(peak)
            };
            compute_time_s += op_flops / peak;
            mfu_time_s += op_flops / reference;
            if let Some(a) = achievable {
                let efficiency = if on_matrix { a.matrix(dtype) } else { a.vector };
                let ideal = op_flops / (peak * efficiency);
                unquantized_compute_s += ideal;
                expected_compute_s += ideal * gemm_quantization(chip, a, ev.gemm[i]);
            }
        }
        if let Some(a) = achievable.filter(|_| on_matrix && dtypes.weight.bytes() < dtype.bytes()) {
            // Weight-only quantization: the weights are widened to the compute type first.
            let weights: f64 = op
                .inputs
                .iter()
                .zip(op.slots.clone())
                .filter(|(input, _)| input.role == Role::Weight)
                .map(|(_, slot)| ev.reads[slot])
                .sum();
            if let Ok((_, vector_peak)) = chip.vector_peak(dtype) {
                dequant_s += weights * DEQUANT_OPS_PER_WEIGHT / (vector_peak * a.vector);
            }
        }
        flops += op_flops;
        if main.is_none_or(|(f, _)| op_flops > f) {
            main = Some((op_flops, dtype));
        }
        matrix |= on_matrix;
        vector |= !on_matrix;
    }
    let mut bytes = 0.0;
    let mut activation_bytes = 0.0;
    let mut cache_hit_bytes = 0.0;
    let mut scale_bytes = 0.0;
    let cache = chip
        .cache
        .as_ref()
        .and_then(|c| Some((c.size_bytes, c.bandwidth_bytes_per_s?)));
    for read in &kernel.reads {
        let elements = read
            .slots
            .iter()
            .fold(0.0f64, |acc, &s| acc.max(ev.reads[s]));
        let dtype = dtypes.get(read.role);
        let b = elements * dtype.bytes();
        bytes += b;
        match read.role {
            Role::Activation => activation_bytes += b,
            Role::Weight if dtype.bytes() <= 0.5 => scale_bytes += elements * FOUR_BIT_SCALE_BYTES,
            _ => {}
        }
        // Just written by the previous kernel and small enough to still sit in one half of
        // the cache (A100/H100/H200 split their L2 in two): read at cache bandwidth.
        if let Some((size, _)) = cache.filter(|(size, _)| read.after_write && b <= size / 2.0) {
            debug_assert!(b <= size);
            cache_hit_bytes += b;
        }
    }
    for &i in &kernel.writes {
        let role = workload.ops[i].out_role;
        let b = ev.out_elements[i] * dtypes.get(role).bytes();
        bytes += b;
        if role == Role::Activation {
            activation_bytes += b;
        }
    }
    let bandwidth = chip.bandwidth_bytes_per_s;
    let memory_time_s = bytes / bandwidth;
    let roofline_time_s = compute_time_s.max(memory_time_s);
    let (time_s, bound, launch_s, expected) = match achievable {
        None => {
            let bound = if compute_time_s > memory_time_s {
                Bound::Compute
            } else {
                Bound::Memory
            };
            (roofline_time_s, bound, 0.0, None)
        }
        Some(a) => {
            let hbm_bytes = bytes - cache_hit_bytes + scale_bytes;
            let cache_time_s = cache.map_or(0.0, |(_, bw)| cache_hit_bytes / bw);
            let small_m = kernel.members.iter().any(|&i| {
                let m = ev.gemm[i].m;
                m > 0.0 && m < crate::engine::chip::SMALL_M
            });
            let memory_efficiency = a.memory * if small_m { a.small_m_memory } else { 1.0 };
            let t_memory = hbm_bytes / (bandwidth * memory_efficiency) + cache_time_s;
            let t_compute = expected_compute_s + dequant_s;
            let launch_s = chip.launch_s.unwrap_or(0.0) + 2.0 * a.dram_latency_s;
            let overlap = overlapped(t_compute, t_memory);
            let bound = if launch_s > t_compute.max(t_memory) {
                Bound::Launch
            } else if t_compute > t_memory {
                Bound::Compute
            } else {
                Bound::Memory
            };
            let quantization = if unquantized_compute_s > 0.0 {
                expected_compute_s / unquantized_compute_s
            } else {
                1.0
            };
            (
                launch_s + overlap,
                bound,
                launch_s,
                Some((t_compute, t_memory, quantization, dequant_s)),
            )
        }
    };
    let (expected_compute_s, expected_memory_s, quantization, dequant_s) =
        expected.unwrap_or((compute_time_s, memory_time_s, 1.0, 0.0));
    let cost = KernelCost {
        count: ev.repeats[kernel.block],
        flops,
        bytes,
        compute_dtype: main.map_or(dtypes.activation, |(_, d)| d),
        unit: match (matrix, vector) {
            (true, true) => Unit::Mixed,
            (true, false) => Unit::Matrix,
            _ => Unit::Vector,
        },
        compute_time_s,
        memory_time_s,
        time_s,
        bound,
        activation_bytes,
        roofline_time_s,
        expected_compute_s,
        expected_memory_s,
        launch_s,
        quantization,
        cache_hit_bytes,
        scale_bytes,
        dequant_s,
    };
    Ok((cost, mfu_time_s))
}

/// Prices a collective on the interconnect: roofline mode counts the bytes each chip must send
/// over its link (a ring's `2 (n - 1) / n` of the buffer for an all-reduce, `(n - 1) / n` for the
/// others); expected mode adds a latency per algorithm step and takes the faster of a ring and
/// a tree (all-reduce), plus the kernel's launch. A group of one chip is no collective at all.
#[allow(clippy::too_many_arguments)]
fn price_collective(
    workload: &Workload,
    chip: &Chip,
    ev: &Evaluation,
    dtypes: &RoleDTypes,
    kernel: &Kernel,
    collective: Collective,
    algorithm: Option<Algorithm>,
    mode: Mode,
) -> Result<KernelCost, Error> {
    let i = kernel.members[0];
    let op = &workload.ops[i];
    let n = ev.group[i];
    if n <= 1.0 {
        return Ok(KernelCost::ABSENT);
    }
    let bytes = match collective {
        Collective::ReduceScatter => ev.out_elements[i] * n,
        _ => ev.out_elements[i],
    } * dtypes.get(op.out_role).bytes();
    let unreachable = || {
        Error::Unsupported(Box::new(Unsupported {
            op: op.name.clone(),
            dtype: dtypes.get(op.out_role),
            chip: chip.id.clone(),
            reason: format!(
                "spans {n} chips, but chip `{}` has no interconnect{}",
                chip.id,
                if chip.interconnect.is_some() {
                    " domain that large and no `network` beyond it"
                } else {
                    ""
                }
            ),
        }))
    };
    let link = chip.interconnect.as_ref().ok_or_else(unreachable)?;
    let (bandwidth, latency) = match link.domain {
        Some(domain) if n > domain as f64 => {
            let net = chip.network.as_ref().ok_or_else(unreachable)?;
            (net.bandwidth_bytes_per_s, net.latency_s)
        }
        _ => (link.bandwidth_bytes_per_s, link.latency_s),
    };
    let (share, steps) = match collective {
        Collective::AllReduce => (2.0 * (n - 1.0) / n, 2.0 * (n - 1.0)),
        Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll => {
            ((n - 1.0) / n, n - 1.0)
        }
        Collective::SendRecv => (1.0, 1.0),
    };
    let roofline = share * bytes / bandwidth;
    let ring = roofline + steps * latency;
    let tree = 2.0 * bytes / bandwidth + 2.0 * n.log2().ceil() * latency;
    let (time_s, launch_s) = match mode {
        Mode::Roofline => (roofline, 0.0),
        Mode::Expected => {
            let t = match (collective, algorithm) {
                (Collective::AllReduce, None) => ring.min(tree),
                (Collective::AllReduce, Some(Algorithm::Tree)) => tree,
                _ => ring,
            };
            let launch = chip.launch_s.unwrap_or(0.0);
            (launch + t, launch)
        }
    };
    Ok(KernelCost {
        count: ev.repeats[kernel.block],
        flops: 0.0,
        bytes,
        compute_dtype: dtypes.get(op.out_role),
        unit: Unit::Vector,
        compute_time_s: 0.0,
        memory_time_s: roofline,
        time_s,
        bound: Bound::Interconnect,
        activation_bytes: 2.0 * bytes,
        roofline_time_s: roofline,
        expected_compute_s: 0.0,
        expected_memory_s: time_s - launch_s,
        launch_s,
        quantization: 1.0,
        cache_hit_bytes: 0.0,
        scale_bytes: 0.0,
        dequant_s: 0.0,
    })
}

/// How much longer a GEMM's compute takes than its FLOPs say: M padded to the matrix
/// instruction's rows, and (without Stream-K) the last wave of CTAs leaving compute units idle,
/// with the CTA tile that wastes least.
fn gemm_quantization(chip: &Chip, a: &Achievable, dims: GemmDims) -> f64 {
    let GemmDims { count, m, n, .. } = dims;
    if m <= 0.0 {
        return 1.0; // not a GEMM
    }
    let row_tile = a.row_tile as f64;
    let padded_m = (m / row_tile).ceil() * row_tile;
    let padding = padded_m / m;
    let units = match chip.compute_units {
        Some(units) if !a.stream_k => units as f64,
        _ => return padding,
    };
    let wave_efficiency = a
        .cta_tiles
        .iter()
        .map(|tile| {
            // A library uses no taller tile than the padded rows need.
            let [cta_m, cta_n] = tile.map(|t| t as f64);
            let cta_m = cta_m.min(padded_m);
            let (rows, columns) = ((padded_m / cta_m).ceil(), (n / cta_n).ceil());
            let ctas = count * rows * columns;
            // Tiles that overhang the matrix compute their overhang too.
            let used = padded_m * n / (rows * cta_m * columns * cta_n);
            ctas / ((ctas / units).ceil() * units) * used
        })
        .filter(|e| e.is_finite() && *e > 0.0)
        .fold(0.0f64, f64::max);
    if wave_efficiency > 0.0 {
        padding / wave_efficiency
    } else {
        padding
    }
}

/// A whole request at a batch: the prompt's prefill, then one decode step per further output
/// token with the context growing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RequestSummary {
    /// Prompt tokens per sequence.
    pub input_tokens: u64,
    /// Output tokens per sequence (the first comes from the prefill).
    pub output_tokens: u64,
    /// Time to first token: the prefill of `input_tokens` with an empty cache.
    pub ttft_s: f64,
    /// Time per output token after the first: the mean decode step.
    pub tpot_s: f64,
    /// End to end: the prefill and every decode step.
    pub e2e_s: f64,
    /// Output tokens of every sequence over the end-to-end time.
    pub output_tokens_per_s: f64,
}

/// Decode steps summed exactly up to this many; beyond it, a composite trapezoid over this
/// many evenly spaced steps (decode time is smooth in the context: a KV read that grows
/// linearly, and kernels that change bound at most a few times).
const EXACT_DECODE_STEPS: u64 = 256;

/// Prices a request of `input` prompt tokens and `output` output tokens per sequence at the
/// scenario's batch: TTFT is a prefill (`tokens = input`, `context = 0`), then decode steps
/// (`tokens = 1`) with `context` from `input` to `input + output - 2`.
pub fn price_request(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    input: u64,
    output: u64,
) -> Result<RequestSummary, Error> {
    let param = |p| workload.require(p, "it cannot price a request");
    let (tokens, context) = (
        param(ScenarioParam::Tokens)?,
        param(ScenarioParam::Context)?,
    );
    if input == 0 || output == 0 {
        return Err(Error::value(
            "a request needs at least one input and one output token",
        ));
    }
    let mut ev = workload.new_evaluation();
    let mut costs = Vec::new();
    let mut step = |t: f64, c: f64| -> Result<StepSummary, Error> {
        let mut s = scenario.clone();
        s.overrides.retain(|(i, _)| *i != tokens && *i != context);
        s.overrides.extend([(tokens, t), (context, c)]);
        price_step(workload, chip, &s, &mut ev, &mut costs)
    };
    let prefill = step(input as f64, 0.0)?;
    let decode_steps = output - 1;
    let first = input as f64;
    let decode = if decode_steps <= EXACT_DECODE_STEPS {
        let mut total = 0.0;
        for j in 0..decode_steps {
            total += step(1.0, first + j as f64)?.step_time_s;
        }
        total
    } else {
        let intervals = EXACT_DECODE_STEPS as f64;
        let last = (decode_steps - 1) as f64;
        let mut previous = step(1.0, first)?.step_time_s;
        let mut area = 0.0;
        for i in 1..=EXACT_DECODE_STEPS {
            let next = step(1.0, first + last * i as f64 / intervals)?.step_time_s;
            area += (previous + next) / 2.0;
            previous = next;
        }
        area / intervals * decode_steps as f64
    };
    let sequences = prefill.tokens_per_step.map_or(1.0, |t| t / input as f64);
    let e2e = prefill.step_time_s + decode;
    Ok(RequestSummary {
        input_tokens: input,
        output_tokens: output,
        ttft_s: prefill.step_time_s,
        tpot_s: if decode_steps > 0 {
            decode / decode_steps as f64
        } else {
            0.0
        },
        e2e_s: e2e,
        output_tokens_per_s: sequences * output as f64 / e2e,
    })
}
