//! Memory footprint, `fits` and `max_batch`, with figures computed by hand from the shapes.

use stepcost::{DType, Role, ScenarioSpec};

use crate::common::run;

/// Llama-3.1-70B (docs/sources.md: M1, M2c).
const L: f64 = 80.0;
const H: f64 = 8192.0;
const HEADS: f64 = 64.0;
const KV: f64 = 8.0;
const D: f64 = 128.0;
const F: f64 = 28672.0;
const V: f64 = 128256.0;

fn llama_70b_parameters() -> f64 {
    let attention = H * (HEADS + 2.0 * KV) * D + HEADS * D * H;
    let ffn = 3.0 * H * F;
    let norms = 2.0 * H;
    L * (attention + ffn + norms) + 2.0 * V * H + H
}

fn decode(chip: &str, batch: f64, dtypes: &[(Role, DType)]) -> stepcost::StepReport {
    run(
        "llama-3.1-70b",
        chip,
        &[("batch", batch), ("tokens", 1.0), ("context", 4096.0)],
        ScenarioSpec {
            dtypes: dtypes.to_vec(),
            ..crate::common::roofline()
        },
    )
}

#[test]
fn the_weights_are_the_parameters_at_their_type() {
    let params = llama_70b_parameters();
    // docs/sources.md, M8: 70.554B
    assert_eq!((params / 1e7).round() / 100.0, 70.55);
    assert_eq!(
        decode("h100-sxm", 1.0, &[]).summary.weight_bytes,
        2.0 * params
    );
    let fp8 = decode("h100-sxm", 1.0, &[(Role::Weight, DType::Fp8)]);
    assert_eq!(fp8.summary.weight_bytes, params);
}

#[test]
fn llama_70b_bf16_does_not_fit_an_h100_but_fits_an_h200_at_small_batch() {
    let h100 = decode("h100-sxm", 1.0, &[]);
    assert!(!h100.summary.fits);
    assert_eq!(h100.summary.max_batch, Some(0));
    let h200 = decode("h200", 1.0, &[]);
    assert!(h200.summary.fits);
    // KV cache: 2 (K and V) x layers x kv_heads x head_dim x (context + 1) positions, bf16
    let kv_per_sequence = 2.0 * L * KV * D * 4097.0 * 2.0;
    assert_eq!(h200.summary.kv_bytes, kv_per_sequence);
    // peak activations at decode: lm_head reads one normed hidden row and writes the logits
    let activations_per_sequence = (H + V) * 2.0;
    assert_eq!(h200.summary.activation_bytes, activations_per_sequence);
    let capacity = 143771.0 * 1024.0 * 1024.0; // the H200's usable memory
    let room = capacity - 2.0 * llama_70b_parameters();
    let max_batch = (room / (kv_per_sequence + activations_per_sequence)).floor() as u64;
    assert_eq!(max_batch, 7);
    assert_eq!(h200.summary.max_batch, Some(max_batch));
    assert!(decode("h200", max_batch as f64, &[]).summary.fits);
    assert!(!decode("h200", max_batch as f64 + 1.0, &[]).summary.fits);
}

#[test]
fn an_fp8_kv_cache_raises_max_batch() {
    let bf16 = decode("h200", 1.0, &[]).summary.max_batch.unwrap();
    let fp8 = decode("h200", 1.0, &[(Role::Kv, DType::Fp8)]);
    let kv_per_sequence = 2.0 * L * KV * D * 4097.0; // 1 byte per element
    let room = 143771.0 * 1024.0 * 1024.0 - 2.0 * llama_70b_parameters();
    let expected = (room / (kv_per_sequence + (H + V) * 2.0)).floor() as u64;
    assert_eq!(fp8.summary.max_batch, Some(expected));
    assert!(expected > bf16);
    assert_eq!(expected, 14);
}
