//! `--scenario FILE` and `--save-scenario FILE`: a file prices as the same flags do, flags
//! override its keys one at a time, a saved scenario reads back to byte-identical output,
//! and a bad key or value is reported at its line.

use std::path::Path;

use crate::common::{cell, csv_rows, stepcost};

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The command's stdout, which must succeed.
fn out(args: &[&str], dir: &Path) -> String {
    let output = stepcost().current_dir(dir).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The command's stderr, which must fail with exit code 1.
fn fails(args: &[&str], dir: &Path) -> String {
    let output = stepcost().current_dir(dir).args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{args:?}");
    assert!(output.stdout.is_empty());
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn a_file_prices_as_the_same_flags() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "s.yaml",
        "workload: llama-3.1-70b\nchips: h200\nsets: {batch: 8}\ntypes: {weight: fp8}\n\
         context: 8192\nmode: roofline\nrequest: {in: 1000, out: 200}\n\
         cost: {view: tco, years: 5}\n",
    );
    let from_file = out(&["run", "--scenario", "s.yaml", "--format", "csv"], d);
    let from_flags = out(
        &[
            "run",
            "llama-3.1-70b",
            "--chip",
            "h200",
            "--set",
            "batch=8",
            "--dtype",
            "weight=fp8",
            "--set",
            "context=8192",
            "--mode",
            "roofline",
            "--request",
            "in=1000,out=200",
            "--cost",
            "tco",
            "--years",
            "5",
            "--format",
            "csv",
        ],
        d,
    );
    assert_eq!(from_file, from_flags);
    let (header, rows) = csv_rows(&from_file);
    assert_eq!(cell(&header, &rows[0], "batch"), "8");
    assert_eq!(cell(&header, &rows[0], "context"), "8192");
    assert_eq!(cell(&header, &rows[0], "cost_basis"), "tco");
}

#[test]
fn the_tco_terms_come_from_the_file_as_from_their_flags() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "s.yaml",
        "workload: llama-3.1-70b\nchips: h200\nsets: {batch: 8}\n\
         cost: {view: tco, rate_of_capital: 0.05, usd_per_kw_month: 150, \
         tco_utilization: 0.8, network_usd_per_gbps: 20}\n",
    );
    let from_file = out(&["run", "--scenario", "s.yaml", "--format", "csv"], d);
    let flags = [
        "run",
        "llama-3.1-70b",
        "--chip",
        "h200",
        "--set",
        "batch=8",
        "--cost",
        "tco",
        "--rate-of-capital",
        "0.05",
        "--usd-per-kw-month",
        "150",
        "--tco-utilization",
        "0.8",
        "--network-usd-per-gbps",
        "20",
        "--format",
        "csv",
    ];
    assert_eq!(from_file, out(&flags, d));
    // The defaults give another cost: the file's terms were used.
    let (header, rows) = csv_rows(&from_file);
    let (header_d, rows_d) = csv_rows(&out(&[&flags[..8], &["--format", "csv"]].concat(), d));
    assert_ne!(
        cell(&header, &rows[0], "usd_per_hour"),
        cell(&header_d, &rows_d[0], "usd_per_hour")
    );
    // A flag wins over the file's key.
    let flag_wins = out(
        &[
            "run",
            "--scenario",
            "s.yaml",
            "--tco-utilization",
            "1",
            "--format",
            "csv",
        ],
        d,
    );
    let (header_f, rows_f) = csv_rows(&flag_wins);
    let u = |h: &[String], r: &[String]| cell(h, r, "usd_per_hour").parse::<f64>().unwrap();
    let ratio = u(&header, &rows[0]) / u(&header_f, &rows_f[0]);
    assert!((ratio - 1.0 / 0.8).abs() < 1e-6, "{ratio}");
}

#[test]
fn flags_override_the_file_one_key_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "s.yaml",
        "workload: llama-3.1-70b\nchips: h200\nsets: {batch: 8, context: 2048}\n\
         mode: roofline\n",
    );
    let csv = out(
        &[
            "run",
            "--scenario",
            "s.yaml",
            "--set",
            "batch=16",
            "--mode",
            "expected",
            "--format",
            "csv",
        ],
        d,
    );
    let (header, rows) = csv_rows(&csv);
    // The --set for batch leaves the file's context in place; --mode replaces its mode.
    assert_eq!(cell(&header, &rows[0], "batch"), "16");
    assert_eq!(cell(&header, &rows[0], "context"), "2048");
    assert_eq!(cell(&header, &rows[0], "mode"), "expected");
    // A workload and chip on the command line win over the file's.
    let csv = out(
        &[
            "run",
            "llama-3.1-8b",
            "--chip",
            "b200",
            "--scenario",
            "s.yaml",
            "--format",
            "csv",
        ],
        d,
    );
    let (header, rows) = csv_rows(&csv);
    assert_eq!(cell(&header, &rows[0], "workload"), "llama-3.1-8b");
    assert_eq!(cell(&header, &rows[0], "chip"), "b200");
    assert_eq!(cell(&header, &rows[0], "batch"), "8");
}

#[test]
fn a_saved_scenario_reads_back_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let runs: [&[&str]; 4] = [
        &[
            "run",
            "gpt-oss-120b",
            "--chip",
            "h200",
            "--set",
            "batch=32",
            "--dtype",
            "attention.weight=fp8",
            "--fusion",
            "full",
            "--memory-utilization",
            "0.85",
            "--request",
            "in=512,out=128",
            "--price",
            "h200=2.75",
            "--overlap-comm",
        ],
        &[
            "compare",
            "llama-3.1-70b",
            "--chip",
            "h200,b200,mi300x",
            "--set",
            "batch=64",
            "--dtype",
            "weight=fp8",
            "--cost",
            "tco",
            "--pue",
            "1.2",
            "--usd-per-kwh",
            "0.08",
        ],
        &[
            "sweep",
            "llama-3.1-8b",
            "--chip",
            "h100-sxm,h200",
            "--set",
            "batch=1..=64:x4",
            "--set",
            "context=1024,8192",
            "--dtype",
            "weight=bf16,fp8",
            "--fusion",
            "none,flash",
            "--mode",
            "roofline",
        ],
        &[
            "plan",
            "llama-3.1-70b",
            "--target-tokens-per-s",
            "20000",
            "--max-ms-per-token",
            "50",
            "--chip",
            "h200,b200",
            "--context",
            "8192",
            "--dtype",
            "weight=bf16,fp8",
        ],
    ];
    for (i, args) in runs.iter().enumerate() {
        let saved = format!("saved{i}.yaml");
        let mut first: Vec<&str> = args.to_vec();
        first.extend(["--save-scenario", &saved]);
        let original = out(&first, d);
        // plan's target and bound are questions, not scenario keys: asked again.
        let mut again = vec![args[0], "--scenario", &saved];
        if args[0] == "plan" {
            again.extend(["--target-tokens-per-s", "20000", "--max-ms-per-token", "50"]);
        }
        assert_eq!(out(&again, d), original, "{args:?}");
    }
    let saved = std::fs::read_to_string(d.join("saved2.yaml")).unwrap();
    assert!(
        saved.contains("sets: {batch: \"1..=64:x4\", context: \"1024,8192\"}"),
        "{saved}"
    );
}

#[test]
fn report_and_the_workload_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "s.yaml",
        "workload: mixtral-8x7b\nchips: [h200]\nsets: {batch: 4}\n",
    );
    out(&["report", "--scenario", "s.yaml", "--out", "r.html"], d);
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(html.contains("Mixtral-8x7B"));
    // Neither a positional workload nor a file's: a clear error.
    write(d, "chips.yaml", "chips: h200\n");
    let err = fails(&["run", "--scenario", "chips.yaml"], d);
    assert!(err.contains("needs a workload"), "{err}");
}

#[test]
fn bad_keys_and_values_are_reported_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        // (file, what stderr must say)
        (
            "workload: llama-3.1-70b\nchips: h200\nset: {batch: 4}\n",
            ["s.yaml:3:1", "did you mean `sets`?"],
        ),
        (
            "workload: llama-3.1-70b\nchips: h200\nmode: rofline\n",
            ["s.yaml:3:7", "did you mean `roofline`?"],
        ),
        (
            "workload: llama-3.1-70b\nchips: h200\nsets: {batch: [4, 8]}\n",
            ["s.yaml:3:15", "takes one value"],
        ),
        (
            "workload: llama-3.1-70b\nchips: h200\nfusion: flsh\n",
            ["s.yaml:3:9", "did you mean `flash`?"],
        ),
        (
            "workload: llama-3.1-70b\nchips: h200\nsets: {batch: 4}\nmemory_utilization: 1.5\n",
            ["s.yaml:4:21", "out of range"],
        ),
        (
            "workload: llama-3.1-70b\nchips: h200\ncost: {view: tco, yers: 3}\n",
            ["s.yaml:3:19", "did you mean `years`?"],
        ),
        (
            "workload: llama-3.1-70b\nchips: h200\ncost: {view: tco, tco_utilization: 0}\n",
            ["s.yaml:3:36", "out of range"],
        ),
        (
            "workload: llama-3.1-70b\nchips: [h200, b200]\n",
            ["s.yaml:2:8", "`compare`"],
        ),
        (
            "workload: llama-3.1-70b\nchips: h200\ncontext: 1024\nsets: {context: 2048}\n",
            ["s.yaml:4:17", "given twice"],
        ),
    ];
    for (text, expected) in cases {
        write(d, "s.yaml", text);
        let err = fails(&["run", "--scenario", "s.yaml"], d);
        for e in expected {
            assert!(err.contains(e), "{text}: {err}");
        }
    }
}

#[test]
fn the_saved_file_is_written_only_when_the_command_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "s.yaml", "workload: llama-3.1-70b\nchips: h200\n");
    // A scenario that cannot be priced (an unknown fusion plan) saves nothing.
    fails(
        &[
            "run",
            "--scenario",
            "s.yaml",
            "--fusion",
            "nope",
            "--save-scenario",
            "t.yaml",
        ],
        d,
    );
    assert!(!d.join("t.yaml").exists());
    // The scenario file is an input: never overwritten.
    let err = fails(
        &["run", "--scenario", "s.yaml", "--save-scenario", "s.yaml"],
        d,
    );
    assert!(err.contains("inputs"), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("s.yaml")).unwrap(),
        "workload: llama-3.1-70b\nchips: h200\n"
    );
    // Prices from a book and from --price are more than one `prices` key holds.
    write(d, "book.yaml", "h200: 3.00\n");
    let err = fails(
        &[
            "run",
            "--scenario",
            "s.yaml",
            "--prices",
            "book.yaml",
            "--price",
            "h200=2",
            "--save-scenario",
            "t.yaml",
        ],
        d,
    );
    assert!(err.contains("one or the other"), "{err}");
}

#[test]
fn prices_come_from_the_file_as_a_map_or_a_book_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    write(d, "sub/book.yaml", "h200: 3.25 USD/h\n");
    write(
        d,
        "sub/s.yaml",
        "workload: llama-3.1-70b\nchips: h200\nprices: book.yaml\n",
    );
    write(
        d,
        "m.yaml",
        "workload: llama-3.1-70b\nchips: h200\nprices: {h200: 3.25}\n",
    );
    let usd = |file: &str, extra: &[&str]| {
        let mut args = vec!["run", "--scenario", file, "--format", "csv"];
        args.extend_from_slice(extra);
        let (header, rows) = csv_rows(&out(&args, d));
        cell(&header, &rows[0], "usd_per_hour")
            .parse::<f64>()
            .unwrap()
    };
    // The book is read from the scenario's folder.
    assert_eq!(usd("sub/s.yaml", &[]), 3.25);
    assert_eq!(usd("m.yaml", &[]), 3.25);
    // --price overrides the file's quote for its chip.
    assert_eq!(usd("m.yaml", &["--price", "h200=2.5"]), 2.5);
}

#[test]
fn a_power_cap_comes_from_the_file_and_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let h100 = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware/h100-sxm.yaml"),
    )
    .unwrap();
    let curve = "power_curve: {source: test, tdp: 700 W, points: {400 W: 0.6, 550 W: 0.9}}\n";
    write(d, "h100-curve.yaml", &format!("{h100}\n{curve}"));
    write(
        d,
        "s.yaml",
        "workload: llama-3.1-8b\nchips: h100-curve.yaml\nsets: {tokens: 2048}\n\
         cost: {power_cap: 500W}\n",
    );
    let from_file = out(&["run", "--scenario", "s.yaml", "--format", "csv"], d);
    let flags = ["run", "llama-3.1-8b", "--chip", "h100-curve.yaml"];
    let sets = ["--set", "tokens=2048", "--format", "csv"];
    let capped = out(&[&flags[..], &sets, &["--power-cap", "500W"]].concat(), d);
    assert_eq!(from_file, capped);
    assert_ne!(from_file, out(&[&flags[..], &sets].concat(), d));
    // Saved, the cap reads back to the same bytes.
    let saving = [
        &flags[..],
        &sets,
        &["--power-cap", "500", "--save-scenario", "m.yaml"],
    ];
    assert_eq!(out(&saving.concat(), d), capped);
    let saved = std::fs::read_to_string(d.join("m.yaml")).unwrap();
    assert!(saved.contains("power_cap: 500"), "{saved}");
    assert_eq!(
        out(&["run", "--scenario", "m.yaml", "--format", "csv"], d),
        capped
    );
}
