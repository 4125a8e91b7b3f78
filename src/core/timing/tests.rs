//! Hand counts of one kernel and one collective on a chip with round numbers.

use super::*;
use crate::base::dtype::Role;
use crate::base::format::Format;
use crate::base::source::Source;
use crate::base::types::TypeKey;

/// A chip with round numbers, so every expected figure below is a hand count.
pub(super) const CHIP: &str = "\
name: Round chip
memory: {capacity: 80 GB, bandwidth: 1 TB/s}
matrix: {bf16: 100 TFLOPS, fp8: 200 TFLOPS}
vector: {bf16: 10 TFLOPS, fp32: 5 TFLOPS}
compute_units: 10
launch: 1 us
expected:
  matrix: {bf16: 0.5, fp8: 0.5}
  memory: 0.8
  small_m_memory: 0.5
  row_tile: 64
  cta_tiles: [[128, 128]]
  stream_k: false
  dram_latency: 0.5 us
";

/// `[batch x k] x [k x n]` with its own bf16 weight.
const GEMV: &str = "\
name: gemv
params: {batch: 1, k: 1000, n: 1000}
tokens_per_step: batch
tensors:
  x: {role: activation, shape: [batch, k]}
blocks:
  - name: kernel
    ops:
      - gemv: {name: gemv, of: [x], m: batch, n: n, k: k}
";

/// An all-reduce of `n` bf16 values over `tp` chips.
pub(super) const ALLREDUCE: &str = "\
name: allreduce
params: {n: 1000000, tp: 8}
tensors:
  x: {role: activation, shape: [n]}
blocks:
  - name: kernel
    ops:
      - allreduce: {name: sum, of: [x], elements: n, group: tp}
";

#[test]
fn a_ring_all_reduce_sends_two_n_minus_one_over_n_of_the_buffer() {
    let linked = format!("{CHIP}interconnect: {{bandwidth: 100 GB/s, domain: 8, latency: 1 us}}\n");
    let chip = Chip::load(&Source::from_text("linked.yaml", &linked)).unwrap();
    let workload = Workload::load(&Source::from_text("ar.yaml", ALLREDUCE)).unwrap();
    let mut scenario = Scenario::defaults(&workload);
    scenario.set_mode(Mode::Roofline);
    let r = price(&workload, &chip, &scenario).unwrap();
    let sent_bytes = 2.0 * 7.0 / 8.0 * 1e6 * 2.0;
    let k = &r.prices[0].cost;
    assert!(
        (k.time_s - sent_bytes / 100e9).abs() < 1e-15,
        "{}",
        k.time_s
    );
    assert_eq!(k.bound, Bound::Interconnect);
    // Beyond the domain and without a network, the chip cannot run it.
    scenario.set(&workload, "tp", 16.0).unwrap();
    let err = price(&workload, &chip, &scenario).unwrap_err();
    assert!(err.is_unsupported(), "{err}");
}

fn priced(mode: Mode) -> StepReport {
    let chip = Chip::load(&Source::from_text("round.yaml", CHIP)).unwrap();
    let workload = Workload::load(&Source::from_text("gemv.yaml", GEMV)).unwrap();
    let mut scenario = Scenario::defaults(&workload);
    scenario.set_mode(mode);
    price(&workload, &chip, &scenario).unwrap()
}

#[test]
fn roofline_is_the_slower_roof() {
    let r = priced(Mode::Roofline);
    // 2 m n k FLOPs; x, the weight and the output once each, 2 bytes an element
    assert_eq!(r.summary.flops, 2.0 * 1000.0 * 1000.0);
    assert_eq!(r.summary.bytes, (1000.0 + 1e6 + 1000.0) * 2.0);
    let k = &r.prices[0].cost;
    assert_eq!(k.compute_time_s, 2e6 / 100e12);
    assert_eq!(k.memory_time_s, 2.004e6 / 1e12);
    assert_eq!(k.bound, Bound::Memory);
    assert_eq!(r.summary.step_time_s, 2.004e6 / 1e12);
    assert_eq!(r.summary.tokens_per_s, Some(1.0 / (2.004e6 / 1e12)));
}

#[test]
fn expected_mode_adds_its_terms_by_hand() {
    let r = priced(Mode::Expected);
    let k = &r.prices[0].cost;
    // fixed cost: launch + 2 x DRAM latency
    let fixed = 1e-6 + 2.0 * 0.5e-6;
    // M = 1 < 256 rows: library GEMM bandwidth 0.8 x 0.5 of the datasheet's
    let memory = 2.004e6 / (1e12 * 0.8 * 0.5);
    // M padded to 64 rows (x64); 8 CTAs of 64 x 128 on 10 units, the tail wave 8/10 busy,
    // 1000 of 1024 columns used: 64 / (0.8 x 1000/1024)
    let quantization = 64.0 / (0.8 * (64.0 * 1000.0) / (64.0 * 8.0 * 128.0));
    assert!((k.quantization - quantization).abs() < 1e-12 * quantization);
    let compute = 2e6 / (100e12 * 0.5) * quantization;
    let expected = fixed + (compute * compute + memory * memory).sqrt();
    assert!(
        (k.time_s - expected).abs() < 1e-12 * expected,
        "{} vs {expected}",
        k.time_s
    );
    assert!(r.summary.step_time_s >= r.summary.roofline_step_time_s);
}

fn fp4_everywhere(workload: &Workload) -> Scenario {
    let mut scenario = Scenario::defaults(workload);
    scenario.set_type(TypeKey::Role(Role::Weight), Format::Fp4);
    scenario.set_type(TypeKey::Role(Role::Activation), Format::Fp4);
    scenario
}

#[test]
fn a_narrow_type_the_chip_lacks_is_widened_to_its_16_bit_type() {
    let chip = Chip::load(&Source::from_text("round.yaml", CHIP)).unwrap();
    let workload = Workload::load(&Source::from_text("gemv.yaml", GEMV)).unwrap();
    let r = price(&workload, &chip, &fp4_everywhere(&workload)).unwrap();
    let k = &r.prices[0].cost;
    assert_eq!(k.compute_dtype, DType::Bf16);
    // The bytes stay those of fp4 values; only the multiply is widened.
    assert_eq!(k.bytes, r.summary.bytes);
    assert_eq!(r.summary.scheme.unwrap().to_string(), "W4A16");
}

#[test]
fn a_type_the_chip_lacks_with_no_16_bit_type_is_unsupported() {
    let only_fp32 = CHIP.replace(
        "matrix: {bf16: 100 TFLOPS, fp8: 200 TFLOPS}",
        "matrix: {fp32: 100 TFLOPS}",
    );
    let chip = Chip::load(&Source::from_text("round.yaml", &only_fp32)).unwrap();
    let workload = Workload::load(&Source::from_text("gemv.yaml", GEMV)).unwrap();
    let err = price(&workload, &chip, &fp4_everywhere(&workload)).unwrap_err();
    assert!(err.is_unsupported(), "{err}");
    match err {
        Error::Unsupported(u) => {
            assert_eq!((u.op.as_str(), u.chip.as_str()), ("gemv", "round"));
            assert_eq!(u.dtype, DType::Fp4);
        }
        other => panic!("{other}"),
    }
}

#[test]
fn overlap_is_the_root_of_the_sum_of_squares_even_past_the_squares_range() {
    assert_eq!(super::kernel::overlapped(3.0, 4.0), 5.0);
    // 3e200 and 4e200 square to infinity; their overlap is still 5e200
    let t = super::kernel::overlapped(3e200, 4e200);
    assert!((t / 5e200 - 1.0).abs() < 1e-15, "{t}");
}

/// Two linear layers in a row, one the other's shape transposed: the second reads the first's
/// output.
const TWO_GEMMS: &str = "\
name: two linear layers
params: {m: 256, k: 1024, n: 1024}
tensors:
  x: {role: activation, shape: [m, k]}
blocks:
  - name: kernel
    ops:
      - gemm: {name: up, of: [x], m: m, n: n, k: k}
      - gemm: {name: down, of: [up], m: m, n: k, k: n}
";

/// W8A8 (`weight=fp8 activation=fp8`), with `output` set where given.
fn w8a8(mode: Mode, output: Option<Format>) -> StepReport {
    let chip = Chip::load(&Source::from_text("round.yaml", CHIP)).unwrap();
    let workload = Workload::load(&Source::from_text("two.yaml", TWO_GEMMS)).unwrap();
    let mut scenario = Scenario::defaults(&workload);
    scenario.set_mode(mode);
    scenario.set_type(TypeKey::Role(Role::Weight), Format::Fp8);
    scenario.set_type(TypeKey::Role(Role::Activation), Format::Fp8);
    if let Some(f) = output {
        scenario.set_type(TypeKey::Output, f);
    }
    price(&workload, &chip, &scenario).unwrap()
}

#[test]
fn w8a8_gemms_read_fp8_and_write_bf16() {
    let r = w8a8(Mode::Roofline, None);
    // 256 x 1024 fp8 input, a 1024 x 1024 fp8 weight, a 256 x 1024 bf16 output
    let bytes = 256.0 * 1024.0 + 1024.0 * 1024.0 + 256.0 * 1024.0 * 2.0;
    for p in &r.prices {
        assert_eq!((p.cost.bytes, p.cost.compute_dtype), (bytes, DType::Fp8));
        assert_eq!(p.cost.act_quant_s, 0.0); // a correction of expected mode only
    }
    // `output=fp8`: everything fp8, as before `output` was a type of its own
    let all_fp8 = w8a8(Mode::Roofline, Some(Format::Fp8));
    assert_eq!(all_fp8.prices[0].cost.bytes, bytes - 256.0 * 1024.0);
}

#[test]
fn a_w8a8_gemm_fed_by_a_gemm_pays_a_quantisation_kernel() {
    let r = w8a8(Mode::Expected, None);
    let (up, down) = (&r.prices[0].cost, &r.prices[1].cost);
    // x comes quantised; `down` quantises up's 256 x 1024 bf16 output first: read 2 bytes,
    // write 1 and an fp32 scale per 128 values, 5 vector operations each
    let values: f64 = 256.0 * 1024.0;
    let memory = values * (2.0 + 1.0 + 4.0 / 128.0) / (1e12 * 0.8);
    let compute = values * 5.0 / 10e12;
    let fixed = 1e-6 + 2.0 * 0.5e-6;
    let quant = fixed + (compute * compute + memory * memory).sqrt();
    assert_eq!(up.act_quant_s, 0.0);
    assert!((down.act_quant_s - quant).abs() < 1e-12 * quant);
    // the two GEMMs are the same shape, so the kernel is all that sets them apart
    assert!((down.time_s - up.time_s - quant).abs() < 1e-9 * up.time_s);
    // with fp8 outputs there is nothing to quantise
    let all_fp8 = w8a8(Mode::Expected, Some(Format::Fp8));
    assert_eq!(all_fp8.prices[1].cost.act_quant_s, 0.0);
}

/// A GEMV of `n` columns and `k` rows of weights on the round chip, with `expected` lines
/// added to the chip's section.
fn gemv_on(n: u32, k: u32, weight: Format, expected: &str) -> KernelCost {
    let chip = Chip::load(&Source::from_text(
        "round.yaml",
        &format!("{CHIP}{expected}"),
    ))
    .unwrap();
    let text = GEMV.replace("k: 1000, n: 1000", &format!("k: {k}, n: {n}"));
    let workload = Workload::load(&Source::from_text("gemv.yaml", &text)).unwrap();
    let mut scenario = Scenario::defaults(&workload);
    scenario.set_mode(Mode::Expected);
    scenario.set_type(TypeKey::Role(Role::Weight), weight);
    price(&workload, &chip, &scenario).unwrap().prices[0].cost
}

#[test]
fn split_k_fills_the_last_wave_with_the_split_that_costs_least() {
    // M padded to 64 rows; 500 columns are 4 CTAs of 128 (500 of 512 columns used) on 10
    // units: 4/10 busy without a split
    let used = 500.0 / 512.0;
    let alone = gemv_on(500, 100_000, Format::Bf16, "");
    assert!((alone.quantization - 64.0 / (0.4 * used)).abs() < 1e-9);
    // split 5 ways, 20 CTAs fill two waves exactly; the reduction writes and reads 5 fp32
    // partial sums of the 1 x 500 output, a kernel of its own: 1 us launch, 2 x 0.5 us
    // latency, 20 kB at 0.8 TB/s. The GEMM's own compute is 2 x 500 x 1e5 at 50 TFLOP/s.
    let ideal = 2.0 * 500.0 * 1e5 / 50e12;
    let reduction = 2e-6 + 2.0 * 5.0 * 500.0 * 4.0 / 0.8e12;
    let split = gemv_on(500, 100_000, Format::Bf16, "  split_k: 5\n");
    let expected = 64.0 / used + reduction / ideal;
    assert!((split.quantization - expected).abs() < 1e-9 * expected);
    // K = 128 holds two slices of 64 at most, and that split's reduction outweighs its gain
    let shallow = gemv_on(500, 128, Format::Bf16, "  split_k: 5\n");
    assert!((shallow.quantization - 64.0 / (0.4 * used)).abs() < 1e-9);
}

#[test]
fn weight_only_decode_reads_at_its_own_fraction_of_the_bandwidth() {
    let plain = gemv_on(1000, 1000, Format::Int4, "");
    let slower = gemv_on(1000, 1000, Format::Int4, "  weight_only_memory: 0.5\n");
    assert_eq!(slower.scheme.unwrap().to_string(), "W4A16");
    // the same bytes at half the rate: twice the memory time, and the dequantisation as it was
    let ratio = slower.expected_memory_s / plain.expected_memory_s;
    assert!((ratio - 2.0).abs() < 1e-12, "{ratio}");
    assert_eq!(slower.dequant_s, plain.dequant_s);
    // a 16-bit GEMV is not weight-only and keeps its rate
    let bf16 = gemv_on(1000, 1000, Format::Bf16, "  weight_only_memory: 0.5\n");
    assert_eq!(
        bf16.expected_memory_s,
        gemv_on(1000, 1000, Format::Bf16, "").expected_memory_s
    );
}

#[test]
fn fp4_gemms_at_small_m_stream_at_their_own_fraction() {
    // the round chip with an fp4 peak; W4A4 NVFP4 and W16A16 GEMVs, 1 x 1000 x 1000
    let chip = |extra: &str| {
        let text = CHIP.replace("fp8: 200 TFLOPS}", "fp8: 200 TFLOPS, fp4: 400 TFLOPS}");
        Chip::load(&Source::from_text("round.yaml", &format!("{text}{extra}"))).unwrap()
    };
    let workload = Workload::load(&Source::from_text("gemv.yaml", GEMV)).unwrap();
    let cost = |weight: Format, activation: Format, extra: &str| {
        let mut scenario = Scenario::defaults(&workload);
        scenario.set_mode(Mode::Expected);
        scenario.set_type(TypeKey::Role(Role::Weight), weight);
        scenario.set_type(TypeKey::Role(Role::Activation), activation);
        price(&workload, &chip(extra), &scenario).unwrap().prices[0].cost
    };
    let plain = cost(Format::Nvfp4, Format::Nvfp4, "");
    let slower = cost(Format::Nvfp4, Format::Nvfp4, "  fp4_memory: 0.25\n");
    assert_eq!(slower.scheme.unwrap().to_string(), "W4A4");
    // the same bytes at a quarter of the small-M rate (1 TB/s x 0.8 x 0.5 x 0.25): four times
    // the memory time
    let bytes = 1000.0 * 1000.0 * (0.5 + 1.0 / 16.0) + 1000.0 * (0.5 + 1.0 / 16.0) + 1000.0 * 2.0;
    let expected_s = bytes / 0.1e12;
    assert!((slower.expected_memory_s - expected_s).abs() < 1e-12 * expected_s);
    assert!((slower.expected_memory_s / plain.expected_memory_s - 4.0).abs() < 1e-12);
    // a 16-bit GEMV keeps its rate
    let bf16 = |extra| cost(Format::Bf16, Format::Bf16, extra).expected_memory_s;
    assert_eq!(bf16("  fp4_memory: 0.25\n"), bf16(""));
}

#[test]
fn fp4_gemms_leave_the_tail_wave_part_empty_where_others_stream_k() {
    // the round chip with Stream-K and an fp4 peak: 10 units, 128 x 128 CTA tiles, rows padded
    // to 64; a 1 x 1000 x 1000000 GEMV: 8 CTAs of 64 x 128 (1000 of 1024 columns used), one
    // partial wave
    let text = CHIP
        .replace("fp8: 200 TFLOPS}", "fp8: 200 TFLOPS, fp4: 400 TFLOPS}")
        .replace("stream_k: false", "stream_k: true");
    let chip = Chip::load(&Source::from_text("round.yaml", &text)).unwrap();
    let workload = Workload::load(&Source::from_text("gemv.yaml", GEMV)).unwrap();
    let k = workload.param_index("k").unwrap();
    let quantization = |format: Format| {
        let mut scenario = Scenario::defaults(&workload);
        scenario.set_mode(Mode::Expected);
        scenario.set_param(k, 1e6).unwrap();
        scenario.set_type(TypeKey::Role(Role::Weight), format);
        scenario.set_type(TypeKey::Role(Role::Activation), format);
        price(&workload, &chip, &scenario).unwrap().prices[0]
            .cost
            .quantization
    };
    // bf16 with Stream-K: the 8 tiles split over all 10 units; the 2 extra pieces' fp32 partial
    // sums (64 x 128 each) through HBM at 0.8 TB/s (no cache bandwidth), after the owner's wait
    // of one DRAM latency (0.5 us), beside 2 GFLOP at 50 TFLOPS
    let fixup_s = 2.0 * 2.0 * 64.0 * 128.0 * 4.0 / 0.8e12 + 0.5e-6;
    let ideal_s = 2.0 * 1000.0 * 1e6 / 50e12;
    // (the fixup is a time of its own: the padding of M to 64 rows does not scale it)
    let expected = 64.0 * 1024.0 / 1000.0 + fixup_s / ideal_s;
    assert!((quantization(Format::Bf16) - expected).abs() < 1e-9 * expected);
    // fp4: no Stream-K, the wave 8 of 10 full
    let expected = 64.0 / (8.0 / 10.0 * (1000.0 / 1024.0));
    assert!((quantization(Format::Nvfp4) - expected).abs() < 1e-9 * expected);
}

/// One elementwise kernel whose size depends on none of the step's params, in a workload with
/// the params a serving step has: `batch` sequences on each of `dp` replicas.
pub(super) const STEP: &str = "\
name: step
params: {batch: 1, tokens: 1, context: 0, prefill_tokens: 0, dp: 1, engine_host: 1, n: 1000}
tokens_per_step: batch * dp
sequences: batch * dp
tensors:
  x: {role: activation, shape: [n]}
blocks:
  - name: kernel
    ops:
      - elementwise: {name: scale, of: [x], elements: n, flops_per_element: 1}
";

/// `workload`'s default scenario in `mode`, with the params `sets` names set.
pub(super) fn scenario_with(workload: &Workload, mode: Mode, sets: &[(&str, f64)]) -> Scenario {
    let mut scenario = Scenario::defaults(workload);
    scenario.set_mode(mode);
    for (name, value) in sets {
        scenario.set(workload, name, *value).unwrap();
    }
    scenario
}

#[test]
fn a_lone_kernel_pays_the_launch_its_benchmark_timed() {
    let eager = format!("{CHIP}eager_launch: 3 us\n");
    let chip = Chip::load(&Source::from_text("eager.yaml", &eager)).unwrap();
    let kernel = GEMV.replace("{batch: 1,", "{launch_mode: 1, batch: 1,");
    let workload = Workload::load(&Source::from_text("gemv.yaml", &kernel)).unwrap();
    let (mut ev, mut costs) = (workload.new_evaluation(), Vec::new());
    let mut cost_at = |mode: f64| {
        let scenario = scenario_with(&workload, Mode::Expected, &[("launch_mode", mode)]);
        // One evaluation for the three, as a sweep reuses it: the memo must not keep a cost
        // priced under another launch.
        price_step(&workload, &chip, &scenario, &mut ev, &mut costs).unwrap();
        (costs[0].launch_s, costs[0].time_s)
    };
    // The DRAM latency of the first load and the last store (2 x 0.5 us), plus none (a
    // profiler's kernel time), the in-graph launch (1 us) or the host's (3 us).
    let (profiler, graph, host) = (cost_at(0.0), cost_at(1.0), cost_at(2.0));
    assert_eq!(profiler.0, 1e-6);
    assert_eq!(graph.0, 1e-6 + 1e-6);
    assert_eq!(host.0, 3e-6 + 1e-6);
    // The rest of the kernel's time does not depend on it.
    assert!(((graph.1 - graph.0) - (profiler.1 - profiler.0)).abs() < 1e-15);
    assert!(((host.1 - host.0) - (profiler.1 - profiler.0)).abs() < 1e-15);
    // A value that names no mode is refused, not priced as one.
    let scenario = scenario_with(&workload, Mode::Expected, &[("launch_mode", 0.5)]);
    let err = price(&workload, &chip, &scenario).unwrap_err().to_string();
    assert!(err.contains("`launch_mode` is 0.5"), "{err}");
}

#[test]
fn a_step_with_prompt_tokens_pays_the_eager_launch() {
    let eager = format!("{CHIP}eager_launch: 3 us\n");
    let chip = Chip::load(&Source::from_text("eager.yaml", &eager)).unwrap();
    let workload = Workload::load(&Source::from_text("step.yaml", STEP)).unwrap();
    let (mut ev, mut costs) = (workload.new_evaluation(), Vec::new());
    let mut launch_at = |sets: &[(&str, f64)]| {
        let scenario = scenario_with(&workload, Mode::Expected, sets);
        // One evaluation for every step, as a sweep reuses it: the kernel's numbers never
        // change, so only the launch can tell a prefill from a decode step.
        price_step(&workload, &chip, &scenario, &mut ev, &mut costs).unwrap();
        costs[0].launch_s
    };
    // Launch plus the DRAM latency of the first load and the last store (2 x 0.5 us).
    let (graph_s, eager_s) = (1e-6 + 1e-6, 3e-6 + 1e-6);
    assert_eq!(launch_at(&[]), graph_s);
    assert_eq!(launch_at(&[("tokens", 128.0)]), eager_s);
    assert_eq!(launch_at(&[("tokens", 1.0)]), graph_s);
    assert_eq!(launch_at(&[("prefill_tokens", 512.0)]), eager_s);
    // A chip that gives no eager figure launches every step as its graph does.
    let plain = Chip::load(&Source::from_text("round.yaml", CHIP)).unwrap();
    let scenario = scenario_with(&workload, Mode::Expected, &[("tokens", 128.0)]);
    assert_eq!(
        price(&workload, &plain, &scenario).unwrap().prices[0]
            .cost
            .launch_s,
        graph_s
    );
}

#[test]
fn a_tile_of_a_cta_pair_takes_two_units_of_a_wave() {
    // [256 x 1000] x [1000 x 768] on 10 units with 128 x 128 tiles, no Stream-K: 2 x 6 = 12
    // tiles, each whole (no padding, no overhang).
    let quantization = |expected: &str| {
        let chip = Chip::load(&Source::from_text(
            "round.yaml",
            &format!("{CHIP}{expected}"),
        ));
        let text = GEMV.replace(
            "{batch: 1, k: 1000, n: 1000}",
            "{batch: 256, k: 1000, n: 768}",
        );
        let workload = Workload::load(&Source::from_text("gemm.yaml", &text)).unwrap();
        let mut scenario = Scenario::defaults(&workload);
        scenario.set_mode(Mode::Expected);
        let r = price(&workload, &chip.unwrap(), &scenario).unwrap();
        r.prices[0].cost.quantization
    };
    // One unit a tile: 12 tiles in 2 waves of 10, 12 / 20 of the slots busy.
    assert!((quantization("") - 20.0 / 12.0).abs() < 1e-12);
    // A pair of units a tile (tiles of 128 rows or more): a wave holds 5; 12 tiles in 3 waves,
    // 12 / 15 busy.
    assert!((quantization("  cta_pair_rows: 128\n") - 15.0 / 12.0).abs() < 1e-12);
    // Tiles shorter than the pair's rows take one unit, as before.
    assert!((quantization("  cta_pair_rows: 256\n") - 20.0 / 12.0).abs() < 1e-12);
}

#[test]
fn a_served_step_waits_for_its_engines_host_work() {
    let hosted = format!("{CHIP}  host_step: 100 us\n  host_sequence: 10 us\n");
    let chip = Chip::load(&Source::from_text("hosted.yaml", &hosted)).unwrap();
    let served = Workload::load(&Source::from_text("step.yaml", STEP)).unwrap();
    let step = |workload: &Workload, mode: Mode, sets: &[(&str, f64)]| {
        let scenario = scenario_with(workload, mode, sets);
        price(workload, &chip, &scenario).map(|r| r.summary)
    };
    let bare = step(
        &served,
        Mode::Expected,
        &[("batch", 4.0), ("engine_host", 0.0)],
    )
    .unwrap();
    assert_eq!(bare.host_time_s, 0.0);
    // 100 us a step and 10 us for each of its 4 sequences, on top of the kernels.
    let host_s = |sets: &[(&str, f64)]| {
        let s = step(&served, Mode::Expected, &[&[("batch", 4.0)], sets].concat()).unwrap();
        assert!((s.step_time_s - bare.step_time_s - s.host_time_s).abs() < 1e-15);
        s.host_time_s
    };
    assert!((host_s(&[]) - 140e-6).abs() < 1e-15, "{}", host_s(&[]));
    // Each replica's engine steps its own 4 sequences, alongside the other's.
    assert!((host_s(&[("dp", 2.0)]) - 140e-6).abs() < 1e-15);
    assert!((host_s(&[("engine_host", 0.5)]) - 70e-6).abs() < 1e-15);
    // None on the roofline, nor for a lone kernel's benchmark (no `engine_host` param).
    assert_eq!(step(&served, Mode::Roofline, &[]).unwrap().host_time_s, 0.0);
    let kernel = Workload::load(&Source::from_text("gemv.yaml", GEMV)).unwrap();
    assert_eq!(step(&kernel, Mode::Expected, &[]).unwrap().host_time_s, 0.0);
    // A share outside 0..1 is refused by name.
    let err = step(&served, Mode::Expected, &[("engine_host", 1.5)]).unwrap_err();
    assert!(err.to_string().contains("engine_host"), "{err}");
}
