//! Throughput of the engine on in-memory inputs (parsing, one op, one model step, a
//! million-scenario sweep into `io::sink()`), and of the binary end to end.

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use stepcost::internals::sweep::parse_values;
use stepcost::internals::timing::price_step;
use stepcost::{
    price, sweep::run as sweep, sweep::Axes, sweep::Grid, workload::FileKind, Chip, Scenario,
    Source, Workload,
};
use stepcost::{sweep::StreamFormat, sweep::SweepOptions, sweep::SweepRows};

fn chip(name: &str) -> Chip {
    Chip::load(&Source::resolve(name, FileKind::Chip).unwrap()).unwrap()
}

fn workload(name: &str) -> Workload {
    Workload::load(&Source::resolve(name, FileKind::Workload).unwrap()).unwrap()
}

fn load(c: &mut Criterion) {
    let chip = Source::resolve("h100-sxm", FileKind::Chip).unwrap();
    let workload = Source::resolve("llama-3.1-70b", FileKind::Workload).unwrap();
    c.bench_function("load chip h100-sxm", |b| {
        b.iter(|| Chip::load(black_box(&chip)).unwrap())
    });
    c.bench_function("load workload llama-3.1-70b", |b| {
        b.iter(|| Workload::load(black_box(&workload)).unwrap())
    });
}

fn pricing(c: &mut Criterion) {
    let chip = chip("h100-sxm");
    // `gemm` is one op: pricing one op; `llama-3.1-70b` is one model step.
    for name in ["gemm", "llama-3.1-70b"] {
        let workload = workload(name);
        let scenario = Scenario::defaults(&workload);
        c.bench_function(&format!("price {name} on h100-sxm (report)"), |b| {
            b.iter(|| price(black_box(&workload), black_box(&chip), black_box(&scenario)).unwrap())
        });
        let mut ev = workload.new_evaluation();
        let mut costs = Vec::new();
        c.bench_function(&format!("evaluate {name}"), |b| {
            b.iter(|| {
                workload
                    .evaluate(black_box(scenario.overrides()), &mut ev)
                    .unwrap()
            })
        });
        c.bench_function(&format!("price {name} on h100-sxm (reused buffers)"), |b| {
            b.iter(|| {
                price_step(
                    black_box(&workload),
                    black_box(&chip),
                    black_box(&scenario),
                    &mut ev,
                    &mut costs,
                )
                .unwrap()
            })
        });
        // A sweep's inner axis: the next scenario changes one param (context), so only what
        // it reaches is evaluated and priced again.
        if let Ok(context) = workload.param_index("context") {
            let mut scenarios = (1..=1000).cycle().map(|i| {
                let mut s = scenario.clone();
                s.set_param(context, f64::from(i) * 128.0).unwrap();
                s
            });
            let bench = format!("price {name} on h100-sxm (reused buffers, context changing)");
            c.bench_function(&bench, |b| {
                b.iter_batched_ref(
                    || scenarios.next().unwrap(),
                    |s| price_step(&workload, &chip, s, &mut ev, &mut costs).unwrap(),
                    criterion::BatchSize::SmallInput,
                )
            });
        }
    }
}

/// batch 1..=1024 x context 128..=128000:+128: 1,024,000 scenarios.
const BATCHES: &str = "1..=1024";
const CONTEXTS: &str = "128..=128000:+128";

fn million(c: &mut Criterion) {
    let workload = workload("llama-3.1-70b");
    let axes = Axes {
        chips: vec![chip("h100-sxm")],
        params: vec![
            ("batch".into(), parse_values(BATCHES).unwrap()),
            ("context".into(), parse_values(CONTEXTS).unwrap()),
        ],
        mode: stepcost::Mode::Roofline,
        ..Axes::default()
    };
    let grid = Grid::new(&workload, axes).unwrap();
    let sink = SweepRows::new(&workload, StreamFormat::Csv, false);
    assert_eq!(grid.len(), Some(1_024_000));
    let mut group = c.benchmark_group("sweep 1,024,000 llama-3.1-70b scenarios");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("engine to CSV in io::sink()", |b| {
        b.iter(|| {
            let cancel = AtomicBool::new(false);
            sweep(
                &grid,
                SweepOptions::default(),
                &sink,
                std::io::sink(),
                &|_| {},
                &cancel,
            )
            .unwrap()
        })
    });
    let dir = std::env::temp_dir().join(format!("stepcost-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("sweep.csv");
    group.bench_function("binary to a CSV file", |b| {
        b.iter(|| {
            let status = std::process::Command::new(env!("CARGO_BIN_EXE_stepcost"))
                .args(["sweep", "llama-3.1-70b", "--chip", "h100-sxm", "--quiet"])
                .args([
                    "--set",
                    &format!("batch={BATCHES}"),
                    "--set",
                    &format!("context={CONTEXTS}"),
                ])
                .arg("--out")
                .arg(&out)
                .status()
                .unwrap();
            assert!(status.success());
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

fn binary_run(c: &mut Criterion) {
    c.bench_function("binary: stepcost run llama-3.1-70b --chip h100-sxm", |b| {
        b.iter(|| {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_stepcost"))
                .args(["run", "llama-3.1-70b", "--chip", "h100-sxm"])
                .output()
                .unwrap();
            assert!(output.status.success());
        })
    });
}

criterion_group!(benches, load, pricing, million, binary_run);
criterion_main!(benches);
