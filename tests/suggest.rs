//! "Did you mean" for every kind of name, the pointer from `run` to `compare`, and the refusal
//! of a derived param.

use predicates::prelude::*;

use crate::common::stepcost;

/// Runs stepcost with `args`, expects exit 1, nothing on stdout, and each of `messages` on
/// stderr.
fn refused(args: &[&str], messages: &[&str]) {
    let mut assert = stepcost()
        .args(args)
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty());
    for message in messages {
        assert = assert.stderr(predicate::str::contains(*message));
    }
}

#[test]
fn a_workload_typed_without_its_punctuation_is_found_by_its_tokens() {
    // `llama-2-70b` is as few edits away as `llama-3.1-70b`; only the second holds the tokens
    // `llama`, `3`, `70`, `b` in order.
    refused(
        &["run", "llama3-70b", "--chip", "h200"],
        &["unknown workload `llama3-70b` (did you mean `llama-3.1-70b`?)"],
    );
    refused(
        &["run", "qwen3-235b", "--chip", "h200"],
        &["(did you mean `qwen3-235b-a22b`?)"],
    );
}

#[test]
fn chips_params_plans_and_columns_get_the_closest_name() {
    refused(
        &["run", "llama-3.1-8b", "--chip", "mi300"],
        &["(did you mean `mi300x`?)"],
    );
    refused(
        &[
            "run",
            "llama-3.1-8b",
            "--chip",
            "h200",
            "--set",
            "contxt=1024",
        ],
        &["has no param `contxt` (did you mean `context`?)"],
    );
    refused(
        &["run", "llama-3.1-8b", "--chip", "h200", "--fusion", "flsh"],
        &["has no fusion plan `flsh` (did you mean `flash`?)"],
    );
    refused(
        &[
            "run",
            "llama-3.1-8b",
            "--chip",
            "h200",
            "--format",
            "csv",
            "--columns",
            "chip,tokens_per_chip",
        ],
        &["--columns: no column `tokens_per_chip` (did you mean `tokens_per_s_per_chip`?)"],
    );
}

const WORKLOAD: &str = "\
name: tiny
params: {m: 64, n: 128, k: 256, half: k / 2}
tensors:
  x: {role: activation, shape: [m, k]}
blocks:
  - name: b
    ops:
      - gemm: {name: g, of: x, m: m, n: n, k: k}
fusion:
  none: []
";

#[test]
fn tensors_and_op_kinds_in_a_workload_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_owned()
    };
    let tensor = path("tensor.yaml", &WORKLOAD.replace("of: x,", "of: xx,"));
    refused(
        &["check", &tensor],
        &["unknown tensor or op `xx` (did you mean `x`?)"],
    );
    let kind = path("kind.yaml", &WORKLOAD.replace("- gemm:", "- gemmm:"));
    refused(
        &["check", &kind],
        &[
            "kind.yaml:8:9:",
            "unknown op kind `gemmm` (did you mean `gemm`?); op kinds: gemm, gemv, kv_read",
        ],
    );
    // Serde's own words are gone.
    stepcost()
        .args(["check", &kind])
        .assert()
        .stderr(predicate::str::contains("variant").not());
}

#[test]
fn run_with_several_chips_points_to_compare() {
    refused(
        &["run", "llama-3.1-8b", "--chip", "h200,b200"],
        &[
            "`run` prices one chip",
            "`stepcost compare llama-3.1-8b --chip h200,b200`",
        ],
    );
}

#[test]
fn a_derived_param_is_refused_with_what_to_set_instead() {
    refused(
        &["run", "llama-3.1-70b", "--chip", "h200", "--set", "ffn_local=7168"],
        &["param `ffn_local` of workload `llama-3.1-70b` is derived from `ffn`, `tp` (`ffn_local: ffn / tp`)", "set `ffn` or `tp` instead"],
    );
    refused(
        &[
            "sweep",
            "llama-3.1-70b",
            "--chip",
            "h200",
            "--set",
            "q_heads=8,16",
        ],
        &["param `q_heads`", "is derived from `heads`, `tp`"],
    );
    // The params it follows can be set, and the derived one follows: tp=4 splits the FFN.
    stepcost()
        .args([
            "run",
            "llama-3.1-70b",
            "--chip",
            "h200",
            "--set",
            "tp=4",
            "--format",
            "csv",
        ])
        .args(["--columns", "ffn_local,q_heads"])
        .assert()
        .success()
        .stdout("ffn_local,q_heads\n7168,16\n");
}
