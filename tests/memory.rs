//! Memory footprint, `fits` and `max_batch`, with figures computed by hand from the shapes.

use stepcost::{types::DType, types::Role, ScenarioSpec};

use predicates::prelude::*;

use crate::common::{run, stepcost};

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
            dtypes: dtypes.iter().map(|&(r, d)| (r.into(), d.into())).collect(),
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

/// The memory a serving engine uses on a chip: its reported capacity (docs/sources.md: U1, U2
/// for the H100's 81,559 MiB; the H200's 143,771 MiB) x vLLM's default utilisation of 0.9,
/// less the chip file's runtime reserve.
fn engine_bytes(chip: &str, reported_mib: f64) -> f64 {
    reported_mib * 1024.0 * 1024.0 * 0.9 - crate::common::chip(chip).runtime_reserve_bytes()
}

/// The activation workspace at vLLM's default 8192 batched tokens: the largest kernel of a
/// prefill of 8192 tokens is SiLU x up, which reads the gate and up halves (2 x 28672 wide)
/// and writes 28672 per token, in bf16.
const WORKSPACE: f64 = 8192.0 * (2.0 * F + F) * 2.0;

/// KV cache per sequence at 4096 cached positions and one new token: K and V, every layer.
fn kv_per_sequence(bytes: f64) -> f64 {
    2.0 * L * KV * D * 4097.0 * bytes
}

#[test]
fn llama_70b_bf16_does_not_fit_one_h200_at_the_default_utilisation() {
    // 141.1 GB of weights against 0.9 x 150.8 GB = 135.7 GB.
    assert!(2.0 * llama_70b_parameters() > engine_bytes("h200", 143771.0));
    let h200 = decode("h200", 1.0, &[]);
    assert!(!h200.summary.fits);
    assert_eq!(h200.summary.max_batch, Some(0));
    // At a utilisation of 1 it loads, with room for a few sequences.
    let all = run(
        "llama-3.1-70b",
        "h200",
        &[("batch", 1.0), ("tokens", 1.0), ("context", 4096.0)],
        ScenarioSpec {
            memory_utilization: Some(1.0),
            ..crate::common::roofline()
        },
    );
    let room = engine_bytes("h200", 143771.0) / 0.9 - 2.0 * llama_70b_parameters() - WORKSPACE;
    let expected = (room / kv_per_sequence(2.0)).floor() as u64;
    assert_eq!(all.summary.max_batch, Some(expected));
    assert!(expected >= 1);
}

#[test]
fn llama_70b_fp8_on_one_h100_at_4k_context_fits_one_to_four_sequences() {
    let at = |batch: f64| {
        run(
            "llama-3.1-70b",
            "h100-sxm",
            &[("batch", batch), ("tokens", 1.0), ("context", 4096.0)],
            ScenarioSpec {
                dtypes: vec![
                    (Role::Weight.into(), DType::Fp8.into()),
                    ("embed.weight".parse().unwrap(), DType::Bf16.into()),
                ],
                ..crate::common::roofline()
            },
        )
    };
    let r = at(1.0);
    assert_eq!(r.summary.kv_bytes, kv_per_sequence(2.0));
    assert_eq!(r.summary.workspace_bytes, WORKSPACE);
    // Linear layers fp8, embeddings and lm_head bf16 (as Meta's fp8 checkpoints ship).
    let weights = llama_70b_parameters() + 2.0 * V * H;
    assert_eq!(r.summary.weight_bytes, weights);
    let room = engine_bytes("h100-sxm", 81559.0) - weights - WORKSPACE;
    let expected = (room / kv_per_sequence(2.0)).floor() as u64;
    assert_eq!(r.summary.max_batch, Some(expected));
    assert!((1..=4).contains(&expected), "{expected}");
    assert!(r.summary.fits);
    // One sequence more than that does not fit.
    assert!(at(expected as f64).summary.fits);
    assert!(!at(expected as f64 + 1.0).summary.fits);
}

#[test]
fn an_fp8_kv_cache_doubles_the_sequences_that_fit() {
    let kv = |k: DType| {
        run(
            "llama-3.1-70b",
            "h200",
            &[("batch", 1.0), ("tokens", 1.0), ("context", 4096.0)],
            ScenarioSpec {
                dtypes: vec![
                    (Role::Weight.into(), DType::Fp8.into()),
                    (Role::Kv.into(), k.into()),
                ],
                ..crate::common::roofline()
            },
        )
        .summary
        .max_batch
        .unwrap()
    };
    let room = engine_bytes("h200", 143771.0) - llama_70b_parameters() - WORKSPACE;
    assert_eq!(
        kv(DType::Bf16),
        (room / kv_per_sequence(2.0)).floor() as u64
    );
    assert_eq!(kv(DType::Fp8), (room / kv_per_sequence(1.0)).floor() as u64);
}

#[test]
fn a_scenario_that_does_not_fit_says_what_would() {
    // 70B bf16 at batch 32 on one H100: 141 GB of weights against 77 GB usable. Split over
    // tp = 2 each chip holds 70.6 GB of weights and 21.5 GB of KV cache: still too much; tp = 4
    // fits.
    let out = stepcost()
        .args([
            "run",
            "llama-3.1-70b",
            "--chip",
            "h100-sxm",
            "--set",
            "batch=32",
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("warning: on h100-sxm this does not fit"),
        "{first}"
    );
    assert!(first.contains("fits with tp=4"), "{first}");
    assert!(!first.contains("tp=2"), "{first}");
    // In CSV the rows stay clean and the warning goes to stderr.
    stepcost()
        .args([
            "run",
            "llama-3.1-70b",
            "--chip",
            "h100-sxm",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .stdout(predicates::str::starts_with("workload,"))
        .stderr(predicates::str::contains("does not fit"));
    // A scenario that fits has no warning.
    stepcost()
        .args(["run", "llama-3.1-8b", "--chip", "h100-sxm"])
        .assert()
        .success()
        .stdout(predicates::str::contains("warning").not());
}

#[test]
fn a_run_that_fits_names_its_next_step_and_its_assumptions() {
    // Llama-3.1-8B at batch 1 on an H100 is memory-bound: twice the batch reads the same
    // weights for twice the tokens, nearly 2x the tokens/s and half the cost per token.
    let out = stepcost()
        .args(["run", "llama-3.1-8b", "--chip", "h100-sxm"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("assumes: decode (tokens=1), batch=1, context=4096, max_batched_tokens=8192, memory utilisation 0.90"),
        "{text}"
    );
    let next = text.lines().last().unwrap();
    assert!(
        next.starts_with("next step: batch 1 -> 2 gives x1.9"),
        "{next}"
    );
    assert!(text.contains("ms per output token"), "{text}");
    // One that does not fit gets the warning instead, and no next step.
    let out = stepcost()
        .args(["run", "llama-3.1-70b", "--chip", "h100-sxm"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(!text.contains("next step"), "{text}");
}

#[test]
fn a_requests_fit_is_judged_at_its_longest_context() {
    // Llama-3.1-70B, fp8 weights, batch 32 on an H200: the step at context 4096 fits, but a
    // request of 16384 in and 16384 out ends with 32767 tokens of bf16 cache per sequence,
    // 80 x 2 x 8 x 128 x 2 B = 327,680 B each: 28,670 tokens more per sequence than the step's
    // 4097, for all 32 sequences.
    let w = crate::common::workload("llama-3.1-70b");
    let spec = ScenarioSpec {
        sets: vec![("batch".into(), 32.0)],
        dtypes: vec![("weight".parse().unwrap(), stepcost::types::Format::Fp8)],
        ..ScenarioSpec::default()
    };
    let scenario = stepcost::Scenario::resolve(&w, &spec).unwrap();
    let chip = crate::common::chip("h200");
    let report = stepcost::price(&w, &chip, &scenario)
        .unwrap()
        .with_request(&w, &chip, &scenario, (16384, 16384))
        .unwrap();
    let r = report.request.unwrap();
    let per_token = L * 2.0 * KV * D * 2.0;
    let grown = per_token * 32.0 * (32767.0 - 4097.0);
    let extra = r.footprint_bytes - report.summary.footprint_bytes;
    assert!(
        (extra / grown - 1.0).abs() < 0.01,
        "{extra} against {grown}"
    );
    assert!(report.summary.fits && !r.fits && !report.fits());
    // The command line says so, and the row's `fits` is false; a request that ends within
    // the memory fits.
    let fits_with = |request: &str| {
        stepcost()
            .args(["run", "llama-3.1-70b", "--chip", "h200"])
            .args([
                "--set",
                "batch=32",
                "--dtype",
                "weight=fp8",
                "--request",
                request,
            ])
            .args(["--format", "csv", "--columns", "fits"])
            .assert()
            .success()
    };
    fits_with("in=16384,out=16384")
        .stdout("fits\nfalse\n")
        .stderr(predicate::str::contains("the request does not fit"));
    fits_with("in=1024,out=1024").stdout("fits\ntrue\n");
}
