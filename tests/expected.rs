//! Expected mode: corrections that only slow a kernel down, each explained; requests;
//! validation against measured hardware.

use predicates::prelude::*;
use stepcost::{price, timing::Bound, Chip, Mode, Scenario, ScenarioSpec, Source, Workload};

use crate::common::{assert_close, run, stepcost};

fn expected() -> ScenarioSpec {
    ScenarioSpec {
        mode: Mode::Expected,
        ..ScenarioSpec::default()
    }
}

#[test]
fn every_kernel_is_slower_than_its_roofline_and_says_why() {
    for model in ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "gemma-2-27b"] {
        for chip in ["h100-sxm", "a100-80gb", "mi300x", "b200"] {
            for (batch, tokens) in [(1.0, 1.0), (64.0, 1.0), (1.0, 512.0)] {
                let r = run(
                    model,
                    chip,
                    &[("batch", batch), ("tokens", tokens)],
                    expected(),
                );
                assert!(r.summary.fraction_of_roofline > 0.0);
                for p in &r.prices {
                    let c = &p.cost;
                    // Bytes served from the on-chip cache are the one correction that can beat
                    // the HBM roofline (the seeds' second, steeper slope); the compute roof holds.
                    if c.cache_hit_bytes == 0.0 {
                        assert!(c.time_s >= c.roofline_time_s, "{model} {chip} {}", p.name);
                    }
                    assert!(c.time_s >= c.compute_time_s, "{model} {chip} {}", p.name);
                    assert!(
                        c.time_s
                            >= c.launch_s + c.expected_compute_s.max(c.expected_memory_s) - 1e-15
                    );
                    assert!(c.quantization >= 1.0);
                }
            }
        }
    }
}

#[test]
fn a_large_gemm_lands_at_the_measured_fraction_of_peak() {
    // H200 8192^3 bf16: the chip file's fitted fraction of 989 TFLOPS, the loads nearly
    // hidden under the MMAs, plus one kernel's fixed cost (1.26 us launch, two DRAM latencies).
    // Stream-K splits the last partial wave over the 132 SMs: with 128 x 128 tiles, 4096 tiles
    // leave 4 in the 32nd wave, 128 extra pieces of 64 KiB of fp32 partial sums, written and
    // read back at the 10 TB/s of the file's cache (the wider tiles move as much) once the
    // owner has waited one DRAM latency for them.
    let r = run("gemm", "h200", &[], expected());
    let a = Chip::named("h200").unwrap().expected().unwrap().clone();
    let d: f64 = 8192.0;
    let fixup = 2.0 * 128.0 * (128.0 * 128.0 * 4.0) / 10e12 + a.dram_latency_s;
    let compute = 2.0 * d.powi(3)
        / (a.matrix[stepcost::types::DType::Bf16 as usize].unwrap() * 989e12)
        + fixup;
    let memory = 2.0 * 3.0 * d * d / (a.memory * 4.8e12);
    let fixed = 1.26e-6 + 2.0 * a.dram_latency_s;
    assert_close(
        r.summary.step_time_s,
        fixed + (compute.powi(2) + memory.powi(2)).sqrt(),
        1e-9,
    );
    assert_eq!(r.prices[0].cost.bound, Bound::Compute);
    // 769-798 TFLOPS measured on random data (validation rows W-G1, W-G2); the fitted
    // fraction weighs the other sources' H200 GEMMs too, so within 5 % of that range.
    let tflops = r.summary.attained_flop_per_s / 1e12;
    assert!((769.0 * 0.95..798.0 * 1.05).contains(&tflops), "{tflops}");
}

#[test]
fn tiny_kernels_cost_their_launch() {
    let r = run("elementwise", "h100-sxm", &[("n", 1024.0)], expected());
    let a = Chip::named("h100-sxm").unwrap().expected().unwrap().clone();
    let p = &r.prices[0];
    assert_eq!(p.cost.bound, Bound::Launch);
    // H100 SXM's launch floor (1.26 us) and two DRAM latencies
    assert_close(p.cost.launch_s, 1.26e-6 + 2.0 * a.dram_latency_s, 1e-12);
    assert!(p.cost.time_s < 1.01 * p.cost.launch_s + p.cost.roofline_time_s / a.memory + 1e-12);
}

fn chip(text: &str) -> Chip {
    Chip::load(&Source::from_text("c.yaml", text)).unwrap()
}

#[test]
fn padding_and_waves_stretch_an_odd_gemm() {
    // docs/sources.md, kernel physics 1 (NVIDIA matmul guide): on 108 SMs with 256x128 tiles, M = N = 1793 needs 8 x 15 = 120
    // tiles, two waves of which the second is nearly empty.
    let a100 = chip(
        "name: t\nmemory: {capacity: 80 GB, bandwidth: 2 TB/s}\nmatrix: {bf16: 312 TFLOPS}\n\
         compute_units: 108\nexpected: {matrix: {bf16: 1.0}, memory: 1.0, row_tile: 16, cta_tiles: [[256, 128]]}\n",
    );
    let w =
        Workload::load(&Source::resolve("gemm", stepcost::workload::FileKind::Workload).unwrap())
            .unwrap();
    let spec = ScenarioSpec {
        sets: vec![
            ("m".into(), 1793.0),
            ("n".into(), 1793.0),
            ("k".into(), 8192.0),
        ],
        ..expected()
    };
    let r = price(&w, &a100, &Scenario::resolve(&w, &spec).unwrap()).unwrap();
    let padded_m = 1808.0; // 1793 rounded up to 16 rows
    let (rows, columns) = (8.0, 15.0); // ceil(1808 / 256), ceil(1793 / 128)
    let used = padded_m * 1793.0 / (rows * 256.0 * columns * 128.0);
    let waves = (rows * columns / 108.0f64).ceil();
    let efficiency = rows * columns / (waves * 108.0) * used;
    assert_close(
        r.prices[0].cost.quantization,
        (padded_m / 1793.0) / efficiency,
        1e-12,
    );
    assert!(r.prices[0].cost.quantization > 2.0);
}

#[test]
fn a_request_is_a_prefill_then_decode_steps() {
    let (batch, input, output) = (4.0, 512.0, 9.0);
    let w = Workload::load(
        &Source::resolve("llama-3.1-8b", stepcost::workload::FileKind::Workload).unwrap(),
    )
    .unwrap();
    let c = crate::common::chip("h100-sxm");
    let step = |tokens: f64, context: f64| {
        let spec = ScenarioSpec {
            sets: vec![
                ("batch".into(), batch),
                ("tokens".into(), tokens),
                ("context".into(), context),
            ],
            ..expected()
        };
        price(&w, &c, &Scenario::resolve(&w, &spec).unwrap())
            .unwrap()
            .summary
            .step_time_s
    };
    let spec = ScenarioSpec {
        sets: vec![("batch".into(), batch)],
        ..expected()
    };
    let scenario = Scenario::resolve(&w, &spec).unwrap();
    let r =
        stepcost::internals::timing::price_request(&w, &c, &scenario, input as u64, output as u64)
            .unwrap();
    let ttft = step(input, 0.0);
    let decode: f64 = (0..8).map(|j| step(1.0, input + j as f64)).sum();
    assert_close(r.ttft_s, ttft, 1e-12);
    assert_close(r.tpot_s, decode / 8.0, 1e-12);
    assert_close(r.e2e_s, ttft + decode, 1e-12);
    assert_close(
        r.output_tokens_per_s,
        batch * output / (ttft + decode),
        1e-12,
    );
}

#[test]
fn run_and_sweep_report_requests() {
    let out = stepcost()
        .args([
            "run",
            "llama-3.1-8b",
            "--chip",
            "h200",
            "--request",
            "in=128,out=4",
            "--format",
            "csv",
        ])
        .assert()
        .success();
    let (header, rows) =
        crate::common::csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    let ttft: f64 = crate::common::cell(&header, &rows[0], "ttft_ms")
        .parse()
        .unwrap();
    assert!(ttft > 0.0);
    let out = stepcost()
        .args([
            "sweep",
            "llama-3.1-8b",
            "--chip",
            "h200",
            "--set",
            "batch=1,8",
            "--request",
            "in=128,out=4",
        ])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let (header, rows) = crate::common::csv_rows(&text);
    assert_eq!(
        crate::common::cell(&header, &rows[0], "ttft_ms")
            .parse::<f64>()
            .unwrap(),
        ttft
    );
    stepcost()
        .args(["run", "gemm", "--chip", "h200", "--request", "in=128,out=4"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("has no `tokens` param"));
}

/// A guard on the error as it stands on the 226 rows with the shipped chip files (their fit:
/// in sample): not the targets (cross-validated median 8 %, 90th percentile 20 %, which `validate
/// --cross-validate` reports against), which the mechanisms priced so far do not reach. A
/// change that makes the shipped predictions worse overall fails here.
#[test]
fn the_shipped_measurements_are_no_worse_than_recorded() {
    let out = stepcost()
        .args(["validate", "validation/measured.csv", "--format", "json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .assert()
        .success();
    let report: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let groups = report["errors"].as_array().unwrap();
    let all = groups.iter().find(|g| g["group"] == "all").unwrap();
    // Recorded: median 7.50 %, 90th percentile 27.2 % (8.10 % and 26.9 % with gpu-benches' H200
    // streams, whose kernels do not fill its HBM; 9.70 % and 34.4 % before a step paid its
    // engine's host work, on rows that still held L2-resident benchmarks). The chips'
    // constants are their kernel rows' fit (9.20 % and 33.4 % when model rows bent them too,
    // 10.6 % and 36.5 % with the sourced constants the files held before they held a fit).
    assert!(all["median_abs_error"].as_f64().unwrap() <= 0.085, "{all}");
    assert!(all["p90_abs_error"].as_f64().unwrap() <= 0.35, "{all}");
    let group = |name: &str| groups.iter().find(|g| g["group"] == name).unwrap();
    // Recorded: 6.05 % on the 169 single kernels (9.13 % fitted beside the model rows).
    let kernel = group("kind kernel");
    assert!(
        kernel["median_abs_error"].as_f64().unwrap() <= 0.075,
        "{kernel}"
    );
    // Recorded: 6.02 % on the A100 80GB's 45 rows (5.81 % while its fp16 and bf16 fractions
    // were fitted apart, each to its own sources).
    let a100 = group("chip a100-80gb");
    assert!(
        a100["median_abs_error"].as_f64().unwrap() <= 0.066,
        "{a100}"
    );
    // Recorded: 15.0 % on the 9 prefill rows (25.0 % before a step paid its engine's host work,
    // 27.9 % with the sourced constants).
    let prefill = group("kind prefill");
    assert!(
        prefill["median_abs_error"].as_f64().unwrap() <= 0.255,
        "{prefill}"
    );
    // every row is priced, the multi-chip ones as their own group
    assert!(report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["skipped"].as_str().unwrap().is_empty()));
    let multi = groups.iter().find(|g| g["group"] == "multi-chip").unwrap();
    assert_eq!(multi["cases"], 26);
}

#[test]
fn a_bad_case_file_names_the_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cases.csv");
    std::fs::write(
        &path,
        "id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,notes\n\
         A,h200,gemm,m=1,,,,1,attained_tflops,100,kernel,x,\n\
         B,h200,gemm,m=1,,,,1,speed,100,kernel,x,\n",
    )
    .unwrap();
    stepcost()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cases.csv:3"))
        .stderr(predicate::str::contains("field `metric`"))
        .stderr(predicate::str::contains("unknown metric `speed`"));
}

#[test]
fn attention_kernels_count_the_whole_score_matrix_and_read_the_cache_once() {
    let roofline = ScenarioSpec {
        mode: Mode::Roofline,
        ..ScenarioSpec::default()
    };
    // FlashAttention's benchmark shape at head dim 128: 16 sequences x 16 heads x 1024 tokens.
    // Two GEMMs of 2 * s * s * d each per (sequence, head), 5 FLOPs per score for the softmax;
    // q, k, v read and the output written, s * d bf16 values each per (sequence, head).
    let (b, h, s, d) = (16.0, 16.0, 1024.0, 128.0);
    let r = run("attention-prefill", "h100-sxm", &[], roofline.clone());
    assert_close(
        r.summary.flops,
        b * h * (4.0 * s * s * d + 5.0 * s * s),
        1e-12,
    );
    assert_close(r.summary.bytes, 4.0 * b * h * s * d * 2.0, 1e-12);
    // Grouped-query heads share their K and V: 8 K/V heads for 64 query heads.
    let r = run(
        "attention-prefill",
        "h100-sxm",
        &[("heads", 64.0), ("kv_heads", 8.0), ("batch", 1.0)],
        roofline.clone(),
    );
    assert_close(
        r.summary.flops,
        64.0 * (4.0 * s * s * d + 5.0 * s * s),
        1e-12,
    );
    assert_close(
        r.summary.bytes,
        (2.0 * 64.0 + 2.0 * 8.0) * s * d * 2.0,
        1e-12,
    );
    // Decode at the defaults (Llama-3.1-8B's heads at 4096 positions): the cache, 2 x 8 heads x
    // 4096 x 128 bf16 values, and q and the output, 32 x 128 each.
    let r = run("attention-decode", "h100-sxm", &[("batch", 4.0)], roofline);
    let c = 4096.0;
    assert_close(r.summary.flops, 4.0 * 32.0 * (4.0 * c * d + 5.0 * c), 1e-12);
    assert_close(
        r.summary.bytes,
        4.0 * (2.0 * 8.0 * c * d + 2.0 * 32.0 * d) * 2.0,
        1e-12,
    );
}

#[test]
fn a_causal_attention_prefill_computes_the_lower_triangle_in_both_modes() {
    // 1024 queries over their own 1024 keys: query i sees i + 1 of them, 1024 x 1025 / 2 of
    // the 1024^2 counted (FlashAttention counts a causal pass as half the matrix).
    let share = 1025.0 / 2048.0;
    let roofline = ScenarioSpec {
        mode: Mode::Roofline,
        ..ScenarioSpec::default()
    };
    let whole = run("attention-prefill", "h100-sxm", &[], roofline.clone());
    let causal = run(
        "attention-prefill",
        "h100-sxm",
        &[("causal", 1.0)],
        roofline.clone(),
    );
    // The defaults: 16 heads x 16 sequences of 1024 at head dim 128; 4 s^2 d FLOPs of GEMMs
    // and 5 s^2 of softmax per head and sequence, the causal share of them.
    let (s, d) = (1024.0, 128.0);
    let counted = 16.0 * 16.0 * (4.0 * s * s * d + 5.0 * s * s);
    assert_close(whole.summary.flops, counted, 1e-12);
    assert_close(causal.summary.flops, share * counted, 1e-12);
    assert_close(causal.prices[0].cost.causal_share, share, 1e-12);
    // The ceiling stays above expected mode's time.
    let expected_causal = run(
        "attention-prefill",
        "h100-sxm",
        &[("causal", 1.0)],
        expected(),
    );
    assert!(causal.summary.step_time_s < expected_causal.summary.step_time_s);
    // Unfused, the score GEMM computes every score, causal or not.
    let unfused = ScenarioSpec {
        fusion: Some("none".into()),
        ..roofline
    };
    let r = run("attention-prefill", "h100-sxm", &[("causal", 1.0)], unfused);
    assert_close(r.summary.flops, counted, 1e-12);
    let k = &run(
        "attention-prefill",
        "h100-sxm",
        &[("causal", 1.0)],
        expected(),
    )
    .prices[0];
    assert_close(k.cost.causal_share, share, 1e-12);
    let k = &run("attention-prefill", "h100-sxm", &[], expected()).prices[0];
    assert_eq!(k.cost.causal_share, 1.0);
}
