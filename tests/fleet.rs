//! `plan --rate`: fleets within latency bounds from the steady state, checked by simulation,
//! with launch settings; bad targets refused.

use crate::common::{cell, csv_rows, stepcost, succeeded};

fn plan_csv(extra: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let out = stepcost()
        .args(["plan", "llama-3.1-8b", "--chip", "h100-sxm,mi300x"])
        .args(["--rate", "20", "--request", "in=1024,out=256"])
        .args(["--format", "csv"])
        .args(extra)
        .output()
        .unwrap();
    csv_rows(&succeeded(out))
}

fn num(header: &[String], row: &[String], column: &str) -> f64 {
    cell(header, row, column).parse().unwrap()
}

#[test]
fn a_fleet_serves_the_rate_within_the_bounds() {
    let (h, rows) = plan_csv(&["--max-ttft-ms", "300", "--max-ms-per-token", "30"]);
    assert_eq!(rows.len(), 4, "two chips, two weight types");
    for r in &rows {
        // The steady state of one instance meets both bounds at the requests in flight kept.
        assert!(num(&h, r, "ttft_ms") <= 300.0 && num(&h, r, "tpot_ms") <= 30.0);
        let (instances, steady) = (
            num(&h, r, "instances"),
            num(&h, r, "steady_state_instances"),
        );
        assert!(instances >= steady);
        assert!(instances * num(&h, r, "requests_per_s_per_instance") >= 20.0 * 0.999999);
        assert_eq!(cell(&h, r, "simulated_met"), "true");
        assert!(num(&h, r, "simulated_ttft_p90_ms") <= 300.0);
        assert!(num(&h, r, "simulated_tpot_p90_ms") <= 30.0);
        // Chips are instances of the layout; the fleet's $ per million output tokens is its
        // cost per hour over the rate's tokens.
        let chips = num(&h, r, "chips");
        assert_eq!(chips, instances * num(&h, r, "chips_per_instance"));
        let per_million = num(&h, r, "cloud_usd_per_hour") / (20.0 * 256.0 * 3600.0) * 1e6;
        crate::common::assert_close(
            num(&h, r, "cloud_usd_per_million_tokens"),
            per_million,
            1e-9,
        );
    }
    // Ranked cheapest first.
    let hourly: Vec<f64> = rows
        .iter()
        .map(|r| num(&h, r, "cloud_usd_per_hour"))
        .collect();
    assert!(hourly.windows(2).all(|w| w[0] <= w[1]), "{hourly:?}");
}

#[test]
fn tighter_bounds_never_cost_less() {
    let (h, loose) = plan_csv(&["--max-ms-per-token", "60"]);
    let (_, tight) = plan_csv(&["--max-ms-per-token", "15"]);
    let key = |r: &Vec<String>| {
        (
            cell(&h, r, "chip").to_owned(),
            cell(&h, r, "weight_dtype").to_owned(),
        )
    };
    for b in &tight {
        let a = loose.iter().find(|a| key(a) == key(b)).unwrap();
        if cell(&h, b, "chips").is_empty() {
            continue; // the tight bound cannot be met at all
        }
        assert!(num(&h, a, "chips") <= num(&h, b, "chips"), "{a:?} {b:?}");
    }
}

#[test]
fn the_table_ends_with_launch_settings() {
    let out = stepcost()
        .args(["plan", "llama-3.1-8b", "--chip", "h100-sxm"])
        .args([
            "--rate",
            "5",
            "--request",
            "in=512,out=128",
            "--max-ms-per-token",
            "20",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("vllm serve MODEL"), "{text}");
    assert!(text.contains("--max-num-batched-tokens 8192"));
    assert!(text.contains("python -m sglang.launch_server"));
}

#[test]
fn bad_fleet_targets_are_refused() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["--rate", "0", "--request", "in=10,out=10"],
            "out of range",
        ),
        (&["--rate", "5"], "--request"),
        (
            &[
                "--rate",
                "5",
                "--request",
                "in=10,out=10",
                "--max-ttft-ms",
                "0",
            ],
            "out of range",
        ),
    ];
    for (args, message) in cases {
        let out = stepcost()
            .args(["plan", "llama-3.1-8b", "--chip", "h100-sxm"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn a_disaggregated_fleet_is_checked_by_simulation_and_counts_both_pools() {
    let (h, rows) = plan_csv(&[
        "--dtype",
        "weight=bf16",
        "--disagg",
        "on",
        "--max-ttft-ms",
        "300",
        "--max-ms-per-token",
        "30",
    ]);
    assert_eq!(rows.len(), 2, "two chips, one weight type");
    for r in &rows {
        let prefill = num(&h, r, "prefill_instances");
        assert!(prefill >= 1.0, "{r:?}");
        // The simulation of the whole fleet meets both bounds at its 90th percentiles.
        assert_eq!(cell(&h, r, "simulated_met"), "true", "{r:?}");
        assert!(num(&h, r, "simulated_ttft_p90_ms") <= 300.0);
        assert!(num(&h, r, "simulated_tpot_p90_ms") <= 30.0);
        // Chips: each pool's instances times its instance's chips.
        let decode = num(&h, r, "instances") * num(&h, r, "chips_per_instance");
        let apart = prefill * num(&h, r, "prefill_chips_per_instance");
        assert_eq!(num(&h, r, "prefill_chips"), apart);
        assert_eq!(num(&h, r, "chips"), decode + apart);
        // Instances are only ever added to the steady state's.
        assert!(num(&h, r, "instances") >= num(&h, r, "steady_state_instances"));
        assert!(prefill >= num(&h, r, "steady_state_prefill_instances"));
    }
}

#[test]
fn a_named_prefill_layout_is_the_prefill_pools_and_its_launch_settings_follow() {
    let out = stepcost()
        .args([
            "plan",
            "llama-3.1-70b",
            "--chip",
            "h200",
            "--dtype",
            "weight=fp8",
        ])
        .args(["--rate", "4", "--request", "in=1024,out=256"])
        .args([
            "--max-ms-per-token",
            "40",
            "--disagg",
            "on",
            "--prefill-set",
            "tp=2",
        ])
        .output()
        .unwrap();
    let text = succeeded(out);
    assert!(text.contains("x tp=2"), "{text}");
    // One launch block per pool, the prefill pool's on two chips.
    let prefill = text
        .find("prefill pool:")
        .expect("a prefill pool's settings");
    let decode = text.find("decode pool:").expect("a decode pool's settings");
    assert!(prefill < decode);
    assert!(
        text[prefill..decode].contains("--tensor-parallel-size 2"),
        "{text}"
    );
}

#[test]
fn instances_the_check_adds_reprice_the_steady_state() {
    // Llama-3.1-70B on B200 at 10 requests/s: the steady state asks for 2 instances of tp=2,
    // the simulation keeps 3. The row's steady-state columns are the 3 instances': each serves
    // a third of the rate with fewer requests in flight, so the fleet's output (chips x
    // tokens/s per chip) covers the 10 x 1024 tokens/s asked for, not 1.5 times them, and the
    // mean TPOT is below the simulated 90th percentile.
    let out = stepcost()
        .args([
            "plan",
            "llama-3.1-70b",
            "--chip",
            "b200",
            "--dtype",
            "weight=fp8",
            // W8A16 with a 16-bit cache, as named: not the fp8 choice as TensorRT-LLM runs it
            "--dtype",
            "activation=bf16",
        ])
        .args(["--rate", "10", "--request", "in=1024,out=1024"])
        .args([
            "--max-ttft-ms",
            "500",
            "--max-ms-per-token",
            "40",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    let (h, rows) = csv_rows(&succeeded(out));
    let r = &rows[0];
    assert!(num(&h, r, "instances") > num(&h, r, "steady_state_instances"));
    let served = num(&h, r, "chips") * num(&h, r, "output_tokens_per_s_per_chip");
    assert!(
        (10.0 * 1024.0..10.0 * 1024.0 * 1.05).contains(&served),
        "{served}"
    );
    let rate = num(&h, r, "instances") * num(&h, r, "requests_per_s_per_instance");
    assert!(rate >= 10.0 * 0.999999, "{rate}");
    assert!(num(&h, r, "tpot_ms") <= num(&h, r, "simulated_tpot_p90_ms"));
}
