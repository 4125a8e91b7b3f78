//! The command line as a user meets it: columns, formats, files.

use predicates::prelude::*;

use crate::common::{cell, csv_rows, stepcost};

fn stdout_of(args: &[&str]) -> String {
    let out = stepcost().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn chips_csv_has_the_documented_columns() {
    let (header, rows) = csv_rows(&stdout_of(&["chips", "--format", "csv"]));
    for column in [
        "chip",
        "dtype",
        "peak_tflops",
        "bandwidth_tb_s",
        "ridge_flop_per_byte",
        "capacity_bytes",
    ] {
        assert!(header.iter().any(|h| h == column), "{column} in {header:?}");
    }
    let a100 = rows
        .iter()
        .find(|r| cell(&header, r, "chip") == "a100-80gb" && cell(&header, r, "dtype") == "bf16")
        .unwrap();
    assert_eq!(cell(&header, a100, "peak_tflops"), "312");
    // usable memory: the 81,920 MiB the device reports, not the marketed 80 GB
    assert_eq!(
        cell(&header, a100, "capacity_bytes"),
        (81920u64 * 1048576).to_string()
    );
    // A100 has no fp8: no row claims one
    assert!(!rows
        .iter()
        .any(|r| cell(&header, r, "chip") == "a100-80gb" && cell(&header, r, "dtype") == "fp8"));
}

#[test]
fn run_summary_csv_has_one_row_with_params() {
    let text = stdout_of(&[
        "run",
        "llama-3.1-70b",
        "--chip",
        "h100-sxm",
        "--set",
        "batch=8",
        "--format",
        "csv",
    ]);
    let (header, rows) = csv_rows(&text);
    assert_eq!(rows.len(), 1);
    for column in [
        "workload",
        "chip",
        "mode",
        "fusion",
        "step_time_us",
        "flops",
        "bytes",
        "intensity_flop_per_byte",
        "attained_tflops",
        "mfu",
        "mbu",
        "tokens_per_step",
        "tokens_per_s",
        "batch",
        "tokens",
        "context",
    ] {
        assert!(header.iter().any(|h| h == column), "{column} in {header:?}");
    }
    let row = &rows[0];
    assert_eq!(cell(&header, row, "batch"), "8");
    assert_eq!(cell(&header, row, "tokens_per_step"), "8");
    assert_eq!(cell(&header, row, "mode"), "expected");
    let step_us: f64 = cell(&header, row, "step_time_us").parse().unwrap();
    let tokens_per_s: f64 = cell(&header, row, "tokens_per_s").parse().unwrap();
    assert!((tokens_per_s - 8.0 / (step_us * 1e-6)).abs() < 1e-6 * tokens_per_s);
}

#[test]
fn run_per_op_csv_has_one_row_per_kernel() {
    let run = [
        "run",
        "llama-3.1-70b",
        "--chip",
        "h100-sxm",
        "--fusion",
        "none",
        "--engine",
        "fitted",
        "--format",
        "csv",
    ];
    let text = stdout_of(&[&run[..], &["--per-op"]].concat());
    let (header, rows) = csv_rows(&text);
    for column in [
        "op",
        "block",
        "kind",
        "count",
        "flops",
        "bytes",
        "intensity_flop_per_byte",
        "bound",
        "time_us",
        "attainable_tflops",
        "share",
    ] {
        assert!(header.iter().any(|h| h == column), "{column} in {header:?}");
    }
    // embed, 14 ops per layer, final_norm, lm_head
    assert_eq!(rows.len(), 1 + 14 + 2);
    let shares: f64 = rows
        .iter()
        .map(|r| cell(&header, r, "share").parse::<f64>().unwrap())
        .sum();
    // The kernels' shares and the engine's host work make up the step.
    let (sheader, srows) = csv_rows(&stdout_of(&run));
    let num = |c: &str| cell(&sheader, &srows[0], c).parse::<f64>().unwrap();
    let host_share = num("host_time_us") / num("step_time_us");
    assert!(host_share > 0.0);
    assert!(
        (shares + host_share - 1.0).abs() < 1e-9,
        "{shares} + {host_share}"
    );
    let qkv = rows
        .iter()
        .find(|r| cell(&header, r, "op") == "qkv")
        .unwrap();
    assert_eq!(cell(&header, qkv, "count"), "80");
    assert_eq!(cell(&header, qkv, "kind"), "gemm");
}

#[test]
fn run_json_is_one_object_with_ops() {
    let text = stdout_of(&[
        "run", "gemm", "--chip", "h100-sxm", "--per-op", "--format", "json",
    ]);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["flops"].as_f64(), Some(2.0 * 8192f64.powi(3)));
    assert_eq!(value["ops"][0]["bound"], "compute");
    assert_eq!(value["m"].as_f64(), Some(8192.0));
}

#[test]
fn tables_are_human_scaled() {
    let text = stdout_of(&[
        "run", "gemm", "--chip", "h100-sxm", "--per-op", "--mode", "roofline",
    ]);
    assert!(text.contains("1.11 ms"), "{text}");
    assert!(text.contains("403 MB"), "{text}");
    assert!(text.contains("1.10 TFLOP"), "{text}");
    let chips = stdout_of(&["chips"]);
    assert!(
        chips.contains("h100-sxm") && chips.contains("295"),
        "{chips}"
    );
}

#[test]
fn out_writes_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.csv");
    stepcost()
        .args(["run", "gemv", "--chip", "h200", "--format", "csv", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    let (header, rows) = csv_rows(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(cell(&header, &rows[0], "chip"), "h200");
}

#[test]
fn check_accepts_every_shipped_file() {
    let root = env!("CARGO_MANIFEST_DIR");
    for dir in ["hardware", "workloads", "workloads/templates"] {
        for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "yaml") {
                continue;
            }
            stepcost()
                .arg("check")
                .arg(&path)
                .assert()
                .success()
                .stdout(predicate::str::starts_with("ok: "));
        }
    }
}

#[test]
fn help_documents_the_options() {
    let text = stdout_of(&["run", "--help"]);
    for option in [
        "--chip", "--set", "--dtype", "--fusion", "--mode", "--per-op", "--format", "--out",
    ] {
        assert!(text.contains(option), "{option}");
    }
}

/// The book's lists of built-in chips and workloads, and the command line's help, name every
/// file that is built in.
#[test]
fn book_and_help_list_every_built_in_file() {
    let chapter = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/book/src/built-in-files.md"
    );
    let section = std::fs::read_to_string(chapter).unwrap();
    let help = stepcost().arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    for id in stepcost::chip::builtin().chain(stepcost::workload::builtin()) {
        assert!(
            section.contains(&format!("`{id}`")),
            "docs/book/src/built-in-files.md does not list `{id}`"
        );
        assert!(help.contains(id), "--help does not list `{id}`");
    }
}
