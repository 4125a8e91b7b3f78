//! Named formats and weight groups, priced by hand: every format's bytes include its scales
//! (docs/sources.md, formats), `--dtype GROUP.weight=` types one group apart, and a format
//! whose math the chip lacks runs weight-only and is labelled so.

use stepcost::{types::Format, types::TypeKey, ScenarioSpec};

use crate::common::{assert_close, cell, csv_rows, run, stepcost};

fn spec(types: &[(&str, Format)]) -> ScenarioSpec {
    ScenarioSpec {
        dtypes: types
            .iter()
            .map(|(k, f)| (k.parse::<TypeKey>().unwrap(), *f))
            .collect(),
        ..crate::common::roofline()
    }
}

#[test]
fn block_scaled_fp8_weights_with_bf16_embeddings_by_hand() {
    // Llama-3.1-70B (docs/sources.md, M1): 80 layers of hidden 8192, 64 query and 8 KV heads of
    // 128, FFN 28672, vocab 128256, untied embeddings.
    let (h, layers, vocab) = (8192.0, 80.0, 128256.0);
    let per_layer = h * (64.0 + 2.0 * 8.0) * 128.0 // qkv
        + 64.0 * 128.0 * h // o_proj
        + h * 2.0 * 28672.0 // gate_up
        + 28672.0 * h // down
        + 2.0 * h; // the two norms' scales, in no group: they follow `weight`
    let fp8_b128 = 1.0 + 4.0 / (128.0 * 128.0); // an fp32 scale per 128 x 128 block
    let expected = 2.0 * vocab * h * 2.0 + (layers * per_layer + h) * fp8_b128;
    let r = run(
        "llama-3.1-70b",
        "h100-sxm",
        &[("tokens", 1.0)],
        spec(&[("weight", Format::Fp8B128), ("embed.weight", Format::Bf16)]),
    );
    assert_close(r.summary.weight_bytes, expected, 1e-12);
    // H100 has fp8: the block-scaled GEMMs run W8A8.
    assert_eq!(r.summary.scheme.unwrap().to_string(), "W8A8");
}

#[test]
fn mxfp4_experts_by_hand() {
    // gpt-oss-120b (docs/sources.md, M5): 36 layers, hidden 2880, 128 experts of 2880 (gate and
    // up 2 x 2880 wide, down 2880), 64 query and 8 KV heads of 64, vocab 201088.
    let (h, layers, experts, moe) = (2880.0, 36.0, 128.0, 2880.0);
    let expert_elements = layers * experts * (h * 2.0 * moe + moe * h);
    let other_elements = 2.0 * 201088.0 * h // embedding and lm_head
        + layers * (h * (64.0 + 16.0) * 64.0 + 64.0 * 64.0 * h + h * experts + 2.0 * h)
        + h;
    let mxfp4 = 0.5 + 1.0 / 32.0; // an E8M0 byte per 32 values
    let expected = expert_elements * mxfp4 + other_elements * 2.0;
    // The shipped file states the checkpoint's types: experts MXFP4, the rest bf16.
    let r = run(
        "gpt-oss-120b",
        "h100-sxm",
        &[("tokens", 1.0)],
        crate::common::roofline(),
    );
    assert_close(r.summary.weight_bytes, expected, 1e-12);
    // 61-65 GB as shipped (docs/sources.md, buying: checkpoints as shipped).
    assert!((61e9..=66e9).contains(&expected), "{expected}");
}

#[test]
fn group_scaled_int4_gemv_by_hand() {
    // [1 x 8192] x [8192 x 8192]: int4 values with an fp16 scale and a 4-bit zero per 128,
    // bf16 activation in and out, on the memory roof of an H100 SXM (3.35 TB/s).
    let (k, n) = (8192.0, 8192.0);
    let bytes = k * n * (0.5 + 2.5 / 128.0) + 2.0 * k + 2.0 * n;
    let r = run(
        "gemv",
        "h100-sxm",
        &[],
        spec(&[("weight", Format::Int4G128)]),
    );
    assert_close(r.summary.bytes, bytes, 1e-12);
    assert_close(r.summary.step_time_s, bytes / 3.35e12, 1e-12);
    // AWQ and GPTQ kernels widen to bf16: weight-only on every chip.
    assert_eq!(r.summary.scheme.unwrap().to_string(), "W4A16");
}

#[test]
fn a_format_whose_math_the_chip_lacks_runs_weight_only() {
    let label = |model: &str, chip: &str| {
        let r = run(model, chip, &[("tokens", 1.0)], crate::common::roofline());
        r.summary.scheme.unwrap().to_string()
    };
    // MXFP4 experts: MXFP8 activations where the chip has fp4 (B200), bf16 where not.
    assert_eq!(label("gpt-oss-120b", "b200"), "W4A8");
    assert_eq!(label("gpt-oss-120b", "h100-sxm"), "W4A16");
    // Block-scaled fp8: W8A8 on Hopper, widened to bf16 on Ampere (no fp8).
    assert_eq!(label("deepseek-v3", "h100-sxm"), "W8A8");
    assert_eq!(label("deepseek-v3", "a100-80gb"), "W8A16");
    // The same fp8 weights and activations on A100: widened, not refused.
    let r = run(
        "gemm",
        "a100-80gb",
        &[],
        spec(&[("weight", Format::Fp8), ("activation", Format::Fp8)]),
    );
    assert_eq!(r.summary.scheme.unwrap().to_string(), "W8A16");
    // 2 x 8192^3 FLOPs at A100's bf16 peak, 312 TFLOP/s (its compute roof).
    assert_close(r.summary.step_time_s, 2.0 * 8192f64.powi(3) / 312e12, 1e-12);
}

#[test]
fn sweep_axes_type_one_group_and_keep_the_order_given() {
    let out = stepcost()
        .args([
            "sweep",
            "mixtral-8x7b",
            "--chip",
            "h100-sxm",
            "--dtype",
            "weight=fp8",
            "--dtype",
            "experts.weight=mxfp4,int4-g128",
            "--mode",
            "roofline",
        ])
        .assert()
        .success();
    let (header, rows) = csv_rows(&String::from_utf8(out.get_output().stdout.clone()).unwrap());
    assert_eq!(rows.len(), 2);
    let groups: Vec<&str> = rows
        .iter()
        .map(|r| cell(&header, r, "weight_groups"))
        .collect();
    assert_eq!(groups, ["experts.weight=mxfp4", "experts.weight=int4-g128"]);
    assert_eq!(cell(&header, &rows[0], "weight_dtype"), "fp8");
    // Same experts' values, 1/32 byte of scale (mxfp4) against 2.5/128 (int4-g128): the
    // group-128 file is the smaller.
    let weights = |r: &Vec<String>| cell(&header, r, "weight_bytes").parse::<f64>().unwrap();
    assert!(weights(&rows[1]) < weights(&rows[0]));
}

#[test]
fn run_labels_the_scheme_and_refuses_an_unknown_group() {
    stepcost()
        .args(["run", "gpt-oss-120b", "--chip", "h100-sxm"])
        .assert()
        .success()
        .stdout(predicates::str::contains("experts.weight=mxfp4"))
        .stdout(predicates::str::contains("W4A16"));
    stepcost()
        .args([
            "run",
            "gpt-oss-120b",
            "--chip",
            "h100-sxm",
            "--dtype",
            "expert.weight=mxfp4",
        ])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("unknown weight group `expert`"));
}

#[test]
fn one_sixteen_bit_float_named_runs_the_model_in_it() {
    // Llama-2-7B's checkpoint is bf16; `--dtype activation=fp16` is an fp16 model throughout (an
    // engine's `--dtype float16` casts the checkpoint at load), priced as if all three roles
    // were named: a 512-token prefill on the fp16 tensor peak, not bf16 weights widened to fp32.
    // (From an empty cache: the model holds 4096 positions.)
    let sets = [("tokens", 512.0), ("context", 0.0)];
    let alone = run(
        "llama-2-7b",
        "a100-80gb",
        &sets,
        spec(&[("activation", Format::Fp16)]),
    );
    let all = run(
        "llama-2-7b",
        "a100-80gb",
        &sets,
        spec(&[
            ("weight", Format::Fp16),
            ("activation", Format::Fp16),
            ("kv", Format::Fp16),
        ]),
    );
    assert_eq!(alone.summary.scheme.unwrap().to_string(), "W16A16");
    assert_close(alone.summary.step_time_s, all.summary.step_time_s, 1e-12);
    // Both 16-bit floats named: the mix asked for, computed in fp32 (19.5 TFLOPS on the A100,
    // not 312), so the compute-bound prefill is at least 10x slower.
    let mixed = run(
        "llama-2-7b",
        "a100-80gb",
        &sets,
        spec(&[("weight", Format::Bf16), ("activation", Format::Fp16)]),
    );
    assert_eq!(mixed.summary.scheme.unwrap().to_string(), "W16A32");
    assert!(mixed.summary.step_time_s > 10.0 * all.summary.step_time_s);
}

#[test]
fn a_sweeps_scenarios_each_start_from_the_workloads_types() {
    // The fp16 scenario's KV cache follows its activations; the fp8 one after it keeps the
    // checkpoint's bf16 weights and KV cache (nothing carried over from the scenario before).
    let out = stepcost()
        .args(["sweep", "llama-2-7b", "--chip", "a100-80gb"])
        .args(["--dtype", "activation=fp16,fp8", "--format", "csv"])
        .output()
        .unwrap();
    let (header, rows) = csv_rows(&crate::common::succeeded(out));
    let types: Vec<[&str; 3]> = rows
        .iter()
        .map(|r| ["weight_dtype", "activation_dtype", "kv_dtype"].map(|c| cell(&header, r, c)))
        .collect();
    assert_eq!(
        types,
        [["fp16", "fp16", "fp16"], ["bf16", "fp8", "bf16"]],
        "{header:?}"
    );
}

#[test]
fn plan_and_serving_type_choices_follow_the_same_rule() {
    // `plan` and `serving` list their type choices with `dtype_choices`: each combination is
    // one scenario's settings, so `activation=fp16` alone is an fp16 model there too.
    let key = |k: &str| k.parse::<TypeKey>().unwrap();
    let choices = stepcost::plan::dtype_choices(
        stepcost::types::Types::default(),
        &[(key("activation"), vec![Format::Fp16, Format::Fp8])],
    );
    let briefs: Vec<String> = choices.iter().map(|t| t.brief()).collect();
    assert_eq!(briefs, ["fp16/fp16/fp16", "bf16/fp8/bf16"]);
}
