//! What-if chips (`sweep --chip-set FIELD=LIST`): a what-if chip prices as a chip file with
//! the same numbers, is named by its derivation, has a column per swept field, and bad fields,
//! units and values are refused before any work.

use predicates::prelude::*;

use crate::common::{cell, csv_rows, stepcost};

fn sweep(args: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let out = stepcost().arg("sweep").args(args).assert().success();
    csv_rows(&String::from_utf8(out.get_output().stdout.clone()).unwrap())
}

fn h200_text() -> &'static str {
    let chips = stepcost::internals::builtin::CHIPS;
    chips.iter().find(|(id, _)| *id == "h200").unwrap().1
}

/// The built-in H200 file with each `(from, to)` replaced; each `from` must be in it once.
fn edited_h200(edits: &[(&str, &str)]) -> String {
    let mut text = h200_text().to_owned();
    for (from, to) in edits {
        assert_eq!(text.matches(from).count(), 1, "`{from}` once in h200.yaml");
        text = text.replace(from, to);
    }
    text
}

/// Columns that name or describe the chip rather than price the scenario.
fn is_metric(column: &str) -> bool {
    column != "chip" && !column.starts_with("chip_")
}

// fp8 weights with fp8 activations run at the matrix unit's fp8 peak; with bf16, at bf16's.
const GRID: [&str; 11] = [
    "llama-3.1-70b",
    "--set",
    "batch=1,16,256",
    "--set",
    "context=4096",
    "--dtype=weight=fp8",
    "--dtype",
    "activation=bf16,fp8",
    "--cost",
    "tco",
    "--request=in=1000,out=200",
];

#[test]
fn a_what_if_chip_prices_as_the_chip_file_with_its_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.yaml");
    let text = edited_h200(&[
        ("bandwidth: 4.8 TB/s", "bandwidth: 8 TB/s"),
        ("capacity: 143771 MiB", "capacity: 192 GB"),
        ("fp8: 1979 TFLOPS", "fp8: 2500 TFLOPS"),
        ("launch: 1.26 us", "launch: 2 us"),
        ("purchase: 35000 USD", "purchase: 40000 USD"),
        ("power: 1275 W", "power: 1000 W"),
    ]);
    std::fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    for mode in ["expected", "roofline"] {
        let hand = sweep(&[&GRID[..], &["--chip", path, "--mode", mode]].concat());
        let what_if = sweep(
            &[
                &GRID[..],
                &[
                    "--chip",
                    "h200",
                    "--mode",
                    mode,
                    "--chip-set=memory.bandwidth=8TB/s",
                    "--chip-set=memory.capacity=192GB",
                    "--chip-set=matrix.fp8=2500TFLOPS",
                    "--chip-set=launch=2us",
                    "--chip-set=price.purchase=40000USD",
                    "--chip-set=power=1000W",
                ],
            ]
            .concat(),
        );
        let base = sweep(&[&GRID[..], &["--chip", "h200", "--mode", mode]].concat());
        assert_eq!(hand.1.len(), 6);
        assert_eq!(what_if.1.len(), hand.1.len());
        let mut compared = 0;
        for (hand_row, what_if_row) in hand.1.iter().zip(&what_if.1) {
            for column in hand.0.iter().filter(|c| is_metric(c)) {
                let expected = cell(&hand.0, hand_row, column);
                assert_eq!(cell(&what_if.0, what_if_row, column), expected, "{column}");
                compared += 1;
            }
        }
        assert!(compared > 6 * 40, "{compared} cells compared");
        // The fields changed move the numbers: the comparison is not of the base chip.
        let step = |rows: &(Vec<String>, Vec<Vec<String>>), i: usize| {
            cell(&rows.0, &rows.1[i], "step_time_us").to_owned()
        };
        assert_ne!(step(&what_if, 0), step(&base, 0));
        let usd = |rows: &(Vec<String>, Vec<Vec<String>>)| {
            cell(&rows.0, &rows.1[0], "usd_per_hour").to_owned()
        };
        assert_ne!(usd(&what_if), usd(&base));
    }
}

#[test]
fn ids_order_and_columns_name_the_derivation() {
    let (header, rows) = sweep(&[
        "llama-3.1-8b",
        "--chip",
        "h100-sxm,h200",
        "--set",
        "batch=8",
        "--chip-set",
        "memory.bandwidth=3.35TB/s,9.6 TB/s",
        "--chip-set",
        "memory.capacity=80GB..=112GB:+16GB",
    ]);
    // 2 base chips x 2 bandwidths x 3 capacities (80, 96, 112 GB), the first --chip-set outermost.
    let mut expected = Vec::new();
    for chip in ["h100-sxm", "h200"] {
        for (bandwidth, tb_s) in [("3.35TB/s", "3.35"), ("9.6TB/s", "9.6")] {
            for gb in [80, 96, 112] {
                expected.push((
                    format!("{chip}{{memory.bandwidth={bandwidth},memory.capacity={gb}GB}}"),
                    tb_s,
                    gb as f64 * 1e9,
                ));
            }
        }
    }
    assert_eq!(rows.len(), expected.len());
    for (row, (id, tb_s, bytes)) in rows.iter().zip(&expected) {
        assert_eq!(cell(&header, row, "chip"), id);
        assert_eq!(cell(&header, row, "chip_memory_bandwidth_tb_s"), *tb_s);
        let capacity: f64 = cell(&header, row, "chip_memory_capacity_bytes")
            .parse()
            .unwrap();
        assert_eq!(capacity, *bytes);
        // The capacity is the usable figure the memory utilisation (0.9) applies to.
        let usable: f64 = cell(&header, row, "usable_bytes").parse().unwrap();
        assert!((usable - 0.9 * bytes).abs() <= 1e-6 * bytes, "{usable}");
    }
    // The chip columns come after the params and before `error`; the metrics do not move.
    let (plain, _) = sweep(&["llama-3.1-8b", "--chip", "h200", "--set", "batch=8"]);
    let n = header.len();
    assert_eq!(
        &header[n - 3..],
        [
            "chip_memory_bandwidth_tb_s",
            "chip_memory_capacity_bytes",
            "error"
        ]
    );
    assert_eq!(header[..n - 3], plain[..plain.len() - 1]);
}

#[test]
fn chip_columns_reach_filters_per_op_rows_and_json() {
    let (header, rows) = sweep(&[
        "llama-3.1-8b",
        "--chip",
        "h200",
        "--chip-set",
        "matrix.bf16=989TFLOPS..=3956TFLOPS:x2",
        "--where",
        "chip_matrix_bf16_tflops >= 1978",
    ]);
    let ids: Vec<&str> = rows.iter().map(|r| cell(&header, r, "chip")).collect();
    assert_eq!(
        ids,
        [
            "h200{matrix.bf16=1978TFLOPS}",
            "h200{matrix.bf16=3956TFLOPS}"
        ]
    );
    let (header, rows) = sweep(&[
        "llama-3.1-8b",
        "--chip",
        "h200",
        "--per-op",
        "--chip-set",
        "launch=2.5us",
    ]);
    assert!(rows.len() > 5);
    assert!(rows
        .iter()
        .all(|r| cell(&header, r, "chip_launch_us") == "2.5"));
    let out = stepcost()
        .args([
            "sweep",
            "llama-3.1-8b",
            "--chip",
            "h200",
            "--format",
            "json",
        ])
        .args(["--chip-set", "price.cloud=2USD/h"])
        .assert()
        .success();
    let line: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(line["chip"], "h200{price.cloud=2USD/h}");
    assert_eq!(line["chip_price_cloud_usd_per_hour"], 2.0);
    assert_eq!(line["usd_per_hour"], 2.0);
}

/// `sweep --chip h200 ARGS --out FILE` fails with `message` and writes no file.
fn refused(args: &[&str], message: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    stepcost()
        .args(["sweep", "llama-3.1-8b", "--chip", "h200", "--out"])
        .arg(&out)
        .args(args)
        .assert()
        .failure()
        .stderr(predicate::str::contains(message));
    assert!(!out.exists(), "no output file for {args:?}");
}

#[test]
fn bad_fields_units_and_values_are_refused_with_no_output() {
    refused(
        &["--chip-set", "memory.bandwith=8TB/s"],
        "unknown chip field `memory.bandwith` (did you mean `memory.bandwidth`?)",
    );
    refused(&["--chip-set", "matrix.fp9=1PFLOPS"], "`matrix.fp8`?");
    refused(
        &["--chip-set", "memory.bandwidth=8TB"],
        "`TB` is a unit of size, but this field is a bandwidth",
    );
    refused(&["--chip-set", "memory.capacity=80"], "has no unit");
    refused(
        &["--chip-set", "memory.capacity=80GB..=1TB"],
        "mixes the units",
    );
    // 1 PB/s is the top of memory.bandwidth's range.
    refused(
        &["--chip-set", "memory.bandwidth=8TB/s,2PB/s"],
        "memory.bandwidth=2PB/s is out of range: expected from 1 GB/s to 1 PB/s",
    );
    refused(&["--chip-set", "launch=2ms"], "out of range");
    refused(
        &["--chip-set", "power=1W,2W", "--chip-set", "power=3W"],
        "`power` is set twice",
    );
    refused(
        &["--chip-set", "memory.capacity=1GB..=20000GB:+1GB"],
        "more than 10000",
    );
}

#[test]
fn a_saved_scenario_keeps_the_chip_sets() {
    let dir = tempfile::tempdir().unwrap();
    let (saved, first, again) = (
        dir.path().join("s.yaml"),
        dir.path().join("a.csv"),
        dir.path().join("b.csv"),
    );
    stepcost()
        .args([
            "sweep",
            "llama-3.1-8b",
            "--chip",
            "h200",
            "--set",
            "batch=1,8",
        ])
        .args(["--chip-set", "memory.bandwidth=4.8TB/s,8TB/s"])
        .args(["--chip-set", "power=500W..=1000W:x2"])
        .arg("--save-scenario")
        .arg(&saved)
        .arg("--out")
        .arg(&first)
        .assert()
        .success();
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(
        text.contains(
            "chip_sets: {memory.bandwidth: \"4.8TB/s,8TB/s\", power: \"500W..=1000W:x2\"}"
        ),
        "{text}"
    );
    stepcost()
        .args(["sweep", "--scenario"])
        .arg(&saved)
        .arg("--out")
        .arg(&again)
        .assert()
        .success();
    let first = std::fs::read_to_string(&first).unwrap();
    assert_eq!(first, std::fs::read_to_string(&again).unwrap());
    // 2 bandwidths x 2 powers (500 W, 1000 W) x 2 batches.
    assert_eq!(first.lines().count(), 1 + 8);
    assert!(first.contains("\"h200{memory.bandwidth=8TB/s,power=1000W}\""));
}
