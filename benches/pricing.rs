//! Throughput of the pure engine on in-memory inputs: parsing and validating files, and
//! pricing one scenario.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use stepcost::price::price_step;
use stepcost::{price, Chip, FileKind, Scenario, Source, Workload};

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
    let chip = Chip::load(&Source::resolve("h100-sxm", FileKind::Chip).unwrap()).unwrap();
    for name in ["gemm", "llama-3.1-70b"] {
        let workload = Workload::load(&Source::resolve(name, FileKind::Workload).unwrap()).unwrap();
        let scenario = Scenario::defaults(&workload);
        c.bench_function(&format!("price {name} on h100-sxm (report)"), |b| {
            b.iter(|| price(black_box(&workload), black_box(&chip), black_box(&scenario)).unwrap())
        });
        let mut ev = workload.new_evaluation();
        let mut costs = Vec::new();
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
    }
}

criterion_group!(benches, load, pricing);
criterion_main!(benches);
