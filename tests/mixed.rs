//! Mixed steps (a continuous-batching iteration: `batch` decode sequences and a chunk of other
//! sequences' prompt tokens, `prefill_tokens` over `prefill_seqs` at `prefill_context`) priced
//! as one step, against the decode step and the prefill step priced apart, and by hand.

use stepcost::{types::DType, types::Role, ScenarioSpec, StepReport};

use crate::common::{assert_close, roofline, run};

/// A mixed step of a model under a layout: the decode part and the prompt chunk.
#[derive(Clone, Copy)]
struct Mix {
    workload: &'static str,
    layout: &'static [(&'static str, f64)],
    batch: f64,
    context: f64,
    prefill_tokens: f64,
    prefill_seqs: f64,
    prefill_context: f64,
}

impl Mix {
    fn price(&self, sets: &[(&str, f64)], spec: &ScenarioSpec) -> StepReport {
        let all: Vec<(&str, f64)> = sets.iter().chain(self.layout).copied().collect();
        run(self.workload, "h200", &all, spec.clone())
    }

    /// The step as one: decode tokens and prompt tokens together.
    fn mixed(&self, spec: &ScenarioSpec) -> StepReport {
        let sets = [
            ("batch", self.batch),
            ("tokens", 1.0),
            ("context", self.context),
            ("prefill_tokens", self.prefill_tokens),
            ("prefill_seqs", self.prefill_seqs),
            ("prefill_context", self.prefill_context),
        ];
        self.price(&sets, spec)
    }

    /// Its decode part alone.
    fn decode(&self, spec: &ScenarioSpec) -> StepReport {
        let sets = [
            ("batch", self.batch),
            ("tokens", 1.0),
            ("context", self.context),
        ];
        self.price(&sets, spec)
    }

    /// Its prompt chunk alone, priced the old way: a prefill step of the prefilling sequences.
    fn prefill(&self, spec: &ScenarioSpec) -> StepReport {
        let sets = [
            ("batch", self.prefill_seqs),
            ("tokens", self.prefill_tokens / self.prefill_seqs),
            ("context", self.prefill_context),
        ];
        self.price(&sets, spec)
    }
}

const NONE: &[(&str, f64)] = &[];
const TP2: &[(&str, f64)] = &[("tp", 2.0)];
const EP2: &[(&str, f64)] = &[("ep", 2.0)];

/// The models of the templates with mixed steps: dense, gemma2, moe, mla-moe and hybrid-ssm.
const MODELS: [&str; 5] = [
    "llama-3.1-8b",
    "gemma-2-27b",
    "mixtral-8x7b",
    "deepseek-v3",
    "nemotron-h-8b",
];

/// Each template's model alone and under tp = 2 (DeepSeek-V3 also under ep = 2), with
/// contexts that reach past Gemma-2's 4096-position window in both parts.
fn cases() -> Vec<Mix> {
    let mut cases = Vec::new();
    for workload in MODELS {
        let layouts: &[&[(&str, f64)]] = if workload == "deepseek-v3" {
            &[NONE, TP2, EP2]
        } else {
            &[NONE, TP2]
        };
        for &layout in layouts {
            cases.push(Mix {
                workload,
                layout,
                batch: 16.0,
                context: 5000.0,
                prefill_tokens: 768.0,
                prefill_seqs: 3.0,
                prefill_context: 4000.0,
            });
        }
    }
    cases
}

#[test]
fn a_mixed_steps_flops_are_its_decode_and_prefill_steps_flops() {
    for m in cases() {
        let spec = roofline();
        let (mixed, decode, prefill) = (m.mixed(&spec), m.decode(&spec), m.prefill(&spec));
        let whole = decode.summary.flops + prefill.summary.flops;
        assert!(
            (mixed.summary.flops - whole).abs() <= 1e-12 * whole,
            "{} {:?}: {} FLOPs mixed, {} apart",
            m.workload,
            m.layout,
            mixed.summary.flops,
            whole
        );
        // Tokens: every decode and prompt token; and the decode sequences' time per token.
        assert_eq!(mixed.summary.tokens_per_step, Some(16.0 + 768.0));
        let ms = mixed.summary.step_time_s * 1e3;
        assert_close(mixed.summary.ms_per_token.unwrap(), ms, 1e-12);
    }
}

/// Elements of a model's weights that a step reads in part or not at all: the input embedding
/// (only the rows looked up, so its reads add up like activations) where it is not tied to
/// the head, and the routed experts the step's `tokens` do not reach under uniform routing.
fn unread_weight_elements(m: &Mix, tokens: f64) -> f64 {
    let tp = m
        .layout
        .iter()
        .find(|(n, _)| *n == "tp")
        .map_or(1.0, |p| p.1);
    let ep = m
        .layout
        .iter()
        .find(|(n, _)| *n == "ep")
        .map_or(1.0, |p| p.1);
    let touched = |e: f64, k: f64| e * (1.0 - (1.0 - k / e).powf(tokens));
    match m.workload {
        "llama-3.1-8b" => 128256.0 / tp * 4096.0,
        "gemma-2-27b" => 0.0, // the head reads the tied embedding whole
        "nemotron-h-8b" => 131072.0 / tp * 4096.0,
        // 32 MoE layers of 8 experts (gate_up 4096 x 2 x 14336, down 14336 x 4096), top-2
        "mixtral-8x7b" => {
            let expert = 3.0 * 4096.0 * 14336.0 / tp;
            32000.0 / tp * 4096.0 + 32.0 * (8.0 - touched(8.0, 2.0)) * expert
        }
        // 58 MoE layers of 256 experts (3 x 7168 x 2048 each), top-8, split over ep groups
        "deepseek-v3" => {
            let expert = 3.0 * 7168.0 * 2048.0 / tp;
            129280.0 / tp * 7168.0 + 58.0 * (256.0 - touched(256.0, 8.0)) / ep * expert
        }
        other => panic!("no weight count for {other}"),
    }
}

/// Elements of weights a mixed step reads twice: a Mamba-2 layer's decode and prefill conv
/// kernels each read the conv taps and biases (x, B and C channels x (4 taps + 1)), and its
/// two scan kernels each read the decays and skip (3 per head); 24 such layers in
/// Nemotron-H-8B, 128 heads of 64, 8 groups of state 128, each split `tp` ways. DeepSeek-V3's
/// decode tokens (absorbed) and prompt chunk (decompressed) each read kv_b's two parts, W_UK
/// and W_UV: 61 layers of 128 heads x 512 x (128 + 128), split `tp` ways.
fn weight_elements_read_twice(m: &Mix) -> f64 {
    let tp = m
        .layout
        .iter()
        .find(|(n, _)| *n == "tp")
        .map_or(1.0, |p| p.1);
    if m.workload == "deepseek-v3" {
        return 61.0 * 128.0 / tp * 512.0 * (128.0 + 128.0);
    }
    if m.workload != "nemotron-h-8b" {
        return 0.0;
    }
    let heads = 128.0 / tp;
    let channels = heads * 64.0 + 2.0 * (8.0 / tp).max(1.0) * 128.0;
    24.0 * (channels * 5.0 + 3.0 * heads)
}

#[test]
fn unfused_a_mixed_step_moves_its_two_steps_bytes_less_the_weights_read_twice() {
    // Without fusion every op reads its inputs and writes its output, so the activations' and
    // the caches' bytes add up, and each weight is read once per step: bytes less the
    // weights read are additive. The weights read are the resident ones (pp = 1: a chip
    // holds every layer it runs) less the unread part, in bf16 (2 bytes) throughout; a
    // mixed step reads a Mamba layer's conv weights and decays twice (its decode and its
    // prefill kernels each read them).
    let spec = ScenarioSpec {
        fusion: Some("none".into()),
        dtypes: vec![(Role::Weight.into(), DType::Bf16.into())],
        ..roofline()
    };
    for m in cases() {
        let (mixed, decode, prefill) = (m.mixed(&spec), m.decode(&spec), m.prefill(&spec));
        let resident = decode.summary.weight_bytes;
        assert_eq!(mixed.summary.weight_bytes, resident);
        let read = |tokens: f64| resident - 2.0 * unread_weight_elements(&m, tokens);
        let rest = |r: &StepReport, tokens: f64| r.summary.bytes - read(tokens);
        let tokens = m.batch + m.prefill_tokens;
        let apart = rest(&decode, m.batch) + rest(&prefill, m.prefill_tokens);
        let together = rest(&mixed, tokens) - 2.0 * weight_elements_read_twice(&m);
        assert!(
            (together - apart).abs() <= 1e-12 * mixed.summary.bytes,
            "{} {:?}: {together} bytes beside the weights mixed, {apart} apart",
            m.workload,
            m.layout
        );
        // The caches: the decode sequences' and the prefilling sequences' own.
        assert_close(
            mixed.summary.kv_bytes,
            decode.summary.kv_bytes + prefill.summary.kv_bytes,
            1e-12,
        );
        // And the recurrent state likewise (none but Nemotron-H's).
        assert_eq!(
            mixed.summary.state_bytes,
            decode.summary.state_bytes + prefill.summary.state_bytes
        );
    }
}

#[test]
fn nemotron_h_mixed_step_holds_a_state_for_each_prompt_and_reads_each_once() {
    // 16 decode sequences and two prompts' chunks of 384 tokens: 18 sequences' state, each
    // 24 layers x (SSM 128 x 64 x 128 + conv 3 x 10240), bf16.
    let m = Mix {
        workload: "nemotron-h-8b",
        layout: NONE,
        batch: 16.0,
        context: 2000.0,
        prefill_tokens: 768.0,
        prefill_seqs: 2.0,
        prefill_context: 1024.0,
    };
    let r = m.mixed(&roofline());
    let per_sequence = 24.0 * (128.0 * 64.0 * 128.0 + 3.0 * 10240.0) * 2.0;
    assert_eq!(r.summary.state_bytes, 18.0 * per_sequence);
    let op = |name: &str| &r.prices.iter().find(|p| p.name == name).unwrap().cost;
    // The decode scan: the recurrent update of 16 sequences, 128 heads x (5 x 64 x 128 +
    // 3 x 64) FLOPs each.
    assert_eq!(
        op("ssm").flops,
        16.0 * 128.0 * (5.0 * 64.0 * 128.0 + 3.0 * 64.0)
    );
    // The prefill scan: 2 sequences of 3 chunks of 128. Per chunk and head 2 x 128^2 x 64
    // + 4 x 128 x 128 x 64 + 2 x 128 x 64; per chunk and group 2 x 128^2 x 128.
    let per_chunk = 128.0 * (2_097_152.0 + 4_194_304.0 + 16_384.0) + 8.0 * 4_194_304.0;
    assert_eq!(op("ssm_prefill").flops, 2.0 * 3.0 * per_chunk);
    // It reads x, B, C (10240) and dt (128) of its 768 tokens, the 3 x 128 decays and skip
    // and both prompts' states, and writes y (8192) of each token and the states; bf16.
    let state = 128.0 * 64.0 * 128.0;
    let elements = 768.0 * (10240.0 + 128.0) + 384.0 + 2.0 * 2.0 * state + 768.0 * 8192.0;
    assert_eq!(op("ssm_prefill").bytes, 2.0 * elements);
}

#[test]
fn llama_3_1_8b_mixed_step_flops_by_hand() {
    // 16 decode sequences at 1000 cached positions, and one prompt's chunk of 512 tokens
    // after 256 already cached: 528 tokens through the weights.
    let m = Mix {
        workload: "llama-3.1-8b",
        layout: NONE,
        batch: 16.0,
        context: 1000.0,
        prefill_tokens: 512.0,
        prefill_seqs: 1.0,
        prefill_context: 256.0,
    };
    let r = m.mixed(&roofline());
    let (layers, h, ffn, vocab) = (32.0, 4096.0, 14336.0, 128256.0);
    let (heads, kv_heads, head_dim) = (32.0, 8.0, 128.0);
    let t = 16.0 + 512.0;
    // Per layer: qkv [h x (32 + 2 x 8) x 128], o_proj [32 x 128 x h], gate_up [h x 2 ffn],
    // down [ffn x h]: 2 FLOPs per weight per token.
    let weights =
        h * (heads + 2.0 * kv_heads) * head_dim + heads * head_dim * h + h * 2.0 * ffn + ffn * h;
    let gemms = 2.0 * weights * t;
    // Attention: scores and mix are 2 x head_dim per score each, over every query head;
    // softmax 5 per score. Decode: 16 queries at 1001 positions; prefill: 512 queries after
    // 256 cached, query i seeing 256 + i + 1 positions (the fused kernel skips the tiles the
    // causal mask empties): 512 x 256 + 512 x 513 / 2 scores of the 512 x 768 counted.
    let attention = |scores_per_head: f64| {
        let scores = heads * scores_per_head;
        2.0 * 2.0 * scores * head_dim + 5.0 * scores
    };
    let attn = attention(16.0 * 1001.0) + attention(512.0 * 256.0 + 512.0 * 513.0 / 2.0);
    // Elementwise, per token: two RMSNorms (4 per element of h), RoPE (3 per element of
    // q and k: (32 + 8) x 128), two residual adds (1 per element of h), SiLU x up (5 per
    // element of ffn).
    let elementwise =
        t * (2.0 * 4.0 * h + 3.0 * (heads + kv_heads) * head_dim + 2.0 * h + 5.0 * ffn);
    // Head: the final norm on every token, logits for the last position of the 17 sequences.
    let head = 4.0 * t * h + 2.0 * (16.0 + 1.0) * h * vocab;
    let expected = layers * (gemms + attn + elementwise) + head;
    assert_close(r.summary.flops, expected, 1e-12);
    assert_eq!(expected, 7_537_592_320_000.0); // 7.54 TFLOP
}

#[test]
fn without_prompt_tokens_the_prefill_params_change_nothing() {
    // prefill_seqs and prefill_context mean nothing while prefill_tokens is 0: in every
    // mode and plan, the step is the decode step to the last bit.
    for workload in MODELS {
        for (mode, fusion) in [
            (stepcost::Mode::Expected, "flash"),
            (stepcost::Mode::Roofline, "none"),
        ] {
            let spec = ScenarioSpec {
                mode,
                fusion: Some(fusion.into()),
                ..ScenarioSpec::default()
            };
            let base = [("batch", 8.0), ("context", 3000.0)];
            let plain = run(workload, "h200", &base, spec.clone());
            let set = [
                base[0],
                base[1],
                ("prefill_tokens", 0.0),
                ("prefill_seqs", 3.0),
                ("prefill_context", 700.0),
            ];
            let idle = run(workload, "h200", &set, spec);
            let (a, b) = (&plain.summary, &idle.summary);
            assert_eq!(
                a.step_time_s.to_bits(),
                b.step_time_s.to_bits(),
                "{workload}"
            );
            assert_eq!((a.flops, a.bytes, a.kernels), (b.flops, b.bytes, b.kernels));
            assert_eq!(
                (a.kv_bytes, a.workspace_bytes),
                (b.kv_bytes, b.workspace_bytes)
            );
            assert_eq!(
                (a.max_batch, a.tokens_per_step),
                (b.max_batch, b.tokens_per_step)
            );
            let names = |r: &StepReport| -> Vec<String> {
                (r.prices.iter())
                    .filter(|p| p.cost.count > 0)
                    .map(|p| p.name.clone())
                    .collect()
            };
            assert_eq!(names(&plain), names(&idle));
            assert!(names(&idle).iter().all(|n| !n.contains("prefill")));
        }
    }
}

#[test]
fn the_prefilling_sequences_cache_is_held_apart_from_the_batchs() {
    // Llama-3.1-70B, fp8 weights, 64 sequences at 1500 and two prompts of 1024 tokens.
    let spec = ScenarioSpec {
        dtypes: vec![(Role::Weight.into(), DType::Fp8.into())],
        ..ScenarioSpec::default()
    };
    let base = [("batch", 64.0), ("context", 1500.0)];
    let decode = run("llama-3.1-70b", "h200", &base, spec.clone()).summary;
    let mixed = run(
        "llama-3.1-70b",
        "h200",
        &[
            base[0],
            base[1],
            ("prefill_tokens", 2048.0),
            ("prefill_seqs", 2.0),
        ],
        spec,
    )
    .summary;
    // Their cache: 80 layers x K and V x 8 KV heads x 128 x 2 sequences x 1024 positions, bf16.
    let prompts = 80.0 * 2.0 * 8.0 * 128.0 * 2.0 * 1024.0 * 2.0;
    assert_close(mixed.kv_bytes, decode.kv_bytes + prompts, 1e-12);
    // The workspace is the engine's, not the step's: the same.
    assert_eq!(mixed.workspace_bytes, decode.workspace_bytes);
    // The most decode sequences that fit beside the prompts' cache and the rest.
    let room = decode.usable_bytes
        - decode.reserve_bytes
        - decode.weight_bytes
        - decode.workspace_bytes
        - prompts;
    let per_sequence = decode.kv_bytes / 64.0;
    assert_eq!(mixed.max_batch, Some((room / per_sequence).floor() as u64));
    assert!(mixed.max_batch < decode.max_batch);
}

#[test]
fn bad_prefill_params_are_refused_by_name() {
    let refused = |sets: &[(&str, f64)]| -> String {
        let w = crate::common::workload("llama-3.1-8b");
        let spec = ScenarioSpec {
            sets: sets.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect(),
            ..ScenarioSpec::default()
        };
        let scenario = stepcost::Scenario::resolve(&w, &spec).unwrap();
        let chip = crate::common::chip("h200");
        stepcost::price(&w, &chip, &scenario)
            .unwrap_err()
            .to_string()
    };
    let e = refused(&[("prefill_tokens", -1.0)]);
    assert!(e.contains("`prefill_tokens` is -1"), "{e}");
    let e = refused(&[("prefill_context", -5.0), ("prefill_tokens", 64.0)]);
    assert!(e.contains("`prefill_context` is -5"), "{e}");
    for seqs in [0.0, -2.0, 65.0] {
        let e = refused(&[("prefill_tokens", 64.0), ("prefill_seqs", seqs)]);
        assert!(e.contains(&format!("`prefill_seqs` is {seqs}")), "{e}");
    }
}

#[test]
fn the_command_line_sets_prefill_seqs_and_says_the_step_is_mixed() {
    let out = crate::common::stepcost()
        .args([
            "run",
            "llama-3.1-70b",
            "--chip",
            "h200",
            "--set",
            "batch=64",
        ])
        .args(["--set", "context=1500", "--set", "prefill_tokens=2048"])
        .args(["--set", "prefill_seqs=2", "--set", "prefill_context=0"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("batch=64, context=1500, beside prefill_tokens=2048 of prefill_seqs=2 at prefill_context=0"),
        "{text}"
    );
    let tokens = text.lines().find(|l| l.contains("tokens per step"));
    assert!(tokens.is_some_and(|l| l.ends_with(" 2112 │")), "{text}");
}
