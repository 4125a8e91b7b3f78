//! The row filter (`--where`) against a sweep CSV whose rows are known by construction, and
//! `plot sweep`'s use of it.

use std::collections::BTreeSet;

use predicates::prelude::*;
use stepcost::internals::export::filter::{Filter, Kind};

use crate::common::{csv_rows, stepcost};

/// 2 chips x batch 1, 2, 4, 8 x context 1024, 8192 x weight bf16, fp8: 32 rows, in that order.
fn sweep_csv() -> String {
    let out = stepcost()
        .args([
            "sweep",
            "llama-3.1-8b",
            "--chip",
            "h100-sxm,h200",
            "--quiet",
        ])
        .args(["--set", "batch=1,2,4,8", "--set", "context=1024,8192"])
        .args(["--dtype", "weight=bf16,fp8"])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// (chip, batch, context, weight type) of the rows of `csv` that pass `text`.
fn passing(csv: &str, text: &str) -> BTreeSet<(String, u32, u32, String)> {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let filter = Filter::compile(text, header.iter().map(|h| (h, Kind::Any))).unwrap();
    let (names, _) = csv_rows(csv);
    let at = |c: &str| names.iter().position(|n| n == c).unwrap();
    let mut rows = BTreeSet::new();
    for record in reader.records() {
        let record = record.unwrap();
        if filter.matches(&record).unwrap() {
            rows.insert((
                record[at("chip")].to_owned(),
                record[at("batch")].parse().unwrap(),
                record[at("context")].parse().unwrap(),
                record[at("weight_dtype")].to_owned(),
            ));
        }
    }
    rows
}

fn row(chip: &str, batch: u32, context: u32, weight: &str) -> (String, u32, u32, String) {
    (chip.to_owned(), batch, context, weight.to_owned())
}

#[test]
fn a_filter_keeps_the_rows_written_out_by_hand() {
    let csv = sweep_csv();
    assert_eq!(csv_rows(&csv).1.len(), 32);
    let expected: BTreeSet<_> = [row("h200", 4, 8192, "fp8"), row("h200", 8, 8192, "fp8")].into();
    let text = r#"chip == "h200" && context == 8192 && weight_dtype == "fp8" && batch >= 4"#;
    assert_eq!(passing(&csv, text), expected);
    // `||` below `&&`: every batch-1 row (8 of them) and the two rows above.
    let either = format!("batch == 1 || ({text})");
    let mut with_ones = expected.clone();
    for chip in ["h100-sxm", "h200"] {
        for context in [1024, 8192] {
            for weight in ["bf16", "fp8"] {
                with_ones.insert(row(chip, 1, context, weight));
            }
        }
    }
    assert_eq!(passing(&csv, &either), with_ones);
    // No --request: `ttft_ms` is empty in every row, and a comparison with it is false.
    assert!(passing(&csv, "ttft_ms < 1e9 || ttft_ms >= 1e9").is_empty());
    assert_eq!(passing(&csv, "!(ttft_ms < 1e9)").len(), 32);
}

#[test]
fn plot_sweep_draws_only_the_rows_that_pass() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    std::fs::write(&csv, sweep_csv()).unwrap();
    let plot = |filter: &str| {
        stepcost()
            .args(["plot", "sweep"])
            .arg(&csv)
            .args([
                "--x",
                "batch",
                "--y",
                "tokens_per_s",
                "--series",
                "chip,weight_dtype",
            ])
            .args(["--where", filter])
            .output()
            .unwrap()
    };
    // 2 chips x 2 weight types x batch 1, 2 at context 1024: 8 points on 4 lines.
    let out = plot("context == 1024 && batch <= 2");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = String::from_utf8(out.stdout).unwrap();
    assert_eq!(svg.matches("<circle").count(), 8);
    for label in ["h100-sxm, bf16", "h100-sxm, fp8", "h200, bf16", "h200, fp8"] {
        assert!(svg.contains(label), "{label}");
    }
    // The title names what the plotted rows share: the workload and the context, not the
    // chips (a series) or the batch (the axis).
    assert!(svg.contains("llama-3.1-8b, expected, fusion=flash, activation_dtype=bf16, kv_dtype=bf16, tokens=1, context=1024"));
}

#[test]
fn plot_sweep_names_a_bad_filter() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    std::fs::write(&csv, sweep_csv()).unwrap();
    let refused = |filter: &str, message: &str| {
        stepcost()
            .args(["plot", "sweep"])
            .arg(&csv)
            .args(["--x", "batch", "--y", "tokens_per_s", "--where", filter])
            .assert()
            .code(1)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(message));
    };
    refused(
        "contxt == 1024",
        "no column `contxt` (did you mean `context`?)",
    );
    refused(
        "chip > 3",
        "row 2: --where `chip > 3`: cannot compare text with a number",
    );
    refused(
        "batch = 1",
        "`=` alone is not an operator; did you mean `==`?",
    );
    refused("batch > 1e6", "no row that fits and passes --where");
}
