//! Speed of `simulate`: iterations priced per second on one core for Llama-3.1-70B (fp8
//! weights) on one H200 at a rate that keeps its batch near 256, with the cache of step
//! times, and what one exactly priced iteration costs; and a run behind 10^5 and 10^6
//! instances (each event O(log instances), only the instances a request reaches made).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use stepcost::internals::timing::{Iteration, IterationPricer};
use stepcost::{
    simulate::simulate, simulate::Arrivals, simulate::Horizon, simulate::LatencyBounds,
    simulate::Lengths, simulate::Router, simulate::SimConfig, Chip, Scenario, ScenarioSpec,
    Workload,
};

fn inputs() -> (Workload, Chip, Scenario) {
    let workload = Workload::named("llama-3.1-70b").unwrap();
    let chip = Chip::named("h200").unwrap();
    let spec = ScenarioSpec {
        dtypes: vec![("weight".parse().unwrap(), "fp8".parse().unwrap())],
        ..ScenarioSpec::default()
    };
    let scenario = Scenario::resolve(&workload, &spec).unwrap();
    (workload, chip, scenario)
}

fn config(exact: bool, audit: bool) -> SimConfig {
    SimConfig {
        arrivals: Arrivals::Poisson { rate_per_s: 6.0 },
        horizon: Horizon::Duration { s: 3600.0 },
        lengths: Lengths::new(512, 256, 0.0).unwrap(),
        seed: 0,
        max_seqs: None,
        instances: 1,
        router: Router::RoundRobin,
        slo: LatencyBounds::default(),
        exact,
        audit,
        prefill: None,
    }
}

fn simulation(c: &mut Criterion) {
    let (w, chip, s) = inputs();
    let audited = simulate(&w, &chip, &s, &config(false, true)).unwrap();
    eprintln!(
        "{} iterations, mean batch {:.0}, {} steps priced; cache against exact pricing: max relative error {:.2e}",
        audited.iterations,
        audited.mean_batch,
        audited.steps_priced,
        audited.cache_max_relative_error.unwrap_or(f64::NAN)
    );
    let mut group = c.benchmark_group("simulate");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for exact in [false, true] {
        let cfg = config(exact, false);
        let iterations = simulate(&w, &chip, &s, &cfg).unwrap().iterations;
        group.throughput(Throughput::Elements(iterations));
        let name = if exact {
            "llama-3.1-70b h200 rate 6, exact"
        } else {
            "llama-3.1-70b h200 rate 6, cached"
        };
        group.bench_function(name, |b| {
            b.iter(|| simulate(black_box(&w), black_box(&chip), black_box(&s), &cfg).unwrap())
        });
    }
    group.finish();
    let mut pricer = IterationPricer::new(&w, &chip, &s).unwrap();
    let mut context = 512.0;
    c.bench_function(
        "price one mixed iteration exactly (context changing)",
        |b| {
            b.iter(|| {
                context = if context > 700.0 {
                    512.0
                } else {
                    context + 1.0
                };
                let it = Iteration::decode(240.0, context).with_prefill(600.0, 2.0, 100.0);
                pricer.price(black_box(&it)).unwrap().step_time_s
            })
        },
    );
}

/// 2,000 requests (in=1024,out=256) at 100/s on Llama-3.1-8B behind `instances` H100s,
/// least-loaded: every request alone on an instance of its own, 512,000 iterations. About
/// 0.12 s at 10^5 instances and at 10^6 alike on one shared core (4.4-4.9 M iterations/s):
/// the time is the events', not the instances' (a scan of every instance per event took
/// 71.5 s for 40 requests behind 3 x 10^5).
fn many_instances(c: &mut Criterion) {
    let workload = Workload::named("llama-3.1-8b").unwrap();
    let chip = Chip::named("h100-sxm").unwrap();
    let scenario = Scenario::resolve(&workload, &ScenarioSpec::default()).unwrap();
    let mut group = c.benchmark_group("simulate many instances");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for instances in [100_000, 1_000_000] {
        let cfg = SimConfig {
            arrivals: Arrivals::Poisson { rate_per_s: 100.0 },
            horizon: Horizon::Requests { n: 2000 },
            lengths: Lengths::new(1024, 256, 0.0).unwrap(),
            instances,
            router: Router::LeastLoaded,
            ..config(false, false)
        };
        let report = simulate(&workload, &chip, &scenario, &cfg).unwrap();
        eprintln!(
            "{instances} instances: {} iterations, {} finished",
            report.iterations, report.finished
        );
        group.throughput(Throughput::Elements(report.iterations));
        group.bench_function(
            format!("llama-3.1-8b h100 x{instances}, 2000 requests"),
            |b| b.iter(|| simulate(&workload, &chip, &scenario, black_box(&cfg)).unwrap()),
        );
    }
    group.finish();
}

criterion_group!(benches, simulation, many_instances);
criterion_main!(benches);
