//! Any text as a chip file, priced on a built-in model at a scenario drawn from the text's
//! hash, then drawn and written up: the roofline, a sweep chart of a small grid, and the
//! Markdown and HTML reports. Everything ends (no hang), and nothing panics.
#![no_main]

use std::sync::atomic::AtomicBool;

use libfuzzer_sys::fuzz_target;
use stepcost::internals::export::document;
use stepcost::internals::{lever, svg};
use stepcost::{price, sweep::Axes, Chip, types::DType, sweep::Grid, Mode, types::Role, Scenario, ScenarioSpec, Source};
use stepcost::{sweep::StreamFormat, sweep::SweepRows, Workload};

const WORKLOADS: [&str; 4] = ["gemm", "llama-3.1-8b", "mixtral-8x7b", "deepseek-v3"];
const TYPES: [DType; 4] = [DType::Bf16, DType::Fp8, DType::Int4, DType::Fp4];

/// FNV-1a: a cheap, stable hash that turns the text into the scenario's choices.
fn hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fuzz_target!(|text: &str| {
    let Ok(chip) = Chip::load(&Source::from_text("fuzz.yaml", text)) else {
        return;
    };
    let h = hash(text);
    let workload = Workload::named(WORKLOADS[(h % 4) as usize]).expect("built-in");
    let batch = 1 + (h >> 8) % 512;
    let spec = ScenarioSpec {
        sets: if workload.param_names().any(|p| p == "batch") {
            vec![("batch".into(), batch as f64)]
        } else {
            Vec::new()
        },
        dtypes: vec![(Role::Weight.into(), TYPES[((h >> 20) % 4) as usize].into())],
        mode: if (h >> 24) % 2 == 0 { Mode::Expected } else { Mode::Roofline },
        ..ScenarioSpec::default()
    };
    let Ok(scenario) = Scenario::resolve(&workload, &spec) else {
        return;
    };
    let Ok(report) = price(&workload, &chip, &scenario) else {
        return;
    };
    let _ = svg::roofline(&[(&chip, &report)]);
    if let Ok(levers) = lever::levers(&workload, &chip, &scenario, &report) {
        let sections = [(&report, levers)];
        let _ = document::markdown(&sections, "fuzz.svg");
        let _ = document::html(&sections, "<svg/>");
    }
    // A small sweep of the same chip, drawn as the README's chart is.
    let axes = Axes {
        chips: vec![chip],
        params: spec.sets.iter().map(|(n, v)| (n.clone(), vec![*v, v * 2.0])).collect(),
        mode: spec.mode,
        ..Axes::default()
    };
    let Ok(grid) = Grid::new(&workload, axes) else {
        return;
    };
    let sink = SweepRows::new(&workload, StreamFormat::Csv, false);
    let mut csv = Vec::new();
    let cancel = AtomicBool::new(false);
    if stepcost::sweep::run(&grid, Default::default(), &sink, &mut csv, &|_| {}, &cancel).is_ok() {
        let chart = svg::SweepChart {
            x: "batch".into(),
            y: "tokens_per_s".into(),
            series: vec!["chip".into()],
            filter: Some("batch >= 1 && chip != \"\"".into()),
            include_unfit: (h >> 28) % 2 == 0,
            log_x: true,
            log_y: true,
            label: ((h >> 29) % 2 == 0).then(|| "fits".into()),
        };
        let _ = svg::sweep(&csv[..], "fuzz.csv", &chart);
    }
});
