//! DeepSeek-V3's attention (MLA) counted by hand: weight-absorbed in decode, decompressed in
//! prefill (docs/sources.md, kernel physics 11), from the config's shapes: 61 layers, 128
//! heads, kv_lora_rank 512, qk_nope 128 + qk_rope 64, v_head_dim 128.

use stepcost::StepReport;

use crate::common::{assert_close, roofline, run};

const LAYERS: f64 = 61.0;
const HEADS: f64 = 128.0;
const LATENT: f64 = 512.0;
const ROPE: f64 = 64.0;
const NOPE: f64 = 128.0;
const V: f64 = 128.0;

/// FLOPs of one execution of each kernel of `block`, by name, times its count.
fn block_flops(r: &StepReport, block: &str) -> Vec<(String, f64)> {
    (r.prices.iter())
        .filter(|p| p.block == block)
        .map(|p| (p.name.clone(), p.cost.flops * p.cost.count as f64))
        .collect()
}

fn flops_of(kernels: &[(String, f64)], name: &str) -> f64 {
    let found = kernels.iter().find(|(n, _)| n == name);
    found
        .unwrap_or_else(|| panic!("no kernel {name} in {kernels:?}"))
        .1
}

#[test]
fn deepseek_v3_prefills_decompressed_by_hand() {
    // A 4096-token prompt on an empty cache: every query attends to c = 4096 positions.
    let (q, c) = (4096.0, 4096.0);
    let r = run(
        "deepseek-v3",
        "h200",
        &[("batch", 1.0), ("tokens", q), ("context", 0.0)],
        roofline(),
    );
    let k = block_flops(&r, "expanded_attention");
    // The latent of every position up-projected to each head's nope key and its value.
    assert_close(
        flops_of(&k, "k_up"),
        LAYERS * 2.0 * c * LATENT * HEADS * NOPE,
        1e-12,
    );
    assert_close(
        flops_of(&k, "v_up"),
        LAYERS * 2.0 * c * LATENT * HEADS * V,
        1e-12,
    );
    // Multi-head attention with k = 128 + 64 and n = 128 per head, softmax 5 per score: the
    // whole score matrix counted, of which the fused kernel does the causal share, query i
    // seeing i + 1 positions: q (q + 1) / 2 of q^2.
    let scores = 2.0 * HEADS * q * c * (NOPE + ROPE);
    let softmax = 5.0 * HEADS * q * c;
    let mix = 2.0 * HEADS * q * c * V;
    let attention = "scores_expanded+softmax_expanded+mix_expanded";
    let share = (q + 1.0) / (2.0 * q);
    assert_close(
        flops_of(&k, attention),
        LAYERS * share * (scores + softmax + mix),
        1e-12,
    );
    // The absorbed form's kernels are not in the step.
    assert!(block_flops(&r, "attention").is_empty());
    // 3.4x fewer attention FLOPs than the absorbed form's (576 + 512) per head and position.
    let absorbed = 2.0 * HEADS * q * c * (LATENT + ROPE + LATENT) + softmax;
    assert!(absorbed / (scores + softmax + mix) > 3.3);
}

#[test]
fn deepseek_v3_decodes_absorbed_by_hand() {
    // 8 sequences at 4095 cached positions: each query attends to 4096.
    let (b, c) = (8.0, 4096.0);
    let r = run(
        "deepseek-v3",
        "h200",
        &[("batch", b), ("tokens", 1.0), ("context", c - 1.0)],
        roofline(),
    );
    let k = block_flops(&r, "attention");
    // W_UK into each head's query, W_UV out of each head's latent output.
    assert_close(
        flops_of(&k, "q_absorb"),
        LAYERS * 2.0 * HEADS * b * NOPE * LATENT,
        1e-12,
    );
    assert_close(
        flops_of(&k, "v_absorb"),
        LAYERS * 2.0 * HEADS * b * LATENT * V,
        1e-12,
    );
    // Multi-query over the latent: k = 512 + 64, n = 512.
    let per_seq = 2.0 * HEADS * c * (LATENT + ROPE) + 5.0 * HEADS * c + 2.0 * HEADS * c * LATENT;
    assert_close(
        flops_of(&k, "scores+softmax+mix"),
        LAYERS * b * per_seq,
        1e-12,
    );
    assert!(block_flops(&r, "expanded_attention").is_empty());
}
