//! Activation quantisation in front of a W8A8 GEMM (fp8 or int8 activations): expected mode's
//! price of the small kernel that turns a GEMM's bf16 output into the next GEMM's quantised
//! input when no elementwise op stands between them to do it (o_proj after attention). Where
//! a norm or SiLU-and-mul feeds the GEMM, that op writes the quantised values itself, as
//! vLLM's fused RMSNorm + quant and SiLU-and-mul + quant kernels do, and nothing is added
//! here (`workload::build::values`).
//!
//! The kernel's shape is SGLang's and DeepGEMM's per-token-group quantisation (vLLM's
//! `per_token_group_quant_fp8`): read each bf16 value once, find the absolute maximum of each
//! group of 128 along the row, write the scaled 8-bit value and one fp32 scale per group
//! (docs/sources.md, "fp8 serving").
//!
//! And under an engine, the widening of a quantised KV cache a kernel reads back to the
//! kernel's compute type ([`kv_dequant_s`]).

use crate::base::dtype::{DType, Role};
use crate::base::types::Slot;
use crate::core::chip::Achievable;
use crate::core::workload::{Kernel, Op, Ref};

use super::kernel::{fixed_cost_s, overlapped};
use super::Context;

/// Vector operations per value, counted from vLLM's per-token-group kernel: absolute value,
/// the group's maximum, the division by the scale, the clamp and the conversion.
pub(super) const QUANT_OPS_PER_VALUE: f64 = 5.0;

/// Bytes of scale per value: one fp32 scale per group of 128 values.
pub(super) const QUANT_SCALE_BYTES_PER_VALUE: f64 = 4.0 / 128.0;

/// The time of the separate kernel that quantises `op`'s inputs which another GEMM wrote
/// outside `kernel` (0 where `output` and `activation` are one format, or the op multiplies
/// no weight): its own launch and first and last access, and its bytes and vector work
/// overlapped as every kernel's are.
pub(super) fn activation_quant_s(cx: &Context, kernel: &Kernel, op: &Op, a: &Achievable) -> f64 {
    let (from, to) = (cx.dtypes.get(Slot::Output), cx.dtypes.get(Slot::Activation));
    if from == to || !op.multiplies_weight() {
        return 0.0;
    }
    let outside_output = |source: Ref| match source {
        Ref::Op(j) => cx.workload.ops[j].out_slot == Slot::Output && !kernel.members.contains(&j),
        _ => false,
    };
    let values: f64 = (op.inputs.iter().zip(op.slots.clone()))
        .filter(|(input, _)| input.slot == Slot::Activation && outside_output(input.source))
        .map(|(_, slot)| cx.ev.reads[slot])
        .sum();
    if values == 0.0 {
        return 0.0;
    }
    let scale_bytes = if to.scale_bytes() > 0.0 {
        0.0 // the format's own scales are in its bytes
    } else {
        QUANT_SCALE_BYTES_PER_VALUE
    };
    let bytes = values * (from.bytes() + to.bytes() + scale_bytes);
    let memory_s = bytes / (cx.chip.bandwidth_bytes_per_s * a.memory);
    let compute_s = (cx.chip.vector_peak(from.element())).map_or(0.0, |(_, peak)| {
        values * QUANT_OPS_PER_VALUE / (peak * a.vector)
    });
    fixed_cost_s(cx.launch_s, a) + overlapped(compute_s, memory_s)
}

/// Under an engine (expected mode): the time `kernel` spends widening a quantised KV cache it
/// reads (fp8, int8, fp6, fp4, int4) to its compute type `dtype` on the vector unit, the
/// engine's `kv_dequant` operations per cached element (fp8 and int8 at the fp8 rate, the
/// narrower formats at the int4 rate). Nothing where the cache is no narrower than `dtype`
/// (an fp8 kernel reading an fp8 cache) or the vector unit has no peak in `dtype`; without an
/// engine the widening is free, as it was priced before engines.
pub(super) fn kv_dequant_s(cx: &Context, kernel: &Kernel, dtype: DType, a: &Achievable) -> f64 {
    let Some(engine) = cx.engine else {
        return 0.0;
    };
    let Ok((_, vector_peak)) = cx.chip.vector_peak(dtype) else {
        return 0.0;
    };
    let rates = engine.terms().kv_dequant;
    let mut ops = 0.0;
    for read in kernel.reads.iter().filter(|r| r.slot.role() == Role::Kv) {
        let element = cx.dtypes.get(read.slot).element();
        if element.bytes() >= dtype.bytes() {
            continue;
        }
        let per_element = match element {
            DType::Fp8 | DType::Int8 => rates.fp8_ops_per_element,
            DType::Fp6 | DType::Fp4 | DType::Int4 => rates.int4_ops_per_element,
            _ => 0.0,
        };
        let elements = (read.slots.iter()).fold(0.0f64, |acc, &s| acc.max(cx.ev.reads[s]));
        ops += elements * per_element;
    }
    ops / (vector_peak * a.vector)
}
