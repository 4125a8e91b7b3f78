//! The sparse- and linear-attention models counted by hand: DeepSeek-V3.2's lightning indexer
//! and top-k attention against DeepSeek-V3's dense MLA (docs/sources.md, M18), and
//! Qwen3-Next-80B-A3B's gated DeltaNet state in memory and in serving (M19).

use stepcost::{types::DType, types::Role, ScenarioSpec, StepReport};

use crate::common::{assert_close, cell, csv_rows, roofline, run, stepcost, succeeded};

const LAYERS: f64 = 61.0;
const HEADS: f64 = 128.0;
/// MLA's cached latent and rotary key, and the latent the mix reads.
const CACHED: f64 = 512.0 + 64.0;
const LATENT: f64 = 512.0;
const INDEX_HEADS: f64 = 64.0;
const INDEX_DIM: f64 = 128.0;
const TOP_K: f64 = 2048.0;

/// One decode token of one sequence at `positions` cached positions (its own included).
fn decode(model: &str, positions: f64) -> StepReport {
    let sets = [
        ("batch", 1.0),
        ("tokens", 1.0),
        ("context", positions - 1.0),
    ];
    run(model, "h200", &sets, roofline())
}

/// The total of `name`'s FLOPs and bytes over its repeats.
fn kernel(r: &StepReport, name: &str) -> (f64, f64) {
    let p =
        (r.prices.iter().find(|p| p.name == name)).unwrap_or_else(|| panic!("no kernel {name}"));
    let count = p.cost.count as f64;
    (p.cost.flops * count, p.cost.bytes * count)
}

/// Weight-absorbed MLA's scores, softmax and mix of one query over `n` positions, per layer.
fn attention_flops(n: f64) -> f64 {
    2.0 * HEADS * n * CACHED + 5.0 * HEADS * n + 2.0 * HEADS * n * LATENT
}

#[test]
fn deepseek_v3_2_decodes_128k_for_the_indexer_and_top_k_arithmetic() {
    let n = 131_072.0;
    let (dense, sparse) = (decode("deepseek-v3", n), decode("deepseek-v3.2", n));
    // The indexer per layer and token: its projections (q from the 1536-wide compressed
    // query, one shared key and one weight per head from the 7168-wide hidden state), the
    // key's LayerNorm (7 per element), RoPE on 64 of 128 (3 per rotated element) and the
    // Hadamard rotation (7 stages) of 64 queries and the key, then every position scored by
    // every head (2 x 128 each), ReLU x weight + sum (3 per head and position), one comparison
    // per position.
    let projections = 2.0 * 1536.0 * INDEX_HEADS * INDEX_DIM
        + 2.0 * 7168.0 * INDEX_DIM
        + 2.0 * 7168.0 * INDEX_HEADS;
    let rotations = 7.0 * INDEX_DIM + (INDEX_HEADS + 1.0) * (3.0 * 64.0 + 7.0 * INDEX_DIM);
    let scoring = 2.0 * INDEX_HEADS * INDEX_DIM * n + 3.0 * INDEX_HEADS * n + n;
    let indexer = projections + rotations + scoring;
    // The rest of the step is the same: the difference is the attention over 2048 of the
    // 131072 positions, less the indexer.
    let saved = attention_flops(n) - attention_flops(TOP_K) - indexer;
    assert_close(
        dense.summary.flops - sparse.summary.flops,
        LAYERS * saved,
        1e-9,
    );
    // Bytes (bf16 cache and activations): the fused attention kernel reads 2048 of the
    // 131072 latent entries (576 elements each); the indexer's fused scoring kernel reads its
    // whole key cache (128 per position), the 64 x 128 rotated queries and the 64 weights,
    // and writes one score per position.
    let (_, dense_attention) = kernel(&dense, "scores+softmax+mix");
    let (_, sparse_attention) = kernel(&sparse, "scores+softmax+mix");
    assert_close(
        dense_attention - sparse_attention,
        LAYERS * (n - TOP_K) * CACHED * 2.0,
        1e-12,
    );
    let (_, scoring_bytes) = kernel(&sparse, "index_scores+index_reduce");
    let scoring_read = n * INDEX_DIM + INDEX_HEADS * INDEX_DIM + INDEX_HEADS + n;
    assert_close(scoring_bytes, LAYERS * 2.0 * scoring_read, 1e-12);
    // At batch 1 every other kernel is bound by memory, and the absorbed attention by compute
    // (128 heads x 1088 FLOPs per 1152-byte entry): the step is shorter by the bytes the
    // others do not move, at the H200's 4.8 TB/s, and by the attention's time.
    let attention = |r: &StepReport| {
        let p = r
            .prices
            .iter()
            .find(|p| p.name == "scores+softmax+mix")
            .unwrap();
        p.cost.time_s * p.cost.count as f64
    };
    let others = |r: &StepReport| r.summary.bytes - kernel(r, "scores+softmax+mix").1;
    assert_close(
        dense.summary.step_time_s - sparse.summary.step_time_s,
        attention(&dense) - attention(&sparse) + (others(&dense) - others(&sparse)) / 4.8e12,
        1e-9,
    );
    // The indexer (its key cache read whole, its projections' weights) costs back about a
    // quarter of what the top-k saves: 61 x (33.8 MB + 14 MB) at 4.8 TB/s against 61 x
    // 37.5 us of dense attention.
    let saved_s = dense.summary.step_time_s - sparse.summary.step_time_s;
    let ratio = saved_s / attention(&dense);
    assert!(0.6 < ratio && ratio < 0.9, "{ratio}");
    // The indexer's own key cache: 128 elements per position per layer beside MLA's 576.
    assert_close(
        sparse.summary.kv_bytes,
        LAYERS * n * (CACHED + INDEX_DIM) * 2.0,
        1e-12,
    );
}

#[test]
fn deepseek_v3_2_attends_to_every_position_below_top_k() {
    // At 1024 positions the top-k keeps them all: attention is V3's, plus the indexer.
    let (dense, sparse) = (
        decode("deepseek-v3", 1024.0),
        decode("deepseek-v3.2", 1024.0),
    );
    assert_eq!(
        kernel(&dense, "scores+softmax+mix"),
        kernel(&sparse, "scores+softmax+mix")
    );
    assert!(sparse.summary.step_time_s > dense.summary.step_time_s);
}

/// Weight elements the engine counts for `model` (bf16 weights: two bytes each).
fn counted(model: &str) -> f64 {
    let bf16 = ScenarioSpec {
        dtypes: vec![(Role::Weight.into(), DType::Bf16.into())],
        ..roofline()
    };
    run(model, "b200", &[], bf16).summary.weight_bytes / 2.0
}

#[test]
fn the_new_models_count_their_parameters() {
    // DeepSeek-V3.2: V3's weights and, in each of the 61 layers, the indexer's W_q (1536 x
    // 64 x 128), W_k (7168 x 128), W_w (7168 x 64) and its key's LayerNorm (2 x 128).
    let indexer = 1536.0 * 8192.0 + 7168.0 * 128.0 + 7168.0 * 64.0 + 256.0;
    assert_eq!(indexer, 13_959_424.0);
    assert_eq!(
        counted("deepseek-v3.2") - counted("deepseek-v3"),
        LAYERS * indexer
    );
    // Qwen3-Next-80B-A3B (M19): 36 gated DeltaNet layers (in_proj_qkvz 2048 x 12288,
    // in_proj_ba 2048 x 64, conv 8192 x 4, A_log and dt_bias 32 each, the gated norm 128,
    // out_proj 4096 x 2048), 12 gated attention layers (q and gate 2048 x 8192, k and v
    // 2048 x 512 each, q and k norms 256 each, o_proj 4096 x 2048), 48 MoE layers (router
    // 2048 x 512, 512 experts of 3 x 2048 x 512, a shared expert of the same, its gate 2048)
    // with two norms each, the embedding, the lm_head and the final norm.
    let linear = 2048.0 * 12288.0 + 2048.0 * 64.0 + 8192.0 * 4.0 + 64.0 + 128.0 + 4096.0 * 2048.0;
    let attention = 2048.0 * 8192.0 + 2.0 * 2048.0 * 512.0 + 512.0 + 4096.0 * 2048.0;
    let moe = 2048.0 * 512.0 + 513.0 * 3.0 * 2048.0 * 512.0 + 2048.0 + 2.0 * 2048.0;
    let total = 36.0 * linear + 12.0 * attention + 48.0 * moe + 2.0 * 151_936.0 * 2048.0 + 2048.0;
    // The published total of the architecture (Qwen3-Coder-Next's config, the same shapes).
    assert_eq!(total, 79_674_391_296.0);
    assert_eq!(counted("qwen3-next-80b-a3b"), total);
}

const QWEN3_NEXT: &str = "qwen3-next-80b-a3b";

/// Qwen3-Next's recurrent state per sequence on one of `tp` chips: 36 layers x (32 value heads
/// x 128 x 128 + the convolution's 3 last inputs of 2 x 2048 + 4096 channels), bf16.
fn qwen3_next_state_bytes(tp: f64) -> f64 {
    36.0 * ((32.0 / tp) * 128.0 * 128.0 + 3.0 * (8192.0 / tp)) * 2.0
}

#[test]
fn qwen3_next_keeps_a_state_per_sequence_whatever_its_context() {
    let at = |batch: f64, context: f64| {
        let sets = [("batch", batch), ("context", context), ("tokens", 1.0)];
        run(QWEN3_NEXT, "h200", &sets, roofline()).summary
    };
    let (short, long) = (at(3.0, 99.0), at(3.0, 8191.0));
    assert_eq!(qwen3_next_state_bytes(1.0), 39_518_208.0);
    assert_eq!(short.state_bytes, 3.0 * qwen3_next_state_bytes(1.0));
    assert_eq!(long.state_bytes, short.state_bytes);
    // KV only in the 12 attention layers: 2 x 2 KV heads x 256, bf16, per position.
    let per_position = 12.0 * 2.0 * 2.0 * 256.0 * 2.0;
    assert_eq!(short.kv_bytes, 3.0 * 100.0 * per_position);
    assert_eq!(long.kv_bytes, 3.0 * 8192.0 * per_position);
    assert_eq!(
        long.footprint_bytes,
        long.weight_bytes
            + long.kv_bytes
            + long.state_bytes
            + long.workspace_bytes
            + long.reserve_bytes
    );
    // The largest batch pays for each sequence's state beside its cache.
    let room = long.usable_bytes - long.weight_bytes - long.workspace_bytes - long.reserve_bytes;
    let per_sequence = qwen3_next_state_bytes(1.0) + 8192.0 * per_position;
    assert_eq!(long.max_batch, Some((room / per_sequence).floor() as u64));
}

#[test]
fn qwen3_next_decode_reads_each_state_once() {
    let sets = [("batch", 4.0), ("tokens", 1.0)];
    let r = run(QWEN3_NEXT, "h200", &sets, roofline());
    let rule = r.prices.iter().find(|p| p.name == "delta_rule").unwrap();
    // Per value head: 7 x 128 x 128 + 2 x 128 FLOPs, 32 heads, 4 sequences.
    assert_eq!(rule.cost.flops, 4.0 * 32.0 * (7.0 * 16384.0 + 256.0));
    // q, k, v (8192) and the two gates of 32 heads read per token, the 32 x 128 x 128 state
    // read and written, the output (4096) written; bf16.
    let state = 32.0 * 128.0 * 128.0;
    let elements = 4.0 * (8192.0 + 64.0) + 2.0 * 4.0 * state + 4.0 * 4096.0;
    assert_eq!(rule.cost.bytes, 2.0 * elements);
}

#[test]
fn serving_qwen3_next_admits_what_the_states_leave_room_for() {
    // Two H200s (tp = 2), requests of 1024 in and 1024 out: each decoding sequence holds
    // 1536 positions of KV on a chip (12 layers x 2 x 1 KV head x 256, bf16) and its state.
    let kv_bytes = 1536.0 * 12.0 * 2.0 * 256.0 * 2.0;
    let state_bytes = qwen3_next_state_bytes(2.0);
    let one = run(
        QWEN3_NEXT,
        "h200",
        &[("batch", 1.0), ("context", 1535.0), ("tp", 2.0)],
        ScenarioSpec::default(),
    )
    .summary;
    let room = one.usable_bytes - one.weight_bytes - one.reserve_bytes;
    // Admitted at most what fits beside the weights with every sequence's cache and state.
    let kv_alone = (room / kv_bytes).floor() as u64;
    let bound = (room / (kv_bytes + state_bytes)).floor() as u64;
    assert!(bound < kv_alone / 2 + 1, "{bound} {kv_alone}");
    let out = stepcost()
        .args(["serving", QWEN3_NEXT, "--chip", "h200", "--set", "tp=2"])
        .args(["--request", "in=1024,out=1024", "--concurrency", "100000"])
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let (header, rows) = csv_rows(&succeeded(out));
    let most: u64 = cell(&header, &rows[0], "max_concurrency").parse().unwrap();
    assert!(most <= bound && most > 0, "{most} of at most {bound}");
    assert!(
        most as f64 >= 0.8 * bound as f64,
        "{most} of at most {bound}"
    );
    assert_eq!(cell(&header, &rows[0], "capped_from"), "100000");
}

/// Qwen/Qwen3-Next-80B-A3B-Instruct's `config.json`, as copied in NVIDIA-NeMo/Megatron-Bridge's
/// tests (`qwen3_next_80b_a3b_config_dict`, Qwen3NextBridge; docs/sources.md, M19).
const QWEN3_NEXT_CONFIG: &str = r#"{"architectures": ["Qwen3NextForCausalLM"],
  "attention_dropout": 0.0, "bos_token_id": 151643, "decoder_sparse_step": 1,
  "eos_token_id": 151645, "full_attention_interval": 4, "head_dim": 256, "hidden_act": "silu",
  "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 5120,
  "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
  "linear_num_value_heads": 32, "linear_value_head_dim": 128, "max_position_embeddings": 262144,
  "mlp_only_layers": [], "model_type": "qwen3_next", "moe_intermediate_size": 512,
  "norm_topk_prob": true, "num_attention_heads": 16, "num_experts": 512,
  "num_experts_per_tok": 10, "num_hidden_layers": 48, "num_key_value_heads": 2,
  "output_router_logits": false, "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06,
  "rope_scaling": null, "rope_theta": 10000000, "router_aux_loss_coef": 0.001,
  "shared_expert_intermediate_size": 512, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "use_cache": true, "use_sliding_window": false,
  "vocab_size": 151936}"#;

/// DeepSeek-V3.2-Exp's `config.json` shapes with 61 layers (a copy with the layers cut to 4 in
/// a public test suite, `deepseek_v32_config`; the layer count of M18's
/// inference/config_671B_v3.2.json).
const DEEPSEEK_V32_CONFIG: &str = r#"{"architectures": ["DeepseekV32ForCausalLM"],
  "model_type": "deepseek_v32", "hidden_size": 7168, "intermediate_size": 18432,
  "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
  "num_key_value_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
  "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 256,
  "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
  "moe_layer_freq": 1, "n_group": 8, "topk_group": 4, "topk_method": "noaux_tc",
  "scoring_func": "sigmoid", "norm_topk_prob": true, "routed_scaling_factor": 2.5,
  "index_topk": 2048, "index_n_heads": 64, "index_head_dim": 128, "vocab_size": 129280,
  "torch_dtype": "bfloat16"}"#;

/// Imports `config` and writes the workload into `dir`; its path.
fn import_into(dir: &std::path::Path, config: &str) -> (String, String) {
    let imported = stepcost::internals::import::import(config, "config.json", Some("model"))
        .unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join("model.yaml");
    std::fs::write(&path, &imported.yaml).unwrap();
    (path.display().to_string(), imported.yaml)
}

#[test]
fn qwen3_next_and_deepseek_v3_2_configs_import_as_the_built_in_models() {
    let dir = tempfile::tempdir().unwrap();
    let (path, yaml) = import_into(dir.path(), QWEN3_NEXT_CONFIG);
    assert!(yaml.contains("template: gdn-moe\n"), "{yaml}");
    for line in [
        "linear_value_heads: 32",
        "shared_ffn: 512",
        "rotary_dim: 64",
        "kv_heads: 2",
    ] {
        assert!(yaml.contains(&format!("  {line}\n")), "{line} in {yaml}");
    }
    assert!(!yaml.contains("Not understood"), "{yaml}");
    let sets = [("batch", 8.0), ("tp", 2.0)];
    let imported = run(&path, "h200", &sets, roofline()).summary;
    let shipped = run(QWEN3_NEXT, "h200", &sets, roofline()).summary;
    // The same parameters (counted by hand in the_new_models_count_their_parameters), work
    // and state.
    assert_eq!(
        (imported.weight_bytes, imported.flops, imported.bytes),
        (shipped.weight_bytes, shipped.flops, shipped.bytes)
    );
    assert_eq!(imported.state_bytes, 8.0 * qwen3_next_state_bytes(2.0));

    let (path, yaml) = import_into(dir.path(), DEEPSEEK_V32_CONFIG);
    assert!(yaml.contains("template: mla-sparse-moe\n"), "{yaml}");
    assert!(!yaml.contains("Not understood"), "{yaml}");
    for line in [
        "index_heads: 64",
        "index_head_dim: 128",
        "index_topk: 2048",
        "index_hadamard_stages: 7",
    ] {
        assert!(yaml.contains(&format!("  {line}\n")), "{line} in {yaml}");
    }
    // The config's bf16 against the release's fp8 weights: the same work, other bytes.
    let sets = [("context", 131_071.0)];
    let imported = run(&path, "h200", &sets, roofline()).summary;
    let shipped = run("deepseek-v3.2", "h200", &sets, roofline()).summary;
    assert_eq!(
        (imported.flops, imported.kv_bytes),
        (shipped.flops, shipped.kv_bytes)
    );
}

#[test]
fn a_qwen3_next_config_with_layers_the_template_lacks_is_refused() {
    for (from, to, field) in [
        (
            "\"mlp_only_layers\": []",
            "\"mlp_only_layers\": [0, 47]",
            "mlp_only_layers",
        ),
        (
            "\"decoder_sparse_step\": 1",
            "\"decoder_sparse_step\": 2",
            "decoder_sparse_step",
        ),
        (
            "\"use_sliding_window\": false",
            "\"use_sliding_window\": true",
            "use_sliding_window",
        ),
    ] {
        let config = QWEN3_NEXT_CONFIG.replace(from, to);
        let err = stepcost::internals::import::import(&config, "config.json", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains(field) && err.contains("gdn-moe"), "{err}");
    }
}

#[test]
fn a_mixed_step_of_the_new_models_is_its_decode_and_prefill_steps() {
    // 16 decoding sequences at 5000 positions beside 3 prompt chunks of 256 after 4000, alone
    // and under tp = 2: the FLOPs add up, and so do the caches and the recurrent states.
    for model in ["deepseek-v3.2", QWEN3_NEXT] {
        for tp in [1.0, 2.0] {
            let price = |sets: &[(&str, f64)]| {
                let mut all = sets.to_vec();
                all.push(("tp", tp));
                run(model, "h200", &all, roofline()).summary
            };
            let mixed = price(&[
                ("batch", 16.0),
                ("tokens", 1.0),
                ("context", 5000.0),
                ("prefill_tokens", 768.0),
                ("prefill_seqs", 3.0),
                ("prefill_context", 4000.0),
            ]);
            let decode = price(&[("batch", 16.0), ("tokens", 1.0), ("context", 5000.0)]);
            let prefill = price(&[("batch", 3.0), ("tokens", 256.0), ("context", 4000.0)]);
            assert_close(mixed.flops, decode.flops + prefill.flops, 1e-12);
            assert_close(mixed.kv_bytes, decode.kv_bytes + prefill.kv_bytes, 1e-12);
            assert_eq!(mixed.state_bytes, decode.state_bytes + prefill.state_bytes);
            assert_eq!(mixed.tokens_per_step, Some(16.0 + 768.0));
        }
    }
}

#[test]
fn llama_4_vision_encodes_two_images_by_hand() {
    // Two 336 x 336 images: 2 tiles of 576 patches and a class token through 34 ViT layers
    // (hidden 1408, 16 heads of 88, MLP 5632), then 144 tokens a tile through the adapter
    // (5632 -> 4096 -> 4096) and the projector into Llama-4's 5120 (docs/sources.md, M10c).
    let (tiles, p, h, heads, d, f) = (2.0, 577.0, 1408.0, 16.0, 88.0, 5632.0);
    let n = tiles * p;
    let embed = 2.0 * tiles * 576.0 * 588.0 * h + n * h + 7.0 * n * h;
    let attention = 2.0 * 2.0 * tiles * heads * p * p * d + 5.0 * tiles * heads * p * p;
    let layer = 7.0 * n * h * 2.0 // two LayerNorms
        + 2.0 * n * 3.0 * h * h + 3.0 * n * 2.0 * h // q, k, v and RoPE on q and k
        + attention
        + 2.0 * n * h * h + 2.0 * n * h // o_proj and the two residual adds
        + 2.0 * 2.0 * n * h * f + 8.0 * n * f; // fc1, fc2 and GELU
    let tokens = tiles * 144.0;
    let adapter = 7.0 * n * h
        + 2.0 * tokens * 5632.0 * 4096.0
        + 2.0 * tokens * 4096.0 * 4096.0
        + 2.0 * 8.0 * tokens * 4096.0
        + 2.0 * tokens * 4096.0 * 5120.0;
    let r = run("llama-4-vision", "h200", &[("images", 2.0)], roofline());
    assert_close(r.summary.flops, embed + 34.0 * layer + adapter, 1e-12);
    // The 288 tokens it hands the language model.
    assert_eq!(r.summary.tokens_per_step, Some(288.0));
    // Its weights, as the checkpoint lists them: the patch embedding (588 x 1408), the class
    // token and 577 positions, two LayerNorms; per layer q, k, v, o with biases, fc1 and fc2
    // with biases, two LayerNorms; the adapter's fc1 (5632 x 4096) and fc2 (4096 x 4096); the
    // projector (4096 x 5120).
    let per_layer = 4.0 * (h * h + h) + 2.0 * h * f + f + h + 4.0 * h;
    let weights = 588.0 * h
        + h
        + p * h
        + 4.0 * h
        + 34.0 * per_layer
        + 5632.0 * 4096.0
        + 4096.0 * 4096.0
        + 4096.0 * 5120.0;
    assert_eq!(weights, 871_932_416.0);
    assert_eq!(counted("llama-4-vision"), weights);
    // A larger image at 4 tiles (576 tokens) costs the encoder four tiles' work.
    let big = run(
        "llama-4-vision",
        "h200",
        &[("image_tokens", 576.0)],
        roofline(),
    );
    let one = run("llama-4-vision", "h200", &[], roofline());
    assert_eq!(big.summary.tokens_per_step, Some(576.0));
    assert!(big.summary.flops > 3.9 * one.summary.flops);
}
