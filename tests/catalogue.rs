//! The catalogue of bad inputs under `tests/bad/`: every file is refused with exit status 1,
//! a message that names the file (and the line and field where there is one), nothing on
//! stdout and no output file, within loose bounds of time and memory.
//!
//! The command depends on the folder: `chip/F` runs `run gemm --chip F`, `workload/F` runs
//! `run F --chip h100-sxm`, `cases/F` runs `validate F`, `config/F` runs `import F`, and
//! `cli/F.args` holds one command line, an argument a line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use predicates::prelude::*;

/// Every catalogue file and what its message must contain, besides the file's name.
const CATALOGUE: &[(&str, &[&str])] = &[
    ("chip/alias-bomb.yaml", &[":1:1:", "unknown field `a`"]),
    ("chip/deep-nesting.yaml", &[":1:7:", "expected string"]),
    (
        "chip/duplicate-key.yaml",
        &[":7:3:", "duplicate mapping key: bf16"],
    ),
    ("chip/empty.yaml", &[":1:1:", "unexpected end of input"]),
    (
        "chip/mesh-without-link.yaml",
        &[
            ":8:11:",
            "field `interconnect.link_bandwidth`",
            "a `mesh` fabric needs",
        ],
    ),
    (
        "chip/unknown-fabric.yaml",
        &[
            ":8:11:",
            "field `interconnect.fabric`",
            "`ring` is not a fabric",
        ],
    ),
    (
        "chip/huge-peak.yaml",
        &[":6:9:", "field `matrix.bf16`", "finite number"],
    ),
    (
        "chip/infinite-capacity.yaml",
        &[":3:13:", "field `memory.capacity`"],
    ),
    ("chip/invalid-utf8.yaml", &["not UTF-8", "offset 11"]),
    ("chip/nan-peak.yaml", &[":6:9:", "field `matrix.bf16`"]),
    (
        "chip/negative-bandwidth.yaml",
        &[":4:14:", "field `memory.bandwidth`", "greater than zero"],
    ),
    ("chip/not-a-mapping.yaml", &[":1:1:", "expected mapping"]),
    ("chip/nul-byte.yaml", &[":1:11:", "unexpected character"]),
    ("chip/tabs.yaml", &[":3:2:", "tabs"]),
    ("chip/truncated.yaml", &["missing field `matrix`"]),
    (
        "chip/unknown-field.yaml",
        &[":9:1:", "unknown field `bandwith`"],
    ),
    (
        "chip/unknown-unit.yaml",
        &[":4:14:", "unknown unit `furlongs`"],
    ),
    (
        "chip/unsupported-everything.yaml",
        &["field `matrix`", "no data type with a peak"],
    ),
    (
        "chip/wrong-type-capacity.yaml",
        &[":3:13:", "expected string"],
    ),
    ("chip/zero-bandwidth.yaml", &[":4:14:", "greater than zero"]),
    ("workload/alias-bomb.yaml", &[":1:1:", "unknown field `x`"]),
    (
        "workload/alias-bomb-in-a-field.yaml",
        &[":3:3:", "expected string"],
    ),
    ("workload/cycle.yaml", &[":11:22:", "cycle: proj -> act"]),
    (
        "workload/deep-expression.yaml",
        &[":11:40:", "gemm.m", "nested more than 64 levels"],
    ),
    ("workload/deep-nesting.yaml", &[":1:7:", "expected string"]),
    (
        "workload/division-by-zero.yaml",
        &[":11:40:", "division by zero"],
    ),
    (
        "workload/duplicate-key.yaml",
        &[":4:3:", "duplicate mapping key: batch"],
    ),
    (
        "workload/element-overflow.yaml",
        &[":11:22:", "op `proj`", "overflow"],
    ),
    ("workload/empty.yaml", &[":1:1:", "unexpected end of input"]),
    ("workload/huge-param.yaml", &[":11:22:", "overflow"]),
    ("workload/invalid-utf8.yaml", &["not UTF-8", "offset 11"]),
    (
        "workload/long-expression.yaml",
        &[":11:40:", "the limit is 4096"],
    ),
    (
        "workload/nan-param.yaml",
        &[":3:10:", "field `params.batch`", "not a number"],
    ),
    (
        "workload/negative-repeat.yaml",
        &[":9:13:", "field `blocks[0].repeat`", "whole number"],
    ),
    (
        "workload/negative-shape.yaml",
        &[":6:40:", "tensors.x.shape[1]", "greater than zero"],
    ),
    (
        "workload/nul-byte.yaml",
        &[":8:13:", "unexpected character"],
    ),
    (
        "workload/overflowing-expression.yaml",
        &[":11:40:", "not a finite number (overflow)"],
    ),
    ("workload/repeat-1e15.yaml", &[":9:13:", "from 0 to 1e9"]),
    ("workload/truncated.yaml", &[":8:5:"]),
    (
        "workload/undefined-param.yaml",
        &[
            ":11:50:",
            "undefined param `hiden`",
            "did you mean `hidden`",
        ],
    ),
    (
        "workload/unknown-op-kind.yaml",
        &[":12:9:", "unknown op kind `convolution`; op kinds: gemm,"],
    ),
    (
        "workload/unknown-stage.yaml",
        &[
            ":9:12:",
            "field `blocks[0].stage`",
            "expected first or last",
        ],
    ),
    (
        "workload/span-below-group.yaml",
        &[":12:87:", "allreduce.span", "a span holds its group"],
    ),
    (
        "workload/zero-micro-batches.yaml",
        &[":6:18:", "params.micro_batches", "at least 1"],
    ),
    (
        "workload/unknown-tensor.yaml",
        &[":12:38:", "unknown tensor or op `porj`"],
    ),
    (
        "workload/wrong-type-repeat.yaml",
        &[":9:13:", "undefined param `twice`"],
    ),
    (
        "cases/bad-measured.csv",
        &[":2:", "field `measured`", "`fast`"],
    ),
    ("cases/empty.csv", &[":1:", "missing columns"]),
    ("cases/header-only-wrong.csv", &[":1:", "missing columns"]),
    ("cases/invalid-utf8.csv", &["not UTF-8"]),
    (
        "cases/negative-measured.csv",
        &[":2:", "field `measured`", "`-5`"],
    ),
    ("cases/ragged-row.csv", &[":2:", "3 fields"]),
    (
        "cases/request-too-large.csv",
        &[":2:", "field `request`", "out of range", "10^9"],
    ),
    (
        "cases/serving-nan-rate.csv",
        &[":2:", "field `params`", "`rate=NaN`", "requests/s"],
    ),
    (
        "cases/serving-no-load.csv",
        &[":2:", "field `params`", "concurrency=N", "rate=R"],
    ),
    (
        "cases/tp-too-large.csv",
        &[":2:", "field `tp`", "from 1 to 10^6"],
    ),
    (
        "cases/unknown-chip.csv",
        &["1 of 1 cases", "could not be priced"],
    ),
    (
        "cases/unknown-metric.csv",
        &[":2:", "unknown metric `speed`"],
    ),
    (
        "cases/unknown-library.csv",
        &[":2:", "field `library`", "`cublas`", "cublaslt, cutlass"],
    ),
    (
        "cases/engine-without-version.csv",
        &[":2:", "field `version`", "or `unknown`"],
    ),
    (
        "cases/stack-columns-partly.csv",
        &[":1:", "missing columns: version, harness"],
    ),
    ("config/deep-nesting.json", &[":1:156:", "recursion limit"]),
    (
        "config/huge-number.json",
        &[":1:44:", "number out of range"],
    ),
    (
        "config/missing-field.json",
        &["field `num_hidden_layers`", "missing"],
    ),
    (
        "config/negative-layers.json",
        &["field `num_hidden_layers`", "non-negative"],
    ),
    ("config/not-json.json", &[":1:1:", "not a JSON config"]),
    ("config/truncated.json", &[":1:59:", "EOF"]),
    (
        "config/unknown-model-type.json",
        &["field `model_type`", "`mamba`"],
    ),
    (
        "config/wrong-type.json",
        &["field `hidden_size`", "\"big\""],
    ),
    ("cli/bad-range.args", &["the range ends before it starts"]),
    ("cli/huge-set.args", &["op `gate_up`", "overflow"]),
    ("cli/inf-set.args", &["`batch=inf`", "finite number"]),
    ("cli/nan-set.args", &["`batch=NaN`", "finite number"]),
    ("cli/negative-batch.args", &["tensors.x.shape[0]", "is -1"]),
    (
        "cli/plot-unknown-column.args",
        &["no column `batch`", "its columns: a, b, c"],
    ),
    ("cli/range-step-zero.args", &["a step is `:+N`"]),
    ("cli/report-bad-extension.args", &["FILE.md or FILE.html"]),
    (
        "cli/sweep-1e12-scenarios.args",
        &["1000000000000 scenarios", "--max-scenarios"],
    ),
    (
        "cli/unknown-chip.args",
        &["unknown chip `h100-sxn`", "did you mean `h100-sxm`"],
    ),
    ("cli/unknown-dtype.args", &["unknown data type `fp7`"]),
    (
        "cli/unknown-fusion.args",
        &["no fusion plan `flsh`", "did you mean `flash`"],
    ),
    (
        "cli/unknown-param.args",
        &["no param `mm`", "did you mean `m`"],
    ),
];

fn catalogue_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad")
}

/// Runs stepcost with `args` in `dir` under an address-space limit, and asserts a clean
/// refusal in bounded time whose message contains each of `expected`.
fn refused(dir: &Path, args: &[String], expected: &[&str]) {
    // 4 GiB of address space (rayon's thread stacks included) and 20 s are far beyond what a
    // refusal needs; a blow-up of either fails the test instead of the machine.
    let mut cmd = assert_cmd::Command::new("bash");
    cmd.current_dir(dir)
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(assert_cmd::cargo::cargo_bin("stepcost"))
        .args(args)
        .timeout(Duration::from_secs(20));
    let mut assert = cmd.assert().code(1);
    for text in expected {
        assert = assert.stderr(predicate::str::contains(*text));
    }
}

#[test]
fn every_catalogue_file_is_refused_with_its_message() {
    let dir = catalogue_dir();
    let out = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for (file, expected) in CATALOGUE {
        let (kind, name) = file.split_once('/').unwrap();
        let out_file = out.path().join(format!("{name}.out"));
        let out_arg = out_file.to_str().unwrap().to_owned();
        let (cwd, args): (PathBuf, Vec<String>) = match kind {
            "chip" => (
                dir.clone(),
                ["run", "gemm", "--chip", file, "--out", &out_arg]
                    .map(String::from)
                    .to_vec(),
            ),
            "workload" => (
                dir.clone(),
                ["run", file, "--chip", "h100-sxm", "--out", &out_arg]
                    .map(String::from)
                    .to_vec(),
            ),
            "cases" => (dir.clone(), ["validate", file].map(String::from).to_vec()),
            "config" => (
                dir.clone(),
                ["import", file, "--out", &out_arg]
                    .map(String::from)
                    .to_vec(),
            ),
            "cli" => {
                let text = std::fs::read_to_string(dir.join(file)).unwrap();
                (dir.join("cli"), text.lines().map(String::from).collect())
            }
            _ => panic!("unknown catalogue folder `{kind}`"),
        };
        let mut expected = expected.to_vec();
        if kind != "cli" {
            expected.push(name);
        }
        refused(&cwd, &args, &expected);
        assert!(!out_file.exists(), "{file}: an output file was left behind");
        seen += 1;
    }
    assert!(seen >= 40);
}

#[test]
fn every_file_in_the_catalogue_folder_is_listed() {
    let dir = catalogue_dir();
    for kind in ["chip", "workload", "cases", "config", "cli"] {
        for entry in std::fs::read_dir(dir.join(kind)).unwrap() {
            let name = format!("{kind}/{}", entry.unwrap().file_name().to_string_lossy());
            assert!(
                CATALOGUE.iter().any(|(f, _)| *f == name),
                "{name} has no entry in CATALOGUE"
            );
        }
    }
}

/// A 100 MB file is refused by its size before it is read.
#[test]
fn a_100_mb_file_is_refused_by_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.yaml");
    let line = "# padding\n".repeat(1024);
    let mut text = String::with_capacity(100 << 20);
    while text.len() < 100 << 20 {
        text.push_str(&line);
    }
    std::fs::write(&path, text).unwrap();
    let args = [
        "run".to_owned(),
        "gemm".into(),
        "--chip".into(),
        path.to_str().unwrap().into(),
    ];
    refused(
        dir.path(),
        &args,
        &["huge.yaml", "the limit is 16777216 bytes"],
    );
}

/// Each limit moves with its environment variable, and a bad value names the variable.
#[test]
fn limits_move_with_their_variables() {
    let dir = tempfile::tempdir().unwrap();
    let chip = Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware/h100-sxm.yaml");
    crate::common::stepcost()
        .env("STEPCOST_MAX_FILE_BYTES", "100")
        .args(["run", "gemm", "--chip"])
        .arg(&chip)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("the limit is 100 bytes"));
    crate::common::stepcost()
        .env("STEPCOST_MAX_FILE_BYTES", "lots")
        .args(["run", "gemm", "--chip"])
        .arg(&chip)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("STEPCOST_MAX_FILE_BYTES=lots"));

    // 70 levels of parentheses: over the default 64, under a raised 100
    let workload = dir.path().join("deep.yaml");
    let m = format!("{}batch{}", "(".repeat(70), ")".repeat(70));
    std::fs::write(
        &workload,
        format!(
            "name: deep\nparams: {{batch: 4, hidden: 64}}\n\
             tensors:\n  x: {{role: activation, shape: [batch, hidden]}}\n\
             blocks:\n  - name: b\n    ops:\n      - gemm: {{name: p, of: [x], m: \"{m}\", n: hidden, k: hidden}}\n"
        ),
    )
    .unwrap();
    crate::common::stepcost()
        .arg("run")
        .arg(&workload)
        .args(["--chip", "h100-sxm"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("nested more than 64 levels"));
    crate::common::stepcost()
        .env("STEPCOST_MAX_EXPR_DEPTH", "100")
        .arg("run")
        .arg(&workload)
        .args(["--chip", "h100-sxm"])
        .assert()
        .success();
}
