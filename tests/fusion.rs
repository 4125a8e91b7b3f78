//! Fusion: a fused group moves only what crosses its boundary.

use stepcost::ScenarioSpec;

use crate::common::run;

fn prefill(fusion: &str, tokens: f64, context: f64) -> stepcost::StepReport {
    run(
        "llama-3.1-70b",
        "h100-sxm",
        &[("batch", 1.0), ("tokens", tokens), ("context", context)],
        ScenarioSpec {
            fusion: Some(fusion.into()),
            ..crate::common::roofline()
        },
    )
}

#[test]
fn flash_attention_saves_exactly_the_score_matrix_traffic() {
    for (tokens, context) in [(2048.0, 0.0), (512.0, 1024.0)] {
        let none = prefill("none", tokens, context);
        let flash = prefill("flash", tokens, context);
        // Unfused: scores writes the [tokens x (context + tokens)] score matrix of every head,
        // softmax reads it and writes the probabilities, mix reads them back: 4 passes, bf16.
        let per_layer = 64.0 * tokens * (context + tokens) * 2.0 * 4.0;
        assert_eq!(none.summary.bytes - flash.summary.bytes, 80.0 * per_layer);
        // The fused kernel does only the scores the causal mask leaves (query i of q after c
        // cached sees c + i + 1 positions): q (q - 1) / 2 of the q (c + q) per head skipped,
        // each 4 x 128 FLOPs of GEMMs and 5 of softmax. Unfused, every score is computed.
        let skipped = 80.0 * 64.0 * tokens * (tokens - 1.0) / 2.0 * (4.0 * 128.0 + 5.0);
        let saved = none.summary.flops - flash.summary.flops;
        assert!(
            (saved - skipped).abs() < 1e-12 * skipped,
            "{saved} against {skipped}"
        );
        // and three kernels become one, in each of 80 layers
        assert_eq!(none.summary.kernels - flash.summary.kernels, 80 * 2);
    }
}

#[test]
fn fusing_a_residual_with_the_next_norm_keeps_the_residual_written() {
    let flash = prefill("flash", 16.0, 0.0);
    let full = prefill("full", 16.0, 0.0);
    // [attn_residual, ffn_norm]: ffn_norm no longer reads attn_residual's output back, but the
    // residual stream is still written because ffn_residual (outside the group) reads it.
    // [gate_up, silu_mul]: the [tokens x 2 ffn] gate/up output never reaches HBM, written
    // by one kernel and read by the other.
    let hidden_bytes = 16.0 * 8192.0 * 2.0;
    let gate_up_bytes = 16.0 * 2.0 * 28672.0 * 2.0;
    let per_layer = hidden_bytes + 2.0 * gate_up_bytes;
    assert_eq!(flash.summary.bytes - full.summary.bytes, 80.0 * per_layer);
}
