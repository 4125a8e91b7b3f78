//! Hostile input sources, and what messages may quote (issue 12, round two).
//!
//! - Every command that reads a file refuses one that is not a regular file (a FIFO, a
//!   socket, a directory, a symlink to a device, `/dev/zero`) before reading a byte, and a
//!   file over its limit, in bounded time: exit 1, a message naming the file and what it is,
//!   and no file in the folder changed.
//! - A file named by mistake (a secret given as a chip, workload, template, case file, case's
//!   chip or workload, config, CSV, price book, scenario file or a scenario's price book) is
//!   never echoed: its text is quoted only once it reads as the kind of file it was given
//!   as, and a key that is no name (a password file's line) is never named (issue 38).
//! - `plot sweep` streams a sweep CSV up to `STEPCOST_MAX_CSV_BYTES` (1 GiB by default).
//!
//! Everything is made in a temporary folder; devices are only ever named as inputs, and are
//! refused before they are read.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use predicates::prelude::*;

use crate::common::stepcost;

/// A bound on any one command: a refusal takes milliseconds; a hang fails the test.
const TIMEOUT: Duration = Duration::from_secs(30);

/// What a folder holds, recursively: each entry's type, and a regular file's bytes (a FIFO or
/// socket is never opened).
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    Dir,
    Link(PathBuf),
    Other(String),
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut entries = BTreeMap::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let kind = meta.file_type();
            let entry = if kind.is_symlink() {
                Entry::Link(std::fs::read_link(&path).unwrap())
            } else if kind.is_dir() {
                folders.push(path.clone());
                Entry::Dir
            } else if kind.is_file() {
                Entry::File(std::fs::read(&path).unwrap())
            } else {
                Entry::Other(format!("{kind:?}"))
            };
            entries.insert(path.strip_prefix(dir).unwrap().to_path_buf(), entry);
        }
    }
    entries
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// One run of stepcost in `dir` with `env`, bounded by [`TIMEOUT`]: its exit code, stdout
/// and stderr. The folder must be unchanged afterwards.
fn run_unchanged(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let before = snapshot(dir);
    let mut cmd = stepcost();
    cmd.current_dir(dir).args(args).timeout(TIMEOUT);
    for (name, value) in env {
        cmd.env(name, value);
    }
    let output = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        snapshot(dir),
        before,
        "`stepcost {}` changed the folder; stderr: {stderr}",
        args.join(" ")
    );
    (output.status.code(), stdout, stderr)
}

/// The commands and roles through which a file `f` is read, each as its arguments in a
/// folder holding `w.yaml` (whose template is `f`) and `cases.csv` (whose case names `f` as
/// its chip) and `cases-w.csv` (as its workload). The last item is the limit's variable.
fn roles(f: &str) -> Vec<(&'static str, Vec<String>, &'static str)> {
    let args = |a: &[&str]| a.iter().map(|s| s.replace("{F}", f)).collect::<Vec<_>>();
    let file = "STEPCOST_MAX_FILE_BYTES";
    vec![
        ("check", args(&["check", "{F}"]), file),
        (
            "check --kind",
            args(&["check", "{F}", "--kind", "workload"]),
            file,
        ),
        (
            "chip",
            args(&["run", "gemm", "--chip", "{F}", "--out", "o.txt"]),
            file,
        ),
        (
            "workload",
            args(&["run", "{F}", "--chip", "h100-sxm", "--out", "o.txt"]),
            file,
        ),
        (
            "template",
            args(&["run", "w.yaml", "--chip", "h100-sxm", "--out", "o.txt"]),
            file,
        ),
        (
            "case file",
            args(&["validate", "{F}", "--out", "o.txt"]),
            file,
        ),
        ("case's chip", args(&["validate", "cases.csv"]), file),
        ("case's workload", args(&["validate", "cases-w.csv"]), file),
        ("config", args(&["import", "{F}", "--out", "o.yaml"]), file),
        (
            "price book",
            args(&["run", "gemm", "--chip", "h100-sxm", "--prices", "{F}"]),
            file,
        ),
        ("scenario file", args(&["run", "--scenario", "{F}"]), file),
        (
            "scenario's price book",
            args(&["run", "--scenario", "s.yaml"]),
            file,
        ),
        (
            "sweep CSV",
            args(&[
                "plot",
                "sweep",
                "{F}",
                "--x",
                "m",
                "--y",
                "step_time_us",
                "--out",
                "o.svg",
            ]),
            "STEPCOST_MAX_CSV_BYTES",
        ),
    ]
}

const CASE_HEADER: &str =
    "id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,notes\n";

/// A folder with the files [`roles`] names, for input `f`.
fn folder_for(dir: &Path, f: &str) {
    let write = |name: &str, text: String| std::fs::write(dir.join(name), text).unwrap();
    write(
        "w.yaml",
        format!("name: w\ntemplate: {f}\nparams: {{m: 8}}\n"),
    );
    write(
        "cases.csv",
        format!("{CASE_HEADER}c1,{f},gemm,,,,,1,step_time_us,5,,x,\n"),
    );
    write(
        "s.yaml",
        format!("workload: gemm\nchips: [h100-sxm]\nprices: {f}\n"),
    );
    write(
        "cases-w.csv",
        format!("{CASE_HEADER}c1,h100-sxm,{f},,,,,1,step_time_us,5,,x,\n"),
    );
}

/// Runs every role of [`roles`] on the input `f` in `dir` and asserts the refusal: exit 1,
/// each of `expected` (with the variable's name where `expected` holds `{VAR}`) in the
/// message, no file changed. A case's chip or workload is a case that cannot be priced: the
/// reason is in the report, and the command fails.
fn refused_everywhere(dir: &Path, f: &str, env: &[(&str, &str)], expected: &[&str]) {
    folder_for(dir, f);
    for (role, args, variable) in roles(f) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run_unchanged(dir, &args, env);
        let context = format!("{role}: `stepcost {}`: stderr {stderr:?}", args.join(" "));
        assert_eq!(code, Some(1), "{context}");
        let message = if role.starts_with("case's") {
            assert!(stderr.contains("could not be priced"), "{context}");
            stdout
        } else {
            assert!(stdout.is_empty(), "{context}: stdout {stdout:?}");
            stderr
        };
        assert!(message.contains(f), "{context}: the file is not named");
        if role == "template" {
            assert!(message.contains("w.yaml"), "{context}");
            assert!(message.contains("cannot use this template"), "{context}");
        }
        for text in expected {
            let text = text.replace("{VAR}", variable);
            assert!(
                message.contains(&text),
                "{context}: no `{text}` in {message:?}"
            );
        }
    }
}

#[test]
fn a_fifo_with_no_writer_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    refused_everywhere(
        dir.path(),
        fifo.to_str().unwrap(),
        &[],
        &["not a regular file (a FIFO)"],
    );
}

#[test]
fn a_socket_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    refused_everywhere(
        dir.path(),
        socket.to_str().unwrap(),
        &[],
        &["not a regular file (a socket)"],
    );
}

#[test]
fn a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("folder.yaml");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("inside"), "name: x\n").unwrap();
    refused_everywhere(
        dir.path(),
        folder.to_str().unwrap(),
        &[],
        &["not a regular file (a directory)"],
    );
}

#[test]
fn a_symlink_to_a_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("zero.yaml");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    refused_everywhere(
        dir.path(),
        link.to_str().unwrap(),
        &[],
        &["not a regular file (a symlink to a character device)"],
    );
}

/// Before: `check`, `validate`, `import`, `plot sweep` and a template read /dev/zero until
/// memory ran out.
#[test]
fn dev_zero_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    refused_everywhere(
        dir.path(),
        "/dev/zero",
        &[],
        &["not a regular file (a character device)"],
    );
}

#[test]
fn a_file_over_its_limit_is_refused_with_the_variable_named() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    std::fs::write(&big, "# padding\n".repeat(40)).unwrap();
    let env = [
        ("STEPCOST_MAX_FILE_BYTES", "300"),
        ("STEPCOST_MAX_CSV_BYTES", "300"),
    ];
    refused_everywhere(
        dir.path(),
        big.to_str().unwrap(),
        &env,
        &["file is 400 bytes; the limit is 300 bytes ({VAR} raises it)"],
    );
}

/// A file whose stated size is not what it holds (a file in /proc says 0 bytes) is still
/// read no further than the limit.
#[cfg(target_os = "linux")]
#[test]
fn a_file_that_misstates_its_size_is_read_no_further_than_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("STEPCOST_MAX_FILE_BYTES", "10"),
        ("STEPCOST_MAX_CSV_BYTES", "10"),
    ];
    let cases: [(&[&str], &str); 3] = [
        (
            &["check", "/proc/self/maps", "--kind", "chip"],
            "STEPCOST_MAX_FILE_BYTES",
        ),
        (&["import", "/proc/self/maps"], "STEPCOST_MAX_FILE_BYTES"),
        (
            &["plot", "sweep", "/proc/self/maps", "--x", "a", "--y", "b"],
            "STEPCOST_MAX_CSV_BYTES",
        ),
    ];
    for (args, variable) in cases {
        let (code, stdout, stderr) = run_unchanged(dir.path(), args, &env);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        let expected =
            format!("file has more than 10 bytes; the limit is 10 bytes ({variable} raises it)");
        assert!(stderr.contains("/proc/self/maps"), "{stderr}");
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
    }
}

/// Texts a secret file might hold, none of them a chip, workload, case file, config or CSV.
const SECRETS: &[&[u8]] = &[
    b"SECRET=hunter2\n",
    b"SECRET=hunter2\nMORE=x\n",
    b"password: hunter2\n",
    b"- SECRET=hunter2\n",
    b"\"SECRET=hunter2\"\n",
    b"{token: hunter2\n",
    b"token: [hunter2\n",
    b"SECRET=hunter2\n\xff\n",
    b"SECRET=hunter2, more\n1, 2\n",
    // A password file's line reads as a YAML key; a JSON file has keys that are names.
    b"root:$6$hunter2$x:19000:0:99999:7:::\n",
    b"root:$6$hunter2:1: 3\n",
    b"{\"api_key\": \"hunter2\"}\n",
    b"\"hunter2 is here\": 4\n",
];

/// Before: every message about a file quoted its first line, whatever the file was.
#[test]
fn a_secret_named_as_any_input_is_never_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    let f = secret.to_str().unwrap();
    folder_for(dir.path(), f);
    for text in SECRETS {
        std::fs::write(&secret, text).unwrap();
        for (role, args, _) in roles(f) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, stdout, stderr) = run_unchanged(dir.path(), &args, &[]);
            let context = format!(
                "{role} holding {:?}: stdout {stdout:?} stderr {stderr:?}",
                String::from_utf8_lossy(text)
            );
            assert_eq!(code, Some(1), "{context}");
            assert!(!stderr.contains("hunter2"), "{context}");
            assert!(!stdout.contains("hunter2"), "{context}");
            assert!(stderr.contains(f) || stdout.contains(f), "{context}");
        }
    }
}

/// The messages about a secret still say where: file, line and column.
#[test]
fn a_refused_secret_is_placed_by_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret"), "SECRET=hunter2\n").unwrap();
    std::fs::write(dir.path().join("mapping"), "name: x\npassword: hunter2\n").unwrap();
    for (args, expected) in [
        (
            ["run", "gemm", "--chip", "secret"],
            "secret:1:1: expected mapping",
        ),
        (
            ["run", "secret", "--chip", "h100-sxm"],
            "secret:1:1: expected mapping",
        ),
        (
            ["run", "gemm", "--chip", "mapping"],
            "mapping:2:1: field `password`: unknown field `password`",
        ),
    ] {
        let (code, _, stderr) = run_unchanged(dir.path(), &args, &[]);
        assert_eq!(code, Some(1));
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("hunter2") && !stderr.contains(" | "),
            "{stderr}"
        );
    }
}

/// A chip, workload or template that reads as its kind up to the problem is still quoted: the
/// line and a caret under the column.
#[test]
fn a_file_of_its_kind_is_still_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write(
        "chip.yaml",
        "name: c\nmemory:\n  capacity: 80 GB\n  bandwidth: [3\nmatrix: {bf16: 1 TFLOPS}\n",
    );
    write(
        "t.yaml",
        "name: t\nparams: {m: 1}\ntensors:\n  x: {role: activation, shape: [m, m]}\n\
         blocks:\n  - name: b\n    ops:\n      - gemm: {name: p, of: [x], m: m, n: m, k: mm}\n",
    );
    write("w.yaml", "name: w\ntemplate: ./t.yaml\nparams: {m: 2}\n");
    // A price book: a `.yaml` file, or a built-in chip's key.
    write("p.yaml", "b200: 5 USD/h\nh100-sxm: 3.1O USD/h\n");
    write("p.txt", "b200: 5 USD/h\nh100-sxm: 3.1O USD/h\n");
    write(
        "cases.csv",
        &format!("{CASE_HEADER}c1,h100-sxm,gemm,,,,,1,speed,5,,x,\n"),
    );
    for (args, expected) in [
        (
            vec!["run", "gemm", "--chip", "chip.yaml"],
            " 4 |   bandwidth: [3",
        ),
        (vec!["run", "w.yaml", "--chip", "h100-sxm"], "k: mm}"),
        (vec!["validate", "cases.csv"], " | c1,h100-sxm,gemm"),
        (
            vec!["run", "gemm", "--chip", "h100-sxm", "--prices", "p.yaml"],
            " 2 | h100-sxm: 3.1O USD/h",
        ),
        (
            vec!["run", "gemm", "--chip", "h100-sxm", "--prices", "p.txt"],
            " 2 | h100-sxm: 3.1O USD/h",
        ),
    ] {
        let (code, _, stderr) = run_unchanged(dir.path(), &args, &[]);
        assert_eq!(code, Some(1));
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// A CSV whose first line is a row of column names is listed back when a column is missing;
/// one whose first line is not is not.
#[test]
fn plot_sweep_lists_columns_only_of_a_header_of_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.csv"), "a,b,c\n1,2,3\n").unwrap();
    std::fs::write(dir.path().join("env.csv"), "KEY=hunter2\n1\n").unwrap();
    let plot = |file: &str| {
        run_unchanged(
            dir.path(),
            &["plot", "sweep", file, "--x", "zzz", "--y", "b"],
            &[],
        )
    };
    let (code, _, stderr) = plot("ok.csv");
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("ok.csv has no column `zzz`; its columns: a, b, c"),
        "{stderr}"
    );
    let (code, _, stderr) = plot("env.csv");
    assert_eq!(code, Some(1));
    assert!(stderr.contains("env.csv has no column `zzz`"), "{stderr}");
    assert!(stderr.contains("not a row of column names"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

/// A sweep CSV stepcost wrote, larger than the 16 MiB limit of YAML files: before, `plot
/// sweep` refused it.
#[test]
fn plot_sweep_streams_a_20_mb_sweep_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    stepcost()
        .current_dir(dir.path())
        .args(["sweep", "gemm", "--chip", "h100-sxm", "--set", "m=1..=8000"])
        .args(["--set", "n=64..=640:+64", "--out", "sweep.csv", "--quiet"])
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let size = std::fs::metadata(&csv).unwrap().len();
    assert!(size > 20_000_000, "the sweep is {size} bytes");

    let before = snapshot(dir.path());
    stepcost()
        .current_dir(dir.path())
        .args([
            "plot",
            "sweep",
            "sweep.csv",
            "--x",
            "m",
            "--y",
            "step_time_us",
        ])
        .args(["--series", "n", "--out", "sweep.svg"])
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let mut after = snapshot(dir.path());
    let svg = after
        .remove(Path::new("sweep.svg"))
        .expect("the picture is written");
    assert_eq!(after, before, "only the picture is new");
    let Entry::File(svg) = svg else {
        panic!("the picture is not a file")
    };
    let svg = String::from_utf8(svg).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("step time"),
        "{}",
        &svg[..200]
    );
}

/// `STEPCOST_MAX_CSV_BYTES` moves the limit of a sweep CSV, exactly: a file of the limit is
/// read, one byte more is refused with the variable named, a bad value names the variable.
#[test]
fn the_csv_limit_moves_with_its_variable() {
    let dir = tempfile::tempdir().unwrap();
    let text = "m,step_time_us\n1,2\n3,4\n";
    std::fs::write(dir.path().join("s.csv"), text).unwrap();
    let len = text.len().to_string();
    let under = (text.len() - 1).to_string();
    let plot = ["plot", "sweep", "s.csv", "--x", "m", "--y", "step_time_us"];

    let (code, stdout, _) = run_unchanged(dir.path(), &plot, &[("STEPCOST_MAX_CSV_BYTES", &len)]);
    assert_eq!(code, Some(0));
    assert!(stdout.starts_with("<svg"));

    let (code, stdout, stderr) =
        run_unchanged(dir.path(), &plot, &[("STEPCOST_MAX_CSV_BYTES", &under)]);
    assert_eq!(code, Some(1));
    assert!(stdout.is_empty());
    let expected = format!(
        "s.csv: file is {len} bytes; the limit is {under} bytes (STEPCOST_MAX_CSV_BYTES raises it)"
    );
    assert!(stderr.contains(&expected), "{stderr}");

    // the YAML limit does not bound a sweep CSV
    let (code, _, _) = run_unchanged(dir.path(), &plot, &[("STEPCOST_MAX_FILE_BYTES", "10")]);
    assert_eq!(code, Some(0));

    let mut out = plot.to_vec();
    out.extend(["--out", "s.svg"]);
    let (code, _, stderr) = run_unchanged(dir.path(), &out, &[("STEPCOST_MAX_CSV_BYTES", "lots")]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("STEPCOST_MAX_CSV_BYTES=lots"), "{stderr}");
}

/// A writer that never comes is not waited for, however many times a command is given the
/// FIFO.
#[test]
fn a_fifo_named_as_several_inputs_is_refused_at_the_first() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("p"));
    let (code, _, stderr) = run_unchanged(dir.path(), &["check", "p", "p"], &[]);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr.matches("p: not a regular file (a FIFO)").count(),
        2,
        "{stderr}"
    );
    stepcost()
        .current_dir(dir.path())
        .args(["run", "./p", "--chip", "./p"])
        .timeout(TIMEOUT)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("./p: not a regular file (a FIFO)"));
}
