//! Properties of the roofline that hold for any chip and any shape.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::sync::atomic::{AtomicU64, Ordering};
use stepcost::{price, Chip, Scenario, Source, Workload};

fn chip(peak_tflops: f64, bandwidth_tb_s: f64) -> Chip {
    let text = format!(
        "name: p\nmemory: {{capacity: 80 GB, bandwidth: {bandwidth_tb_s} TB/s}}\n\
         matrix: {{bf16: {peak_tflops} TFLOPS, fp8: {} TFLOPS}}\nvector: {{bf16: {} TFLOPS}}\n",
        2.0 * peak_tflops,
        peak_tflops / 8.0
    );
    Chip::load(&Source::from_text("p.yaml", &text)).unwrap()
}

fn layer() -> Workload {
    let text = "name: layer
params: {batch: 1, tokens: 1, hidden: 1024, ffn: 4096, context: 128, heads: 8}
tensors:
  x: {role: activation, shape: [batch * tokens, hidden]}
  kc: {role: kv, shape: [batch, heads, context, 64]}
blocks:
  - name: l
    repeat: 3
    ops:
      - elementwise: {name: norm, of: [x], flops_per_element: 4}
      - gemm: {name: up, of: [norm], m: batch * tokens, n: ffn, k: hidden}
      - elementwise: {name: act, of: [up], flops_per_element: 5}
      - gemm: {name: scores, of: [act, kc], batch: batch * heads, m: tokens, n: context, k: 64}
      - elementwise: {name: soft, of: [scores], flops_per_element: 5}
      - gemm: {name: down, of: [soft], m: batch * tokens, n: hidden, k: ffn / 4}
fusion:
  a: [[norm, up]]
  b: [[up, act], [scores, soft]]
  c: [[norm, up, act, scores, soft, down]]
";
    Workload::load(&Source::from_text("layer.yaml", text)).unwrap()
}

fn scenario(w: &Workload, batch: f64, tokens: f64, fusion: usize) -> Scenario {
    let mut s = Scenario::defaults(w);
    s.set(w, "batch", batch).unwrap();
    s.set(w, "tokens", tokens).unwrap();
    s.set_fusion_index(fusion).unwrap();
    s.set_mode(stepcost::Mode::Roofline);
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mfu_and_mbu_stay_in_0_1(
        batch in 1u32..512, tokens in 1u32..4096, fusion in 0usize..4,
        peak in 10.0f64..5000.0, bw in 0.1f64..10.0,
    ) {
        let w = layer();
        let r = price(&w, &chip(peak, bw), &scenario(&w, batch.into(), tokens.into(), fusion)).unwrap();
        prop_assert!(r.summary.mfu > 0.0 && r.summary.mfu <= 1.0 + 1e-12, "mfu {}", r.summary.mfu);
        prop_assert!(r.summary.mbu > 0.0 && r.summary.mbu <= 1.0 + 1e-12, "mbu {}", r.summary.mbu);
        prop_assert!(r.summary.step_time_s.is_finite() && r.summary.step_time_s > 0.0);
    }

    #[test]
    fn fusion_never_adds_bytes_or_changes_flops(batch in 1u32..512, tokens in 1u32..4096) {
        let w = layer();
        let c = chip(989.0, 3.35);
        let none = price(&w, &c, &scenario(&w, batch.into(), tokens.into(), 0)).unwrap();
        for fusion in 1..w.fusion_plan_names().count() {
            let fused = price(&w, &c, &scenario(&w, batch.into(), tokens.into(), fusion)).unwrap();
            prop_assert!(fused.summary.bytes <= none.summary.bytes);
            prop_assert_eq!(fused.summary.flops, none.summary.flops);
        }
    }

    #[test]
    fn time_never_falls_when_work_rises_or_the_chip_slows(
        batch in 1u32..256, tokens in 1u32..2048, more in 1u32..64,
        peak in 10.0f64..5000.0, bw in 0.1f64..10.0, slower in 1.0f64..4.0,
    ) {
        let w = layer();
        let c = chip(peak, bw);
        let base = price(&w, &c, &scenario(&w, batch.into(), tokens.into(), 0)).unwrap();
        let bigger = price(&w, &c, &scenario(&w, (batch + more).into(), tokens.into(), 0)).unwrap();
        prop_assert!(bigger.summary.step_time_s >= base.summary.step_time_s);
        let s = scenario(&w, batch.into(), tokens.into(), 0);
        let low_peak = price(&w, &chip(peak / slower, bw), &s).unwrap();
        let low_bw = price(&w, &chip(peak, bw / slower), &s).unwrap();
        prop_assert!(low_peak.summary.step_time_s >= base.summary.step_time_s);
        prop_assert!(low_bw.summary.step_time_s >= base.summary.step_time_s);
    }

    #[test]
    fn each_kernel_sits_on_its_roofline(batch in 1u32..512, tokens in 1u32..4096, fusion in 0usize..4) {
        let w = layer();
        let (peak, bw): (f64, f64) = (989e12, 3.35e12);
        let r = price(&w, &chip(989.0, 3.35), &scenario(&w, batch.into(), tokens.into(), fusion)).unwrap();
        for p in &r.prices {
            // attainable = min(peak, I x BW) for a kernel on one unit and type
            if p.cost.unit == stepcost::internals::timing::Unit::Matrix {
                let roof = peak.min(p.intensity_flop_per_byte * bw);
                prop_assert!((p.attainable_flop_per_s - roof).abs() <= 1e-9 * roof, "{}", p.name);
            }
            prop_assert_eq!(p.cost.time_s, p.cost.compute_time_s.max(p.cost.memory_time_s));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Buffers reused across scenarios (as a sweep does, re-evaluating only what changed) give
    /// the same step as a fresh evaluation.
    #[test]
    fn reused_buffers_match_a_fresh_evaluation(
        steps in proptest::collection::vec(
            (1u32..64, 1u32..4096, 0usize..4, prop::sample::select(vec![4096u32, 4096, 8192])),
            1..12,
        ),
    ) {
        let w = layer();
        let c = chip(989.0, 3.35);
        let mut ev = w.new_evaluation();
        let mut costs = Vec::new();
        for (batch, tokens, fusion, ffn) in steps {
            // `ffn` sizes a GEMM's own weight and no declared tensor: the resident weights
            // change with nothing but that GEMM.
            let mut s = scenario(&w, batch.into(), tokens.into(), fusion);
            s.set(&w, "ffn", ffn.into()).unwrap();
            let reused = stepcost::internals::timing::price_step(&w, &c, &s, &mut ev, &mut costs).unwrap();
            let fresh = price(&w, &c, &s).unwrap().summary;
            prop_assert_eq!(reused, fresh);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The same on built-in models, whose graphs have the shapes a sweep's reuse must get
    /// right: ops reading ops, attention over a window, experts, tensor parallelism (a sweep
    /// re-evaluates only what the params that changed reach, and keeps the resident weights).
    #[test]
    fn reused_buffers_match_a_fresh_evaluation_on_built_in_models(
        model in prop::sample::select(vec![
            "llama-3.1-70b", "gemma-2-27b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b",
        ]),
        steps in proptest::collection::vec(
            (
                prop::sample::select(vec![1u32, 2, 7, 64]),
                prop::sample::select(vec![0u32, 1, 4096, 100_000]),
                prop::sample::select(vec![1u32, 1, 512]),
                prop::sample::select(vec![1u32, 2, 8]),
                prop::sample::select(vec!["bf16", "fp8"]),
                any::<bool>(),
            ),
            1..10,
        ),
    ) {
        let w = Workload::named(model).unwrap();
        let c = Chip::named("h100-sxm").unwrap();
        let mut ev = w.new_evaluation();
        let mut costs = Vec::new();
        for (batch, context, tokens, tp, kv, roofline) in steps {
            let spec = stepcost::ScenarioSpec {
                sets: vec![
                    ("batch".into(), batch.into()),
                    ("context".into(), context.into()),
                    ("tokens".into(), tokens.into()),
                    ("tp".into(), tp.into()),
                ],
                dtypes: vec![(stepcost::types::Role::Kv.into(), kv.parse().unwrap())],
                mode: if roofline { stepcost::Mode::Roofline } else { stepcost::Mode::Expected },
                ..stepcost::ScenarioSpec::default()
            };
            let s = Scenario::resolve(&w, &spec).unwrap();
            let reused = stepcost::internals::timing::price_step(&w, &c, &s, &mut ev, &mut costs);
            let fresh = price(&w, &c, &s);
            match (reused, fresh) {
                (Ok(reused), Ok(fresh)) => {
                    prop_assert_eq!(&reused, &fresh.summary);
                    let kept: Vec<_> = costs.iter().filter(|c| c.count > 0).copied().collect();
                    let priced: Vec<_> = fresh.prices.iter().map(|p| p.cost).collect();
                    prop_assert_eq!(kept, priced);
                }
                (reused, fresh) => prop_assert_eq!(
                    reused.map_err(|e| e.to_string()).err(),
                    fresh.map_err(|e| e.to_string()).err()
                ),
            }
        }
    }
}

/// A built-in model at any batch, context, prompt length, data types, fusion plan and chip.
fn model_scenario() -> impl Strategy<Value = (String, String, stepcost::ScenarioSpec)> {
    use stepcost::{types::DType, types::Role, Mode};
    let dtype = prop::sample::select(vec![DType::Bf16, DType::Fp8, DType::Fp4, DType::Int8]);
    (
        prop::sample::select(vec![
            "llama-3.1-70b",
            "mixtral-8x7b",
            "deepseek-v3",
            "gemma-2-27b",
        ]),
        prop::sample::select(vec!["h100-sxm", "b200", "mi300x", "tpu-v5e", "a100-80gb"]),
        1u32..2048,
        0u32..65536,
        prop::sample::select(vec![1u32, 1, 128, 4096]),
        (dtype.clone(), dtype.clone(), dtype),
        prop::sample::select(vec!["none", "flash", "full"]),
        any::<bool>(),
    )
        .prop_map(
            |(w, c, batch, context, tokens, (wt, at, kt), fusion, roofline)| {
                let spec = stepcost::ScenarioSpec {
                    sets: vec![
                        ("batch".into(), batch.into()),
                        ("context".into(), context.into()),
                        ("tokens".into(), tokens.into()),
                    ],
                    dtypes: vec![
                        (Role::Weight.into(), wt.into()),
                        (Role::Activation.into(), at.into()),
                        (Role::Kv.into(), kt.into()),
                    ],
                    fusion: Some(fusion.into()),
                    mode: if roofline {
                        Mode::Roofline
                    } else {
                        Mode::Expected
                    },
                    overlap_comm: false,
                    memory_utilization: None,
                    engine: None,
                };
                (w.to_owned(), c.to_owned(), spec)
            },
        )
}

/// A property's cases and how many of them it skipped (a scenario it cannot price): a
/// property that skips most of its cases tests little, so [`run_counting_skips`] fails it.
#[derive(Default)]
struct Skips {
    tried: AtomicU64,
    skipped: AtomicU64,
}

impl Skips {
    /// Counts the case as skipped and passes it.
    fn skip(&self) -> Result<(), TestCaseError> {
        self.skipped.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// Runs `property` as `proptest!` would (256 cases, a failure shrunk and persisted the same
/// way), then fails if more than half of the cases it tried were skipped.
fn run_counting_skips<S: Strategy>(
    name: &str,
    strategy: S,
    property: impl Fn(S::Value, &Skips) -> Result<(), TestCaseError>,
) {
    let skips = Skips::default();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        source_file: Some(file!()),
        ..ProptestConfig::with_cases(256)
    });
    let result = runner.run(&strategy, |value| {
        skips.tried.fetch_add(1, Ordering::Relaxed);
        property(value, &skips)
    });
    if let Err(e) = result {
        panic!("{name}: {e}\n{runner}");
    }
    let (tried, skipped) = (
        skips.tried.load(Ordering::Relaxed),
        skips.skipped.load(Ordering::Relaxed),
    );
    assert!(tried > 0, "{name}: no case was tried");
    assert!(
        skipped * 2 <= tried,
        "{name}: {skipped} of {tried} cases skipped (at most half may be)"
    );
}

/// Whatever is priced, expected mode never beats the datasheet roofline, and every number
/// written as CSV or JSON is finite (a scenario the chip cannot run is an error instead).
#[test]
fn priced_steps_respect_the_roofline_and_print_only_finite_numbers() {
    run_counting_skips(
        "priced_steps_respect_the_roofline_and_print_only_finite_numbers",
        model_scenario(),
        |(workload, chip, spec), skips| {
            let w = crate::common::workload(&workload);
            let c = crate::common::chip(&chip);
            let Ok(scenario) = Scenario::resolve(&w, &spec) else {
                return skips.skip(); // a fusion plan this model lacks
            };
            let Ok(report) = price(&w, &c, &scenario) else {
                return skips.skip(); // a data type this chip lacks
            };
            let s = &report.summary;
            prop_assert!(s.step_time_s >= s.roofline_step_time_s * (1.0 - 1e-12));
            prop_assert!(s.fraction_of_roofline > 0.0 && s.fraction_of_roofline <= 1.0 + 1e-12);
            for format in [
                stepcost::internals::export::OutputFormat::Csv,
                stepcost::internals::export::OutputFormat::Json,
            ] {
                let mut out = Vec::new();
                stepcost::internals::export::write_run(&mut out, &report, true, format).unwrap();
                let text = String::from_utf8(out).unwrap();
                // (serde_json would write a NaN as `null`; the CSV pass catches that case)
                for bad in ["NaN", "inf"] {
                    prop_assert!(!text.contains(bad), "{bad} in {text}");
                }
            }
            Ok(())
        },
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every row of a sweep is byte for byte the CSV row of `run` on its scenario, whatever
    /// the grid.
    #[test]
    fn each_sweep_row_is_the_run_of_its_scenario(
        batches in proptest::collection::vec(1u32..1024, 1..4),
        contexts in proptest::collection::vec(0u32..32768, 1..3),
        weights in proptest::sample::subsequence(vec![stepcost::types::DType::Bf16, stepcost::types::DType::Fp8, stepcost::types::DType::Fp4], 1..3),
        fusions in proptest::sample::subsequence(vec![0usize, 1, 2], 1..3),
        chips in proptest::sample::subsequence(vec!["h100-sxm", "mi300x", "b200"], 1..3),
        roofline in any::<bool>(),
    ) {
        use std::sync::atomic::AtomicBool;
        let w = crate::common::workload("llama-3.1-70b");
        let axes = stepcost::sweep::Axes {
            chips: chips.iter().map(|c| crate::common::chip(c)).collect(),
            engines: Vec::new(),
            params: vec![
                ("batch".into(), batches.iter().map(|b| f64::from(*b)).collect()),
                ("context".into(), contexts.iter().map(|c| f64::from(*c)).collect()),
            ],
            dtypes: vec![(
                stepcost::types::Role::Weight.into(),
                weights.into_iter().map(Into::into).collect(),
            )],
            fusions: fusions.iter().map(|i| w.fusion_plan_names().nth(*i).unwrap().to_owned()).collect(),
            mode: if roofline { stepcost::Mode::Roofline } else { stepcost::Mode::Expected },
            memory_utilization: None,
        };
        let grid = stepcost::sweep::Grid::new(&w, axes).unwrap();
        let sink = stepcost::sweep::SweepRows::new(&w, stepcost::sweep::StreamFormat::Csv, false);
        let mut out = Vec::new();
        stepcost::sweep::run(&grid, Default::default(), &sink, &mut out, &|_| {}, &AtomicBool::new(false)).unwrap();
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<&str> = text.lines().skip(1).collect();
        prop_assert_eq!(rows.len() as u64, grid.len().unwrap());
        let mut scenario = Scenario::defaults(&w);
        for (i, row) in rows.iter().enumerate() {
            let chip = &grid.chips()[grid.scenario(i as u64, &mut scenario).unwrap()];
            match price(&w, chip, &scenario) {
                Ok(report) => {
                    let mut single = Vec::new();
                    stepcost::internals::export::write_run(&mut single, &report, false, stepcost::internals::export::OutputFormat::Csv).unwrap();
                    let single = String::from_utf8(single).unwrap();
                    prop_assert_eq!(single.lines().nth(1), Some(*row));
                }
                // a type the chip lacks: the sweep's row says so in its `error` column
                Err(_) => prop_assert!(!row.ends_with(','), "{row}"),
            }
        }
    }
}
