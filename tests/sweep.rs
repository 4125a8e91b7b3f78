//! Sweeps and comparisons through the binary.

use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::common::{assert_close, cell, csv_rows, stepcost};

fn sweep_stdout(args: &[&str], threads: &str) -> String {
    let out = stepcost()
        .arg("sweep")
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

const GRID: [&str; 11] = [
    "llama-3.1-70b",
    "--chip",
    "h100-sxm,a100-80gb",
    "--set",
    "batch=1..=64:x2",
    "--set",
    "context=1024,8192",
    "--dtype",
    "weight=bf16,fp8",
    "--fusion",
    "none,flash",
];

#[test]
fn rows_are_the_product_in_order_whatever_the_threads() {
    let one = sweep_stdout(&GRID, "1");
    let two = sweep_stdout(&GRID, "2");
    assert_eq!(one, two, "byte-identical with 1 and 2 threads");
    let (header, rows) = csv_rows(&one);
    // 2 chips x 7 batches x 2 contexts x 2 weight types x 2 plans
    assert_eq!(rows.len(), 2 * 7 * 2 * 2 * 2);
    let mut expected = Vec::new();
    for chip in ["h100-sxm", "a100-80gb"] {
        for batch in [1, 2, 4, 8, 16, 32, 64] {
            for context in [1024, 8192] {
                for weight in ["bf16", "fp8"] {
                    for fusion in ["none", "flash"] {
                        expected.push((
                            chip,
                            batch.to_string(),
                            context.to_string(),
                            weight,
                            fusion,
                        ));
                    }
                }
            }
        }
    }
    for (row, (chip, batch, context, weight, fusion)) in rows.iter().zip(&expected) {
        assert_eq!(cell(&header, row, "chip"), *chip);
        assert_eq!(cell(&header, row, "batch"), batch);
        assert_eq!(cell(&header, row, "context"), context);
        assert_eq!(cell(&header, row, "weight_dtype"), *weight);
        assert_eq!(cell(&header, row, "fusion"), *fusion);
        assert_eq!(cell(&header, row, "error"), "");
    }
}

#[test]
fn every_row_equals_the_run_of_its_scenario() {
    let text = sweep_stdout(&GRID, "2");
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let (columns, rows) = csv_rows(&text);
    for (line, row) in lines.zip(&rows).step_by(5) {
        let run = stepcost()
            .args([
                "run",
                "llama-3.1-70b",
                "--format",
                "csv",
                "--chip",
                cell(&columns, row, "chip"),
            ])
            .args(["--set", &format!("batch={}", cell(&columns, row, "batch"))])
            .args([
                "--set",
                &format!("context={}", cell(&columns, row, "context")),
            ])
            .args([
                "--dtype",
                &format!("weight={}", cell(&columns, row, "weight_dtype")),
            ])
            .args(["--fusion", cell(&columns, row, "fusion")])
            .assert()
            .success();
        let run = String::from_utf8(run.get_output().stdout.clone()).unwrap();
        let mut run_lines = run.lines();
        assert_eq!(run_lines.next(), Some(header));
        assert_eq!(run_lines.next(), Some(line));
    }
}

#[test]
fn per_op_rows_repeat_the_scenario_columns() {
    let text = sweep_stdout(
        &[
            "gemm",
            "--chip",
            "h100-sxm,h200",
            "--set",
            "m=1,8192",
            "--per-op",
        ],
        "2",
    );
    let (header, rows) = csv_rows(&text);
    assert_eq!(rows.len(), 4); // one kernel per scenario
    assert_eq!(cell(&header, &rows[3], "chip"), "h200");
    assert_eq!(cell(&header, &rows[3], "m"), "8192");
    assert_eq!(cell(&header, &rows[3], "op"), "gemm");
    assert_eq!(cell(&header, &rows[3], "bound"), "compute");
    assert_eq!(cell(&header, &rows[0], "bound"), "memory");
}

#[test]
fn json_lines_have_one_object_per_scenario() {
    let text = sweep_stdout(
        &[
            "gemv",
            "--chip",
            "h100-sxm",
            "--set",
            "batch=1..=4",
            "--format",
            "json",
        ],
        "2",
    );
    let objects: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objects.len(), 4);
    assert_eq!(objects[3]["batch"], 4);
    assert_eq!(objects[0]["chip"], "h100-sxm");
}

#[test]
fn an_invalid_scenario_is_an_error_row_or_left_out() {
    // A chip whose matrix unit has neither fp8 nor a 16-bit type to widen fp8 to.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("fp32-only.yaml");
    std::fs::write(
        &old,
        "name: FP32 only\nmemory: {capacity: 40 GB, bandwidth: 1.5 TB/s}\n\
         matrix: {fp32: 19.5 TFLOPS}\nvector: {fp32: 19.5 TFLOPS}\n\
         expected: {matrix: {fp32: 0.8}, memory: 0.9}\n",
    )
    .unwrap();
    let chips = format!("{},h100-sxm", old.display());
    let args = [
        "gemm",
        "--chip",
        &chips,
        "--dtype",
        "weight=fp8",
        "--dtype",
        "activation=fp8",
    ];
    let (header, rows) = csv_rows(&sweep_stdout(&args, "2"));
    assert_eq!(rows.len(), 2);
    assert!(cell(&header, &rows[0], "error").contains("lists no fp8 peak"));
    assert_eq!(cell(&header, &rows[0], "step_time_us"), "");
    assert_eq!(cell(&header, &rows[1], "error"), "");
    let skip: Vec<&str> = args.iter().copied().chain(["--skip-invalid"]).collect();
    let (header, rows) = csv_rows(&sweep_stdout(&skip, "2"));
    assert_eq!(rows.len(), 1);
    assert_eq!(cell(&header, &rows[0], "chip"), "h100-sxm");
}

#[test]
fn derived_columns_per_token_and_per_dollar() {
    let (header, rows) = csv_rows(&sweep_stdout(
        &[
            "gemv", "--chip", "h100-sxm", "--set", "batch=1", "--mode", "roofline",
        ],
        "1",
    ));
    let row = &rows[0];
    let value = |c: &str| cell(&header, row, c).parse::<f64>().unwrap();
    // step = (2kn + 2k + 2n) bytes / 3.35 TB/s; one token per step; 2.69 USD per hour (the chip
    // file's price on its basis)
    let step_s = (2.0 * 8192.0 * 8192.0 + 4.0 * 8192.0) / 3.35e12;
    assert_close(value("ms_per_token"), step_s * 1e3, 1e-12);
    assert_close(value("tokens_per_s"), 1.0 / step_s, 1e-12);
    assert_close(value("tokens_per_s_per_chip"), 1.0 / step_s, 1e-12);
    assert_close(
        value("usd_per_million_tokens"),
        2.69 / 3600.0 * step_s * 1e6,
        1e-12,
    );
}

#[test]
fn a_grid_above_the_limit_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.csv");
    let start = Instant::now();
    stepcost()
        .args([
            "sweep",
            "llama-3.1-70b",
            "--chip",
            "all",
            "--set",
            "batch=1..=1000000",
            "--set",
            "context=1..=1000000",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "26000000000000 scenarios, more than --max-scenarios 100000000",
        ));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(!out.exists());
    stepcost()
        .args([
            "sweep",
            "gemm",
            "--chip",
            "h100-sxm",
            "--set",
            "m=1..=100",
            "--max-scenarios",
            "99",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("100 scenarios"));
}

#[test]
fn a_failed_sweep_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("missing-dir").join("sweep.csv");
    stepcost()
        .args(["sweep", "gemm", "--chip", "h100-sxm", "--out"])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot write"));
    assert!(!out.exists());
}

#[test]
fn ctrl_c_stops_promptly_and_leaves_the_previous_file() {
    interrupted_sweep_leaves_the_previous_file("-INT");
}

#[test]
fn sigterm_stops_promptly_and_leaves_the_previous_file() {
    interrupted_sweep_leaves_the_previous_file("-TERM");
}

fn interrupted_sweep_leaves_the_previous_file(signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.csv");
    std::fs::write(&out, "previous").unwrap();
    let binary = assert_cmd::cargo::cargo_bin("stepcost");
    let child = std::process::Command::new(binary)
        .args([
            "sweep",
            "llama-3.1-70b",
            "--chip",
            "all",
            "--set",
            "batch=1..=4096",
            "--set",
            "context=1..=900",
            "--out",
        ])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let sent = Instant::now();
    let kill = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let output = child.wait_with_output().unwrap();
    assert!(sent.elapsed() < Duration::from_secs(3), "stopped promptly");
    assert_eq!(output.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("interrupted:") && stderr.contains("was not written"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn compare_follows_the_ridge_points() {
    let text = {
        let out = stepcost()
            .args([
                "compare",
                "gemv",
                "--chip",
                "h100-sxm,h200",
                "--format",
                "csv",
                "--mode",
                "roofline",
            ])
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let (header, rows) = csv_rows(&text);
    // memory-bound decode: the H200 is faster by its bandwidth ratio
    let speed: f64 = cell(&header, &rows[1], "relative_speed").parse().unwrap();
    assert_close(speed, 4.8 / 3.35, 1e-12);
    assert_eq!((speed * 100.0).round() / 100.0, 1.43);
    let out = stepcost()
        .args([
            "compare",
            "gemm",
            "--chip",
            "h100-sxm,h200",
            "--format",
            "csv",
            "--mode",
            "roofline",
        ])
        .assert()
        .success();
    let (header, rows) = csv_rows(&String::from_utf8(out.get_output().stdout.clone()).unwrap());
    // compute-bound GEMM: the same 989 TFLOPS on both
    assert_eq!(cell(&header, &rows[1], "relative_speed"), "1");
    let table = stepcost()
        .args([
            "compare",
            "gemv",
            "--chip",
            "h100-sxm,h200",
            "--mode",
            "roofline",
        ])
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&table.get_output().stdout).contains("1.43x"));
}

#[test]
fn a_sweep_piped_into_head_exits_quietly() {
    let binary = assert_cmd::cargo::cargo_bin("stepcost");
    // `head` closes the pipe after one line while the sweep still has thousands to write
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg("\"$0\" sweep llama-3.1-70b --chip all --set batch=1..=20000 | head -1; exit ${PIPESTATUS[0]}")
        .arg(binary)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("workload,chip,"));
}

#[test]
fn a_full_disk_is_a_clear_error() {
    if !std::path::Path::new("/dev/full").exists() {
        return; // not a Linux machine: nothing to write to that is always full
    }
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = std::process::Command::new(assert_cmd::cargo::cargo_bin("stepcost"))
        .args(["sweep", "gemm", "--chip", "h100-sxm", "--set", "m=1..=64"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("No space left on device"), "{stderr}");
}

#[test]
fn a_directory_that_cannot_be_written_is_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    // root ignores permissions; sysfs refuses new files even to root
    let unwritable = [locked.as_path(), std::path::Path::new("/sys")]
        .into_iter()
        .find(|d| d.is_dir() && std::fs::write(d.join("probe"), "").is_err());
    let Some(unwritable) = unwritable else {
        return; // nowhere on this machine refuses a new file
    };
    let out = unwritable.join("sweep.csv");
    stepcost()
        .args([
            "sweep", "gemm", "--chip", "h100-sxm", "--set", "m=1..=64", "--out",
        ])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "cannot write `{}`",
            out.display()
        )));
    assert!(!out.exists());
}

/// Only a chip lacking what an op needs is an `error` row; a value that makes no graph (a
/// batch of 0) is bad input: the sweep stops, names the scenario and writes no file.
#[test]
fn a_scenario_that_is_bad_input_stops_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.csv");
    let failed = stepcost()
        .args([
            "sweep",
            "llama-3.1-8b",
            "--chip",
            "h100-sxm",
            "--set",
            "batch=1,0",
            "--quiet",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&failed.get_output().stderr).into_owned();
    assert!(
        stderr.contains("scenario 1 of the sweep (chip `h100-sxm`)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("a dimension must be greater than zero"),
        "{stderr}"
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
