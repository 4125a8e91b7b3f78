//! The roofline: every kernel (an op, or a fused group of ops) priced on one chip, and the
//! step's totals.
//!
//! For a kernel: FLOPs add up over its ops; bytes are what crosses its boundary (each outside
//! input read once, each output written once unless only the kernel itself reads it); compute
//! time is each op's FLOPs over the peak of its unit in its compute type; time is the larger
//! of compute time and bytes over bandwidth, and that larger term names the bound.

use serde::Serialize;

use crate::chip::Chip;
use crate::dtype::{DType, RoleDTypes};
use crate::scenario::{Mode, Scenario};
use crate::workload::{EvaluatedStep, OpKind, OpWork, Ref, Workload};
use crate::Error;

/// Which limit sets a kernel's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Compute,
    Memory,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
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
    pub kind: &'static str,
    /// Executions per step (the block's repeat count).
    pub count: u64,
    pub flops: f64,
    /// Bytes moved between HBM and the chip.
    pub bytes: f64,
    pub intensity_flop_per_byte: f64,
    /// The type the kernel's largest share of FLOPs is computed in.
    pub compute_dtype: DType,
    pub unit: Unit,
    pub compute_time_s: f64,
    pub memory_time_s: f64,
    pub time_s: f64,
    pub bound: Bound,
    /// FLOPs over time: the kernel's ceiling on this chip.
    pub attainable_flop_per_s: f64,
    /// Share of the step time, all executions counted.
    pub share: f64,
}

/// The step's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSummary {
    pub step_time_s: f64,
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
    /// Share of the step time spent in compute-bound kernels.
    pub compute_bound_share: f64,
    pub memory_bound_share: f64,
    /// Weights resident in HBM (declared weight tensors and GEMMs' implied weights).
    pub weight_bytes: f64,
    /// KV cache resident in HBM.
    pub kv_bytes: f64,
    /// Whether weights and KV cache fit the chip's usable memory (activations not counted).
    pub fits: bool,
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
}

/// Prices `scenario` of `workload` on `chip`.
pub fn price(workload: &Workload, chip: &Chip, scenario: &Scenario) -> Result<StepReport, Error> {
    let values = workload.param_values(&scenario.overrides)?;
    let step = workload.evaluate(values)?;
    let plan = &workload.fusion_plans[scenario.fusion];

    let mut group_of = vec![None; workload.ops.len()];
    for (g, members) in plan.groups.iter().enumerate() {
        for &m in members {
            group_of[m] = Some(g);
        }
    }
    let mut prices = Vec::new();
    let mut mfu_time_s = 0.0;
    let mut emitted = vec![false; plan.groups.len()];
    for (op, group) in group_of.iter().enumerate() {
        let single = [op];
        let members: &[usize] = match *group {
            Some(g) if emitted[g] => continue,
            Some(g) => {
                emitted[g] = true;
                &plan.groups[g]
            }
            None => &single,
        };
        let (price, mfu_s) = price_kernel(workload, chip, &step, &scenario.dtypes, members)?;
        mfu_time_s += mfu_s * price.count as f64;
        prices.push(price);
    }

    let mut summary = StepSummary {
        step_time_s: 0.0,
        flops: 0.0,
        bytes: 0.0,
        intensity_flop_per_byte: 0.0,
        attained_flop_per_s: 0.0,
        mfu: 0.0,
        mbu: 0.0,
        kernels: 0,
        tokens_per_step: step.tokens_per_step,
        tokens_per_s: None,
        compute_bound_share: 0.0,
        memory_bound_share: 0.0,
        weight_bytes: 0.0,
        kv_bytes: 0.0,
        fits: false,
    };
    let mut compute_bound_s = 0.0;
    for p in &prices {
        let n = p.count as f64;
        summary.step_time_s += p.time_s * n;
        summary.flops += p.flops * n;
        summary.bytes += p.bytes * n;
        summary.kernels += p.count;
        if p.bound == Bound::Compute {
            compute_bound_s += p.time_s * n;
        }
    }
    let t = summary.step_time_s;
    for p in &mut prices {
        p.share = p.time_s * p.count as f64 / t;
    }
    summary.intensity_flop_per_byte = summary.flops / summary.bytes;
    summary.attained_flop_per_s = summary.flops / t;
    summary.mfu = mfu_time_s / t;
    summary.mbu = summary.bytes / (t * chip.bandwidth_bytes_per_s);
    summary.compute_bound_share = compute_bound_s / t;
    summary.memory_bound_share = 1.0 - summary.compute_bound_share;
    summary.tokens_per_s = step.tokens_per_step.map(|n| n / t);
    (summary.weight_bytes, summary.kv_bytes) = workload.resident_bytes(&step, &scenario.dtypes)?;
    summary.fits = summary.weight_bytes + summary.kv_bytes <= chip.capacity_bytes;
    if !t.is_finite() || !summary.bytes.is_finite() || !summary.flops.is_finite() {
        return Err(Error::Scenario(format!(
            "the step's totals overflow (time {t} s, {} FLOPs, {} bytes): check the params",
            summary.flops, summary.bytes
        )));
    }

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
            .zip(step.params.iter().copied())
            .collect(),
        dtypes: scenario.dtypes,
        prices,
        summary,
    })
}

/// The type `work` computes in: the widest of its operands (and, for vector work, its output).
fn compute_dtype(work: &OpWork, dtypes: &RoleDTypes) -> DType {
    let mut types = work.reads.iter().map(|r| dtypes.get(r.role));
    let first = types.next().unwrap_or(dtypes.activation);
    let dtype = types.fold(first, DType::compute_with);
    if work.matrix_unit {
        dtype
    } else {
        dtype.compute_with(dtypes.get(work.out_role))
    }
}

/// Prices one kernel made of `members` (op indices, one block); also returns the seconds its
/// FLOPs would take at the MFU reference peaks.
fn price_kernel(
    workload: &Workload,
    chip: &Chip,
    step: &EvaluatedStep,
    dtypes: &RoleDTypes,
    members: &[usize],
) -> Result<(Price, f64), Error> {
    let mut flops = 0.0;
    let mut compute_time_s = 0.0;
    let mut mfu_time_s = 0.0;
    let mut units = (false, false);
    let mut main: Option<(f64, DType)> = None;
    let mut reads: Vec<(Ref, f64, f64)> = Vec::new(); // source, elements, bytes per element
    let mut write_bytes = 0.0;
    for &i in members {
        let work = &step.ops[i];
        let op = &workload.ops[i];
        let dtype = compute_dtype(work, dtypes);
        if work.flops > 0.0 {
            let unsupported = |reason: String| {
                Error::Scenario(format!(
                    "op `{}` computes in {dtype}, but chip {reason}",
                    op.name
                ))
            };
            let peak = if work.matrix_unit {
                chip.matrix_peak(dtype).map_err(unsupported)?
            } else {
                chip.vector_peak(dtype).map_err(unsupported)?.1
            };
            let reference = chip.matrix_peak(dtype).unwrap_or(0.0).max(peak);
            compute_time_s += work.flops / peak;
            mfu_time_s += work.flops / reference;
        }
        flops += work.flops;
        if main.is_none_or(|(f, _)| work.flops > f) {
            main = Some((work.flops, dtype));
        }
        if work.matrix_unit {
            units.0 = true;
        } else {
            units.1 = true;
        }
        for read in &work.reads {
            if matches!(read.source, Ref::Op(j) if members.contains(&j)) {
                continue; // made and used inside the kernel: never touches HBM
            }
            match reads.iter_mut().find(|(s, _, _)| *s == read.source) {
                Some(entry) => entry.1 = entry.1.max(read.elements),
                None => reads.push((read.source, read.elements, dtypes.get(read.role).bytes())),
            }
        }
        let consumers = &workload.consumers[i];
        if consumers.is_empty() || consumers.iter().any(|c| !members.contains(c)) {
            write_bytes += work.out_elements * dtypes.get(work.out_role).bytes();
        }
    }
    let bytes = reads.iter().map(|(_, e, b)| e * b).sum::<f64>() + write_bytes;
    let memory_time_s = bytes / chip.bandwidth_bytes_per_s;
    let (time_s, bound) = if compute_time_s > memory_time_s {
        (compute_time_s, Bound::Compute)
    } else {
        (memory_time_s, Bound::Memory)
    };
    let first = &workload.ops[members[0]];
    let name = members
        .iter()
        .map(|&i| workload.ops[i].name.as_str())
        .collect::<Vec<_>>()
        .join("+");
    let kind = if members.len() > 1 {
        "fused"
    } else {
        first.kind.name()
    };
    let unit = match units {
        (true, true) => Unit::Mixed,
        (true, false) => Unit::Matrix,
        _ => Unit::Vector,
    };
    debug_assert!(!matches!(first.kind, OpKind::Gemm { .. }) || units.0);
    Ok((
        Price {
            name,
            block: workload.blocks[first.block].name.clone(),
            kind,
            count: step.repeats[first.block],
            flops,
            bytes,
            intensity_flop_per_byte: flops / bytes,
            compute_dtype: main.map_or(dtypes.activation, |(_, d)| d),
            unit,
            compute_time_s,
            memory_time_s,
            time_s,
            bound,
            attainable_flop_per_s: flops / time_s,
            share: 0.0,
        },
        mfu_time_s,
    ))
}
