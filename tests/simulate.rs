//! `simulate`: the request-level simulator against the steady-state model (Little's law),
//! a request alone against `run --request`, instability, preemption, seeds and bad input.

use stepcost::internals::timing::{price_request, IterationPricer};
use stepcost::{
    serving::KvLink, serving::RequestShape, serving::Server, serving::ServingOptions,
    simulate::simulate, simulate::Arrivals, simulate::Horizon, simulate::LatencyBounds,
    simulate::Lengths, simulate::PrefillApart, simulate::Router, simulate::SimConfig,
    simulate::SimReport, Chip, Scenario, ScenarioSpec, Workload,
};

use crate::common::{assert_close, chip, stepcost};

/// Gamma-distributed gaps of this shape (vLLM's `--burstiness`): a coefficient of variation of
/// 0.1, paced like a fixed-rate load generator yet at a phase against the iterations that
/// drifts, where exactly even spacing can lock onto one point of the iteration cycle.
const PACED: f64 = 100.0;

fn mixed(name: &str) -> Workload {
    Workload::named(name).unwrap()
}

fn scenario(workload: &Workload, dtypes: &[(&str, &str)]) -> Scenario {
    let spec = ScenarioSpec {
        dtypes: dtypes
            .iter()
            .map(|(k, t)| (k.parse().unwrap(), t.parse().unwrap()))
            .collect(),
        ..ScenarioSpec::default()
    };
    Scenario::resolve(workload, &spec).unwrap()
}

fn config(arrivals: Arrivals, horizon: Horizon, input: u64, output: u64) -> SimConfig {
    SimConfig {
        arrivals,
        horizon,
        lengths: Lengths::new(input, output, 0.0).unwrap(),
        seed: 0,
        max_seqs: None,
        instances: 1,
        router: Router::RoundRobin,
        slo: LatencyBounds::default(),
        exact: false,
        audit: false,
        prefill: None,
    }
}

/// The steady state at `c` in flight, and the simulation at the rate that gives it.
fn little(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    c: u64,
    paced: bool,
) -> (stepcost::serving::ServingPoint, SimReport) {
    let pricer = IterationPricer::new(workload, chip, scenario).unwrap();
    let mut server = Server::new(chip, pricer, None, 8192.0, ServingOptions::default()).unwrap();
    let shape = RequestShape::new(1024, 256).unwrap();
    let point = server.steady_state(shape, c).unwrap();
    let rate_per_s = c as f64 / point.e2e_s;
    let arrivals = if paced {
        Arrivals::Gamma {
            rate_per_s,
            burstiness: PACED,
        }
    } else {
        Arrivals::Poisson { rate_per_s }
    };
    // Long enough that ramp-up and drain (one e2e each) are a few percent of the run.
    let s = 60.0 * point.e2e_s;
    let report = simulate(
        workload,
        chip,
        scenario,
        &config(arrivals, Horizon::Duration { s }, 1024, 256),
    )
    .unwrap();
    (point, report)
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b
}

/// Whether an open loop fed the steady state's rate at `c` settles at `c`: the steady state's
/// throughput must rise over the concurrencies a fluctuation reaches (up to `c + c/4`), all of
/// which fit. Where it falls just above `c` (a kernel's tile boundary: batch 65 costs more
/// than 64 in expected mode) a queue that grows past `c` finishes fewer requests and keeps
/// growing, to the next concurrency that finishes that rate: `c` is an unstable balance.
fn settles(server: &mut Server, shape: RequestShape, c: u64) -> bool {
    let at = server.steady_state(shape, c).unwrap();
    (c + 1..=c + c / 4).all(|above| {
        let p = server.steady_state(shape, above).unwrap();
        p.fits && p.output_tokens_per_s > at.output_tokens_per_s
    })
}

#[test]
fn at_the_steady_states_rate_paced_arrivals_see_its_latencies_and_throughput() {
    // Little's law: at C in flight the steady state finishes C / e2e requests a second; fed
    // that rate, paced and at a phase independent of the iterations, the simulator sees the
    // steady state's TTFT (its wait for the iteration under way included), TPOT and
    // throughput within 5 %.
    let cases = [
        ("llama-3.1-8b", "h100-sxm", vec![]),
        ("llama-3.1-70b", "h200", vec![("weight", "fp8")]),
    ];
    for (name, chip_name, dtypes) in cases {
        let (w, c) = (mixed(name), chip(chip_name));
        let s = scenario(&w, &dtypes);
        let pricer = IterationPricer::new(&w, &c, &s).unwrap();
        let mut server = Server::new(&c, pricer, None, 8192.0, ServingOptions::default()).unwrap();
        let shape = RequestShape::new(1024, 256).unwrap();
        let mut checked = 0;
        for concurrency in [2, 4, 8, 16, 32, 48, 64, 96, 128, 192] {
            if !settles(&mut server, shape, concurrency) {
                continue;
            }
            checked += 1;
            let (point, sim) = little(&w, &c, &s, concurrency, true);
            let (ttft, tpot, rate) = (
                rel(sim.ttft.mean_s, point.ttft_s),
                rel(sim.tpot.mean_s, point.tpot_s),
                rel(sim.output_tokens_per_s, point.output_tokens_per_s),
            );
            eprintln!(
                "{name} {chip_name} C={concurrency}: TTFT {:.4} vs {:.4} ({ttft:.3}), TPOT {:.5} vs {:.5} ({tpot:.3}), tokens/s {:.1} vs {:.1} ({rate:.3}), batch {:.1}",
                sim.ttft.mean_s, point.ttft_s, sim.tpot.mean_s, point.tpot_s,
                sim.output_tokens_per_s, point.output_tokens_per_s, sim.mean_batch
            );
            assert!(sim.stable && sim.finished == sim.requests);
            assert!(
                ttft < 0.05 && tpot < 0.05 && rate < 0.05,
                "{name} C={concurrency}"
            );
        }
        assert!(checked >= 5, "{name}: only {checked} concurrencies settle");
    }
}

#[test]
fn poisson_arrivals_keep_the_steady_states_tpot_and_throughput() {
    let (w, c) = (mixed("llama-3.1-8b"), chip("h100-sxm"));
    let s = scenario(&w, &[]);
    for concurrency in [16, 64] {
        let (point, sim) = little(&w, &c, &s, concurrency, false);
        eprintln!(
            "C={concurrency} Poisson: TTFT {:.4} vs {:.4} ({:.3}), TPOT {:.5} vs {:.5} ({:.3}), tokens/s {:.1} vs {:.1} ({:.3})",
            sim.ttft.mean_s, point.ttft_s, rel(sim.ttft.mean_s, point.ttft_s),
            sim.tpot.mean_s, point.tpot_s, rel(sim.tpot.mean_s, point.tpot_s),
            sim.output_tokens_per_s, point.output_tokens_per_s,
            rel(sim.output_tokens_per_s, point.output_tokens_per_s)
        );
        // Bursts queue prompts and batch more sequences than the steady state's C: latencies
        // rise (reported, not bounded here); what finishes per second still matches.
        assert!(sim.ttft.mean_s > point.ttft_s && sim.tpot.mean_s > point.tpot_s * 0.99);
        assert!(rel(sim.output_tokens_per_s, point.output_tokens_per_s) < 0.05);
    }
}

#[test]
fn a_request_alone_takes_its_prefill_then_its_decode_steps_as_run_request_prices_them() {
    let (w, c) = (mixed("llama-3.1-8b"), chip("h100-sxm"));
    let s = scenario(&w, &[]);
    let alone = price_request(&w, &c, &s, 1000, 40).unwrap();
    for exact in [true, false] {
        let mut cfg = config(
            Arrivals::Uniform { rate_per_s: 1.0 },
            Horizon::Requests { n: 1 },
            1000,
            40,
        );
        cfg.exact = exact;
        let sim = simulate(&w, &c, &s, &cfg).unwrap();
        // Exact pricing sums the same steps; the cache interpolates decode contexts between
        // grid points 128 apart, within one bound regime exact up to rounding.
        let tolerance = if exact { 1e-9 } else { 1e-4 };
        assert_close(sim.ttft.p50_s, alone.ttft_s, tolerance);
        assert_close(sim.tpot.p50_s, alone.tpot_s, tolerance);
        assert_close(sim.e2e.p50_s, alone.e2e_s, tolerance);
        assert_eq!((sim.iterations, sim.mean_batch), (40, 1.0));
    }
}

#[test]
fn three_times_the_steady_states_throughput_is_unstable() {
    let (w, c) = (mixed("llama-3.1-8b"), chip("h100-sxm"));
    let s = scenario(&w, &[]);
    let pricer = IterationPricer::new(&w, &c, &s).unwrap();
    let mut server = Server::new(&c, pricer, None, 8192.0, ServingOptions::default()).unwrap();
    let most = server
        .steady_state(RequestShape::new(1024, 256).unwrap(), 1024)
        .unwrap();
    let rate_per_s = 3.0 * most.requests_per_s;
    let arrivals = Arrivals::Poisson { rate_per_s };
    let sim = simulate(
        &w,
        &c,
        &s,
        &config(arrivals, Horizon::Duration { s: 60.0 }, 1024, 256),
    )
    .unwrap();
    assert!(!sim.stable, "{sim:?}");
    // At a third of it the queue keeps up.
    let arrivals = Arrivals::Poisson {
        rate_per_s: rate_per_s / 9.0,
    };
    let sim = simulate(
        &w,
        &c,
        &s,
        &config(arrivals, Horizon::Duration { s: 60.0 }, 1024, 256),
    )
    .unwrap();
    assert!(sim.stable, "{sim:?}");
}

#[test]
fn a_tiny_kv_cache_preempts_and_still_finishes_every_request() {
    let w = mixed("llama-3.1-8b");
    let c = chip("h100-sxm");
    // Pages on demand, as vLLM and the fitted stack admit; a whole-request reservation
    // (TensorRT-LLM) never preempts.
    let spec = ScenarioSpec {
        memory_utilization: Some(0.25),
        engine: crate::common::fitted_engine(),
        ..ScenarioSpec::default()
    };
    let s = Scenario::resolve(&w, &spec).unwrap();
    let arrivals = Arrivals::Poisson { rate_per_s: 20.0 };
    let sim = simulate(
        &w,
        &c,
        &s,
        &config(arrivals, Horizon::Requests { n: 200 }, 1024, 256),
    )
    .unwrap();
    assert!(sim.preemptions > 0, "{sim:?}");
    assert_eq!(sim.finished, 200);
    // Every running sequence's blocks fit the cache: at most kv_blocks * 16 / (1024 + 256).
    assert!(sim.kv_blocks < 3000, "{}", sim.kv_blocks);
}

#[test]
fn a_hybrid_models_sequences_each_hold_their_state_in_the_kv_budget() {
    // Nemotron-H-8B on an H100 at a quarter of its memory. A token's KV: 4 attention layers
    // x 2 x 8 KV heads x 128 x 2 bytes = 16,384 B, a block of 16 tokens 262,144 B; a
    // sequence's state: 24 Mamba-2 layers x (128 x 64 x 128 + 3 x 10240) x 2 bytes =
    // 51,806,208 B, 197.6 blocks, so 198.
    let w = mixed("nemotron-h-8b");
    let c = chip("h100-sxm");
    let spec = ScenarioSpec {
        memory_utilization: Some(0.25),
        ..ScenarioSpec::default()
    };
    let s = Scenario::resolve(&w, &spec).unwrap();
    let arrivals = Arrivals::Poisson { rate_per_s: 50.0 };
    let sim = simulate(
        &w,
        &c,
        &s,
        &config(arrivals, Horizon::Requests { n: 300 }, 1024, 256),
    )
    .unwrap();
    assert_eq!(sim.state_blocks_per_seq, 198);
    // The budget: usable memory less weights, workspace and reserve (the state no longer
    // counted among them), in blocks.
    let sets = [("batch", 1.0), ("context", 1023.0)];
    let one = crate::common::run("nemotron-h-8b", "h100-sxm", &sets, spec).summary;
    let room = one.usable_bytes - one.weight_bytes - one.workspace_bytes - one.reserve_bytes;
    assert_eq!(sim.kv_blocks, (room / 16_384.0).floor() as u64 / 16);
    // A running sequence holds its state and at least one block of KV, so at most
    // kv_blocks / 199 run at once, where their KV alone (at most 80 blocks each) would let
    // more than twice as many run; every request still finishes.
    let most = sim.kv_blocks as f64 / 199.0;
    assert!(sim.kv_blocks as f64 / 80.0 > 2.0 * most);
    assert!(sim.mean_batch <= most, "{} of {most}", sim.mean_batch);
    assert_eq!(sim.finished, 300);
}

fn cli_run(extra: &[&str]) -> std::process::Output {
    let mut cmd = stepcost();
    cmd.args(["simulate", "llama-3.1-8b", "--chip", "h100-sxm"]);
    cmd.args(extra);
    cmd.output().unwrap()
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_other_numbers() {
    let args = [
        "--rate",
        "8",
        "--duration",
        "30",
        "--range-ratio",
        "0.5",
        "--format",
        "csv",
    ];
    let a = cli_run(&[&args[..], &["--seed", "7"]].concat());
    let b = cli_run(&[&args[..], &["--seed", "7"]].concat());
    let c = cli_run(&[&args[..], &["--seed", "8"]].concat());
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(a.stdout, b.stdout);
    let (header, rows) = crate::common::csv_rows(&String::from_utf8_lossy(&a.stdout));
    let (_, others) = crate::common::csv_rows(&String::from_utf8_lossy(&c.stdout));
    let ttft = |row: &[String]| crate::common::cell(&header, row, "ttft_p50_s").to_owned();
    assert_ne!(ttft(&rows[0]), ttft(&others[0]));
}

#[test]
fn bad_input_is_refused_with_what_was_wrong_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    let trace = dir.path().join("trace.csv");
    std::fs::write(
        &trace,
        "arrival_s,input_tokens,output_tokens\n0,100,20\n0.5,abc,20\n",
    )
    .unwrap();
    let cases: [(&[&str], &str); 10] = [
        (
            &["--rate", "1", "--disagg", "--prefill-instances", "0"],
            "--prefill-instances 0: prompts prefilled apart need at least one prefill instance",
        ),
        (
            &["--rate", "1", "--disagg", "--prefill-set", "batch=4"],
            "--prefill-set batch=4: a prefill layout sets only tp, pp or ep",
        ),
        (
            &["--rate", "0"],
            "--rate 0: out of range: expected from 1e-6 requests/s",
        ),
        (
            &["--rate", "1", "--burstiness", "0"],
            "--burstiness 0: out of range: expected from 0.001 to 1000: a gamma shape: 1 is Poisson, \
             below it burstier (gaps' spread 1/sqrt(shape)), above it more even",
        ),
        (
            &["--rate", "1", "--arrival", "uniform", "--burstiness", "4"],
            "--burstiness 4: it shapes Poisson arrivals at --rate",
        ),
        (
            &["--rate", "-2"],
            "--rate -2: out of range: expected from 1e-6",
        ),
        (
            &["--rate", "1", "--range-ratio", "1"],
            "--range-ratio 1: a range ratio is at least 0 and below 1",
        ),
        (
            &[],
            "give --rate R (requests per second) or --trace FILE.csv",
        ),
        (
            &["--trace", trace.to_str().unwrap()],
            "trace.csv:3: field `input_tokens`: `abc` is not a whole number",
        ),
        (
            &["--rate", "1", "--max-seqs", "0"],
            "--max-seqs: at least one sequence runs",
        ),
    ];
    for (args, message) in cases {
        let o = cli_run(&[args, &["--out", out.to_str().unwrap()]].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && stderr.contains(message),
            "{args:?}: {stderr}"
        );
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
}

#[test]
fn a_trace_is_served_as_written_and_two_instances_share_it() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.csv");
    std::fs::write(
        &trace,
        "arrival_s,input_tokens,output_tokens\n0,1000,40\n0,1000,40\n5,200,10\n",
    )
    .unwrap();
    let t = trace.to_str().unwrap();
    let one = cli_run(&["--trace", t, "--format", "csv"]);
    let two = cli_run(&[
        "--trace",
        t,
        "--instances",
        "2",
        "--router",
        "least-loaded",
        "--format",
        "csv",
    ]);
    assert!(
        two.status.success(),
        "{}",
        String::from_utf8_lossy(&two.stderr)
    );
    let (header, one) = crate::common::csv_rows(&String::from_utf8_lossy(&one.stdout));
    let (_, two) = crate::common::csv_rows(&String::from_utf8_lossy(&two.stdout));
    let get =
        |row: &[String], c: &str| crate::common::cell(&header, row, c).parse::<f64>().unwrap();
    assert_eq!(
        (get(&one[0], "finished"), get(&two[0], "finished")),
        (3.0, 3.0)
    );
    assert_eq!((get(&one[0], "chips"), get(&two[0], "chips")), (1.0, 2.0));
    // Apart, the two first requests each prefill alone: the first token comes sooner than
    // when they share an iteration.
    assert!(get(&two[0], "ttft_p90_s") < get(&one[0], "ttft_p90_s"));
    // Of the three e2e times the median is the first two's: each alone on its instance, as
    // `run --request` prices it (the third, shorter, arrives after they finished).
    let w = mixed("llama-3.1-8b");
    let alone = price_request(&w, &chip("h100-sxm"), &scenario(&w, &[]), 1000, 40).unwrap();
    assert_close(get(&two[0], "e2e_p50_s"), alone.e2e_s, 1e-4);
}

/// `config` with prompts prefilled apart on `prefill` instances of `prefill_scenario`.
fn apart(mut config: SimConfig, prefill: u32, prefill_scenario: &Scenario) -> SimConfig {
    config.prefill = Some(PrefillApart {
        instances: prefill,
        scenario: prefill_scenario.clone(),
        link: KvLink::Priced,
    });
    config
}

#[test]
fn prefill_apart_at_a_low_rate_is_the_steady_states_prefill_transfer_and_decode_step() {
    // One request at a time (evenly spaced, far apart): TTFT is the prompt's prefill step on
    // the prefill instance plus its KV cache over the network, TPOT the decode instance's step
    // for one sequence. Llama-3.1-8B's KV: 32 layers x 8 heads x 128 x 2 (k, v) x 2 B =
    // 131,072 B a token, over H100's 50 GB/s a chip; Llama-3.1-70B on H200 decoding on tp=4
    // and prefilling on tp=2: each prefill chip sends half of 327,680 B a token.
    let cases = [
        ("llama-3.1-8b", "h100-sxm", 1.0, 1.0, 131_072.0),
        ("llama-3.1-70b", "h200", 4.0, 2.0, 163_840.0),
    ];
    for (name, chip_name, decode_tp, prefill_tp, bytes_per_token) in cases {
        let (w, c) = (mixed(name), chip(chip_name));
        let layout = |tp: f64| {
            let spec = ScenarioSpec {
                sets: vec![("tp".into(), tp)],
                ..ScenarioSpec::default()
            };
            Scenario::resolve(&w, &spec).unwrap()
        };
        let (decode, prefill) = (layout(decode_tp), layout(prefill_tp));
        let shape = RequestShape::new(1024, 256).unwrap();
        let pool = {
            let pricer = IterationPricer::new(&w, &c, &prefill).unwrap();
            let mut s = Server::new(&c, pricer, None, 8192.0, ServingOptions::default()).unwrap();
            s.prefill_pool(shape).unwrap()
        };
        let pricer = IterationPricer::new(&w, &c, &decode).unwrap();
        let mut server = Server::new(&c, pricer, None, 8192.0, ServingOptions::default()).unwrap();
        let point = server
            .disaggregated_with(&pool, shape, 1, KvLink::Priced)
            .unwrap();
        let transfer_s = bytes_per_token * 1024.0 / 50e9;
        assert_close(point.ttft_s, pool.prompt_s() + transfer_s, 1e-9);
        let rate_per_s = 0.2 / point.e2e_s;
        let cfg = config(
            Arrivals::Uniform { rate_per_s },
            Horizon::Requests { n: 20 },
            1024,
            256,
        );
        let sim = simulate(&w, &c, &decode, &apart(cfg, 1, &prefill)).unwrap();
        eprintln!(
            "{name}: TTFT {:.5} vs {:.5}, TPOT {:.6} vs {:.6}",
            sim.ttft.mean_s, point.ttft_s, sim.tpot.mean_s, point.tpot_s
        );
        assert!(sim.stable && sim.finished == 20);
        assert!(rel(sim.ttft.mean_s, point.ttft_s) < 0.05);
        assert!(rel(sim.tpot.mean_s, point.tpot_s) < 0.05);
        // Both pools' chips; every prompt took one prefill iteration.
        assert_eq!(sim.chips, (decode_tp + prefill_tp) as u64);
        assert_eq!((sim.prefill_instances, sim.prefill_iterations), (1, 20));
    }
}

#[test]
fn prefill_apart_above_capacity_is_unstable() {
    let (w, c) = (mixed("llama-3.1-8b"), chip("h100-sxm"));
    let s = scenario(&w, &[]);
    let pricer = IterationPricer::new(&w, &c, &s).unwrap();
    let mut server = Server::new(&c, pricer, None, 8192.0, ServingOptions::default()).unwrap();
    let shape = RequestShape::new(1024, 256).unwrap();
    // The decode instance at 1024 sequences (more than its cache holds): no rate above it
    // can be served.
    let most = server.disaggregated(shape, 1024, KvLink::Priced).unwrap();
    let over = 3.0 * most.requests_per_s;
    for (rate_per_s, stable) in [(over, false), (over / 60.0, true)] {
        let cfg = config(
            Arrivals::Poisson { rate_per_s },
            Horizon::Duration { s: 60.0 },
            1024,
            256,
        );
        let sim = simulate(&w, &c, &s, &apart(cfg, 1, &s)).unwrap();
        assert_eq!(sim.stable, stable, "{rate_per_s}/s: {sim:?}");
    }
}

#[test]
fn simulate_disagg_names_both_pools_and_the_same_seed_gives_the_same_bytes() {
    let args = [
        "--rate",
        "4",
        "--requests",
        "200",
        "--disagg",
        "--prefill-instances",
        "2",
        "--instances",
        "3",
        "--format",
        "csv",
    ];
    let a = cli_run(&args);
    let b = cli_run(&args);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(a.stdout, b.stdout);
    let (h, rows) = crate::common::csv_rows(&String::from_utf8_lossy(&a.stdout));
    let get = |c: &str| crate::common::cell(&h, &rows[0], c).to_owned();
    assert_eq!(
        (get("instances"), get("prefill_instances"), get("chips")),
        ("3".into(), "2".into(), "5".into())
    );
    assert_eq!(get("finished"), "200");
}
