//! Where a kernel's time comes from: `--per-op`'s `roofline_share` and `priced_by`, checked
//! against the H100 SXM datasheet (989 TFLOPS bf16 dense, the seeds' figure, and 3.35 TB/s;
//! hardware/h100-sxm.yaml and docs/sources.md) and by pricing a kernel again from the
//! constants it names.

use crate::common::{cell, csv_rows, stepcost, succeeded};

/// The `--per-op` rows of `args`, as (header, rows).
fn per_op(args: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let out = stepcost()
        .args(args)
        .args(["--per-op", "--format", "csv"])
        .output()
        .unwrap();
    csv_rows(&succeeded(out))
}

/// A `priced_by` cell as (name, value) pairs.
fn constants(text: &str) -> Vec<(String, f64)> {
    text.split(';')
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap();
            (name.to_owned(), value.parse().unwrap())
        })
        .collect()
}

fn value(constants: &[(String, f64)], name: &str) -> f64 {
    (constants.iter().find(|(n, _)| n == name))
        .unwrap_or_else(|| panic!("no `{name}` in {constants:?}"))
        .1
}

fn number(header: &[String], row: &[String], column: &str) -> f64 {
    cell(header, row, column).parse().unwrap()
}

#[test]
fn on_the_roofline_an_op_names_the_roof_it_meets() {
    // Batch 512 of Llama-3.1-8B: the projections are compute-bound, the norms memory-bound.
    let (h, rows) = per_op(&[
        "run",
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--mode",
        "roofline",
        "--set",
        "batch=512",
    ]);
    for row in &rows {
        let by = constants(cell(&h, row, "priced_by"));
        assert_eq!(
            number(&h, row, "roofline_share"),
            1.0,
            "the roofline is its own"
        );
        let time_s = number(&h, row, "time_us") * 1e-6;
        match cell(&h, row, "bound") {
            "compute" if cell(&h, row, "kind") == "gemm" => {
                assert_eq!(by.len(), 1, "{by:?}");
                let peak = value(&by, "matrix.bf16");
                assert_eq!(peak, 989e12, "the datasheet's dense bf16 peak");
                let flops = number(&h, row, "flops");
                assert!((time_s - flops / peak).abs() <= 1e-9 * time_s);
            }
            "memory" => {
                assert_eq!(by.len(), 1, "{by:?}");
                let bandwidth = value(&by, "memory.bandwidth");
                assert_eq!(bandwidth, 3.35e12);
                let bytes = number(&h, row, "bytes");
                assert!((time_s - bytes / bandwidth).abs() <= 1e-9 * time_s);
            }
            _ => {}
        }
    }
}

#[test]
fn in_expected_mode_a_stream_is_priced_again_from_the_constants_it_names() {
    let (h, rows) = per_op(&[
        "run",
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--set",
        "batch=8",
    ]);
    // The embedding gather does no arithmetic: its time is its fixed cost and its bytes at
    // the fitted share of the bandwidth, both named.
    let embed = rows.iter().find(|r| cell(&h, r, "op") == "embed").unwrap();
    let by = constants(cell(&h, embed, "priced_by"));
    let names: Vec<&str> = by.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "memory.bandwidth",
            "expected.memory",
            "expected.dram_latency"
        ]
    );
    let stream_s = number(&h, embed, "bytes")
        / (value(&by, "memory.bandwidth") * value(&by, "expected.memory"));
    let time_s = number(&h, embed, "time_us") * 1e-6;
    let fixed_s = number(&h, embed, "launch_us") * 1e-6;
    assert!((time_s - (fixed_s + stream_s)).abs() <= 1e-9 * time_s);
    // The fixed cost holds the first load's and the last store's DRAM latency.
    assert!(fixed_s >= 2.0 * value(&by, "expected.dram_latency"));
    for row in &rows {
        let share = number(&h, row, "roofline_share");
        let expected = number(&h, row, "roofline_time_us") / number(&h, row, "time_us");
        assert!((share - expected).abs() <= 1e-12, "{share} vs {expected}");
        assert!(share > 0.0 && share <= 1.0);
        // Every GEMM names the fitted fraction of the matrix peak it ran at.
        if cell(&h, row, "kind") == "gemm" {
            let by = constants(cell(&h, row, "priced_by"));
            assert!(value(&by, "expected.matrix.bf16") > 0.0);
            assert_eq!(value(&by, "matrix.bf16"), 989e12);
        }
    }
}

#[test]
fn a_collective_names_its_link() {
    let (h, rows) = per_op(&[
        "run",
        "llama-3.1-70b",
        "--chip",
        "h100-sxm",
        "--set",
        "tp=8",
    ]);
    let reduce = rows
        .iter()
        .find(|r| cell(&h, r, "op") == "attn_allreduce")
        .unwrap();
    let by = constants(cell(&h, reduce, "priced_by"));
    // NVLink 4: 900 GB/s both ways, 450 GB/s each way.
    assert_eq!(value(&by, "interconnect.bandwidth"), 450e9);
    assert!(value(&by, "interconnect.latency") > 0.0);
}
