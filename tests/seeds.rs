//! Every number of the seed documents, in roofline mode. Expected values are computed here
//! from the seeds' own arithmetic (datasheet peaks and bandwidths, hand counts of FLOPs and
//! bytes), then compared at the seeds' printed precision.

use stepcost::{timing::Bound, types::DType, types::Role, ScenarioSpec};

use crate::common::{assert_close, cell, csv_rows, run, stepcost};

fn default() -> ScenarioSpec {
    crate::common::roofline()
}

#[test]
fn ridge_points_from_the_chips_command() {
    let out = stepcost()
        .args(["chips", "--format", "csv"])
        .assert()
        .success();
    let (header, rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    let ridge = |chip: &str, dtype: &str| -> f64 {
        let row = rows
            .iter()
            .find(|r| cell(&header, r, "chip") == chip && cell(&header, r, "dtype") == dtype)
            .unwrap_or_else(|| panic!("no {chip} {dtype} row"));
        cell(&header, row, "ridge_flop_per_byte").parse().unwrap()
    };
    // (chip, dtype, peak TFLOPS, bandwidth TB/s, the seed's printed ridge)
    let seeds = [
        ("h100-sxm", "bf16", 989.0, 3.35, 295.0),
        ("h100-sxm", "fp8", 1979.0, 3.35, 591.0),
        ("a100-80gb", "bf16", 312.0, 2.04, 153.0),
        ("h200", "bf16", 989.0, 4.8, 206.0),
        ("b200", "bf16", 2250.0, 8.0, 281.0),
        ("mi300x", "bf16", 1307.0, 5.3, 247.0),
        ("tpu-v6e", "bf16", 918.0, 1.64, 560.0),
    ];
    for (chip, dtype, peak, bandwidth, printed) in seeds {
        let r = ridge(chip, dtype);
        assert_eq!(r.round(), printed, "{chip} {dtype} ridge {r}");
        assert_close(r, peak / bandwidth, 1e-12);
    }
}

#[test]
fn elementwise_add_one_on_h100() {
    let report = run("elementwise", "h100-sxm", &[("n", 1e6)], default());
    let s = &report.summary;
    // FLOPs = n; bytes = 2n read + 2n written.
    assert_eq!(s.flops, 1e6);
    assert_eq!(s.bytes, 4e6);
    assert_eq!(s.intensity_flop_per_byte, 0.25);
    // ceiling = 0.25 x 3.35e12 = 0.84 TFLOPS, 0.08% of the 989 TFLOPS peak
    assert_eq!((s.attained_flop_per_s / 1e10).round() / 100.0, 0.84);
    assert_close(s.attained_flop_per_s, 0.25 * 3.35e12, 1e-12);
    assert_eq!((s.mfu * 1e4).round() / 100.0, 0.08);
    assert_eq!(report.prices[0].cost.bound, Bound::Memory);
}

#[test]
fn gemv_decode_linear_layer() {
    let report = run("gemv", "h100-sxm", &[], default());
    let s = &report.summary;
    let (k, n) = (8192.0, 8192.0);
    assert_eq!(s.flops, 2.0 * k * n); // 134 MFLOP
    assert_eq!((s.flops / 1e6).round(), 134.0);
    // weight 2kn, plus the [1 x k] input and [1 x n] output, bf16
    assert_eq!(s.bytes, 2.0 * k * n + 2.0 * k + 2.0 * n);
    assert_eq!((s.bytes / 1e6).round(), 134.0);
    assert_eq!(s.intensity_flop_per_byte.round(), 1.0);
    assert_eq!((s.step_time_s * 1e6).round(), 40.0);
    assert_eq!((s.attained_flop_per_s / 1e10).round() / 100.0, 3.35);
    assert_eq!(report.prices[0].cost.bound, Bound::Memory);
}

#[test]
fn gemm_8192_cubed() {
    let report = run("gemm", "h100-sxm", &[], default());
    let s = &report.summary;
    let d: f64 = 8192.0;
    assert_eq!(s.flops, 2.0 * d.powi(3));
    assert_eq!(s.bytes, 2.0 * 3.0 * d * d); // 403 MB, each matrix once
    assert_eq!((s.bytes / 1e6).round(), 403.0);
    assert_eq!(s.intensity_flop_per_byte.round(), 2731.0);
    assert_eq!((s.step_time_s * 1e5).round() / 100.0, 1.11); // ms
    assert_close(s.step_time_s, 2.0 * d.powi(3) / 989e12, 1e-12);
    assert_eq!(report.prices[0].cost.bound, Bound::Compute);
    // "compute-bound with 9x margin": intensity x bandwidth over peak
    assert_eq!((2731.0 * 3.35 / 989.0_f64).floor(), 9.0);
}

/// The projection GEMMs of one Llama-3.1-70B layer.
const PROJECTIONS: [&str; 4] = ["qkv", "o_proj", "gate_up", "down"];

#[test]
fn llama_70b_decode_batch_32_projections_sit_near_intensity_32() {
    let report = run(
        "llama-3.1-70b",
        "h100-sxm",
        &[("batch", 32.0), ("tokens", 1.0)],
        default(),
    );
    for name in PROJECTIONS {
        let p = report.prices.iter().find(|p| p.name == name).unwrap();
        // I = 2MNK / 2(MK + KN + MN) < M = 32: "about 32 (31.7 once activations count)"
        assert!(
            (31.7..32.0).contains(&p.intensity_flop_per_byte),
            "{name}: {}",
            p.intensity_flop_per_byte
        );
        // ceiling = I x 3.35 TB/s, "about 107 TFLOPS"
        assert_close(
            p.attainable_flop_per_s,
            p.intensity_flop_per_byte * 3.35e12,
            1e-12,
        );
        assert!((p.attainable_flop_per_s / 1e12 - 107.0).abs() < 1.0);
        assert_eq!(p.cost.bound, Bound::Memory);
    }
    // qkv by hand: M = 32, K = 8192, N = (64 + 16) x 128 = 10240
    let qkv = report.prices.iter().find(|p| p.name == "qkv").unwrap();
    let (m, k, n) = (32.0, 8192.0, 10240.0);
    assert_eq!(qkv.cost.flops, 2.0 * m * n * k);
    assert_eq!(qkv.cost.bytes, 2.0 * (m * k + k * n + m * n));
}

#[test]
fn llama_70b_decode_fp8_weights_or_batch_64_double_the_intensity() {
    let fp8 = ScenarioSpec {
        dtypes: vec![(Role::Weight.into(), DType::Fp8.into())],
        ..default()
    };
    let with_fp8 = run("llama-3.1-70b", "h100-sxm", &[("batch", 32.0)], fp8);
    let batch_64 = run("llama-3.1-70b", "h100-sxm", &[("batch", 64.0)], default());
    for report in [&with_fp8, &batch_64] {
        for name in PROJECTIONS {
            let p = report.prices.iter().find(|p| p.name == name).unwrap();
            assert_eq!(p.intensity_flop_per_byte.round(), 63.0, "{name}");
        }
    }
    // fp8 weights with bf16 activations compute at the bf16 peak
    let qkv = with_fp8.prices.iter().find(|p| p.name == "qkv").unwrap();
    assert_eq!(qkv.cost.compute_dtype, DType::Bf16);
    let (m, k, n) = (32.0, 8192.0, 10240.0);
    assert_eq!(qkv.cost.bytes, 2.0 * m * k + k * n + 2.0 * m * n);
}

#[test]
fn llama_70b_decode_counts_the_kv_cache() {
    let (batch, context) = (32.0, 4096.0);
    let report = run(
        "llama-3.1-70b",
        "h100-sxm",
        &[("batch", batch), ("context", context)],
        ScenarioSpec {
            fusion: Some("flash".into()),
            ..default()
        },
    );
    let attention = report
        .prices
        .iter()
        .find(|p| p.name == "scores+softmax+mix")
        .unwrap();
    // K and V read whole for every sequence: 2 x batch x (context + 1) x kv_heads x head_dim x 2 B,
    // plus q in and the mixed values out, each batch x heads x head_dim x 2 B.
    let kv = 2.0 * batch * (context + 1.0) * 8.0 * 128.0 * 2.0;
    let q_and_out = 2.0 * batch * 64.0 * 128.0 * 2.0;
    assert_eq!(attention.cost.bytes, kv + q_and_out);
    assert_eq!(attention.cost.count, 80);
    assert_eq!(report.summary.kv_bytes, 80.0 * kv);
    // the weights: 70.55 B parameters in bf16 (docs/sources.md, M8: the count from the shapes)
    assert_eq!(
        (report.summary.weight_bytes / 2.0 / 1e7).round() / 100.0,
        70.55
    );
}

#[test]
fn llama_70b_decode_at_batch_1_is_memory_bound_everywhere() {
    for fusion in ["none", "flash", "full"] {
        let report = run(
            "llama-3.1-70b",
            "h100-sxm",
            &[("batch", 1.0), ("tokens", 1.0)],
            ScenarioSpec {
                fusion: Some(fusion.into()),
                ..default()
            },
        );
        assert!(
            report.prices.iter().all(|p| p.cost.bound == Bound::Memory),
            "{fusion}"
        );
        assert!(
            (report.summary.mbu - 1.0).abs() < 1e-12,
            "{fusion}: {}",
            report.summary.mbu
        );
    }
}
