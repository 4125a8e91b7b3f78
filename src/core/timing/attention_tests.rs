//! Expected mode's attention terms, each by hand on a chip with round numbers: the fused
//! attention kernel's own bandwidth fraction, the causal mask's skipped tiles, and its
//! special functions.

use super::*;
use crate::base::source::Source;

/// A chip with round numbers; `ATTENTION_MEMORY` is its attention kernels' fraction.
pub(super) const CHIP: &str = "\
name: Round chip
memory: {capacity: 80 GB, bandwidth: 1 TB/s}
matrix: {bf16: 100 TFLOPS}
vector: {bf16: 10 TFLOPS}
expected:
  matrix: {bf16: 0.5}
  memory: 0.8
  small_m_memory: 0.5
  ATTENTION_MEMORY
";

/// GQA attention of `batch` sequences: `tokens` new tokens each over `context` cached
/// positions, 4 query heads sharing 2 KV heads of 64.
pub(super) const ATTENTION: &str = "\
name: attention
params: {batch: 2, tokens: 1, context: 999, heads: 4, kv_heads: 2, head_dim: 64}
tokens_per_step: batch * tokens
tensors:
  q: {role: activation, shape: [batch * tokens, heads * head_dim]}
  k_cache: {role: kv, shape: [batch, kv_heads, context + tokens, head_dim]}
  v_cache: {role: kv, shape: [batch, kv_heads, context + tokens, head_dim]}
blocks:
  - name: attention
    causal: {queries: tokens, context: context}
    ops:
      - gemm: {name: scores, of: [q, k_cache], batch: batch * kv_heads,
               m: tokens * heads / kv_heads, n: context + tokens, k: head_dim}
      - elementwise: {name: softmax, of: [scores], flops_per_element: 5}
      - gemm: {name: mix, of: [softmax, v_cache], batch: batch * kv_heads,
               m: tokens * heads / kv_heads, n: head_dim, k: context + tokens}
fusion:
  flash: [[scores, softmax, mix]]
default_fusion: flash
";

pub(super) fn chip(attention_memory: Option<f64>) -> Chip {
    let line = attention_memory.map_or(String::new(), |f| format!("attention_memory: {f}"));
    let text = CHIP.replace("ATTENTION_MEMORY", &line);
    Chip::load(&Source::from_text("round.yaml", &text)).unwrap()
}

fn run(chip: &Chip, fusion: &str, sets: &[(&str, f64)]) -> StepReport {
    run_on(ATTENTION, chip, fusion, sets, Mode::Expected)
}

fn run_on(text: &str, chip: &Chip, fusion: &str, sets: &[(&str, f64)], mode: Mode) -> StepReport {
    let workload = Workload::load(&Source::from_text("attention.yaml", text)).unwrap();
    let mut scenario = Scenario::defaults(&workload);
    scenario.set_mode(mode);
    scenario.set_fusion(&workload, fusion).unwrap();
    for (name, value) in sets {
        scenario.set(&workload, name, *value).unwrap();
    }
    price(&workload, chip, &scenario).unwrap()
}

#[test]
fn a_fused_decode_attention_kernel_streams_the_cache_at_its_own_fraction() {
    // One read of q (2 x 2 KV heads x 2 query rows x 64), of each cache (2 x 2 x 1000 x 64)
    // and one write of the output (as q), 2 bytes an element.
    let bytes = 2.0 * (512.0 + 2.0 * 256_000.0 + 512.0);
    for (given, fraction) in [(Some(0.9), 0.9), (None, 0.8)] {
        let r = run(&chip(given), "flash", &[]);
        let k = &r.prices[0].cost;
        assert_eq!(k.bytes, bytes);
        // Not the small-M library GEMM's 0.8 x 0.5, although M = 2.
        assert_eq!(k.memory_fraction, fraction);
        let memory_s = bytes / (1e12 * fraction);
        assert!((k.expected_memory_s - memory_s).abs() < 1e-12 * memory_s);
    }
    // Unfused, the score GEMM is a library GEMM: 0.8 x 0.5 of the bandwidth.
    let r = run(&chip(Some(0.9)), "none", &[]);
    let scores = r.prices.iter().find(|p| p.name == "scores").unwrap();
    assert_eq!(scores.cost.memory_fraction, 0.8 * 0.5);
}

#[test]
fn a_causal_prompt_chunk_computes_only_the_scores_the_mask_leaves() {
    // 4 new tokens after 6 cached: query i sees 7 + i positions, 34 of the 4 x 10 counted
    // (q c - q (q - 1) / 2 of q c with c = 10): a share of 0.85.
    let sets = [("tokens", 4.0), ("context", 6.0)];
    let share = 34.0 / 40.0;
    // scores and mix: 2 x (2 x 2 KV heads) x 8 rows x 10 x 64 each; softmax 5 per score.
    let matrix_flops = 2.0 * (2.0 * 4.0 * 8.0 * 10.0 * 64.0);
    let vector_flops = 5.0 * 4.0 * 8.0 * 10.0;
    let chip = chip(None);
    // The roofline credits the fused kernel the same share, at the datasheet peaks: 100
    // TFLOPS for the GEMMs, 10 for the softmax.
    let roofline = run_on(ATTENTION, &chip, "flash", &sets, Mode::Roofline);
    let k = &roofline.prices[0].cost;
    assert!((k.causal_share - share).abs() < 1e-15, "{}", k.causal_share);
    assert!((k.flops - share * (matrix_flops + vector_flops)).abs() < 1e-9);
    let ceiling_s = share * (matrix_flops / 100e12 + vector_flops / 10e12);
    assert!((k.compute_time_s - ceiling_s).abs() < 1e-12 * ceiling_s);
    let expected = run(&chip, "flash", &sets);
    let k = &expected.prices[0].cost;
    assert!((k.causal_share - share).abs() < 1e-15, "{}", k.causal_share);
    assert!((k.flops - share * (matrix_flops + vector_flops)).abs() < 1e-9);
    // At 0.5 of the 100 TFLOPS matrix peak and all of the 10 TFLOPS vector peak.
    let compute_s = share * (matrix_flops / 50e12 + vector_flops / 10e12);
    assert!((k.expected_compute_s - compute_s).abs() < 1e-12 * compute_s);
    // Without `causal:` the kernel computes the whole matrix.
    let whole = ATTENTION.replace("    causal: {queries: tokens, context: context}\n", "");
    let k = run_on(&whole, &chip, "flash", &sets, Mode::Expected).prices[0].cost;
    assert_eq!(k.causal_share, 1.0);
    assert!((k.expected_compute_s - compute_s / share).abs() < 1e-12 * compute_s);
    // Unfused, the library GEMMs compute every score, in either mode.
    let r = run(&chip, "none", &sets);
    assert!(r.prices.iter().all(|p| p.cost.causal_share == 1.0));
    let r = run_on(ATTENTION, &chip, "none", &sets, Mode::Roofline);
    assert!(r.prices.iter().all(|p| p.cost.causal_share == 1.0));
    assert_eq!(r.summary.flops, matrix_flops + vector_flops);
}

/// The round chip with special-function units of `sfu` and `exp_overlap` hiding under GEMMs.
fn sfu_chip(sfu: &str, exp_overlap: Option<f64>) -> Chip {
    let line = exp_overlap.map_or(String::new(), |f| format!("exp_overlap: {f}"));
    let text = CHIP
        .replace("ATTENTION_MEMORY", &line)
        .replace("expected:", &format!("sfu: {sfu}\nexpected:"));
    Chip::load(&Source::from_text("round.yaml", &text)).unwrap()
}

#[test]
fn a_fused_attention_kernel_adds_its_exponentials_less_what_hides_under_its_gemms() {
    // 4 new tokens after 6 cached: 2 sequences x 4 heads x 4 x 10 scores, 34 of 40 computed,
    // one exponential each.
    let sets = [("tokens", 4.0), ("context", 6.0)];
    let exponentials = 2.0 * 4.0 * 4.0 * 10.0 * 34.0 / 40.0;
    // scores and mix, at 0.5 of 100 TFLOPS: 2 x (2 x 4 x 8 x 10 x 64) FLOPs x 34 / 40.
    let matrix_s = 2.0 * (2.0 * 4.0 * 8.0 * 10.0 * 64.0) * 34.0 / 40.0 / 50e12;
    let cost = |chip: &Chip, mode| run_on(ATTENTION, chip, "flash", &sets, mode).prices[0].cost;
    let without = cost(&chip(None), Mode::Expected);
    assert_eq!(without.special_s, 0.0);
    let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9 * b, "{a} vs {b}");
    // At 1 TFLOPS the exponentials take 272 ps, less than the GEMMs' 1.39 ns: all of them
    // adds, or half of them where half hides.
    let fast = 1e-12 * exponentials;
    for (overlap, added) in [(None, fast), (Some(0.5), 0.5 * fast)] {
        let k = cost(&sfu_chip("1 TFLOPS", overlap), Mode::Expected);
        close(k.special_s, added);
        close(k.expected_compute_s - without.expected_compute_s, added);
    }
    // At 1 GFLOPS they take 272 ns, longer than the GEMMs: half of the GEMMs' time hides.
    let slow = 1e-9 * exponentials;
    let k = cost(&sfu_chip("1 GFLOPS", Some(0.5)), Mode::Expected);
    close(k.special_s, slow - 0.5 * matrix_s);
    // The roofline has no such term.
    let k = cost(&sfu_chip("1 GFLOPS", Some(0.5)), Mode::Roofline);
    assert_eq!(k.special_s, 0.0);
    assert_eq!(
        k.compute_time_s,
        cost(&chip(None), Mode::Roofline).compute_time_s
    );
    // Unfused, the softmax is an elementwise kernel of its own on the vector unit.
    let r = run(&sfu_chip("1 GFLOPS", Some(0.5)), "none", &sets);
    assert!(r.prices.iter().all(|p| p.cost.special_s == 0.0));
}

#[test]
fn a_decode_attention_kernel_too_small_to_fill_the_chip_pays_its_combine_kernel() {
    // 10 units, a 1 us launch and a 0.5 us DRAM latency: one kernel's fixed cost is 2 us.
    let text = CHIP.replace("ATTENTION_MEMORY", "dram_latency: 0.5 us")
        + "compute_units: 10\nlaunch: 1 us\n";
    let chip = Chip::load(&Source::from_text("units.yaml", &text)).unwrap();
    let launch_at = |sets: &[(&str, f64)]| run(&chip, "flash", sets).prices[0].cost.launch_s;
    // 2 sequences x 2 KV heads x one block of 2 query rows: 4 tiles, under 0.8 x 10 units,
    // over 1000 keys (8 blocks of 128): split, and a combine kernel's 2 us beside its own.
    assert!((launch_at(&[]) - 4e-6).abs() < 1e-15);
    // 4 sequences: 8 tiles fill 0.8 of the units, no split.
    assert!((launch_at(&[("batch", 4.0)]) - 2e-6).abs() < 1e-15);
    // 100 keys: one block, nothing to split.
    assert!((launch_at(&[("context", 99.0)]) - 2e-6).abs() < 1e-15);
}
