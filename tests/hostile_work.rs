//! Hostile inputs, round two: bounded work (a sweep's memory in bytes, a grid's size from its
//! axes' lengths, error collection linear in the file) and no panic from any environment
//! (thread counts, threads that will not start, absurd limits, a full disk, a closed stderr).
//! Each case checks the exit status, the message, and that nothing but the intended file
//! changed in its folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::common::snapshot;
use crate::common::stepcost;

/// Asserts that `dir` holds what `before` held, plus `made` (if any) and nothing else.
fn only_made(dir: &Path, before: &BTreeMap<PathBuf, Vec<u8>>, made: Option<&str>) {
    let mut after = snapshot(dir);
    if let Some(name) = made {
        assert!(
            after.remove(Path::new(name)).is_some(),
            "`{name}` was not written"
        );
    }
    let names = |m: &BTreeMap<PathBuf, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&after), names(before), "files made or removed");
    assert!(
        after == *before,
        "a file other than the intended one changed"
    );
}

/// `bash -c SCRIPT stepcost ARGS...` in `dir`: the script sets limits, then runs `exec "$0" "$@"`
/// (the stepcost binary with its arguments).
fn under_bash(dir: &Path, script: &str, args: &[&str]) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new("bash");
    cmd.current_dir(dir)
        .env("RAYON_NUM_THREADS", "2")
        .arg("-c")
        .arg(script)
        .arg(assert_cmd::cargo::cargo_bin("stepcost"))
        .args(args)
        .timeout(Duration::from_secs(120));
    cmd
}

/// `stepcost args` in `dir` under a 1 GiB address-space limit: it must refuse with exit 1 and
/// `message`, whatever the sweep would have needed.
fn refused_in_1_gib(dir: &Path, args: &[&str], message: &str) {
    under_bash(dir, "ulimit -v 1048576 && exec \"$0\" \"$@\"", args)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(message));
}

/// A workload with `params` params besides the gemm's `m`, `n` and `k`: `p00000: 1.0000...`,
/// each value 18 characters, so that every row carries about 19 bytes per param.
fn wide_workload(params: usize) -> String {
    let mut text = String::from("name: wide\nparams:\n");
    for i in 0..params {
        text.push_str(&format!("  p{i:05}: {:.16}\n", 1.0 + i as f64 / 30001.0));
    }
    text.push_str(
        "  m: 8\n  n: 8\n  k: 8\ntensors:\n  a: {role: activation, shape: [m, k]}\n\
         blocks:\n  - name: kernel\n    ops:\n      - gemm: {name: gemm, of: [a], m: m, n: n, k: k}\n",
    );
    text
}

/// Defect 6: a chunk was a fixed number of rows however wide, so 350 rows of 30,000 params
/// (200 MB) were held at once and the allocation aborted. Chunks are now sized in bytes: the
/// whole sweep fits in 128 MiB of address space, under two thirds of what it writes.
#[test]
fn a_sweep_of_wide_rows_runs_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let workload = wide_workload(30_000);
    assert!(workload.len() < 1 << 20, "a file well within every limit");
    std::fs::write(dir.path().join("wide.yaml"), &workload).unwrap();
    let before = snapshot(dir.path());
    let args = [
        "sweep",
        "wide.yaml",
        "--chip",
        "h100-sxm",
        "--set",
        "m=1..=350",
        "--out",
        "out.csv",
    ];
    // glibc reserves 64 MiB of address space for each thread's malloc arena, which a limit of
    // 128 MiB cannot hold twice: with one arena, the limit measures the sweep's own memory
    // (about 55 MB at peak) rather than whether a second arena happened to be made.
    under_bash(dir.path(), "ulimit -v 131072 && exec \"$0\" \"$@\"", &args)
        .env("MALLOC_ARENA_MAX", "1")
        .assert()
        .code(0);
    let out = std::fs::read(dir.path().join("out.csv")).unwrap();
    assert!(out.len() > 190_000_000, "{} bytes", out.len());
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 351);
    assert!(out.starts_with(b"workload,chip,engine,mode,fusion,"));
    only_made(dir.path(), &before, Some("out.csv"));
}

/// Defect 7: each `--set` axis was expanded before the grid's size was checked, so 20 axes of
/// 10^7 values took 1.6 GB and aborted. The size now comes from the axes' lengths alone.
#[test]
fn many_axes_are_refused_by_their_lengths_before_any_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let mut workload = String::from("name: many\nparams:\n");
    for i in 0..20 {
        workload.push_str(&format!("  p{i}: 1\n"));
    }
    workload.push_str(
        "tensors:\n  x: {role: activation, shape: [p0]}\n\
         blocks:\n  - name: b\n    ops:\n      - elementwise: {name: e, of: [x], flops_per_element: 1}\n",
    );
    std::fs::write(dir.path().join("many.yaml"), workload).unwrap();
    let before = snapshot(dir.path());
    let sets: Vec<String> = (0..20).map(|i| format!("p{i}=1..=10000000")).collect();
    let mut args = vec![
        "sweep",
        "many.yaml",
        "--chip",
        "h100-sxm",
        "--out",
        "out.csv",
    ];
    for set in &sets {
        args.extend(["--set", set]);
    }
    let start = Instant::now();
    refused_in_1_gib(
        dir.path(),
        &args,
        "the sweep has more than 2^64 scenarios, more than --max-scenarios 100000000",
    );
    assert!(start.elapsed() < Duration::from_secs(60));
    // Within 2^64: the count is exact.
    let args = [
        "sweep",
        "many.yaml",
        "--chip",
        "h100-sxm",
        "--out",
        "out.csv",
        "--set",
        "p0=1..=10000000",
        "--set",
        "p1=1..=10000000:+1",
        "--set",
        "p2=0.5..=1e300:x1.5",
    ];
    refused_in_1_gib(
        dir.path(),
        &args,
        "the sweep has 170600000000000000 scenarios, more than --max-scenarios",
    );
    only_made(dir.path(), &before, None);
}

/// Defect 7, one axis: a range's length is computed, not stepped through, so `1..=1e9:+1` and a
/// geometric range of a factor barely above 1 are refused at once.
#[test]
fn an_axis_too_long_is_refused_without_being_made() {
    let dir = tempfile::tempdir().unwrap();
    let before = snapshot(dir.path());
    for axis in [
        "m=1..=1e9:+1",
        "m=1..=1e300:x1.000000001",
        "m=0..=1:+1e-300",
    ] {
        let args = [
            "sweep", "gemm", "--chip", "h100-sxm", "--out", "out.csv", "--set", axis,
        ];
        let start = Instant::now();
        refused_in_1_gib(dir.path(), &args, "lists more than 10000000 values");
        assert!(start.elapsed() < Duration::from_secs(20), "{axis}");
    }
    let args = [
        "sweep",
        "gemm",
        "--chip",
        "h100-sxm",
        "--out",
        "out.csv",
        "--set",
        "m=1..=10000000",
        "--max-scenarios",
        "9999999",
    ];
    refused_in_1_gib(
        dir.path(),
        &args,
        "the sweep has 10000000 scenarios, more than --max-scenarios 9999999",
    );
    only_made(dir.path(), &before, None);
}

/// Defect 8: every one of 20,000 errors searched all 20,000 names for a suggestion and quoted
/// its line by counting from the top (a minute of CPU). The first 100 problems are listed, the
/// rest counted. The bound is for a debug build on a shared 2-core machine.
#[test]
fn a_file_of_many_errors_fails_fast_with_the_first_problems_listed() {
    let dir = tempfile::tempdir().unwrap();
    let head = "name: errs\nparams:\n  n: 8\ntensors:\n  x: {role: activation, shape: [n]}\n\
                blocks:\n  - name: b\n    ops:\n";
    let ops = |op: &dyn Fn(usize) -> String| -> String {
        let mut text = head.to_owned();
        for i in 0..20_000 {
            text.push_str(&format!("      - elementwise: {}\n", op(i)));
        }
        text
    };
    let unknown_tensors =
        ops(&|i| format!("{{name: op{i:05}, of: [missing_tensor_{i}], flops_per_element: 1}}"));
    // Names one letter off every op's: each suggestion search compares with every name.
    let near_names = ops(&|i| format!("{{name: op{i:05}, of: [oq{i:05}], flops_per_element: 1}}"));
    let unknown_params = ops(&|i| format!("{{name: op{i}, of: [x], flops_per_element: q{i}}}"));
    assert!(unknown_tensors.len() > 1_400_000);
    std::fs::write(dir.path().join("tensors.yaml"), unknown_tensors).unwrap();
    std::fs::write(dir.path().join("near.yaml"), near_names).unwrap();
    std::fs::write(dir.path().join("params.yaml"), unknown_params).unwrap();
    let before = snapshot(dir.path());
    for (file, first) in [
        (
            "tensors.yaml",
            "tensors.yaml:9:42: field `blocks[0].ops[0].elementwise.of`: unknown tensor or op `missing_tensor_0`",
        ),
        (
            "near.yaml",
            "unknown tensor or op `oq00000` (did you mean `op00000`?)",
        ),
        ("params.yaml", "undefined param `q0`"),
    ] {
        // The timeout is the guard against work that grows with the square of the errors;
        // speed itself is measured in benches/, never asserted.
        let assert = stepcost()
            .current_dir(dir.path())
            .args(["check", file])
            .timeout(Duration::from_secs(60))
            .assert()
            .code(1)
            .stderr(predicate::str::contains(first))
            .stderr(predicate::str::contains(format!(
                "{file}: 19900 more problems not listed (the first 100 are above)"
            )));
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        let listed = stderr.lines().filter(|l| l.starts_with(file)).count();
        assert_eq!(listed, 101, "{file}: 100 problems and the count of the rest");
    }
    only_made(dir.path(), &before, None);
}

/// `RAYON_NUM_THREADS` that is not a number of threads (rayon itself ignores it, or starts
/// 10^8 threads) is bad input; 0 and empty mean one per CPU, as in rayon.
#[test]
fn a_thread_count_that_is_not_one_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let before = snapshot(dir.path());
    let sweep = |threads: &str| {
        let mut cmd = stepcost();
        cmd.current_dir(dir.path())
            .env("RAYON_NUM_THREADS", threads)
            .args(["sweep", "gemm", "--chip", "h100-sxm", "--set", "m=1..=4"])
            .args(["--out", "out.csv"])
            .timeout(Duration::from_secs(60));
        cmd
    };
    for bad in ["abc", "-1", "1e99", "99999999", "1025"] {
        sweep(bad).assert().code(1).stderr(predicate::str::contains(format!(
            "error: RAYON_NUM_THREADS={bad}: expected a whole number of threads from 0 (one per CPU) to 1024"
        )));
    }
    only_made(dir.path(), &before, None);
    let mut outputs = Vec::new();
    for good in ["0", "", "1", "3"] {
        sweep(good).assert().code(0);
        outputs.push(std::fs::read(dir.path().join("out.csv")).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
    only_made(dir.path(), &before, Some("out.csv"));
}

/// Threads the system will not start (here: each would need a stack larger than the address
/// space) are an error that says so, not a panic, and leave no file.
#[test]
fn threads_that_will_not_start_are_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let before = snapshot(dir.path());
    stepcost()
        .current_dir(dir.path())
        .env("RUST_MIN_STACK", "1000000000000000")
        .args(["sweep", "gemm", "--chip", "h100-sxm", "--set", "m=1..=4"])
        .args(["--out", "out.csv"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "error: cannot start the sweep's threads: ",
        ));
    only_made(dir.path(), &before, None);
}

/// Each limit variable set to nonsense, or past the ceiling that keeps the limit itself safe,
/// is bad input told as such, before any file is read; the ceilings themselves work (the
/// deepest and the longest expressions they allow compile on the main thread's stack, debug
/// build included: a million-character chain of `+` overflowed it).
#[test]
fn absurd_limit_variables_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let before = snapshot(dir.path());
    let run = |name: &str, value: &str| {
        let mut cmd = stepcost();
        cmd.current_dir(dir.path())
            .env(name, value)
            .args(["run", "gemm", "--chip", "h100-sxm", "--out", "out.csv"])
            .timeout(Duration::from_secs(60));
        cmd
    };
    for (name, ceiling) in [
        ("STEPCOST_MAX_FILE_BYTES", "1073741824"),
        ("STEPCOST_MAX_YAML_DEPTH", "10000"),
        ("STEPCOST_MAX_YAML_NODES", "10000000"),
        ("STEPCOST_MAX_EXPR_LENGTH", "16384"),
        ("STEPCOST_MAX_EXPR_DEPTH", "500"),
    ] {
        let above = format!("{}1", ceiling);
        for bad in [
            "0",
            "-1",
            "1e99",
            "lots",
            "18446744073709551615",
            "99999999999999999999999",
            &above,
        ] {
            run(name, bad)
                .assert()
                .code(1)
                .stderr(predicate::str::starts_with(format!(
                    "error: {name}={bad}: expected a whole number from 1 to {ceiling}\n"
                )));
        }
        only_made(dir.path(), &before, None);
        run(name, ceiling).assert().code(0);
        std::fs::remove_file(dir.path().join("out.csv")).unwrap();
    }
    let deep = format!("{}m{}", "(".repeat(500), ")".repeat(500));
    let long = ["m"; 8192].join("+");
    for (name, ceiling, m) in [
        ("STEPCOST_MAX_EXPR_DEPTH", "500", deep),
        ("STEPCOST_MAX_EXPR_LENGTH", "16384", long),
    ] {
        std::fs::write(
            dir.path().join("deep.yaml"),
            format!(
                "name: deep\nparams: {{m: 8, n: 8}}\ntensors:\n  a: {{role: activation, shape: [m, n]}}\n\
                 blocks:\n  - name: b\n    ops:\n      - gemm: {{name: g, of: [a], m: \"{m}\", n: n, k: n}}\n"
            ),
        )
        .unwrap();
        stepcost()
            .current_dir(dir.path())
            .env(name, ceiling)
            .args(["check", "deep.yaml"])
            .timeout(Duration::from_secs(60))
            .assert()
            .code(0);
    }
}

/// A full disk (here: the file-size limit, its signal ignored, so that writes fail as on a full
/// disk) is an error naming what could not be written, exit 1, and leaves no file.
#[test]
fn a_full_disk_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "kept").unwrap();
    let before = snapshot(dir.path());
    let sweep = [
        "sweep",
        "gemm",
        "--chip",
        "h100-sxm",
        "--set",
        "m=1..=20000",
    ];
    let full = "trap '' XFSZ && ulimit -f 64 && exec \"$0\" \"$@\"";
    under_bash(
        dir.path(),
        full,
        &[&sweep[..], &["--out", "out.csv"]].concat(),
    )
    .assert()
    .code(1)
    .stderr(predicate::str::contains(
        "cannot write `out.csv`: File too large",
    ));
    only_made(dir.path(), &before, None);
    let to_stdout = "trap '' XFSZ && ulimit -f 64 && exec \"$0\" \"$@\" > out.csv";
    under_bash(dir.path(), to_stdout, &sweep)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "error: cannot write to stdout: File too large",
        ));
}

/// An error told on a stderr whose reader has gone is still exit 1 (`eprintln!` panicked: 101).
#[test]
fn a_closed_stderr_does_not_turn_an_error_into_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let before = snapshot(dir.path());
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("stepcost"))
        .current_dir(dir.path())
        .args(["sweep", "gemm", "--chip", "h100-sxm", "--set", "mm=1,2"])
        .args(["--out", "out.csv"])
        .stdout(Stdio::piped())
        .stderr(writer)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    only_made(dir.path(), &before, None);
}
