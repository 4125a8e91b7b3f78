//! `stepcost import` on the 2026 model zoo's real configs (`tests/configs/`, each copy's source
//! in its README): every imported model's parameters counted by hand from the config's shapes
//! (an independent count here, not the template's) and matched within 0.1 %; the checkpoint
//! formats each config's quantisation names, the int4 group formats' bytes per weight, a
//! Kimi-K2-Thinking fit on 8 x H200 counted by hand, and the position limit the configs
//! state, refused past by every command that prices a step.
//!
//! Sources of the configs (Hugging Face repositories, `config.json` on `main`; the hub was not
//! reachable from the build machine, so each text was checked against public copies on GitHub,
//! found with a code search, listed in tests/configs/README.md):
//! - moonshotai/Kimi-K2-Instruct and moonshotai/Kimi-K2-Thinking
//! - zai-org/GLM-4.5
//! - meta-llama/Llama-4-Scout-17B-16E-Instruct, meta-llama/Llama-4-Maverick-17B-128E-Instruct
//! - nvidia/Nemotron-H-8B-Base-8K
//! - microsoft/Phi-3-mini-4k-instruct
//! - TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ
//! - hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4 (a float16 AWQ Llama)
//! - Qwen/Qwen2.5-0.5B

use std::path::{Path, PathBuf};

use stepcost::{price, Scenario, ScenarioSpec, Source, StepReport, Workload};

use crate::common::{chip, stepcost};

fn config(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/configs")
        .join(name)
        .join("config.json")
}

/// The shipped config `name` imported and loaded.
fn imported(name: &str) -> (String, Workload) {
    let path = config(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let yaml = stepcost::internals::import::import(&text, &path.display().to_string(), Some(name))
        .unwrap()
        .yaml;
    let workload = Workload::load(&Source::from_text(&format!("{name}.yaml"), &yaml))
        .unwrap_or_else(|e| panic!("{name}: {e}\n{yaml}"));
    (yaml, workload)
}

/// The value of `key` in the YAML's `params:` or `dtypes:` map.
fn entry<'a>(yaml: &'a str, key: &str) -> Option<&'a str> {
    let prefix = format!("  {key}: ");
    yaml.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.split('#').next().unwrap_or(v).trim())
}

/// The imported model's parameters (the engine's count of its weight elements) against a
/// hand count, within 0.1 %.
fn assert_parameters(name: &str, by_hand: f64) {
    let (_, workload) = imported(name);
    let counted = workload.parameter_counts().unwrap().total;
    let off = counted / by_hand - 1.0;
    assert!(
        off.abs() < 1e-3,
        "{name}: imported {counted}, by hand {by_hand} ({:+.4} %)",
        off * 100.0
    );
}

/// MLA + routed experts (DeepSeek-V3's layout): per layer, `q_a` [hidden x q_rank], `q_b`
/// [q_rank x heads (nope + rope)], `kv_a` [hidden x (kv_rank + rope)], `kv_b` [kv_rank x heads
/// (nope + v)], `o` [heads v x hidden] and the two latent norms; dense layers a SwiGLU FFN,
/// MoE layers the routed and shared experts and a router; two norms a layer, the final norm,
/// an untied embedding and lm_head. The MTP module is not counted.
fn mla_moe_by_hand(vocab: f64, experts: f64) -> f64 {
    let (hidden, layers, dense, heads) = (7168.0, 61.0, 1.0, 64.0);
    let (q_rank, kv_rank, nope, rope, v) = (1536.0, 512.0, 128.0, 64.0, 128.0);
    let (ffn, moe_ffn, shared) = (18432.0, 2048.0, 1.0);
    let attention = hidden * q_rank
        + q_rank * heads * (nope + rope)
        + hidden * (kv_rank + rope)
        + kv_rank * heads * (nope + v)
        + heads * v * hidden
        + q_rank
        + kv_rank;
    let expert = 3.0 * hidden * moe_ffn;
    let moe = (experts + shared) * expert + experts * hidden;
    2.0 * vocab * hidden
        + layers * (attention + 2.0 * hidden)
        + dense * 3.0 * hidden * ffn
        + (layers - dense) * moe
        + hidden
}

#[test]
fn kimi_k2_counts_as_its_shapes() {
    // Kimi-K2-Instruct: 61 layers (1 dense), 64 MLA heads, 384 experts of 2048 + 1 shared,
    // vocab 163840; no MTP layer (num_nextn_predict_layers 0). 1.0264e12 by hand.
    let by_hand = mla_moe_by_hand(163840.0, 384.0);
    assert!((by_hand / 1.0264e12 - 1.0).abs() < 1e-3, "{by_hand}");
    assert_parameters("Kimi-K2-Instruct", by_hand);
    assert_parameters("Kimi-K2-Thinking", by_hand);
    let (yaml, _) = imported("Kimi-K2-Instruct");
    assert_eq!(entry(&yaml, "weight"), Some("fp8-b128"));
    // Group-limited routing is recorded, not dropped.
    assert!(yaml.contains("n_group 1, topk_group 1"), "{yaml}");
}

/// GQA attention with `heads` query and `kv` KV heads of `head_dim`: q, k, v and o.
fn gqa(hidden: f64, heads: f64, kv: f64, head_dim: f64) -> f64 {
    hidden * (heads + 2.0 * kv) * head_dim + heads * head_dim * hidden
}

#[test]
fn glm_4_5_counts_as_its_shapes() {
    // 92 layers, the first 3 with a dense SwiGLU of 12288, then 89 MoE layers of 160 experts
    // of 1536 + 1 shared and a router; 96 query and 8 KV heads of 128; vocab 151552, untied.
    // The one MTP layer (num_nextn_predict_layers 1) and the q/k/v biases are not counted.
    let (hidden, layers, dense, vocab) = (5120.0, 92.0, 3.0, 151552.0);
    let expert = 3.0 * hidden * 1536.0;
    let by_hand = 2.0 * vocab * hidden
        + layers * (gqa(hidden, 96.0, 8.0, 128.0) + 2.0 * hidden)
        + dense * 3.0 * hidden * 12288.0
        + (layers - dense) * (161.0 * expert + 160.0 * hidden)
        + hidden;
    assert!((by_hand / 352.797e9 - 1.0).abs() < 1e-4, "{by_hand}");
    assert_parameters("GLM-4.5", by_hand);
}

/// Llama-4's text decoder: 48 layers of GQA (40 / 8 heads of 128), `moe_layers` of them with
/// `experts` routed experts of 8192, one shared expert and a router, the rest a dense SwiGLU
/// of 16384 (intermediate_size_mlp); vocab 202048, untied. The vision encoder and its
/// projector are not counted (the text decoder is what a step prices).
fn llama4_by_hand(experts: f64, moe_layers: f64) -> f64 {
    let (hidden, layers, vocab) = (5120.0, 48.0, 202048.0);
    let expert = 3.0 * hidden * 8192.0;
    2.0 * vocab * hidden
        + layers * (gqa(hidden, 40.0, 8.0, 128.0) + 2.0 * hidden)
        + moe_layers * ((experts + 1.0) * expert + experts * hidden)
        + (layers - moe_layers) * 3.0 * hidden * 16384.0
        + hidden
}

#[test]
fn llama_4_counts_its_text_decoder() {
    // Scout: every layer MoE (interleave_moe_layer_step 1), 16 experts: 107.77e9.
    let scout = llama4_by_hand(16.0, 48.0);
    assert!((scout / 107.770e9 - 1.0).abs() < 1e-4, "{scout}");
    assert_parameters("Llama-4-Scout-17B-16E-Instruct", scout);
    // Maverick: every other layer MoE (step 2), 128 experts: 400.71e9.
    let maverick = llama4_by_hand(128.0, 24.0);
    assert!((maverick / 400.712e9 - 1.0).abs() < 1e-4, "{maverick}");
    assert_parameters("Llama-4-Maverick-17B-128E-Instruct", maverick);
    // Chunked attention on the 36 RoPE layers of 48 (NoPE every 4th), chunks of 8192.
    let (yaml, _) = imported("Llama-4-Scout-17B-16E-Instruct");
    assert_eq!(entry(&yaml, "local_layers"), Some("36"));
    assert_eq!(entry(&yaml, "window"), Some("8192"));
    assert_eq!(entry(&yaml, "dense_layers"), Some("0"));
    // The text decoder's limit, from inside text_config.
    assert!(yaml.contains("max_positions: 10485760\n"), "{yaml}");
}

#[test]
fn nemotron_h_counts_its_layers_from_the_pattern() {
    // hybrid_override_pattern: 24 M (Mamba-2), 4 * (attention), 24 - (MLP) of 52 layers.
    // Mamba-2: in_proj [hidden x (2 inner + 2 groups state + heads)], conv1d over inner + 2
    // groups state channels (kernel 4, with bias), dt_bias, A_log, D, the gated norm of
    // inner, out_proj [inner x hidden]; inner = 128 heads x 64 = 8192. MLP: up and down of
    // 21504 (squared ReLU, no gate). One norm a layer; untied embeddings.
    let (hidden, inner, groups, state, heads) = (4096.0, 8192.0, 8.0, 128.0, 128.0);
    let conv = inner + 2.0 * groups * state;
    let mamba = hidden * (2.0 * inner + 2.0 * groups * state + heads)
        + conv * 4.0
        + conv
        + 3.0 * heads
        + inner
        + inner * hidden;
    let attention = gqa(hidden, 32.0, 8.0, 128.0);
    let mlp = 2.0 * hidden * 21504.0;
    let by_hand = 24.0 * mamba
        + 4.0 * attention
        + 24.0 * mlp
        + 52.0 * hidden
        + 2.0 * 131072.0 * hidden
        + hidden;
    assert!((by_hand / 8.1009e9 - 1.0).abs() < 1e-4, "{by_hand}");
    assert_parameters("Nemotron-H-8B-Base-8K", by_hand);
}

#[test]
fn phi_3_mini_counts_as_its_fused_shapes() {
    // qkv_proj [3072 x 3 x 3072] and gate_up_proj [3072 x 2 x 8192] hold what Llama's split
    // projections hold: 32 layers, 32 heads of 96, FFN 8192, vocab 32064, untied.
    let (hidden, ffn, vocab, layers) = (3072.0, 8192.0, 32064.0, 32.0);
    let by_hand = 2.0 * vocab * hidden
        + layers * (gqa(hidden, 32.0, 32.0, 96.0) + 3.0 * hidden * ffn + 2.0 * hidden)
        + hidden;
    // Keras-Hub's Phi-3-mini presets state 3,821,079,552 parameters.
    assert_eq!(by_hand, 3_821_079_552.0);
    assert_parameters("Phi-3-mini-4k-instruct", by_hand);
    // 4096 positions: the imported model's default step decodes at the last one.
    let (yaml, _) = imported("Phi-3-mini-4k-instruct");
    assert_eq!(entry(&yaml, "context"), Some("4095"));
}

#[test]
fn a_tied_qwen_counts_its_embedding_once() {
    // 24 layers, 14 query / 2 KV heads of 64, FFN 4864, vocab 151936, tie_word_embeddings:
    // one [151936 x 896] matrix. The q/k/v biases (27,648) are not counted, as the dense
    // template says: 494,005,120 of the published 494,032,768.
    let (hidden, vocab, layers) = (896.0, 151936.0, 24.0);
    let by_hand = vocab * hidden
        + layers * (gqa(hidden, 14.0, 2.0, 64.0) + 3.0 * hidden * 4864.0 + 2.0 * hidden)
        + hidden;
    assert_eq!(by_hand + 24.0 * (896.0 + 2.0 * 128.0), 494_032_768.0);
    assert_parameters("Qwen2.5-0.5B", by_hand);
    // The lm_head still reads the whole matrix each step: only the count held changes.
    let (_, tied) = imported("Qwen2.5-0.5B");
    let h200 = chip("h200");
    let at = |tied_value: f64| {
        let spec = ScenarioSpec {
            sets: vec![("tied".into(), tied_value)],
            ..crate::common::roofline()
        };
        price(&tied, &h200, &Scenario::resolve(&tied, &spec).unwrap()).unwrap()
    };
    let (once, twice) = (at(1.0), at(0.0));
    assert_eq!(
        twice.summary.weight_bytes - once.summary.weight_bytes,
        2.0 * vocab * hidden
    );
    assert_eq!(once.summary.bytes, twice.summary.bytes);
}

#[test]
fn mixtral_awq_keeps_its_router_in_float16() {
    // `modules_to_not_convert: ["gate"]` names the router (block_sparse_moe.gate): the
    // attention and the experts are AWQ int4 in groups of 128, the router and embeddings
    // float16 (torch_dtype).
    let (yaml, workload) = imported("Mixtral-8x7B-Instruct-v0.1-AWQ");
    assert_eq!(entry(&yaml, "weight"), Some("fp16"));
    assert_eq!(entry(&yaml, "attention.weight"), Some("int4-g128"));
    assert_eq!(entry(&yaml, "experts.weight"), Some("int4-g128"));
    assert_eq!(entry(&yaml, "ffn.weight"), None);
    // 46.70e9 parameters: 32 layers of GQA (32 / 8 heads of 128), 8 experts of 14336 and a
    // router, two norms; vocab 32000, untied.
    let (hidden, layers, vocab) = (4096.0, 32.0, 32000.0);
    let attention = gqa(hidden, 32.0, 8.0, 128.0);
    let experts = 8.0 * 3.0 * hidden * 14336.0;
    let rest = 2.0 * vocab * hidden + layers * (8.0 * hidden + 2.0 * hidden) + hidden;
    assert_eq!(layers * (attention + experts) + rest, 46_702_792_704.0);
    assert_parameters(
        "Mixtral-8x7B-Instruct-v0.1-AWQ",
        layers * (attention + experts) + rest,
    );
    // Bytes: the quantised groups at (128 x 0.5 + 2 + 0.5) / 128 bytes a weight, the rest at 2.
    let by_hand = layers * (attention + experts) * (66.5 / 128.0) + rest * 2.0;
    let report = decode(&workload, "h200", &[]);
    crate::common::assert_close(report.summary.weight_bytes, by_hand, 1e-3);
}

#[test]
fn a_float16_awq_llama_keeps_its_lm_head_in_float16() {
    // torch_dtype float16: the embedding and lm_head (left unquantised by AWQ) are 2 bytes a
    // weight, not fp32's 4, and every linear layer is int4-g128.
    let (yaml, workload) = imported("Meta-Llama-3.1-8B-Instruct-AWQ-INT4");
    assert_eq!(entry(&yaml, "embed.weight"), Some("fp16"));
    let (hidden, layers, vocab) = (4096.0, 32.0, 128256.0);
    let linear = layers * (gqa(hidden, 32.0, 8.0, 128.0) + 3.0 * hidden * 14336.0);
    let by_hand = linear * (66.5 / 128.0) + 2.0 * vocab * hidden * 2.0;
    let report = decode(&workload, "h200", &[]);
    crate::common::assert_close(report.summary.weight_bytes, by_hand, 1e-3);
}

fn decode(workload: &Workload, chip_name: &str, sets: &[(&str, f64)]) -> StepReport {
    let spec = ScenarioSpec {
        sets: sets.iter().map(|(k, v)| ((*k).into(), *v)).collect(),
        ..crate::common::roofline()
    };
    let scenario = Scenario::resolve(workload, &spec).unwrap();
    price(workload, &chip(chip_name), &scenario).unwrap()
}

#[test]
fn int4_group_formats_count_their_scales() {
    use stepcost::types::Format;
    // Symmetric: 4 bits a weight and one 16-bit scale per group.
    let symmetric = |group: f64| 0.5 + 2.0 / group;
    // Asymmetric: and a 4-bit zero point per group.
    let asymmetric = |group: f64| 0.5 + (2.0 + 0.5) / group;
    for (name, bytes) in [
        ("int4-g32", symmetric(32.0)),
        ("int4-g64", symmetric(64.0)),
        ("int4-g128-sym", symmetric(128.0)),
        ("int4-g32-asym", asymmetric(32.0)),
        ("int4-g64-asym", asymmetric(64.0)),
        ("int4-g128", asymmetric(128.0)),
    ] {
        let format: Format = name.parse().unwrap();
        assert_eq!(format.bytes(), bytes, "{name}");
    }
    // The figure: symmetric g32 with bf16 scales, 0.5625 bytes a weight.
    assert_eq!(symmetric(32.0), 0.5625);
}

#[test]
fn quantisation_configs_name_their_group_size_and_symmetry() {
    use serde_json::json;
    let with = |q: serde_json::Value| {
        let text = std::fs::read_to_string(config("Mistral-7B-v0.1")).unwrap();
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        value["quantization_config"] = q;
        let text = serde_json::to_string_pretty(&value).unwrap();
        stepcost::internals::import::import(&text, "config.json", None)
    };
    let weight = |q: serde_json::Value| {
        let yaml = with(q).unwrap().yaml;
        entry(&yaml, "weight").unwrap().to_owned()
    };
    // GPTQ is symmetric unless `sym: false`; AWQ has a zero point unless `zero_point: false`.
    let gptq =
        |g: u64, sym: bool| json!({"quant_method": "gptq", "bits": 4, "group_size": g, "sym": sym});
    assert_eq!(weight(gptq(32, true)), "int4-g32");
    assert_eq!(weight(gptq(64, false)), "int4-g64-asym");
    assert_eq!(weight(gptq(128, true)), "int4-g128-sym");
    let awq = json!({"quant_method": "awq", "bits": 4, "group_size": 64, "zero_point": true});
    assert_eq!(weight(awq), "int4-g64-asym");
    // A group size with no format is refused by name.
    let err = with(gptq(256, true)).unwrap_err().to_string();
    assert!(err.contains("group_size 256"), "{err}");
}

#[test]
fn kimi_k2_thinking_fits_on_8_h200_by_hand() {
    // compressed-tensors, int4 symmetric in groups of 32 (bf16 scales) on every Linear but
    // those `ignore` lists: lm_head, `re:.*self_attn.*` (all attention),
    // `re:.*shared_experts.*` and `re:.*mlp\.(gate|up|gate_up|down)_proj.*` (the dense layer's
    // and the shared experts' MLPs: between them the whole ffn group). So the routed experts
    // are int4-g32 and the rest bf16.
    let (yaml, workload) = imported("Kimi-K2-Thinking");
    assert_eq!(entry(&yaml, "weight"), Some("bf16"));
    assert_eq!(entry(&yaml, "experts.weight"), Some("int4-g32"));
    assert!(yaml.contains("max_positions: 262144\n"), "{yaml}");
    let routed = 60.0 * 384.0 * 3.0 * 7168.0 * 2048.0;
    let rest = mla_moe_by_hand(163840.0, 384.0) - routed;
    let by_hand = routed * 0.5625 + rest * 2.0;
    // 1.0147e12 routed weights at 0.5625 bytes (570.8 GB) + 11.7e9 others at 2 (23.4 GB).
    assert!((by_hand / 594.2e9 - 1.0).abs() < 1e-3, "{by_hand}");
    let one = decode(&workload, "h200", &[]);
    crate::common::assert_close(one.summary.weight_bytes, by_hand, 1e-3);
    // Eight H200s of 141 GB hold it with room to spare; bf16 weights (2.05 TB) would not.
    let h200 = chip("h200");
    let capacity = 8.0 * h200.capacity_bytes();
    assert!(by_hand < capacity && 2.0 * (routed + rest) > capacity);
    // At tp = 8 each chip holds an eighth, and a copy of what tensor parallelism does not
    // split (MLA's latent projections, the norms): at most 3 % more in all.
    let eight = decode(&workload, "h200", &[("tp", 8.0)]);
    assert!(eight.summary.fits, "{:?}", eight.summary.footprint_bytes);
    let held = 8.0 * eight.summary.weight_bytes;
    assert!(
        held >= by_hand * 0.999 && held <= by_hand * 1.03,
        "{held} vs {by_hand}"
    );
}

#[test]
fn a_pattern_that_splits_a_group_is_refused() {
    use serde_json::json;
    // Only the shared experts of the ffn group (the dense layer's MLP stays int4): the group
    // would hold two formats.
    let text = std::fs::read_to_string(config("Kimi-K2-Thinking")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["quantization_config"]["ignore"] = json!(["lm_head", "re:.*shared_experts.*"]);
    let text = serde_json::to_string_pretty(&value).unwrap();
    let err = stepcost::internals::import::import(&text, "config.json", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("quantization_config.ignore") && err.contains("two formats"),
        "{err}"
    );
    assert!(err.contains("shared_experts.gate_proj"), "{err}");
}

#[test]
fn tied_embeddings_a_template_cannot_hold_are_refused() {
    let text = std::fs::read_to_string(config("GLM-4.5")).unwrap();
    let text = text.replace(
        "\"tie_word_embeddings\": false",
        "\"tie_word_embeddings\": true",
    );
    let err = stepcost::internals::import::import(&text, "config.json", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tie_word_embeddings") && err.contains("twice"),
        "{err}"
    );
}

#[test]
fn a_step_past_max_positions_is_refused_naming_the_limit() {
    // Built in: Llama-3.1-8B states 131072 positions; context + tokens may reach it, not pass.
    let run = |model: &str, context: &str, tokens: &str| {
        stepcost()
            .args(["run", model, "--chip", "h200", "--set"])
            .arg(format!("context={context}"))
            .arg("--set")
            .arg(format!("tokens={tokens}"))
            .output()
            .unwrap()
    };
    assert!(run("llama-3.1-8b", "131071", "1").status.success());
    let past = run("llama-3.1-8b", "131071", "2");
    assert!(!past.status.success());
    let err = String::from_utf8_lossy(&past.stderr);
    assert!(
        err.contains("Llama-3.1-8B")
            && err.contains("131072")
            && err.contains("context 131071 + tokens 2 = 131073"),
        "{err}"
    );
    // Imported: Qwen2.5-0.5B's config states 32768.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("qwen.yaml");
    stepcost()
        .arg("import")
        .arg(config("Qwen2.5-0.5B"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let past = run(&out.display().to_string(), "32768", "1");
    let err = String::from_utf8_lossy(&past.stderr);
    assert!(!past.status.success() && err.contains("32768"), "{err}");
    // A sweep writes the step past the limit as an error row and prices the rest.
    let sweep = stepcost()
        .args([
            "sweep",
            "llama-3.1-8b",
            "--chip",
            "h200",
            "--set",
            "context=4096,200000",
        ])
        .output()
        .unwrap();
    let (header, rows) = crate::common::csv_rows(&crate::common::succeeded(sweep));
    assert_eq!(rows.len(), 2);
    assert_eq!(crate::common::cell(&header, &rows[0], "error"), "");
    assert!(crate::common::cell(&header, &rows[1], "error").contains("131072"));
}

#[test]
fn a_request_past_max_positions_is_refused_by_serving_and_simulate() {
    for command in [&["serving"][..], &["simulate", "--rate", "1"]] {
        let out = stepcost()
            .args(command)
            .args([
                "llama-3.1-8b",
                "--chip",
                "h200",
                "--request",
                "in=130000,out=2000",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("request in 130000 + out 2000 = 132000"),
            "{command:?}: {err}"
        );
    }
}
