//! One kernel's cost on one chip: its compute (each op's FLOPs over the peak of its unit), its
//! traffic across the kernel's boundary, and the time they make. In both modes a fused
//! attention kernel does only the score tiles a causal mask leaves (an unfused score GEMM
//! computes the whole matrix). Roofline mode takes the larger roof; expected mode applies the
//! corrections: achievable fractions of the peaks, tile padding and wave quantization,
//! dequantization of weight-only quantized weights (and under an engine, of a quantised KV
//! cache), the quantisation of a W8A8 GEMM's input (`quant`), cache hits, block scales, the
//! fixed launch cost and imperfect overlap of compute and memory, and for a fused attention
//! kernel its own bandwidth fraction and its special functions (`special`).

use crate::base::dtype::{DType, Role};
use crate::base::error::{Error, Unsupported};
use crate::base::format::{Format, Scheme};
use crate::base::types::Slot;
use crate::core::chip::{gemm_path, Achievable, Chip, SMALL_M};
use crate::core::engine::KernelPath;
use crate::core::scenario::Mode;
use crate::core::workload::{Kernel, KernelRead, Op};

use super::quant::{activation_quant_s, kv_dequant_s};
use super::special::{special_added_s, special_function_s};
use super::split_kv;
use super::waves::{gemm_quantization, stream_k};
use super::{Basis, Bound, Context, KernelCost, Unit};

/// Operations per weight element to dequantize a weight-only quantized matrix before the
/// matrix unit uses it (convert and scale): an assumption, no source gives a figure.
const DEQUANT_OPS_PER_WEIGHT: f64 = 2.0;

/// A kernel's compute and memory overlap imperfectly: expected mode takes the smooth maximum
/// `(t_c^2 + t_m^2)^(1/2)`, so a kernel at its ridge takes 1.41x its slower roof while a large
/// GEMM whose loads are a tenth of its compute loses 0.5 %. (An exponent of 2 agrees with the
/// large-GEMM measurements and, within their spread, with the near-ridge B200 GEMM of
/// vllm-project/vllm issue #35467 (docs/sources.md, kernel physics 2); 1, no overlap at all,
/// would cost large GEMMs 10-20 %.)
/// (The squares overflow past about 1e154 s; `hypot` does not, but is slower and can differ in
/// the last bit, so it is the fallback only.)
pub(super) fn overlapped(t_compute: f64, t_memory: f64) -> f64 {
    let t = (t_compute * t_compute + t_memory * t_memory).sqrt();
    if t.is_finite() {
        t
    } else {
        t_compute.hypot(t_memory)
    }
}

/// Prices one kernel of compute and memory work (a collective is priced on the links
/// instead); also returns the seconds its FLOPs would take at the MFU reference peaks.
pub(super) fn price_kernel(cx: &Context, kernel: &Kernel) -> Result<(KernelCost, f64), Error> {
    let achievable = match cx.mode {
        Mode::Roofline => None,
        Mode::Expected => Some(
            (cx.chip.expected.as_ref())
                .ok_or_else(|| Error::NoExpected(cx.chip.id.as_str().into()))?,
        ),
    };
    let compute = Compute::of(cx, kernel, achievable)?;
    let traffic = Traffic::of(cx, kernel);
    let memory_time_s = traffic.bytes / cx.chip.bandwidth_bytes_per_s;
    let roofline_time_s = compute.time_s.max(memory_time_s);
    let timing = match achievable {
        None => Timing::roofline(compute.time_s, memory_time_s),
        Some(a) => Timing::expected(cx, kernel, a, &compute, &traffic),
    };
    let cost = KernelCost {
        count: cx.ev.repeats[kernel.block],
        flops: compute.flops,
        bytes: traffic.bytes,
        compute_dtype: compute
            .main
            .map_or(cx.dtypes.role(Role::Activation).element(), |(_, d)| d),
        unit: compute.unit(),
        compute_time_s: compute.time_s,
        memory_time_s,
        time_s: timing.time_s,
        bound: timing.bound,
        activation_bytes: traffic.activation_bytes,
        roofline_time_s,
        expected_compute_s: timing.compute_s,
        expected_memory_s: timing.memory_s,
        launch_s: timing.launch_s,
        quantization: timing.quantization,
        cache_hit_bytes: traffic.cache_hit_bytes,
        scale_bytes: traffic.scale_bytes,
        dequant_s: timing.dequant_s,
        memory_fraction: timing.memory_fraction,
        causal_share: compute.causal_share(),
        act_quant_s: compute.act_quant_s,
        special_s: timing.special_s,
        scheme: compute.scheme.map(|(_, s)| s),
        basis: Basis {
            expected: achievable.is_some(),
            path: compute.path,
            small_m: timing.small_m,
            attention: compute.attention,
            network: false,
        },
    };
    Ok((cost, compute.mfu_time_s))
}

/// A kernel's FLOPs and the time its ops' units take over them.
#[derive(Default)]
struct Compute {
    /// The FLOPs the kernel does: a fused attention kernel's causal share of those counted.
    flops: f64,
    counted_flops: f64,
    /// At the datasheet peaks.
    time_s: f64,
    /// Expected mode: at the achievable fractions of the peaks, tile padding and wave
    /// quantization included.
    expected_s: f64,
    /// Expected mode: at the achievable fractions, without quantization.
    unquantized_s: f64,
    /// Expected mode: widening weight-only quantized weights to the compute type.
    dequant_s: f64,
    /// Expected mode: the separate kernels that quantise GEMM outputs into W8A8 inputs.
    act_quant_s: f64,
    /// Expected mode: a fused attention kernel's matrix ops (in `expected_s`), and its
    /// special-function work (not in it).
    matrix_s: f64,
    special_s: f64,
    /// At the MFU reference peaks.
    mfu_time_s: f64,
    /// Whether the kernel is a fused attention kernel (`is_attention`), which does only the
    /// causal share of its counted FLOPs, in either mode.
    causal: bool,
    /// Expected mode: whether the kernel is a fused attention kernel.
    attention: bool,
    /// Whether any op runs on the matrix unit, and whether any on the vector unit.
    matrix: bool,
    vector: bool,
    /// The largest FLOPs of one op, and its compute type.
    main: Option<(f64, DType)>,
    /// The largest FLOPs of one op that multiplies a weight, and its scheme.
    scheme: Option<(f64, Scheme)>,
    /// Expected mode: the kernel path of that op.
    path: Option<KernelPath>,
}

impl Compute {
    fn of(
        cx: &Context,
        kernel: &Kernel,
        achievable: Option<&Achievable>,
    ) -> Result<Compute, Error> {
        // A fused attention kernel skips the score tiles a causal mask empties (in both modes:
        // the roofline of the kernel engines run); in expected mode it also streams at its own
        // fraction of the bandwidth and pays its special functions.
        let fused = is_attention(cx, kernel);
        let mut compute = Compute {
            causal: fused,
            attention: achievable.is_some() && fused,
            ..Compute::default()
        };
        for &i in &kernel.members {
            compute.add_op(cx, i, achievable)?;
            if let Some(a) = achievable {
                compute.act_quant_s += activation_quant_s(cx, kernel, &cx.workload.ops[i], a);
            }
        }
        if let (Some(a), Some((_, dtype))) = (achievable, compute.main) {
            compute.dequant_s += kv_dequant_s(cx, kernel, dtype, a);
        }
        Ok(compute)
    }

    /// Adds op `i`, at its causal share of its counted FLOPs in a fused attention kernel.
    fn add_op(
        &mut self,
        cx: &Context,
        i: usize,
        achievable: Option<&Achievable>,
    ) -> Result<(), Error> {
        let op = &cx.workload.ops[i];
        let causal = self.causal;
        self.counted_flops += cx.ev.flops[i];
        let op_flops = cx.ev.flops[i] * if causal { cx.ev.causal[i] } else { 1.0 };
        let on_matrix = op.kind.matrix_unit();
        let dtype = if op_flops > 0.0 {
            compute_dtype(cx, op)?
        } else {
            op.compute_dtype(cx.dtypes)
        };
        if op_flops > 0.0 {
            let (peak, reference) = peaks(cx.chip, op, dtype)?;
            self.time_s += op_flops / peak;
            self.mfu_time_s += op_flops / reference;
            if let Some(a) = achievable {
                let efficiency = match on_matrix {
                    true => a.matrix_on(gemm_path_of(cx, op.weight_format(cx.dtypes)), dtype),
                    false => a.vector,
                };
                let ideal = op_flops / (peak * efficiency);
                self.unquantized_s += ideal;
                let dims = cx.ev.gemm[i];
                let stream_k = stream_k(a, dtype);
                let quantized =
                    ideal * gemm_quantization(cx.chip, cx.launch_s, a, dims, ideal, stream_k);
                self.expected_s += quantized;
                if self.attention && on_matrix {
                    self.matrix_s += quantized;
                } else if self.attention {
                    self.special_s += special_function_s(cx, i, cx.ev.causal[i]);
                }
            }
        }
        let scheme = (op.weight_format(cx.dtypes))
            .filter(|_| on_matrix)
            .map(|weight| Scheme {
                weight,
                compute: dtype,
            });
        if let Some(s) = scheme.filter(|_| self.scheme.is_none_or(|(f, _)| op_flops > f)) {
            self.scheme = Some((op_flops, s));
            self.path = achievable.and_then(|_| gemm_path_of(cx, Some(s.weight)));
        }
        if let Some(a) = achievable.filter(|_| scheme.is_some_and(Scheme::weight_only)) {
            if let Some(dequant_s) = dequant_time(cx, op, dtype, a) {
                self.dequant_s += dequant_s;
            }
        }
        self.flops += op_flops;
        if self.main.is_none_or(|(f, _)| op_flops > f) {
            self.main = Some((op_flops, dtype));
        }
        self.matrix |= on_matrix;
        self.vector |= !on_matrix;
        Ok(())
    }

    /// The share of its counted FLOPs the kernel does (1 for a kernel of none).
    fn causal_share(&self) -> f64 {
        if self.counted_flops > 0.0 {
            self.flops / self.counted_flops
        } else {
            1.0
        }
    }

    fn unit(&self) -> Unit {
        match (self.matrix, self.vector) {
            (true, true) => Unit::Mixed,
            (true, false) => Unit::Matrix,
            _ => Unit::Vector,
        }
    }
}

/// The type `op` computes in on the chip: its weight format's math where the format has one
/// and the chip has it (`Format::math`), else its operands' widest type, or for the matrix unit
/// where the chip lacks that, the 16-bit type it widens them to (weight-only).
fn compute_dtype(cx: &Context, op: &Op) -> Result<DType, Error> {
    let wanted = op.compute_dtype(cx.dtypes);
    if !op.kind.matrix_unit() {
        return Ok(wanted);
    }
    let activation = cx.dtypes.get(Slot::Activation);
    let math = (op.weight_format(cx.dtypes)).and_then(|w| w.math(activation));
    if let Some((needs, at)) = math {
        if cx.chip.matrix_peak(needs).is_ok() && cx.chip.matrix_peak(at).is_ok() {
            return Ok(at);
        }
    }
    cx.chip.matrix_dtype(wanted).map_err(|reason| {
        Error::Unsupported(Box::new(Unsupported {
            op: op.name.clone(),
            dtype: wanted,
            chip: cx.chip.id.clone(),
            reason: format!("computes in {wanted}, but chip {reason}"),
        }))
    })
}

/// The peak of the unit `op` runs on in `dtype`, and the peak MFU measures it against: the
/// matrix unit's, or for vector work the higher of the matrix and vector peaks.
fn peaks(chip: &Chip, op: &Op, dtype: DType) -> Result<(f64, f64), Error> {
    let unsupported = |reason: String| {
        Error::Unsupported(Box::new(Unsupported {
            op: op.name.clone(),
            dtype,
            chip: chip.id.clone(),
            reason: format!("computes in {dtype}, but chip {reason}"),
        }))
    };
    if op.kind.matrix_unit() {
        let peak = chip.matrix_peak(dtype).map_err(unsupported)?;
        Ok((peak, peak))
    } else {
        let peak = chip.vector_peak(dtype).map_err(unsupported)?.1;
        Ok((peak, chip.matrix_peak(dtype).unwrap_or(0.0).max(peak)))
    }
}

/// The activation bytes `kernel` reads and writes: what must be live in HBM while it runs.
pub(super) fn activation_bytes(cx: &Context, kernel: &Kernel) -> f64 {
    Traffic::of(cx, kernel).activation_bytes
}

/// Weight-only quantization: the time to widen `op`'s weights to the compute type `dtype` on
/// the vector unit first (`None` when the vector unit has no peak for it).
fn dequant_time(cx: &Context, op: &Op, dtype: DType, a: &Achievable) -> Option<f64> {
    let weights: f64 = op
        .inputs
        .iter()
        .zip(op.slots.clone())
        .filter(|(input, _)| input.slot.role() == Role::Weight)
        .map(|(_, slot)| cx.ev.reads[slot])
        .sum();
    let (_, vector_peak) = cx.chip.vector_peak(dtype).ok()?;
    Some(weights * DEQUANT_OPS_PER_WEIGHT / (vector_peak * a.vector))
}

/// The on-chip cache's size and bandwidth, when the chip file gives its bandwidth.
pub(super) fn cache(chip: &Chip) -> Option<(f64, f64)> {
    chip.cache
        .as_ref()
        .and_then(|c| Some((c.size_bytes, c.bandwidth_bytes_per_s?)))
}

/// What crosses a kernel's boundary: each outside input read once, each output written once.
#[derive(Default)]
struct Traffic {
    bytes: f64,
    /// Activation bytes read and written: what must be live in HBM while the kernel runs.
    activation_bytes: f64,
    /// Bytes read from the on-chip cache instead of HBM.
    cache_hit_bytes: f64,
    /// Bytes of scales read with block- or group-scaled formats (in `bytes`).
    scale_bytes: f64,
}

impl Traffic {
    fn of(cx: &Context, kernel: &Kernel) -> Traffic {
        let cache = cache(cx.chip);
        let mut traffic = Traffic::default();
        for read in &kernel.reads {
            traffic.read(cx, read, cache);
        }
        for &i in &kernel.writes {
            let op = &cx.workload.ops[i];
            let b = cx.ev.out_elements[i] * cx.dtypes.get(op.out_slot).bytes();
            traffic.bytes += b;
            if op.out_role == Role::Activation {
                traffic.activation_bytes += b;
            }
        }
        traffic
    }

    /// Adds one source read, at the largest size any member reads it.
    fn read(&mut self, cx: &Context, read: &KernelRead, cache: Option<(f64, f64)>) {
        let elements = read
            .slots
            .iter()
            .fold(0.0f64, |acc, &s| acc.max(cx.ev.reads[s]));
        let format = cx.dtypes.get(read.slot);
        let b = elements * format.bytes();
        self.bytes += b;
        self.scale_bytes += elements * format.scale_bytes();
        if read.slot.role() == Role::Activation {
            self.activation_bytes += b;
        }
        // Just written by the previous kernel and small enough to still sit in one half of
        // the cache (A100/H100/H200 split their L2 in two): read at cache bandwidth.
        if let Some((size, _)) = cache.filter(|(size, _)| read.after_write && b <= size / 2.0) {
            debug_assert!(b <= size);
            self.cache_hit_bytes += b;
        }
    }
}

/// How a kernel's time comes out of its compute and memory times.
struct Timing {
    time_s: f64,
    bound: Bound,
    launch_s: f64,
    /// The compute and memory times the kernel's time was taken from.
    compute_s: f64,
    memory_s: f64,
    quantization: f64,
    dequant_s: f64,
    /// Fraction of the datasheet bandwidth the kernel's HBM bytes move at.
    memory_fraction: f64,
    special_s: f64,
    /// Expected mode: the weights streamed at the small-M fraction.
    small_m: bool,
}

impl Timing {
    /// The datasheet roofline: the larger roof, no fixed cost.
    fn roofline(compute_time_s: f64, memory_time_s: f64) -> Timing {
        let bound = if compute_time_s > memory_time_s {
            Bound::Compute
        } else {
            Bound::Memory
        };
        Timing {
            time_s: compute_time_s.max(memory_time_s),
            bound,
            launch_s: 0.0,
            compute_s: compute_time_s,
            memory_s: memory_time_s,
            quantization: 1.0,
            dequant_s: 0.0,
            memory_fraction: 1.0,
            special_s: 0.0,
            small_m: false,
        }
    }

    /// Expected mode: the launch, then compute and memory overlapped imperfectly.
    fn expected(
        cx: &Context,
        kernel: &Kernel,
        a: &Achievable,
        compute: &Compute,
        traffic: &Traffic,
    ) -> Timing {
        let scheme = compute.scheme.map(|(_, s)| s);
        let (memory_fraction, small_m) = memory_fraction(cx, kernel, a, compute.attention, scheme);
        let t_memory = expected_memory_s(cx, memory_fraction, traffic);
        let special_s = special_added_s(a, compute.special_s, compute.matrix_s);
        let t_compute = compute.expected_s + compute.dequant_s + special_s;
        // A split-KV attention kernel's combine kernel pays a launch and latencies of its own.
        let split = compute.attention && split_kv::splits(cx, kernel);
        let kernels = if split { 2.0 } else { 1.0 };
        let launch_s = kernels * fixed_cost_s(cx.launch_s, a);
        let overlap = overlapped(t_compute, t_memory);
        let bound = if launch_s > t_compute.max(t_memory) {
            Bound::Launch
        } else if t_compute > t_memory {
            Bound::Compute
        } else {
            Bound::Memory
        };
        let quantization = if compute.unquantized_s > 0.0 {
            compute.expected_s / compute.unquantized_s
        } else {
            1.0
        };
        Timing {
            // The quantisation kernels run before this one, on their own.
            time_s: launch_s + overlap + compute.act_quant_s,
            bound,
            launch_s,
            compute_s: t_compute,
            memory_s: t_memory,
            quantization,
            dequant_s: compute.dequant_s,
            memory_fraction,
            special_s,
            small_m,
        }
    }
}

/// Expected mode's memory time: HBM bytes (less cache hits) at `fraction` of the bandwidth,
/// and cache hits at cache bandwidth.
fn expected_memory_s(cx: &Context, fraction: f64, traffic: &Traffic) -> f64 {
    let hbm_bytes = traffic.bytes - traffic.cache_hit_bytes;
    let cache_time_s = cache(cx.chip).map_or(0.0, |(_, bw)| traffic.cache_hit_bytes / bw);
    hbm_bytes / (cx.chip.bandwidth_bytes_per_s * fraction) + cache_time_s
}

/// The fraction of the datasheet bandwidth a kernel's HBM bytes move at in expected mode: a
/// fused attention kernel's own; a large stream's, less for a decode-shaped library GEMM, and
/// lower again for a weight-only quantised one (`weight_only_memory`) or one that multiplies
/// in fp4 (`fp4_memory`: block-scaled W4A4 kernels at small M stream their weights at a
/// fraction of a 16-bit GEMM's rate; docs/sources.md, kernel physics 12); also whether the
/// small-M fraction applied.
fn memory_fraction(
    cx: &Context,
    kernel: &Kernel,
    a: &Achievable,
    attention: bool,
    scheme: Option<Scheme>,
) -> (f64, bool) {
    if attention {
        return (a.attention_memory(), false);
    }
    let small_m = kernel.members.iter().any(|&i| {
        let m = cx.ev.gemm[i].m;
        m > 0.0 && m < SMALL_M
    });
    let scheme_efficiency = match scheme {
        Some(s) if s.weight_only() => a.weight_only_memory,
        Some(s) if s.compute == DType::Fp4 => a.fp4_memory,
        _ => 1.0,
    };
    let path = gemm_path_of(cx, scheme.map(|s| s.weight));
    let small_m_efficiency = match small_m {
        false => 1.0,
        true => a.small_m_memory_on(path) * scheme_efficiency,
    };
    (a.memory * small_m_efficiency, small_m)
}

/// The kernel path a GEMM of weights in `weight` runs in: the scenario's own (a measured
/// kernel row's library), else its engine's for the format; `None`: the chip's section.
fn gemm_path_of(cx: &Context, weight: Option<Format>) -> Option<KernelPath> {
    gemm_path(cx.scenario.gemm_path(), cx.engine, weight)
}

/// Whether `kernel` is a fused attention kernel (FlashAttention, FlashInfer, FlashMLA): two or
/// more matrix ops in one kernel, none of which multiplies a weight (queries by keys,
/// probabilities by values, whatever the cache's layout: per KV head, a sliding window, MLA's
/// latent or its decompressed heads). A library GEMM multiplies a weight or runs alone, and
/// an unfused score GEMM is a library GEMM.
fn is_attention(cx: &Context, kernel: &Kernel) -> bool {
    let (products, weighted) = (kernel.members.iter().map(|&i| &cx.workload.ops[i]))
        .filter(|op| op.kind.matrix_unit())
        .fold((0, false), |(n, w), op| {
            (n + 1, w || op.multiplies_weight())
        });
    products >= 2 && !weighted
}

/// Expected mode's fixed cost of any kernel: its launch (`launch_s`, the step's: eager or
/// inside a graph), and the DRAM latency of its first load and its last store.
pub(super) fn fixed_cost_s(launch_s: f64, a: &Achievable) -> f64 {
    launch_s + 2.0 * a.dram_latency_s
}
