//! Hand counts of one kernel and one collective on a chip with round numbers.

use super::*;
use crate::base::dtype::Role;
use crate::base::format::Format;
use crate::base::source::Source;
use crate::base::types::TypeKey;

/// A chip with round numbers, so every expected figure below is a hand count.
const CHIP: &str = "\
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
const ALLREDUCE: &str = "\
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
    scenario.mode = Mode::Roofline;
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
    scenario
        .overrides
        .push((workload.param_index("tp").unwrap(), 16.0));
    let err = price(&workload, &chip, &scenario).unwrap_err();
    assert!(err.is_unsupported(), "{err}");
}

fn priced(mode: Mode) -> StepReport {
    let chip = Chip::load(&Source::from_text("round.yaml", CHIP)).unwrap();
    let workload = Workload::load(&Source::from_text("gemv.yaml", GEMV)).unwrap();
    let mut scenario = Scenario::defaults(&workload);
    scenario.mode = mode;
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
    scenario
        .dtypes
        .set(TypeKey::Role(Role::Weight), Format::Fp4);
    scenario
        .dtypes
        .set(TypeKey::Role(Role::Activation), Format::Fp4);
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
