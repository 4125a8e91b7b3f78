//! Speed of `fit` at scale: the constants of the H100 SXM fitted to 100,000 case rows made in
//! memory from the measured set's H100 rows (each repeated with a new id, its source kept),
//! as `stepcost fit CASES --chip h100-sxm` fits them (pulled towards its family's fit, itself
//! fitted to the same rows). A fit prices every row once per evaluation of its search; the
//! rows share their chip and workload files, so a row costs its scenario and its case.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use stepcost::internals::fit::fit_chip;
use stepcost::internals::validate::{read_cases, Case};
use stepcost::{Chip, Source};

/// Rows of the benchmark's case file.
const ROWS: usize = 100_000;

/// `rows` cases: the measured set's H100 SXM rows over and over, each with a new id.
fn cases(rows: usize) -> Vec<Case> {
    let measured = include_str!("../validation/measured.csv");
    let mut lines = measured.lines().filter(|l| !l.starts_with('#'));
    let header = lines.next().expect("a header");
    let own: Vec<&str> = lines.filter(|l| l.contains(",h100-sxm,")).collect();
    let mut text = String::with_capacity(rows * 200);
    text.push_str(header);
    text.push('\n');
    for i in 0..rows {
        let line = own[i % own.len()];
        let (id, rest) = line.split_once(',').expect("an id");
        text.push_str(&format!("{id}-{i},{rest}\n"));
    }
    read_cases(&Source::from_text("cases.csv", &text)).expect("the cases read")
}

fn fit(c: &mut Criterion) {
    let chip = Chip::named("h100-sxm").unwrap();
    let mut group = c.benchmark_group("fit");
    // One fit a sample (seconds each): flat sampling, not criterion's 1 + 2 + ... + 10 fits.
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(60))
        .warm_up_time(Duration::from_secs(1));
    for rows in [ROWS / 10, ROWS] {
        let cases = cases(rows);
        group.throughput(Throughput::Elements(rows as u64));
        group.bench_function(format!("h100-sxm, {rows} rows"), |b| {
            b.iter(|| {
                let fitted = fit_chip(cases.clone(), Path::new("cases.csv"), chip.clone(), None);
                black_box(fitted.unwrap().fitted.evaluations)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, fit);
criterion_main!(benches);
