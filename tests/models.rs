//! The shipped models against their published shapes and recomputed parameter counts
//! (docs/sources.md: model shapes, M8): parameter counts, KV cache per token, mixture of
//! experts, what fits, and import from Hugging Face configs.

use stepcost::{price, types::DType, types::Role, Scenario, ScenarioSpec, Source, Workload};

use crate::common::{chip, run, stepcost, workload};

fn decode(
    model: &str,
    chip: &str,
    sets: &[(&str, f64)],
    dtypes: &[(Role, DType)],
) -> stepcost::StepReport {
    let mut all = vec![("tokens", 1.0)];
    all.extend_from_slice(sets);
    run(
        model,
        chip,
        &all,
        ScenarioSpec {
            dtypes: dtypes.iter().map(|&(r, d)| (r.into(), d.into())).collect(),
            ..crate::common::roofline()
        },
    )
}

#[test]
fn parameter_counts_match_m8_within_one_percent() {
    // docs/sources.md, M8: totals recomputed from the shapes.
    let expected = [
        ("llama-2-7b", 6.74e9),
        ("llama-2-70b", 68.98e9),
        ("llama-3.1-8b", 8.030e9),
        ("llama-3.1-70b", 70.554e9),
        ("llama-3.1-405b", 405.853e9),
        ("mistral-7b", 7.24e9),
        ("mixtral-8x7b", 46.703e9),
        ("qwen2.5-72b", 72.71e9),
        ("qwen3-235b-a22b", 235.094e9),
        ("deepseek-v3", 671.026e9),
        ("gpt-oss-120b", 116.829e9),
        ("gemma-2-27b", 27.227e9),
    ];
    for (model, params) in expected {
        let bf16 = [(Role::Weight, DType::Bf16)];
        let counted = decode(model, "b200", &[], &bf16).summary.weight_bytes / 2.0;
        let ratio = counted / params;
        assert!(
            (ratio - 1.0).abs() < 0.01,
            "{model}: {counted} vs {params} ({ratio})"
        );
    }
}

/// KV cache bytes per token per layer: kv_bytes over layers x batch x (context + tokens).
fn kv_per_token_per_layer(model: &str, layers: f64) -> f64 {
    let (batch, context) = (2.0, 1023.0);
    let r = decode(
        model,
        "b200",
        &[("batch", batch), ("context", context)],
        &[],
    );
    r.summary.kv_bytes / (layers * batch * (context + 1.0))
}

#[test]
fn kv_cache_per_token_matches_hand_counts() {
    // MHA: K and V of 32 heads x 128, bf16
    assert_eq!(
        kv_per_token_per_layer("llama-2-7b", 32.0),
        2.0 * 32.0 * 128.0 * 2.0
    );
    // GQA: 8 KV heads
    assert_eq!(
        kv_per_token_per_layer("llama-3.1-70b", 80.0),
        2.0 * 8.0 * 128.0 * 2.0
    );
    // MLA: one latent of kv_lora_rank + rope dims, shared by K and V
    assert_eq!(
        kv_per_token_per_layer("deepseek-v3", 61.0),
        (512.0 + 64.0) * 2.0
    );
    // and fp8 halves it
    let r = decode(
        "llama-3.1-70b",
        "b200",
        &[("batch", 1.0), ("context", 99.0)],
        &[(Role::Kv, DType::Fp8)],
    );
    assert_eq!(r.summary.kv_bytes, 80.0 * 100.0 * 2.0 * 8.0 * 128.0);
}

#[test]
fn sliding_window_layers_stop_reading_at_the_window() {
    // Mistral-7B v0.1 slides a 4096 window on every layer: a 32k context reads what 4k does.
    let short = decode("mistral-7b", "h200", &[("context", 4095.0)], &[]);
    let long = decode("mistral-7b", "h200", &[("context", 32767.0)], &[]);
    assert_eq!(short.summary.kv_bytes, long.summary.kv_bytes);
    assert_eq!(short.summary.bytes, long.summary.bytes);
    // Gemma-2 slides on half its layers: the global half keeps growing.
    let short = decode("gemma-2-27b", "h200", &[("context", 4095.0)], &[]);
    let long = decode("gemma-2-27b", "h200", &[("context", 8191.0)], &[]);
    let per_layer_position = 2.0 * 16.0 * 128.0 * 2.0;
    assert_eq!(
        long.summary.kv_bytes - short.summary.kv_bytes,
        23.0 * 4096.0 * per_layer_position
    );
}

#[test]
fn mixtral_decode_reads_the_experts_its_tokens_reach() {
    let (hidden, ffn) = (4096.0, 14336.0);
    let expert_bytes = hidden * 2.0 * ffn * 2.0; // one expert's gate and up matrices, bf16
    let gate_up = |batch: f64| {
        let r = decode("mixtral-8x7b", "h200", &[("batch", batch)], &[]);
        let p = r
            .prices
            .iter()
            .find(|p| p.name.starts_with("experts_gate_up"))
            .unwrap()
            .clone();
        let tokens = batch; // one new token per sequence
                            // what the kernel reads besides expert weights: each token's row once per chosen
                            // expert, and what it writes: each token's output once per chosen expert
        let rows = tokens * 2.0 * hidden * 2.0 + tokens * 2.0 * 2.0 * ffn * 2.0;
        (p.cost.bytes - rows, p.cost.flops / tokens)
    };
    let (one, flops_one) = gate_up(1.0);
    assert_eq!(one, 2.0 * expert_bytes, "batch 1 reads 2 of 8 experts");
    let (many, flops_many) = gate_up(64.0);
    let touched = 8.0 * (1.0 - 0.75f64.powi(64));
    assert!(
        (many / expert_bytes - touched).abs() < 1e-6 && touched > 7.99,
        "batch 64 reads nearly all 8"
    );
    // FLOPs follow the 2 experts each token uses
    assert_eq!(flops_one, 2.0 * 2.0 * hidden * 2.0 * ffn);
    assert!((flops_many / flops_one - 1.0).abs() < 1e-12);
}

#[test]
fn what_fits_one_chip() {
    // Llama-3.1-405B in fp8 is 406 GB of weights: no single chip holds it.
    for (id, _) in stepcost::internals::builtin::CHIPS {
        let r = decode("llama-3.1-405b", id, &[], &[(Role::Weight, DType::Fp8)]);
        assert!(!r.summary.fits, "{id}");
        assert_eq!(r.summary.max_batch, Some(0), "{id}");
    }
    // Llama-3.1-8B fits an H100 with room for a large batch
    let r = decode("llama-3.1-8b", "h100-sxm", &[], &[]);
    assert!(r.summary.fits && r.summary.max_batch.unwrap() > 100);
}

fn config(fields: &[(&str, serde_json::Value)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    serde_json::to_string_pretty(&map).unwrap()
}

fn assert_import_matches(config_text: &str, shipped: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("config.json");
    let out = dir.path().join("imported.yaml");
    std::fs::write(&config_path, config_text).unwrap();
    stepcost()
        .arg("import")
        .arg(&config_path)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let imported = Workload::load(&Source::read(&out).unwrap()).unwrap();
    let original = workload(shipped);
    let h200 = chip("h200");
    for (batch, tokens, context) in [(8.0, 1.0, 4096.0), (1.0, 512.0, 0.0)] {
        let spec = ScenarioSpec {
            sets: vec![
                ("batch".into(), batch),
                ("tokens".into(), tokens),
                ("context".into(), context),
            ],
            // The checkpoint's types are the quantisation import's own test (tests/import.rs);
            // here the shapes.
            dtypes: vec![(Role::Weight.into(), DType::Bf16.into())],
            ..crate::common::roofline()
        };
        let a = price(
            &imported,
            &h200,
            &Scenario::resolve(&imported, &spec).unwrap(),
        )
        .unwrap();
        let b = price(
            &original,
            &h200,
            &Scenario::resolve(&original, &spec).unwrap(),
        )
        .unwrap();
        assert_eq!(
            a.summary, b.summary,
            "{shipped} at batch {batch}, tokens {tokens}"
        );
        assert_eq!(a.prices, b.prices, "{shipped}");
    }
}

#[test]
fn import_reproduces_the_shipped_workloads() {
    use serde_json::json;
    // Shapes as the Hugging Face configs write them (docs/sources.md, model shapes: the M2 config sources).
    let llama = config(&[
        ("model_type", json!("llama")),
        ("hidden_size", json!(8192)),
        ("num_hidden_layers", json!(80)),
        ("num_attention_heads", json!(64)),
        ("num_key_value_heads", json!(8)),
        ("intermediate_size", json!(28672)),
        ("vocab_size", json!(128256)),
        ("rope_theta", json!(500000.0)),
        ("rms_norm_eps", json!(1e-5)),
    ]);
    assert_import_matches(&llama, "llama-3.1-70b");
    let mixtral = config(&[
        ("model_type", json!("mixtral")),
        ("hidden_size", json!(4096)),
        ("num_hidden_layers", json!(32)),
        ("num_attention_heads", json!(32)),
        ("num_key_value_heads", json!(8)),
        ("intermediate_size", json!(14336)),
        ("num_local_experts", json!(8)),
        ("num_experts_per_tok", json!(2)),
        ("vocab_size", json!(32000)),
        ("sliding_window", json!(null)),
    ]);
    assert_import_matches(&mixtral, "mixtral-8x7b");
    let deepseek = config(&[
        ("model_type", json!("deepseek_v3")),
        ("hidden_size", json!(7168)),
        ("num_hidden_layers", json!(61)),
        ("num_attention_heads", json!(128)),
        ("num_key_value_heads", json!(128)),
        ("q_lora_rank", json!(1536)),
        ("kv_lora_rank", json!(512)),
        ("qk_nope_head_dim", json!(128)),
        ("qk_rope_head_dim", json!(64)),
        ("v_head_dim", json!(128)),
        ("intermediate_size", json!(18432)),
        ("moe_intermediate_size", json!(2048)),
        ("first_k_dense_replace", json!(3)),
        ("n_routed_experts", json!(256)),
        ("n_shared_experts", json!(1)),
        ("num_experts_per_tok", json!(8)),
        ("vocab_size", json!(129280)),
    ]);
    assert_import_matches(&deepseek, "deepseek-v3");
    let gemma = config(&[
        ("model_type", json!("gemma2")),
        ("hidden_size", json!(4608)),
        ("num_hidden_layers", json!(46)),
        ("num_attention_heads", json!(32)),
        ("num_key_value_heads", json!(16)),
        ("head_dim", json!(128)),
        ("intermediate_size", json!(36864)),
        ("vocab_size", json!(256000)),
        ("sliding_window", json!(4096)),
    ]);
    assert_import_matches(&gemma, "gemma-2-27b");
}

#[test]
fn import_names_the_fields_it_did_not_understand() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(
        &path,
        r#"{"model_type": "qwen2", "hidden_size": 8192, "num_hidden_layers": 80,
            "num_attention_heads": 64, "num_key_value_heads": 8, "intermediate_size": 29568,
            "vocab_size": 152064, "use_sliding_window": false, "sliding_window": 131072,
            "fancy_new_attention": true}"#,
    )
    .unwrap();
    let out = stepcost().arg("import").arg(&path).assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(
        stderr.contains("not understood") && stderr.contains("fancy_new_attention"),
        "{stderr}"
    );
    let yaml = String::from_utf8_lossy(&out.get_output().stdout);
    assert!(
        yaml.contains("template: dense") && yaml.contains("local_layers: 0"),
        "{yaml}"
    );
}

#[test]
fn plan_ranks_chips_for_llama_8b_at_10k_tokens_per_s_under_50_ms() {
    let out = stepcost()
        .args([
            "plan",
            "llama-3.1-8b",
            "--target-tokens-per-s",
            "10000",
            "--max-ms-per-token",
            "50",
        ])
        .args([
            "--chip",
            "h100-sxm,h200,b200,mi300x,tpu-v6e,l40s",
            "--format",
            "csv",
        ])
        .assert()
        .success();
    let (header, rows) =
        crate::common::csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    let get = |row: &Vec<String>, c: &str| crate::common::cell(&header, row, c).to_owned();
    let num = |row: &Vec<String>, c: &str| get(row, c).parse::<f64>().ok();
    assert_eq!(rows.len(), 6 * 2, "each chip with bf16 and fp8 weights");
    let mut last_cost = 0.0;
    for row in &rows {
        let Some(batch) = num(row, "batch") else {
            assert!(!get(row, "note").is_empty(), "an infeasible row says why");
            continue;
        };
        assert!(num(row, "ms_per_token").unwrap() <= 50.0);
        assert!(batch <= num(row, "max_batch").unwrap());
        // Whole replicas of `chips_per_replica` chips each.
        let per_replica =
            num(row, "tokens_per_s_per_chip").unwrap() * num(row, "chips_per_replica").unwrap();
        assert_eq!(
            num(row, "chips").unwrap(),
            (10000.0 / per_replica).ceil() * num(row, "chips_per_replica").unwrap()
        );
        if let Some(cost) = num(row, "usd_per_hour") {
            assert!(cost >= last_cost, "priced chips come cheapest first");
            last_cost = cost;
        }
    }
    // the chosen batch is the largest that fits and meets the bound
    let h100 = rows
        .iter()
        .find(|r| get(r, "chip") == "h100-sxm" && get(r, "weight_dtype") == "bf16")
        .unwrap();
    let batch = num(h100, "batch").unwrap();
    let at = |b: f64| decode("llama-3.1-8b", "h100-sxm", &[("batch", b)], &[]).summary;
    let chosen = at(batch);
    assert!(chosen.fits && chosen.ms_per_token.unwrap() <= 50.0);
    let next = at(batch + 1.0);
    assert!(!next.fits || next.ms_per_token.unwrap() > 50.0);
}

/// Every `template:` a built-in workload names is itself built in, so the installed binary
/// (or the packaged crate) can load every built-in model from any directory.
#[test]
fn every_built_in_template_is_built_in() {
    let templates: Vec<&str> = stepcost::internals::builtin::TEMPLATES
        .iter()
        .map(|(id, _)| *id)
        .collect();
    let mut named = 0;
    for (id, text) in stepcost::internals::builtin::WORKLOADS {
        let template = text
            .lines()
            .find_map(|l| l.strip_prefix("template:"))
            .map(|t| t.split('#').next().unwrap_or("").trim());
        if let Some(template) = template {
            named += 1;
            assert!(
                templates.contains(&template),
                "workload `{id}` names template `{template}`, which is not built in ({templates:?})"
            );
        }
        // And every built-in workload loads from its built-in text alone.
        stepcost::Workload::named(id).unwrap_or_else(|e| panic!("{id}: {e}"));
    }
    assert!(
        named >= 12,
        "only {named} built-in workloads name a template"
    );
}
