//! `stepcost import` on real Hugging Face configs (`tests/configs/`, sources in its README):
//! the shapes, windows and checkpoint types it writes, checked by hand against the configs'
//! numbers, and the imported workload loaded and priced. Configs it cannot price faithfully
//! are refused with the field named.

use std::path::{Path, PathBuf};

use crate::common::stepcost;

fn config(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/configs")
        .join(name)
        .join("config.json")
}

/// The imported YAML of a shipped config (through the library: the result is not loaded).
fn imported(name: &str) -> stepcost::internals::import::Imported {
    let path = config(name);
    let text = std::fs::read_to_string(&path).unwrap();
    stepcost::internals::import::import(&text, &path.display().to_string(), Some(name)).unwrap()
}

/// The value of `key` in the YAML's `params:` or `dtypes:` map (`  key: value` lines).
fn entry<'a>(yaml: &'a str, key: &str) -> Option<&'a str> {
    let prefix = format!("  {key}: ");
    yaml.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.split('#').next().unwrap_or(v).trim())
}

fn assert_entries(name: &str, expected: &[(&str, &str)]) {
    let yaml = imported(name).yaml;
    for (key, value) in expected {
        assert_eq!(
            entry(&yaml, key),
            Some(*value),
            "{name}: `{key}` in\n{yaml}"
        );
    }
}

#[test]
fn shapes_and_windows_match_the_configs() {
    // gpt-oss-120b: 36 layers, layer_types alternating from sliding: 18 slide, window 128;
    // head_dim 64 stated (64 x 64 = 4096 != hidden 2880).
    assert_entries(
        "gpt-oss-120b",
        &[
            ("layers", "36"),
            ("hidden", "2880"),
            ("heads", "64"),
            ("kv_heads", "8"),
            ("head_dim", "64"),
            ("experts", "128"),
            ("top_k", "4"),
            ("moe_ffn", "2880"),
            ("vocab", "201088"),
            ("local_layers", "18"),
            ("window", "128"),
        ],
    );
    // Mistral-7B-v0.1: sliding_window 4096 on all 32 layers; 4096 / 32 = 128 per head.
    assert_entries(
        "Mistral-7B-v0.1",
        &[
            ("local_layers", "32"),
            ("window", "4096"),
            ("head_dim", "128"),
        ],
    );
    // Qwen2.5-7B-Instruct: use_sliding_window false, so no layer slides whatever
    // sliding_window (131072) and max_window_layers (28) say; 3584 / 28 = 128.
    assert_entries(
        "Qwen2.5-7B-Instruct",
        &[
            ("local_layers", "0"),
            ("head_dim", "128"),
            ("kv_heads", "4"),
        ],
    );
    assert_eq!(entry(&imported("Qwen2.5-7B-Instruct").yaml, "window"), None);
    // gemma-2-9b-it: 42 layers alternating, layer 0 sliding: 21; head_dim 256 stated
    // (16 x 256 = 4096 != hidden 3584).
    assert_entries(
        "gemma-2-9b-it",
        &[
            ("local_layers", "21"),
            ("window", "4096"),
            ("head_dim", "256"),
        ],
    );
    // DeepSeek-V3: MLA shapes, no window params.
    assert_entries(
        "DeepSeek-V3",
        &[
            ("layers", "61"),
            ("dense_layers", "3"),
            ("kv_lora_rank", "512"),
            ("experts", "256"),
            ("shared_experts", "1"),
        ],
    );
}

#[test]
fn checkpoint_types_match_the_quantization_configs() {
    // fp8 with weight_block_size [128, 128]; embedding and lm_head stay bf16.
    assert_entries(
        "DeepSeek-V3",
        &[("weight", "fp8-b128"), ("embed.weight", "bf16")],
    );
    // mxfp4 with self_attn, router, embed_tokens and lm_head not converted: only the
    // routed experts are mxfp4, so `weight` (norms included) stays bf16.
    assert_entries(
        "gpt-oss-120b",
        &[("weight", "bf16"), ("experts.weight", "mxfp4")],
    );
    for group in ["embed.weight", "attention.weight", "ffn.weight"] {
        assert_eq!(entry(&imported("gpt-oss-120b").yaml, group), None);
    }
    // compressed-tensors, 8-bit float weights per tensor, lm_head ignored.
    assert_entries(
        "Meta-Llama-3.1-70B-Instruct-FP8",
        &[("weight", "fp8"), ("embed.weight", "bf16")],
    );
    // AWQ 4 bits, group 128, in a float16 checkpoint: the embedding stays fp16.
    assert_entries(
        "Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
        &[("weight", "int4-g128"), ("embed.weight", "fp16")],
    );
    // An unquantised checkpoint: its torch_dtype for every group.
    assert_entries("Mistral-7B-v0.1", &[("weight", "bf16")]);
    assert_eq!(
        entry(&imported("Mistral-7B-v0.1").yaml, "embed.weight"),
        None
    );
}

#[test]
fn the_model_is_named_from_name_or_path_or_its_folder() {
    // No _name_or_path: the folder, never the generic `config`.
    assert_eq!(imported("gpt-oss-120b").name, "gpt-oss-120b");
    // _name_or_path's last part (the AWQ copy names its base model).
    assert_eq!(
        imported("Meta-Llama-3.1-8B-Instruct-AWQ-INT4").name,
        "Meta-Llama-3.1-8B-Instruct"
    );
}

#[test]
fn every_field_is_listed_as_used_ignored_or_not_understood() {
    let gpt = imported("gpt-oss-120b");
    // rope_scaling is read (it extends the position limit), not ignored.
    assert!(!gpt.ignored.iter().any(|k| k == "rope_scaling"));
    for key in ["swiglu_limit", "initial_context_length", "eos_token_id"] {
        assert!(
            gpt.ignored.iter().any(|k| k == key),
            "{key}: {:?}",
            gpt.ignored
        );
        assert!(gpt.yaml.contains(key), "{key} missing from the comment");
    }
    let ds = imported("DeepSeek-V3");
    assert!(
        ds.ignored.iter().any(|k| k == "quantization_config.fmt"),
        "{:?}",
        ds.ignored
    );
    assert!(ds.yaml.contains("activation_scheme dynamic"), "{}", ds.yaml);
    assert!(ds.not_understood.is_empty(), "{:?}", ds.not_understood);
}

/// A config copied with its `quantization_config` (or another field) replaced.
fn edited(
    name: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> String {
    let text = std::fs::read_to_string(config(name)).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(value.as_object_mut().unwrap());
    serde_json::to_string_pretty(&value).unwrap()
}

fn refusal(text: &str) -> String {
    stepcost::internals::import::import(text, "config.json", None)
        .unwrap_err()
        .to_string()
}

#[test]
fn what_cannot_be_priced_faithfully_is_refused() {
    use serde_json::json;
    // A quantisation stepcost does not know is never priced as bf16.
    let bnb = edited("Mistral-7B-v0.1", |c| {
        c.insert(
            "quantization_config".into(),
            json!({"quant_method": "bitsandbytes", "load_in_4bit": true}),
        );
    });
    let err = refusal(&bnb);
    assert!(err.contains("quantization_config.quant_method"), "{err}");
    assert!(
        err.contains("`bitsandbytes` is not a quantisation"),
        "{err}"
    );
    // GPTQ with groups of 256: no such format.
    let gptq = edited("Mistral-7B-v0.1", |c| {
        c.insert(
            "quantization_config".into(),
            json!({"quant_method": "gptq", "bits": 4, "group_size": 256}),
        );
    });
    assert!(
        refusal(&gptq).contains("group_size 256"),
        "{}",
        refusal(&gptq)
    );
    // fp8 blocks of 64 x 64.
    let blocks = edited("DeepSeek-V3", |c| {
        c["quantization_config"]["weight_block_size"] = json!([64, 64]);
    });
    assert!(
        refusal(&blocks).contains("weight_block_size"),
        "{}",
        refusal(&blocks)
    );
    // hidden / heads not whole, no head_dim: 4096 / 24 = 170.67.
    let heads = edited("Mistral-7B-v0.1", |c| {
        c.insert("num_attention_heads".into(), json!(24));
    });
    let err = refusal(&heads);
    assert!(
        err.contains("head_dim") && err.contains("4096 / 24"),
        "{err}"
    );
    // The problem names the line of the field (`"quantization_config"` on its own line).
    let line = bnb
        .lines()
        .position(|l| l.contains("\"quant_method\""))
        .unwrap()
        + 1;
    assert!(
        refusal(&bnb).contains(&format!("config.json:{line}:")),
        "{}",
        refusal(&bnb)
    );
}

#[test]
fn nvfp4_and_int4_compressed_tensors_groups_are_read() {
    use serde_json::json;
    let scheme = |bits: u64, kind: &str, strategy: &str, group: u64| {
        edited("Meta-Llama-3.1-70B-Instruct-FP8", |c| {
            let w = &mut c["quantization_config"]["config_groups"]["group_0"]["weights"];
            w["num_bits"] = json!(bits);
            w["type"] = json!(kind);
            w["strategy"] = json!(strategy);
            w["group_size"] = json!(group);
            c["quantization_config"]["config_groups"]["group_0"]["input_activations"] = json!(null);
        })
    };
    let import = |text: &str| stepcost::internals::import::import(text, "config.json", None);
    let nvfp4 = import(&scheme(4, "float", "tensor_group", 16))
        .unwrap()
        .yaml;
    assert_eq!(entry(&nvfp4, "weight"), Some("nvfp4"));
    // No `symmetric` key: compressed-tensors' default, symmetric (no zero point).
    let int4 = import(&scheme(4, "int", "group", 128)).unwrap().yaml;
    assert_eq!(entry(&int4, "weight"), Some("int4-g128-sym"));
    // compressed-tensors' `symmetric` defaults to true: no zero point.
    let int4 = import(&scheme(4, "int", "group", 32)).unwrap().yaml;
    assert_eq!(entry(&int4, "weight"), Some("int4-g32"));
    assert!(import(&scheme(4, "int", "group", 256)).is_err());
}

/// Import through the command line, load the workload and price it: the CLI refuses a
/// result that does not load, so success means the engine read every group type.
#[test]
fn imported_configs_load_and_price() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "gpt-oss-120b",
        "DeepSeek-V3",
        "Meta-Llama-3.1-70B-Instruct-FP8",
        "Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
        "Qwen2.5-7B-Instruct",
        "Mistral-7B-v0.1",
        "gemma-2-9b-it",
    ] {
        let out = dir.path().join(format!("{name}.yaml"));
        stepcost()
            .arg("import")
            .arg(config(name))
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        stepcost()
            .args([
                "run",
                &out.display().to_string(),
                "--chip",
                "b200",
                "--format",
                "json",
            ])
            .assert()
            .success();
    }
}

/// gpt-oss-120b's real config imports to the shipped workload: same shapes, windows and
/// checkpoint types (bf16 with the experts in mxfp4), so the same price to the bit.
#[test]
fn the_real_gpt_oss_config_prices_as_the_shipped_workload() {
    use stepcost::{price, Scenario, ScenarioSpec, Source, Workload};
    let yaml = imported("gpt-oss-120b").yaml;
    let from_config = Workload::load(&Source::from_text("gpt-oss-120b.yaml", &yaml)).unwrap();
    let shipped = crate::common::workload("gpt-oss-120b");
    let h100 = crate::common::chip("h100-sxm");
    let spec = ScenarioSpec {
        sets: vec![("batch".into(), 8.0)],
        ..ScenarioSpec::default()
    };
    let priced = |w: &Workload| price(w, &h100, &Scenario::resolve(w, &spec).unwrap()).unwrap();
    assert_eq!(priced(&from_config).summary, priced(&shipped).summary);
}
