//! One test per class of bad input: the command exits 1, writes nothing to stdout and names
//! the file, the line and the field.

use std::path::PathBuf;

use predicates::prelude::*;
use tempfile::TempDir;

use crate::common::stepcost;

const CHIP: &str = "name: Test chip
memory:
  capacity: 80 GB
  bandwidth: 3.35 TB/s
matrix:
  bf16: 989 TFLOPS
  fp8: unsupported
vector:
  bf16: 134 TFLOPS
expected: {matrix: {bf16: 0.8}, memory: 0.9}
";

const WORKLOAD: &str = "name: Test workload
params:
  batch: 4
  hidden: 1024
tensors:
  x: {role: activation, shape: [batch, hidden]}
blocks:
  - name: layer
    repeat: 2
    ops:
      - gemm: {name: proj, of: [x], m: batch, n: hidden, k: hidden}
      - elementwise: {name: act, of: [proj], flops_per_element: 4}
";

struct Files(TempDir);

impl Files {
    fn new() -> Files {
        Files(tempfile::tempdir().unwrap())
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// Runs `run WORKLOAD --chip CHIP` on the two texts and asserts a clean failure whose message
/// contains each of `expected`.
fn rejects(workload: &str, chip: &str, expected: &[&str]) {
    let files = Files::new();
    let w = files.write("w.yaml", workload);
    let c = files.write("c.yaml", chip);
    let mut assert = stepcost()
        .arg("run")
        .arg(&w)
        .arg("--chip")
        .arg(&c)
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty());
    for text in expected {
        assert = assert.stderr(predicate::str::contains(*text));
    }
}

fn bad_workload(from: &str, to: &str, expected: &[&str]) {
    assert!(WORKLOAD.contains(from), "{from}");
    rejects(&WORKLOAD.replacen(from, to, 1), CHIP, expected);
}

fn bad_chip(from: &str, to: &str, expected: &[&str]) {
    assert!(CHIP.contains(from), "{from}");
    rejects(WORKLOAD, &CHIP.replacen(from, to, 1), expected);
}

#[test]
fn the_good_pair_runs() {
    let files = Files::new();
    let w = files.write("w.yaml", WORKLOAD);
    let c = files.write("c.yaml", CHIP);
    stepcost()
        .arg("run")
        .arg(&w)
        .arg("--chip")
        .arg(&c)
        .assert()
        .success();
}

#[test]
fn malformed_yaml() {
    bad_workload(
        "shape: [batch, hidden]}",
        "shape: [batch, hidden}",
        &["w.yaml:6:"],
    );
}

#[test]
fn unknown_field_with_the_closest_name() {
    bad_workload(
        "flops_per_element: 4",
        "flop_per_element: 4",
        &[
            "w.yaml:12:",
            "field `flop_per_element`",
            "did you mean `flops_per_element`?",
        ],
    );
    bad_chip(
        "  capacity: 80 GB",
        "  capcity: 80 GB",
        &["c.yaml:3:", "did you mean `capacity`?"],
    );
}

#[test]
fn missing_field() {
    bad_chip(
        "  bandwidth: 3.35 TB/s\n",
        "",
        &["c.yaml:", "missing field `bandwidth`"],
    );
    bad_workload(", k: hidden}", "}", &["w.yaml:11:", "missing field `k`"]);
}

#[test]
fn unknown_op_kind() {
    bad_workload(
        "- elementwise: {name: act",
        "- elementwse: {name: act",
        &[
            "w.yaml:12:",
            "unknown op kind `elementwse`",
            "did you mean `elementwise`?",
        ],
    );
}

#[test]
fn unknown_dtype() {
    bad_chip(
        "  fp8: unsupported",
        "  fp9: unsupported",
        &["c.yaml:7:", "field `matrix.fp9`", "unknown data type"],
    );
    stepcost()
        .args(["run", "gemm", "--chip", "h100-sxm", "--dtype", "weight=fp9"])
        .assert()
        .code(1) // a usage error is bad input
        .stderr(predicate::str::contains("unknown data type `fp9`"));
}

#[test]
fn unknown_role() {
    bad_workload(
        "role: activation",
        "role: activations",
        &[
            "w.yaml:6:",
            "field `tensors.x.role`",
            "unknown role `activations`",
        ],
    );
}

#[test]
fn bad_or_mismatched_unit() {
    bad_chip(
        "bandwidth: 3.35 TB/s",
        "bandwidth: 3.35 TB",
        &[
            "c.yaml:4:",
            "field `memory.bandwidth`",
            "`TB` is a unit of size, but this field is a bandwidth",
        ],
    );
    bad_chip(
        "capacity: 80 GB",
        "capacity: 80 parsecs",
        &["c.yaml:3:", "unknown unit `parsecs`"],
    );
    bad_chip(
        "capacity: 80 GB",
        "capacity: 80",
        &["c.yaml:3:", "has no unit"],
    );
}

#[test]
fn zero_negative_or_non_finite_numbers() {
    bad_chip(
        "bf16: 989 TFLOPS",
        "bf16: 0 TFLOPS",
        &["c.yaml:6:", "field `matrix.bf16`", "greater than zero"],
    );
    bad_chip(
        "bf16: 989 TFLOPS",
        "bf16: -989 TFLOPS",
        &["c.yaml:6:", "greater than zero"],
    );
    bad_chip(
        "bf16: 989 TFLOPS",
        "bf16: .nan TFLOPS",
        &["c.yaml:6:", "field `matrix.bf16`"],
    );
    bad_workload(
        "hidden: 1024",
        "hidden: 0",
        &[
            "w.yaml:6:",
            "field `tensors.x.shape[1]`",
            "must be greater than zero",
        ],
    );
    bad_workload(
        "hidden: 1024",
        "hidden: -1024",
        &["w.yaml:", "must be greater than zero"],
    );
    bad_workload("hidden: 1024", "hidden: 1e400", &["w.yaml:4:", "too large"]);
}

#[test]
fn undefined_param_in_an_expression() {
    bad_workload(
        "n: hidden, k: hidden}",
        "n: hiden, k: hidden}",
        &[
            "w.yaml:11:",
            "field `blocks[0].ops[0].gemm.n`",
            "undefined param `hiden`",
            "did you mean `hidden`?",
        ],
    );
}

#[test]
fn division_by_zero() {
    bad_workload(
        "m: batch,",
        "m: batch / (hidden - 1024),",
        &[
            "w.yaml:11:",
            "field `blocks[0].ops[0].gemm.m`",
            "division by zero",
        ],
    );
}

#[test]
fn reference_to_an_unknown_tensor_or_op() {
    bad_workload(
        "of: [proj]",
        "of: [proj2]",
        &[
            "w.yaml:12:",
            "field `blocks[0].ops[1].elementwise.of`",
            "unknown tensor or op `proj2`",
        ],
    );
}

#[test]
fn a_cycle() {
    bad_workload(
        "gemm: {name: proj, of: [x]",
        "gemm: {name: proj, of: [act]",
        &["w.yaml:", "cycle", "proj"],
    );
}

#[test]
fn unknown_chip_or_workload_name_lists_the_known_ones() {
    stepcost()
        .args(["run", "gemm", "--chip", "h100-sxn"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "unknown chip `h100-sxn` (did you mean `h100-sxm`?)",
        ))
        .stderr(predicate::str::contains("a100-80gb, b200"));
    stepcost()
        .args(["run", "lama-3.1-70b", "--chip", "h100-sxm"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown workload `lama-3.1-70b`"))
        .stderr(predicate::str::contains("llama-3.1-70b"));
}

#[test]
fn a_dtype_the_chip_lacks() {
    // fp8 is widened to the chip's 16-bit type where it has one (weight-only, W8A16); this
    // chip has none.
    let chip = CHIP
        .replace(
            "  bf16: 989 TFLOPS\n  fp8: unsupported",
            "  fp32: 67 TFLOPS\n  bf16: unsupported\n  fp8: unsupported",
        )
        .replace("matrix: {bf16: 0.8}", "matrix: {fp32: 0.8}");
    let workload = WORKLOAD.replacen(
        "params:",
        "dtypes: {weight: fp8, activation: fp8}\nparams:",
        1,
    );
    rejects(
        &workload,
        &chip,
        &[
            "op `proj` computes in fp8",
            "no fp8 support in its matrix unit",
        ],
    );
}

#[test]
fn unknown_param_and_fusion_plan_on_the_command_line() {
    stepcost()
        .args([
            "run",
            "llama-3.1-70b",
            "--chip",
            "h100-sxm",
            "--set",
            "batchsize=8",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no param `batchsize`"))
        .stderr(predicate::str::contains("batch, tokens, context"));
    stepcost()
        .args([
            "run",
            "llama-3.1-70b",
            "--chip",
            "h100-sxm",
            "--fusion",
            "flsh",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "no fusion plan `flsh` (did you mean `flash`?)",
        ));
}

#[test]
fn duplicate_keys() {
    bad_chip(
        "  fp8: unsupported",
        "  bf16: 900 TFLOPS",
        &["c.yaml:7:", "duplicate"],
    );
}

#[test]
fn check_reports_every_problem_of_a_file() {
    let files = Files::new();
    let text = WORKLOAD
        .replacen("n: hidden, k: hidden}", "n: hiden, k: hidden}", 1)
        .replacen("of: [proj]", "of: [proj2]", 1)
        .replacen("role: activation", "role: activations", 1);
    let w = files.write("w.yaml", &text);
    stepcost()
        .arg("check")
        .arg(&w)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("w.yaml:6:"))
        .stderr(predicate::str::contains("w.yaml:11:"))
        .stderr(predicate::str::contains("w.yaml:12:"));
}

#[test]
fn no_partial_output_file_on_failure() {
    let files = Files::new();
    let out = files.0.path().join("out.csv");
    stepcost()
        .args([
            "run",
            "gemm",
            "--chip",
            "a100-80gb",
            "--dtype",
            "weight=fp8",
            "--set",
            "m=0",
            "--format",
            "csv",
            "--out",
        ])
        .arg(&out)
        .assert()
        .code(1);
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(files.0.path()).unwrap().count(),
        0,
        "no temporary file is left"
    );
}
