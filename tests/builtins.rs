//! `stepcost workloads` (the built-in workloads with parameter counts recomputed by hand
//! from the published shapes, docs/sources.md M8) and `stepcost show` (the shipped files,
//! byte for byte).

use std::path::Path;

use crate::common::{cell, csv_rows, stepcost};

/// `stepcost workloads --format csv` as (header, rows).
fn listed() -> (Vec<String>, Vec<Vec<String>>) {
    let out = stepcost()
        .args(["workloads", "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    csv_rows(&String::from_utf8(out.stdout).unwrap())
}

/// The numbers of `column` in the row of `workload`.
fn number(listed: &(Vec<String>, Vec<Vec<String>>), workload: &str, column: &str) -> f64 {
    let (header, rows) = listed;
    let row = rows
        .iter()
        .find(|r| cell(header, r, "workload") == workload)
        .unwrap_or_else(|| panic!("no row for {workload}"));
    cell(header, row, column).parse().unwrap()
}

fn text<'a>(listed: &'a (Vec<String>, Vec<Vec<String>>), workload: &str, column: &str) -> &'a str {
    let (header, rows) = listed;
    let row = rows
        .iter()
        .find(|r| cell(header, r, "workload") == workload)
        .unwrap();
    cell(header, row, column)
}

#[test]
fn llama_3_1_70b_counts_as_its_shapes_say() {
    // Hidden 8192, 80 layers, 64 query and 8 KV heads of 128, FFN 28672, vocab 128256, untied
    // embeddings (M1, M2c): per layer q and o 8192^2, k and v 8192 x 1024, gate, up and down
    // 8192 x 28672, two norms of 8192; the embedding and lm_head 128256 x 8192; a final norm.
    let (h, layers, ffn, vocab, kv) = (8192.0, 80.0, 28672.0, 128256.0, 1024.0);
    let layer = 2.0 * h * h + 2.0 * h * kv + 3.0 * h * ffn + 2.0 * h;
    let total = layers * layer + 2.0 * vocab * h + h;
    let list = listed();
    assert_eq!(number(&list, "llama-3.1-70b", "total_params"), total);
    // 70.554B (M8)
    assert!((total / 70.554e9 - 1.0).abs() < 1e-4);
    // A decode step reads one row of the input embedding, every other weight whole.
    let active = total - vocab * h + h;
    assert_eq!(number(&list, "llama-3.1-70b", "active_params"), active);
    assert_eq!(number(&list, "llama-3.1-70b", "layers"), 80.0);
    assert_eq!(number(&list, "llama-3.1-70b", "hidden"), 8192.0);
    assert_eq!(text(&list, "llama-3.1-70b", "kind"), "model");
    assert_eq!(text(&list, "llama-3.1-70b", "weight_dtype"), "bf16");
}

#[test]
fn mixtures_of_experts_read_top_k_experts_per_token() {
    let list = listed();
    let close = |workload: &str, column: &str, expected: f64, rel: f64| {
        let counted = number(&list, workload, column);
        assert!(
            (counted / expected - 1.0).abs() < rel,
            "{workload} {column}: {counted} vs {expected}"
        );
    };
    // M8: DeepSeek-V3 671.026B in all, 37.552B active with the input embedding (vocab 129280
    // x hidden 7168), of which a token reads one row.
    close("deepseek-v3", "total_params", 671.026e9, 1e-4);
    close(
        "deepseek-v3",
        "active_params",
        37.552e9 - 129280.0 * 7168.0 + 7168.0,
        1e-4,
    );
    // gpt-oss-120b: 116.829B with biases and sinks, which the workload leaves out (about 40M,
    // 0.03 %); 5.133B active without the input embedding.
    close("gpt-oss-120b", "total_params", 116.829e9, 5e-4);
    close("gpt-oss-120b", "active_params", 5.133e9, 1e-3);
    // Mixtral-8x7B: 46.703B, 12.880B active with the input embedding (32000 x 4096).
    close("mixtral-8x7b", "total_params", 46.703e9, 1e-4);
    close(
        "mixtral-8x7b",
        "active_params",
        12.880e9 - 32000.0 * 4096.0 + 4096.0,
        1e-3,
    );
    // Qwen3-235B-A22B: 235.094B, 22.191B active with the input embedding (151936 x 4096).
    close(
        "qwen3-235b-a22b",
        "active_params",
        22.191e9 - 151936.0 * 4096.0 + 4096.0,
        1e-3,
    );
    assert_eq!(
        text(&list, "gpt-oss-120b", "weight_groups"),
        "experts.weight=mxfp4"
    );
}

#[test]
fn tied_embeddings_are_read_whole_by_the_head() {
    // Gemma-2's lm_head is its embedding table: a decode step reads all of it.
    let list = listed();
    let total = number(&list, "gemma-2-27b", "total_params");
    assert_eq!(number(&list, "gemma-2-27b", "active_params"), total);
    assert!((total / 27.227e9 - 1.0).abs() < 1e-4);
}

#[test]
fn kernels_are_listed_apart_with_their_own_weights() {
    let list = listed();
    for kernel in [
        "gemm",
        "gemv",
        "copy",
        "dot",
        "triad",
        "elementwise",
        "attention-prefill",
        "attention-decode",
    ] {
        assert_eq!(text(&list, kernel, "kind"), "kernel", "{kernel}");
        assert_eq!(text(&list, kernel, "layers"), "", "{kernel}");
    }
    // gemm's implied right-hand matrix, k x n = 8192 x 8192; the streaming kernels have none.
    assert_eq!(number(&list, "gemm", "total_params"), 8192.0 * 8192.0);
    assert_eq!(number(&list, "triad", "total_params"), 0.0);
    // Models come first, then kernels.
    let (header, rows) = &list;
    let kinds: Vec<&str> = rows.iter().map(|r| cell(header, r, "kind")).collect();
    let first_kernel = kinds.iter().position(|k| *k == "kernel").unwrap();
    assert!(kinds[first_kernel..].iter().all(|k| *k == "kernel"));
    assert_eq!(rows.len(), first_kernel + 8);
}

#[test]
fn the_table_has_a_section_per_kind_and_json_a_row_per_workload() {
    let out = stepcost().arg("workloads").output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    let models = table.find("│ models").unwrap();
    let kernels = table.find("│ kernels").unwrap();
    assert!(models < table.find("llama-3.1-70b").unwrap());
    assert!(kernels < table.find("triad").unwrap());
    assert!(table.contains("70.55B"));
    let out = stepcost()
        .args(["workloads", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), listed().1.len());
    let gemv = rows.iter().find(|r| r["workload"] == "gemv").unwrap();
    assert_eq!(gemv["total_params"], 8192.0 * 8192.0);
}

/// Every YAML file in `dir` of the crate, by stem.
fn shipped(dir: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files
}

fn show(args: &[&str]) -> Vec<u8> {
    let out = stepcost().arg("show").args(args).output().unwrap();
    assert!(out.status.success(), "show {args:?}");
    out.stdout
}

#[test]
fn show_prints_every_shipped_file_byte_for_byte() {
    for (stem, bytes) in shipped("hardware") {
        assert_eq!(show(&["chip", &stem]), bytes, "hardware/{stem}.yaml");
    }
    for (stem, bytes) in shipped("workloads") {
        assert_eq!(show(&["workload", &stem]), bytes, "workloads/{stem}.yaml");
    }
    for (stem, bytes) in shipped("workloads/templates") {
        assert_eq!(show(&["template", &stem]), bytes, "templates/{stem}.yaml");
        let path = format!("templates/{stem}");
        assert_eq!(show(&["workload", &path]), bytes, "{path}");
    }
}

#[test]
fn show_writes_out_a_file_that_loads() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.yaml");
    stepcost()
        .args(["show", "workload", "llama-3.1-8b", "--out"])
        .arg(&file)
        .assert()
        .success()
        .stdout("");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/llama-3.1-8b.yaml");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        std::fs::read(shipped).unwrap()
    );
    // The copy is a workload file like any other.
    stepcost().args(["check"]).arg(&file).assert().success();
}

#[test]
fn show_names_the_closest_and_every_built_in() {
    let out = stepcost()
        .args(["show", "workload", "llama3-70b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("did you mean `llama-3.1-70b`?"), "{err}");
    assert!(err.contains("templates/dense"), "{err}");
    let out = stepcost().args(["show", "chip", "h2000"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("did you mean `h200`?"), "{err}");
    assert!(err.contains("mi300x"), "{err}");
    assert!(out.stdout.is_empty());
}
