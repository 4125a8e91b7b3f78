//! Hostile inputs, round three, items 9 and 10: `simulate` behind many instances in bounded
//! memory, and every range of a run (rates, instances, arrival windows, a trace's times, the
//! latency bounds, `--set context`) refused at each way in, with its message, exit 1 and
//! nothing written.

use std::path::Path;
use std::time::Duration;

use predicates::prelude::*;
use stepcost::serving::Slo;
use stepcost::{
    simulate::simulate, simulate::Arrivals, simulate::Horizon, simulate::LatencyBounds,
    simulate::Lengths, simulate::Router, simulate::SimConfig, Chip, Scenario, ScenarioSpec,
    Workload,
};

use crate::common::stepcost;

/// `stepcost args` in `dir`: exit 1, `message` on stderr, nothing on stdout and no file made.
fn refused(dir: &Path, args: &[&str], message: &str) {
    let before: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    stepcost()
        .current_dir(dir)
        .args(args)
        .args(["--out", "out.csv"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(message));
    let after: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(before, after, "{args:?} made a file");
}

const SIM: [&str; 4] = ["simulate", "llama-3.1-8b", "--chip", "h100-sxm"];

fn sim(extra: &[&str]) -> Vec<String> {
    SIM.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn refused_sim(dir: &Path, extra: &[&str], message: &str) {
    let args = sim(extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(dir, &args, message);
}

#[test]
fn simulate_refuses_each_value_outside_its_range() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: [(&[&str], &str); 9] = [
        (
            &["--rate", "1e-7", "--requests", "3"],
            "--rate 1e-7: out of range: expected from 1e-6 requests/s to 10^9 requests/s",
        ),
        (&["--rate", "2e9"], "--rate 2e9: out of range"),
        (
            &["--rate", "1", "--requests", "3", "--instances", "1000000000"],
            "--instances 1000000000 is 10^9 instances, a count too large: expected from 1 instances to 10^6 instances",
        ),
        (
            &["--rate", "1", "--instances", "1000001"],
            "a count too large",
        ),
        (
            &["--rate", "1", "--disagg", "--prefill-instances", "2000000"],
            "--prefill-instances 2000000 is 2e6 instances, a count too large",
        ),
        (
            &["--rate", "1", "--duration", "1e12"],
            "--duration 1e12: out of range: expected from 0.001 seconds to 10^9 seconds",
        ),
        (
            &["--rate", "1", "--requests", "30000000"],
            "--requests 30000000 is 3e7 requests, a count too large",
        ),
        (
            &["--rate", "1", "--max-ttft-ms", "1e-9"],
            "--max-ttft-ms 1e-9: out of range: expected from 0.001 ms to 10^7 ms",
        ),
        (
            &["--rate", "1", "--max-ms-per-token", "1e300"],
            "--max-ms-per-token 1e300: out of range",
        ),
    ];
    for (extra, message) in cases {
        refused_sim(d, extra, message);
    }
}

#[test]
fn a_trace_time_outside_its_range_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("trace.csv"),
        "arrival_s,input_tokens,output_tokens\n1e20,100,10\n1e20,100,10\n",
    )
    .unwrap();
    refused_sim(
        d,
        &["--trace", "trace.csv"],
        "trace.csv:2: field `arrival_s`: `1e20` is out of range: expected from 0 seconds to 10^10 seconds",
    );
}

#[test]
fn a_trace_on_a_unix_clock_runs_as_the_same_trace_from_zero() {
    // Times a quarter second apart at 10^9 s (a Unix time): each difference is exact, and the
    // run counts from the first arrival, so it is the run of the same trace starting at 0.
    let rows = [
        (0.0, 1000, 40),
        (0.25, 800, 30),
        (0.5, 1200, 50),
        (5.75, 200, 10),
    ];
    let run = |offset: f64| {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("arrival_s,input_tokens,output_tokens\n");
        for (t, i, o) in rows {
            text.push_str(&format!("{},{i},{o}\n", offset + t));
        }
        std::fs::write(dir.path().join("trace.csv"), text).unwrap();
        let out = stepcost()
            .current_dir(dir.path())
            .args(sim(&["--trace", "trace.csv", "--format", "csv"]))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let (zero, unix) = (run(0.0), run(1e9));
    assert_eq!(zero, unix);
    let (header, rows) = crate::common::csv_rows(&zero);
    let get = |c: &str| {
        crate::common::cell(&header, &rows[0], c)
            .parse::<f64>()
            .unwrap()
    };
    assert_eq!(get("finished"), 4.0);
    assert!(get("ttft_p50_s") > 1e-3, "a latency, not zero: {zero}");
    assert_eq!(get("arrival_window_s"), 5.75);
}

/// Item 9: a million instances (the most), least-loaded, for forty requests: only the forty
/// reached are made, so the run fits in 64 MiB of address space (making every instance took
/// 120 bytes each, 120 MB, before any request was served).
#[test]
fn a_million_instances_run_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = sim(&[
        "--rate",
        "1",
        "--requests",
        "40",
        "--instances",
        "1000000",
        "--router",
        "least-loaded",
        "--format",
        "csv",
    ]);
    args.insert(0, "ulimit -v 65536 && exec \"$0\" \"$@\"".into());
    args.insert(
        1,
        assert_cmd::cargo::cargo_bin("stepcost")
            .display()
            .to_string(),
    );
    let out = assert_cmd::Command::new("bash")
        .current_dir(dir.path())
        .env("RAYON_NUM_THREADS", "2")
        .env("MALLOC_ARENA_MAX", "1")
        .arg("-c")
        .args(&args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (header, rows) = crate::common::csv_rows(&text);
    let get = |c: &str| {
        crate::common::cell(&header, &rows[0], c)
            .parse::<f64>()
            .unwrap()
    };
    assert_eq!((get("instances"), get("finished")), (1e6, 40.0));
    // Each request alone on an instance of its own: none waits, none is preempted.
    assert_eq!((get("mean_batch"), get("preemptions")), (1.0, 0.0));
}

#[test]
fn plan_refuses_a_context_or_rate_outside_its_range_from_flags_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plan = ["plan", "llama-3.1-8b", "--chip", "h100-sxm"];
    let context =
        "the context is 10^10 tokens, a count too large: expected from 0 tokens to 10^9 tokens";
    refused(
        d,
        &[&plan[..], &["--set", "context=1e10"]].concat(),
        context,
    );
    refused(
        d,
        &[&plan[..], &["--set", "context=100.5"]].concat(),
        "not a whole number",
    );
    refused(
        d,
        &[&plan[..], &["--rate", "1e-7", "--request", "in=10,out=10"]].concat(),
        "`1e-7` is out of range: expected from 1e-6 requests/s",
    );
    refused(
        d,
        &[
            &plan[..],
            &[
                "--rate",
                "1",
                "--request",
                "in=10,out=10",
                "--max-ttft-ms",
                "1e9",
            ],
        ]
        .concat(),
        "`1e9` is out of range: expected from 0.001 ms to 10^7 ms",
    );
    for (key, line) in [("context: 1e10", 2), ("sets: {context: 1e10}", 2)] {
        let name = format!("s{}.yaml", key.len());
        std::fs::write(d.join(&name), format!("workload: llama-3.1-8b\n{key}\n")).unwrap();
        refused(
            d,
            &["plan", "--scenario", &name, "--chip", "h100-sxm"],
            &format!("{name}:{line}"),
        );
        refused(
            d,
            &["plan", "--scenario", &name, "--chip", "h100-sxm"],
            context,
        );
        std::fs::remove_file(d.join(&name)).unwrap();
    }
}

fn config(arrivals: Arrivals, instances: u32) -> SimConfig {
    SimConfig {
        arrivals,
        horizon: Horizon::Requests { n: 3 },
        lengths: Lengths::new(100, 10, 0.0).unwrap(),
        seed: 0,
        max_seqs: None,
        instances,
        router: Router::RoundRobin,
        slo: LatencyBounds::default(),
        exact: false,
        audit: false,
        prefill: None,
    }
}

#[test]
fn the_library_refuses_what_the_command_line_does() {
    let w = Workload::named("llama-3.1-8b").unwrap();
    let c = Chip::named("h100-sxm").unwrap();
    let s = Scenario::resolve(&w, &ScenarioSpec::default()).unwrap();
    let err = |cfg: SimConfig| simulate(&w, &c, &s, &cfg).unwrap_err().to_string();
    let slow = Arrivals::Poisson { rate_per_s: 1e-7 };
    assert!(err(config(slow, 1)).contains("--rate 1e-7: out of range"));
    let one = Arrivals::Poisson { rate_per_s: 1.0 };
    assert!(err(config(one.clone(), 10_000_000)).contains("a count too large"));
    let mut long = config(one.clone(), 1);
    long.horizon = Horizon::Duration { s: 1e12 };
    assert!(err(long).contains("--duration 1e12: out of range"));
    let mut bound = config(one.clone(), 1);
    bound.slo.max_tpot_s = Some(1e-12);
    assert!(err(bound).contains("--max-ms-per-token"));
    // A bound at the range's end, typed in ms, is inside it.
    let mut edge = config(one, 1);
    edge.slo.max_tpot_s = Some(1e-3 / 1e3);
    assert!(simulate(&w, &c, &s, &edge).is_ok());
    let late = stepcost::simulate::Request {
        arrival_s: 1e20,
        input_tokens: 100,
        output_tokens: 10,
    };
    let e = err(config(Arrivals::Trace(vec![late]), 1));
    assert!(
        e.contains("trace request 1: arrival_s 1e20: out of range"),
        "{e}"
    );
    let refused = Slo::new(1e-7, None, None).unwrap_err().to_string();
    assert!(refused.contains("--rate 1e-7: out of range"), "{refused}");
    assert!(Slo::new(1e-6, Some(1e-6), Some(1.0)).is_ok());
}

/// The web API reads `set` through `--set`'s parser: the same refusal, as a 400.
#[cfg(feature = "ui")]
#[test]
fn the_web_api_refuses_a_context_outside_its_range() {
    let server = crate::common::server::Server::start(&[]);
    let body = serde_json::json!({
        "workload": "llama-3.1-8b",
        "chips": "h100-sxm",
        "set": ["context=1e10"],
    });
    let (status, message) = server.refused("/api/run", &body);
    assert_eq!(status, 400);
    assert!(
        message.contains("`context=1e10`: the context is 10^10 tokens, a count too large"),
        "{message}"
    );
}
