//! The models added beside the first twelve (Llama-4, Gemma-3, Qwen3 dense, gpt-oss-20b,
//! DeepSeek-R1 and V3.1, Kimi-K2, GLM-4.5, Nemotron-H): parameter counts recomputed here from
//! each config's shapes and against the figures their publishers state, KV cache per token as
//! the memory model counts it (sliding and chunked layers capped at their window), Nemotron-H's
//! recurrent state per sequence, and the checkpoint types each file defaults to
//! (docs/sources.md: model shapes M9 to M17, M8).

use stepcost::{types::DType, types::Role, ScenarioSpec, StepReport};

use crate::common::{cell, csv_rows, run, stepcost};

fn decode(model: &str, chip: &str, sets: &[(&str, f64)], spec: ScenarioSpec) -> StepReport {
    let mut all = vec![("tokens", 1.0)];
    all.extend_from_slice(sets);
    run(model, chip, &all, spec)
}

/// Weight elements the engine counts for `model` (bf16 weights: two bytes each).
fn counted(model: &str) -> f64 {
    let bf16 = ScenarioSpec {
        dtypes: vec![(Role::Weight.into(), DType::Bf16.into())],
        ..crate::common::roofline()
    };
    decode(model, "b200", &[], bf16).summary.weight_bytes / 2.0
}

/// q, k, v and o projections of grouped-query attention.
fn gqa(hidden: f64, heads: f64, kv_heads: f64, head_dim: f64) -> f64 {
    hidden * heads * head_dim + 2.0 * hidden * kv_heads * head_dim + heads * head_dim * hidden
}

/// A dense decoder: layers of attention, a SwiGLU FFN and `norms` RMSNorms, the embedding
/// (and an untied lm_head), the final norm.
#[allow(clippy::too_many_arguments)]
fn dense(
    hidden: f64,
    layers: f64,
    (heads, kv_heads, head_dim): (f64, f64, f64),
    ffn: f64,
    vocab: f64,
    norms: f64,
    tied: bool,
) -> f64 {
    let layer = gqa(hidden, heads, kv_heads, head_dim) + 3.0 * hidden * ffn + norms * hidden;
    layers * layer + vocab * hidden * if tied { 1.0 } else { 2.0 } + hidden
}

/// GQA attention with `dense_layers` dense SwiGLU FFNs of `ffn` and MoE layers of `experts`
/// routed and `shared` shared experts of `moe_ffn`, a router of hidden x experts.
#[allow(clippy::too_many_arguments)]
fn moe(
    hidden: f64,
    layers: f64,
    (heads, kv_heads, head_dim): (f64, f64, f64),
    vocab: f64,
    (dense_layers, ffn): (f64, f64),
    (experts, shared, moe_ffn): (f64, f64, f64),
) -> f64 {
    let attn = gqa(hidden, heads, kv_heads, head_dim) + 2.0 * hidden;
    let dense = dense_layers * (attn + 3.0 * hidden * ffn);
    let experts = (experts + shared) * 3.0 * hidden * moe_ffn + hidden * experts;
    dense + (layers - dense_layers) * (attn + experts) + 2.0 * vocab * hidden + hidden
}

/// DeepSeek-V3's MLA (q_lora 1536, kv_lora 512, qk 128 + 64, v 128) with `heads` heads, a
/// dense FFN of 18432 on `dense_layers` layers and MoE layers of `experts` routed experts and
/// one shared expert of 2048 (router and its bias).
fn mla_moe(heads: f64, dense_layers: f64, experts: f64, vocab: f64) -> f64 {
    let h = 7168.0;
    let attn = h * 1536.0
        + 1536.0
        + 1536.0 * heads * 192.0
        + h * 576.0
        + 512.0
        + 512.0 * heads * 256.0
        + heads * 128.0 * h
        + 2.0 * h;
    let moe_layer = (experts + 1.0) * 3.0 * h * 2048.0 + h * experts + experts;
    dense_layers * (attn + 3.0 * h * 18432.0)
        + (61.0 - dense_layers) * (attn + moe_layer)
        + 2.0 * vocab * h
        + h
}

#[test]
fn parameter_counts_match_the_configs_within_a_tenth_of_a_percent() {
    let gpt_oss_20b = moe(
        2880.0,
        24.0,
        (64.0, 8.0, 64.0),
        201088.0,
        (0.0, 0.0),
        (32.0, 0.0, 2880.0),
    );
    let expected = [
        (
            "qwen3-8b",
            dense(
                4096.0,
                36.0,
                (32.0, 8.0, 128.0),
                12288.0,
                151936.0,
                2.0,
                false,
            ),
        ),
        (
            "qwen3-32b",
            dense(
                5120.0,
                64.0,
                (64.0, 8.0, 128.0),
                25600.0,
                151936.0,
                2.0,
                false,
            ),
        ),
        (
            "gemma-3-27b",
            dense(
                5376.0,
                62.0,
                (32.0, 16.0, 128.0),
                21504.0,
                262208.0,
                4.0,
                true,
            ),
        ),
        ("gpt-oss-20b", gpt_oss_20b),
        (
            "llama-4-scout",
            moe(
                5120.0,
                48.0,
                (40.0, 8.0, 128.0),
                202048.0,
                (0.0, 16384.0),
                (16.0, 1.0, 8192.0),
            ),
        ),
        (
            "llama-4-maverick",
            moe(
                5120.0,
                48.0,
                (40.0, 8.0, 128.0),
                202048.0,
                (24.0, 16384.0),
                (128.0, 1.0, 8192.0),
            ),
        ),
        (
            "glm-4.5",
            moe(
                5120.0,
                92.0,
                (96.0, 8.0, 128.0),
                151552.0,
                (3.0, 12288.0),
                (160.0, 1.0, 1536.0),
            ),
        ),
        ("deepseek-r1", mla_moe(128.0, 3.0, 256.0, 129280.0)),
        ("deepseek-v3.1", mla_moe(128.0, 3.0, 256.0, 129280.0)),
        ("kimi-k2", mla_moe(64.0, 1.0, 384.0, 163840.0)),
    ];
    for (model, params) in expected {
        let ratio = counted(model) / params;
        assert!((ratio - 1.0).abs() < 1e-3, "{model}: {ratio}");
    }
}

/// What each publisher states, to the precision it prints: `(model, counted part, stated,
/// half of the last printed digit)`. Where the statement counts something a text step does
/// not run, the test says so and compares what is comparable.
#[test]
fn parameter_counts_match_the_published_figures() {
    let embeddings = |vocab: f64, hidden: f64, copies: f64| copies * vocab * hidden;
    let cases = [
        // gpt-oss model card (M13): 20.91B in all. Biases and sinks (6.8M) are left out.
        ("gpt-oss-20b", counted("gpt-oss-20b"), 20.91e9, 0.005e9),
        // Qwen3 model cards (M12): 8.2B and 6.95B without embeddings; 32.8B and 31.2B.
        ("qwen3-8b", counted("qwen3-8b"), 8.2e9, 0.05e9),
        (
            "qwen3-8b non-embedding",
            counted("qwen3-8b") - embeddings(151936.0, 4096.0, 2.0),
            6.95e9,
            0.005e9,
        ),
        ("qwen3-32b", counted("qwen3-32b"), 32.8e9, 0.05e9),
        (
            "qwen3-32b non-embedding",
            counted("qwen3-32b") - embeddings(151936.0, 5120.0, 2.0),
            31.2e9,
            0.05e9,
        ),
        // Gemma 3 technical report (M11), 27B: 25,600M non-embedding (the vision encoder and
        // the embedding table are listed apart).
        (
            "gemma-3-27b non-embedding",
            counted("gemma-3-27b") - embeddings(262208.0, 5376.0, 1.0),
            25600e6,
            0.5e6,
        ),
        // DeepSeek-R1 and V3.1 (M14): 671B without the MTP module.
        ("deepseek-r1", counted("deepseek-r1"), 671e9, 0.5e9),
        ("deepseek-v3.1", counted("deepseek-v3.1"), 671e9, 0.5e9),
        // Kimi-K2 README (M15): "1T" total.
        ("kimi-k2", counted("kimi-k2"), 1e12, 0.05e12),
    ];
    for (what, count, stated, half_digit) in cases {
        assert!(
            (count - stated).abs() <= half_digit,
            "{what}: {count} vs {stated} stated"
        );
    }
    // Scout's "109B" counts its vision encoder, which a text step does not run: the text
    // decoder is less, by less than the 1B such an encoder and projector come to.
    let scout = counted("llama-4-scout");
    assert!(scout < 109e9 && scout > 108e9 - 1e9, "{scout}");
    // Maverick's "400B" (M9) is rounded down: its text decoder alone is 400.7B, 0.18 % more.
    let maverick = counted("llama-4-maverick");
    assert!(maverick > 400e9 && maverick / 400e9 < 1.002, "{maverick}");
    // GLM-4.5's "355B" (M16) is the checkpoint's with its MTP layer, not priced here: the
    // model without it is 0.6 % smaller.
    let glm = counted("glm-4.5");
    assert!(glm < 355e9 && glm / 355e9 > 0.99, "{glm}");
}

/// KV cache bytes of a decode step at batch 2 and `context`, bf16.
fn kv_bytes(model: &str, context: f64) -> f64 {
    let sets = [("batch", 2.0), ("context", context)];
    decode(model, "b200", &sets, crate::common::roofline())
        .summary
        .kv_bytes
}

#[test]
fn kv_cache_per_token_matches_hand_counts() {
    let bf16 = 2.0;
    // K and V of kv_heads x head_dim per layer per position.
    let gqa = |kv_heads: f64, head_dim: f64| 2.0 * kv_heads * head_dim * bf16;
    let positions = 2.0 * 100.0; // batch 2, context 99 + 1 new token
    for (model, layers, per_layer) in [
        ("qwen3-8b", 36.0, gqa(8.0, 128.0)),
        ("qwen3-32b", 64.0, gqa(8.0, 128.0)),
        ("glm-4.5", 92.0, gqa(8.0, 128.0)),
        ("llama-4-scout", 48.0, gqa(8.0, 128.0)),
        ("gemma-3-27b", 62.0, gqa(16.0, 128.0)),
        ("gpt-oss-20b", 24.0, gqa(8.0, 64.0)),
        // MLA: one latent of 512 + 64 rope dims, K and V alike
        ("kimi-k2", 61.0, 576.0 * bf16),
        ("deepseek-r1", 61.0, 576.0 * bf16),
    ] {
        assert_eq!(
            kv_bytes(model, 99.0),
            layers * positions * per_layer,
            "{model}"
        );
    }
    // Past the window, sliding and chunked layers keep `window` positions, global ones all.
    let seqs = 2.0;
    // Llama-4: 36 chunked layers of 8192, 12 global.
    assert_eq!(
        kv_bytes("llama-4-maverick", 16383.0),
        seqs * (12.0 * 16384.0 + 36.0 * 8192.0) * gqa(8.0, 128.0)
    );
    // Gemma-3: 52 sliding layers of 1024, 10 global.
    assert_eq!(
        kv_bytes("gemma-3-27b", 4095.0),
        seqs * (10.0 * 4096.0 + 52.0 * 1024.0) * gqa(16.0, 128.0)
    );
    // gpt-oss-20b: 12 sliding layers of 128, 12 global.
    assert_eq!(
        kv_bytes("gpt-oss-20b", 1023.0),
        seqs * (12.0 * 1024.0 + 12.0 * 128.0) * gqa(8.0, 64.0)
    );
}

#[test]
fn gpt_oss_120b_fits_one_h100_in_its_checkpoint_types() {
    let sets = [("batch", 16.0), ("context", 8192.0)];
    let r = decode("gpt-oss-120b", "h100-sxm", &sets, crate::common::roofline());
    assert!(r.summary.fits, "{:?}", r.summary);
    // MXFP4 experts (0.5 byte + one 1-byte scale per 32) and bf16 for the rest.
    let (h, layers, experts, vocab) = (2880.0, 36.0, 128.0, 201088.0);
    let expert_elements = layers * experts * 3.0 * h * 2880.0;
    let attention = layers * gqa(h, 64.0, 8.0, 64.0);
    let rest = layers * (h * experts + 2.0 * h) + 2.0 * vocab * h + h;
    let bytes = expert_elements * (0.5 + 1.0 / 32.0) + (attention + rest) * 2.0;
    crate::common::assert_close(r.summary.weight_bytes, bytes, 1e-12);
    // In bf16 the same model is 234 GB: it would not.
    let bf16 = ScenarioSpec {
        dtypes: vec![(Role::Weight.into(), DType::Bf16.into())],
        ..crate::common::roofline()
    };
    assert!(!decode("gpt-oss-120b", "h100-sxm", &sets, bf16).summary.fits);
}

#[test]
fn workloads_lists_the_new_models_with_their_checkpoint_types() {
    let out = stepcost()
        .args(["workloads", "--format", "csv"])
        .assert()
        .success();
    let (header, rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    let types = |id: &str| {
        let row = rows
            .iter()
            .find(|r| cell(&header, r, "workload") == id)
            .unwrap_or_else(|| panic!("`{id}` is not listed"));
        (
            cell(&header, row, "weight_dtype").to_owned(),
            cell(&header, row, "weight_groups").to_owned(),
        )
    };
    let fp8_blocks = ("fp8-b128".to_owned(), "embed.weight=bf16".to_owned());
    assert_eq!(types("deepseek-r1"), fp8_blocks);
    assert_eq!(types("deepseek-v3.1"), fp8_blocks);
    assert_eq!(types("kimi-k2"), fp8_blocks);
    let mxfp4 = ("bf16".to_owned(), "experts.weight=mxfp4".to_owned());
    assert_eq!(types("gpt-oss-20b"), mxfp4);
    let bf16 = ("bf16".to_owned(), String::new());
    for id in [
        "llama-4-scout",
        "llama-4-maverick",
        "gemma-3-27b",
        "qwen3-8b",
        "qwen3-32b",
        "glm-4.5",
        "nemotron-h-8b",
    ] {
        assert_eq!(types(id), bf16, "{id}");
    }
    assert_eq!(
        types("llama-4-maverick-fp8"),
        ("bf16".to_owned(), "experts.weight=fp8".to_owned())
    );
}

#[test]
fn dtype_overrides_the_checkpoint_types() {
    // --dtype weight=bf16 on an fp8 checkpoint: every weight two bytes, the group's default
    // overridden too.
    let bf16 = ScenarioSpec {
        dtypes: vec![(Role::Weight.into(), DType::Bf16.into())],
        ..crate::common::roofline()
    };
    let native = decode("kimi-k2", "b200", &[], crate::common::roofline());
    let widened = decode("kimi-k2", "b200", &[], bf16);
    let elements = mla_moe(64.0, 1.0, 384.0, 163840.0);
    crate::common::assert_close(widened.summary.weight_bytes, 2.0 * elements, 1e-3);
    assert!(native.summary.weight_bytes < 0.52 * widened.summary.weight_bytes);
}

/// Nemotron-H-8B (M17): 24 Mamba-2, 4 attention and 24 MLP layers.
const NEMOTRON: &str = "nemotron-h-8b";

#[test]
fn nemotron_h_counts_its_three_kinds_of_layer() {
    let (h, vocab) = (4096.0, 131072.0);
    let (heads, p, n, groups, kernel) = (128.0, 64.0, 128.0, 8.0, 4.0);
    let inner = heads * p;
    let conv = inner + 2.0 * groups * n; // x, B and C: 10240 channels
                                         // norm, in_proj (z, x, B, C, dt), conv taps and biases, A_log / D / dt_bias, gated norm,
                                         // out_proj
    let mamba = h
        + h * (2.0 * inner + 2.0 * groups * n + heads)
        + conv * (kernel + 1.0)
        + 3.0 * heads
        + inner
        + inner * h;
    let attention = h + gqa(h, 32.0, 8.0, 128.0);
    let mlp = h + 2.0 * h * 21504.0;
    let total = 24.0 * mamba + 4.0 * attention + 24.0 * mlp + 2.0 * vocab * h + h;
    let ratio = counted(NEMOTRON) / total;
    assert!((ratio - 1.0).abs() < 1e-3, "{ratio}");
    // "8B" (M17), to the digit it is printed at.
    assert!((counted(NEMOTRON) - 8e9).abs() <= 0.5e9);
}

#[test]
fn nemotron_h_keeps_a_state_per_sequence_and_a_cache_in_four_layers() {
    let at = |batch: f64, context: f64| {
        let sets = [("batch", batch), ("context", context)];
        decode(NEMOTRON, "h100-sxm", &sets, crate::common::roofline()).summary
    };
    let (short, long) = (at(2.0, 99.0), at(2.0, 4095.0));
    // KV: 4 attention layers x 2 x 8 KV heads x 128, bf16, per position.
    let per_position = 4.0 * 2.0 * 8.0 * 128.0 * 2.0;
    assert_eq!(short.kv_bytes, 2.0 * 100.0 * per_position);
    assert_eq!(long.kv_bytes, 2.0 * 4096.0 * per_position);
    // State: 24 layers x (SSM 128 x 64 x 128 + conv 3 x 10240), bf16, per sequence, whatever
    // the context.
    let per_sequence = 24.0 * (128.0 * 64.0 * 128.0 + 3.0 * 10240.0) * 2.0;
    assert_eq!(per_sequence, 51_806_208.0);
    assert_eq!(short.state_bytes, 2.0 * per_sequence);
    assert_eq!(long.state_bytes, short.state_bytes);
    // Memory counts it: the footprint holds it, and the largest batch pays for it.
    assert_eq!(
        long.footprint_bytes,
        long.weight_bytes
            + long.kv_bytes
            + long.state_bytes
            + long.workspace_bytes
            + long.reserve_bytes
    );
    let room = long.usable_bytes - long.weight_bytes - long.workspace_bytes - long.reserve_bytes;
    let per_seq = per_sequence + 4096.0 * per_position;
    assert_eq!(long.max_batch, Some((room / per_seq).floor() as u64));
}

#[test]
fn nemotron_h_decode_reads_each_state_once() {
    let sets = [("batch", 8.0)];
    let r = decode(NEMOTRON, "h100-sxm", &sets, crate::common::roofline());
    let ssm = r.prices.iter().find(|p| p.name == "ssm").unwrap();
    // The recurrent update per head: 5 x 64 x 128 + 3 x 64 FLOPs, 128 heads, 8 sequences.
    assert_eq!(
        ssm.cost.flops,
        8.0 * 128.0 * (5.0 * 64.0 * 128.0 + 3.0 * 64.0)
    );
    // x, B, C (10240) and dt (128) per token, the 3 x 128 decay and skip weights, the state
    // read and written, y (8192) written; bf16.
    let state = 128.0 * 64.0 * 128.0;
    let elements = 8.0 * (10240.0 + 128.0) + 384.0 + 2.0 * 8.0 * state + 8.0 * 8192.0;
    assert_eq!(ssm.cost.bytes, 2.0 * elements);
}

#[test]
fn the_new_templates_split_across_a_node() {
    let roofline = crate::common::roofline;
    for model in ["llama-4-scout", "glm-4.5", "nemotron-h-8b", "gemma-3-27b"] {
        let one = decode(model, "h200", &[("tp", 1.0)], roofline()).summary;
        let eight = decode(model, "h200", &[("tp", 8.0)], roofline()).summary;
        assert!(eight.weight_bytes < one.weight_bytes / 4.0, "{model}");
        assert_eq!(eight.chips, 8, "{model}");
    }
    // Nemotron-H's state splits with its heads: 16 of 128 Mamba heads a chip, 1 of 8 groups.
    let state = |tp: f64| {
        let sets = [("tp", tp), ("batch", 4.0)];
        decode(NEMOTRON, "h200", &sets, roofline())
            .summary
            .state_bytes
    };
    let per_chip = 4.0 * 24.0 * (16.0 * 64.0 * 128.0 + 3.0 * (1024.0 + 2.0 * 128.0)) * 2.0;
    assert_eq!(state(8.0), per_chip);
    assert!(state(1.0) > 7.9 * per_chip);
}

#[test]
fn a_gemma_3_config_imports_as_the_shipped_workload() {
    // The text_config of Gemma-3-27B's config.json (M11): no soft-capping, 5 local : 1 global.
    let config = r#"{"model_type": "gemma3_text", "hidden_size": 5376, "num_hidden_layers": 62,
        "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
        "intermediate_size": 21504, "vocab_size": 262208, "sliding_window": 1024,
        "sliding_window_pattern": 6, "attn_logit_softcapping": null,
        "final_logit_softcapping": null, "query_pre_attn_scalar": 168}"#;
    let dir = tempfile::tempdir().unwrap();
    let (path, out) = (dir.path().join("config.json"), dir.path().join("g.yaml"));
    std::fs::write(&path, config).unwrap();
    stepcost()
        .arg("import")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let imported = stepcost::Workload::load(&stepcost::Source::read(&out).unwrap()).unwrap();
    let shipped = crate::common::workload("gemma-3-27b");
    let spec = ScenarioSpec {
        sets: vec![("batch".into(), 4.0), ("context".into(), 2047.0)],
        dtypes: vec![(Role::Weight.into(), DType::Bf16.into())],
        ..crate::common::roofline()
    };
    let h200 = crate::common::chip("h200");
    let priced = |w: &stepcost::Workload| {
        let scenario = stepcost::Scenario::resolve(w, &spec).unwrap();
        stepcost::price(w, &h200, &scenario).unwrap()
    };
    let (a, b) = (priced(&imported), priced(&shipped));
    assert_eq!(a.summary, b.summary);
    assert_eq!(a.prices, b.prices);
}
