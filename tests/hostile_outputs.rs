//! The hostile-input catalogue, output targets: where `--out` points at something that is not
//! a regular file (a FIFO, a socket, a directory, a device, a standard stream), at one of the
//! command's own inputs, through symlinks and hard links, at a file that cannot be written or
//! a name at the length limit; and stdout closed, full or cut short. Each case runs in a temp
//! folder under a timeout and asserts the exit status, the message, and that nothing in the
//! folder changed but the file meant to.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use predicates::prelude::*;

use crate::common::stepcost;

/// What a folder holds: every entry (not following symlinks) with what identifies its state.
type Snapshot = BTreeMap<PathBuf, String>;

struct Folder(tempfile::TempDir);

impl Folder {
    fn new() -> Folder {
        Folder(tempfile::tempdir().unwrap())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path(name), text).unwrap();
    }

    /// Copies a file of the repository (`workloads/gemm.yaml`) into the folder.
    fn copy(&self, from: &str, name: &str) {
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(from);
        std::fs::copy(from, self.path(name)).unwrap();
    }

    fn snapshot(&self) -> Snapshot {
        let mut entries = BTreeMap::new();
        walk(self.0.path(), self.0.path(), &mut entries);
        entries
    }

    fn stepcost(&self, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = stepcost();
        cmd.current_dir(self.0.path())
            .args(args)
            .timeout(Duration::from_secs(60));
        cmd
    }

    /// Runs `args` in the folder and asserts a refusal: exit 1, `message` on stderr, nothing
    /// on stdout, and the folder as it was.
    fn refused(&self, args: &[&str], message: &str) {
        let before = self.snapshot();
        self.stepcost(args)
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(message));
        assert_eq!(self.snapshot(), before, "{args:?} changed the folder");
    }

    /// Runs `args` in the folder and asserts success and that only `changed` changed.
    fn writes(&self, args: &[&str], changed: &[&str]) -> assert_cmd::assert::Assert {
        let before = self.snapshot();
        let assert = self.stepcost(args).assert().success();
        assert_only_changed(&before, &self.snapshot(), changed);
        assert
    }

    /// Runs a bash `script` in the folder, `$0` being stepcost.
    fn bash(&self, script: &str) -> std::process::Output {
        std::process::Command::new("timeout")
            .current_dir(self.0.path())
            .args(["60", "bash", "-c", script])
            .arg(assert_cmd::cargo::cargo_bin("stepcost"))
            .output()
            .unwrap()
    }
}

fn walk(root: &Path, dir: &Path, entries: &mut Snapshot) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let kind = meta.file_type();
        let state = if kind.is_symlink() {
            format!("link to {}", std::fs::read_link(&path).unwrap().display())
        } else if kind.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            format!(
                "file ino {} mode {:o} owner {}:{} links {} {:?}",
                meta.ino(),
                meta.mode(),
                meta.uid(),
                meta.gid(),
                meta.nlink(),
                String::from_utf8_lossy(&bytes)
            )
        } else {
            format!("{:?} ino {} mode {:o}", kind, meta.ino(), meta.mode())
        };
        entries.insert(path.strip_prefix(root).unwrap().to_owned(), state);
        if kind.is_dir() {
            walk(root, &path, entries);
        }
    }
}

fn assert_only_changed(before: &Snapshot, after: &Snapshot, changed: &[&str]) {
    let keys: std::collections::BTreeSet<&PathBuf> = before.keys().chain(after.keys()).collect();
    for key in keys {
        if changed.iter().any(|c| Path::new(c) == key) {
            continue;
        }
        assert_eq!(
            before.get(key),
            after.get(key),
            "`{}` changed",
            key.display()
        );
    }
}

const ONLY_FILES: &str = "stepcost writes only regular files (or stdout, with `--out -`)";

#[test]
fn a_fifo_is_refused_without_blocking() {
    let folder = Folder::new();
    let made = std::process::Command::new("mkfifo")
        .arg(folder.path("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    // No reader ever opens the FIFO: a write to it would block until the timeout.
    folder.refused(
        &["chips", "h100-sxm", "--out", "fifo"],
        &format!("cannot write `fifo`: it is a FIFO (named pipe); {ONLY_FILES}"),
    );
    std::os::unix::fs::symlink("fifo", folder.path("to-fifo")).unwrap();
    folder.refused(
        &["run", "gemm", "--chip", "h100-sxm", "--out", "to-fifo"],
        "cannot write `to-fifo`: it leads to `fifo`, a FIFO (named pipe)",
    );
}

#[test]
fn a_socket_is_refused() {
    let folder = Folder::new();
    let _listener = std::os::unix::net::UnixListener::bind(folder.path("sock")).unwrap();
    folder.refused(
        &["sweep", "gemm", "--chip", "h100-sxm", "--out", "sock"],
        &format!("cannot write `sock`: it is a socket; {ONLY_FILES}"),
    );
}

#[test]
fn a_directory_is_refused() {
    let folder = Folder::new();
    std::fs::create_dir(folder.path("d")).unwrap();
    folder.write("d/kept.txt", "kept");
    for out in ["d", "d/", ".", ".."] {
        folder.refused(
            &["compare", "gemm", "--chip", "h100-sxm", "--out", out],
            &format!("cannot write `{out}`: it is a directory; {ONLY_FILES}"),
        );
    }
    // A trailing `/` on a new name would make a file of what reads as a folder.
    folder.refused(
        &["chips", "--out", "new/"],
        "cannot write `new/`: it names no file",
    );
    folder.refused(
        &["chips", "--out", "missing/out.txt"],
        "cannot write `missing/out.txt`: the folder `missing` does not exist",
    );
}

#[test]
fn a_device_is_refused_and_left_alone() {
    let folder = Folder::new();
    std::os::unix::fs::symlink("/dev/null", folder.path("null")).unwrap();
    let before = std::fs::metadata("/dev/null").unwrap();
    if !before.file_type().is_char_device() {
        return; // this machine's /dev/null is not a device (someone replaced it): leave it be
    }
    folder.refused(
        &["chips", "--out", "/dev/null"],
        &format!("cannot write `/dev/null`: it is a character device; {ONLY_FILES}"),
    );
    folder.refused(
        &[
            "plan",
            "gemv",
            "--target-tokens-per-s",
            "1000",
            "--out",
            "null",
        ],
        "cannot write `null`: it leads to `/dev/null`, a character device",
    );
    // A name in /dev that is not there (a device that could be missing) is no new file.
    folder.refused(
        &["chips", "--out", "/dev/stepcost-no-such-device"],
        "cannot write `/dev/stepcost-no-such-device`: `/dev/stepcost-no-such-device` is in /dev, where devices live",
    );
    let after = std::fs::metadata("/dev/null").unwrap();
    assert!(after.file_type().is_char_device());
    assert_eq!((before.ino(), before.rdev()), (after.ino(), after.rdev()));
}

#[test]
fn standard_streams_get_the_dash_hint() {
    let folder = Folder::new();
    std::os::unix::fs::symlink("/dev/stdout", folder.path("out")).unwrap();
    for out in ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/1"] {
        folder.refused(
            &["chips", "--out", out],
            &format!(
                "cannot write `{out}`: it is a standard stream, not a file; to write to stdout, use `--out -`"
            ),
        );
    }
    folder.refused(
        &["chips", "--out", "out"],
        "cannot write `out`: it leads to `/dev/stdout`, a standard stream",
    );
}

#[test]
fn dash_is_stdout() {
    let folder = Folder::new();
    let to_stdout = folder.writes(&["run", "gemm", "--chip", "h100-sxm", "--out", "-"], &[]);
    let plain = folder.writes(&["run", "gemm", "--chip", "h100-sxm"], &[]);
    assert_eq!(to_stdout.get_output().stdout, plain.get_output().stdout);
    let sweep = folder.writes(&["sweep", "gemm", "--chip", "h100-sxm", "--out", "-"], &[]);
    assert!(String::from_utf8_lossy(&sweep.get_output().stdout).starts_with("workload,chip,"));
    // A file named `-` is `./-`.
    folder.writes(&["chips", "h100-sxm", "--out", "./-"], &["-"]);
    assert!(std::fs::read_to_string(folder.path("-"))
        .unwrap()
        .contains("h100-sxm"));
    folder.refused(
        &["report", "gemm", "--chip", "h100-sxm", "--out", "-"],
        "--out -: a report is written to files (FILE.md with FILE.svg beside it, or FILE.html), not to stdout",
    );
}

/// A workload file whose template is a file beside it.
fn templated(folder: &Folder) {
    folder.copy("workloads/templates/dense.yaml", "t.yaml");
    let model = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/llama-3.1-8b.yaml"),
    )
    .unwrap();
    folder.write(
        "model.yaml",
        &model.replace("template: dense", "template: t.yaml"),
    );
}

#[test]
fn an_output_that_is_an_input_is_refused() {
    let folder = Folder::new();
    folder.copy("workloads/gemm.yaml", "w.yaml");
    folder.copy("hardware/h100-sxm.yaml", "c.yaml");
    folder.copy("hardware/h100-sxm.yaml", "c.svg");
    templated(&folder);
    folder.write(
        "config.json",
        r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
            "vocab_size": 128256}"#,
    );
    folder.write(
        "cases.csv",
        "id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,notes\n\
         x1,h100-sxm,w.yaml,m=64,,,,1,step_time_us,100,kernel,test,\n",
    );
    folder.write("s.csv", "chip,batch,tokens_per_s,error\na,1,10,\na,2,20,\n");
    std::os::unix::fs::symlink("w.yaml", folder.path("alias.yaml")).unwrap();
    let sweep = ["sweep", "w.yaml", "--chip", "h100-sxm", "--set", "m=1..=64"];
    let cases: &[(&[&str], &str, &str)] = &[
        (&sweep, "w.yaml", ""),
        (&sweep, "alias.yaml", " (`w.yaml`)"),
        (&["run", "gemm", "--chip", "c.yaml"], "c.yaml", ""),
        (&["run", "model.yaml", "--chip", "h100-sxm"], "t.yaml", ""),
        (&["chips", "c.yaml"], "c.yaml", ""),
        (
            &["compare", "w.yaml", "--chip", "h100-sxm,c.yaml"],
            "c.yaml",
            "",
        ),
        (
            &["plan", "model.yaml", "--target-tokens-per-s", "100"],
            "model.yaml",
            "",
        ),
        (
            &["plan", "model.yaml", "--target-tokens-per-s", "100"],
            "t.yaml",
            "",
        ),
        (&["import", "config.json"], "config.json", ""),
        (&["validate", "cases.csv"], "cases.csv", ""),
        (&["validate", "cases.csv"], "w.yaml", ""),
        (
            &[
                "plot",
                "sweep",
                "s.csv",
                "--x",
                "batch",
                "--y",
                "tokens_per_s",
            ],
            "s.csv",
            "",
        ),
        (
            &["plot", "roofline", "w.yaml", "--chip", "h100-sxm"],
            "w.yaml",
            "",
        ),
        // The report's picture is c.svg beside c.md: the chip file.
        (&["report", "gemm", "--chip", "c.svg"], "c.md", ""),
    ];
    for (args, out, which) in cases {
        let mut args = args.to_vec();
        args.extend(["--out", out]);
        let named = if *out == "c.md" { "c.svg" } else { out };
        folder.refused(
            &args,
            &format!(
                "cannot write `{named}`: it is one of this command's inputs{which}; stepcost never rewrites its inputs"
            ),
        );
    }
}

#[test]
fn a_symlink_is_written_through_atomically() {
    let folder = Folder::new();
    std::fs::create_dir(folder.path("real")).unwrap();
    folder.write("real/out.csv", "old");
    std::fs::set_permissions(
        folder.path("real/out.csv"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    std::os::unix::fs::symlink("real/out.csv", folder.path("link.csv")).unwrap();
    let sweep = ["sweep", "gemm", "--chip", "h100-sxm", "--set", "m=1..=8"];
    folder.writes(
        &[&sweep[..], &["--out", "link.csv"]].concat(),
        &["real/out.csv"],
    );
    let written = std::fs::read_to_string(folder.path("real/out.csv")).unwrap();
    assert!(written.starts_with("workload,chip,"));
    let meta = std::fs::metadata(folder.path("real/out.csv")).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o640);
    assert_eq!(
        std::fs::read_link(folder.path("link.csv")).unwrap(),
        Path::new("real/out.csv")
    );
    // A dangling link makes the file it names; a loop is refused.
    std::os::unix::fs::symlink("real/new.csv", folder.path("dangling.csv")).unwrap();
    folder.writes(
        &[&sweep[..], &["--out", "dangling.csv"]].concat(),
        &["real/new.csv"],
    );
    assert_eq!(
        std::fs::read_to_string(folder.path("real/new.csv")).unwrap(),
        written
    );
    std::os::unix::fs::symlink("loop-b", folder.path("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", folder.path("loop-b")).unwrap();
    folder.refused(
        &["chips", "--out", "loop-a"],
        "cannot write `loop-a`: more than 40 symlinks lead on from it",
    );
}

#[test]
fn a_replaced_file_keeps_its_mode_and_owner() {
    let folder = Folder::new();
    folder.write("out.txt", "old");
    let path = folder.path("out.txt");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o604)).unwrap();
    // Root may give the file to another user; anyone else keeps their own.
    let _ = std::os::unix::fs::chown(&path, Some(4321), Some(4321));
    let before = std::fs::metadata(&path).unwrap();
    folder.writes(&["chips", "h100-sxm", "--out", "out.txt"], &["out.txt"]);
    let after = std::fs::metadata(&path).unwrap();
    assert_ne!(before.ino(), after.ino(), "replaced by a rename");
    assert_eq!(after.mode() & 0o7777, 0o604);
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert!(std::fs::read_to_string(&path).unwrap().contains("h100-sxm"));
}

#[test]
fn a_file_with_hard_links_is_refused() {
    let folder = Folder::new();
    folder.write("out.csv", "old");
    std::fs::hard_link(folder.path("out.csv"), folder.path("other.csv")).unwrap();
    folder.refused(
        &["sweep", "gemm", "--chip", "h100-sxm", "--out", "out.csv"],
        "cannot write `out.csv`: it has 2 hard links, and an atomic replace (a new file renamed over it) cannot keep the others",
    );
}

#[test]
fn a_name_of_255_bytes_works_and_256_is_refused() {
    let folder = Folder::new();
    let sweep = [
        "sweep", "gemm", "--chip", "h100-sxm", "--set", "m=1..=8", "--out",
    ];
    let longest = "n".repeat(251) + ".csv";
    let args = [&sweep[..], &[longest.as_str()]].concat();
    folder.writes(&args, &[&longest]);
    // Replaced, the temporary name beside it is still short enough.
    folder.writes(&args, &[&longest]);
    assert!(std::fs::read_to_string(folder.path(&longest))
        .unwrap()
        .starts_with("workload,chip,"));
    let too_long = "n".repeat(252) + ".csv";
    folder.refused(
        &[&sweep[..], &[too_long.as_str()]].concat(),
        &format!("cannot write `{too_long}`: File name too long"),
    );
}

/// Makes `path` unwritable even to root where possible (`chattr +i`), and undoes it.
struct Immutable(PathBuf);

impl Immutable {
    fn new(path: PathBuf) -> Option<Immutable> {
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&path)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then_some(Immutable(path))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .output();
    }
}

/// Whether a file can be made in `dir` right now (root ignores modes).
fn can_create_in(dir: &Path) -> bool {
    let probe = dir.join("probe");
    let made = std::fs::write(&probe, "").is_ok();
    let _ = std::fs::remove_file(probe);
    made
}

#[test]
fn an_unwritable_target_is_refused() {
    let folder = Folder::new();
    std::fs::create_dir(folder.path("locked")).unwrap();
    folder.write("locked/kept.csv", "kept");
    folder.write("read-only.csv", "kept");
    let locked = folder.path("locked");
    let read_only = folder.path("read-only.csv");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o444)).unwrap();
    let mut guards = Vec::new();
    if can_create_in(&locked) {
        // Root: only an immutable folder and file stop it.
        guards.extend(Immutable::new(read_only.clone()));
        guards.extend(Immutable::new(locked.clone()));
        if guards.len() < 2 || can_create_in(&locked) {
            return; // nothing on this machine refuses root a file
        }
    }
    let sweep = ["sweep", "gemm", "--chip", "h100-sxm", "--set", "m=1..=8"];
    for out in ["locked/new.csv", "locked/kept.csv", "read-only.csv"] {
        folder.refused(
            &[&sweep[..], &["--out", out]].concat(),
            &format!("cannot write `{out}`"),
        );
    }
    drop(guards);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_failed_report_writes_neither_file() {
    let folder = Folder::new();
    // The Markdown's name is taken by a folder: the picture is not written either.
    std::fs::create_dir(folder.path("z.md")).unwrap();
    folder.refused(
        &["report", "gemm", "--chip", "h100-sxm", "--out", "z.md"],
        "cannot write `z.md`: it is a directory",
    );
    std::fs::remove_dir(folder.path("z.md")).unwrap();
    // A report that fails after the files were checked leaves the old pair as it was.
    folder.write("z.md", "old report");
    folder.write("z.svg", "old picture");
    folder.refused(
        &[
            "report", "gemm", "--chip", "h100-sxm", "--fusion", "nope", "--out", "z.md",
        ],
        "has no fusion plan `nope`",
    );
    // Both outputs one file: refused.
    std::fs::remove_file(folder.path("z.svg")).unwrap();
    std::os::unix::fs::symlink("z.md", folder.path("z.svg")).unwrap();
    folder.refused(
        &["report", "gemm", "--chip", "h100-sxm", "--out", "z.md"],
        "cannot write `z.md`: it is the same file as `z.svg`, also written by this command",
    );
    std::fs::remove_file(folder.path("z.svg")).unwrap();
    folder.writes(
        &["report", "gemm", "--chip", "h100-sxm", "--out", "z.md"],
        &["z.md", "z.svg"],
    );
    assert!(std::fs::read_to_string(folder.path("z.svg"))
        .unwrap()
        .contains("<svg"));
}

#[test]
fn outputs_are_checked_before_any_work() {
    let folder = Folder::new();
    std::fs::create_dir(folder.path("d")).unwrap();
    // A grid past --max-scenarios would be refused too, but the output is checked first.
    let axis = "m=1..=100000";
    folder.refused(
        &[
            "sweep",
            "gemm",
            "--chip",
            "all",
            "--set",
            axis,
            "--set",
            "n=1..=100000",
            "--out",
            "d",
        ],
        "cannot write `d`: it is a directory",
    );
}

#[test]
fn closed_stdout_is_an_error() {
    let folder = Folder::new();
    let closed = folder.bash("\"$0\" chips >&-");
    assert_eq!(closed.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&closed.stderr);
    assert!(
        stderr.contains("cannot write to stdout: it was closed when stepcost started"),
        "{stderr}"
    );
    let sweep = folder.bash("\"$0\" sweep gemm --chip h100-sxm --out - >&-");
    assert_eq!(sweep.status.code(), Some(1));
    // Not needed, a closed stdout is no error.
    let to_file = folder.bash("\"$0\" chips --out chips.txt >&-");
    assert_eq!(to_file.status.code(), Some(0));
    assert!(folder.path("chips.txt").is_file());
}

#[test]
fn a_full_stdout_is_an_error() {
    if !Path::new("/dev/full").exists() {
        return; // not a Linux machine: nothing to write to that is always full
    }
    let folder = Folder::new();
    for command in ["chips", "sweep gemm --chip h100-sxm --set m=1..=64"] {
        let before = folder.snapshot();
        let output = folder.bash(&format!("\"$0\" {command} --out - > /dev/full"));
        assert_eq!(output.status.code(), Some(1), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("cannot write to stdout: No space left on device"),
            "{stderr}"
        );
        assert_eq!(folder.snapshot(), before);
    }
}

#[test]
fn a_write_error_leaves_no_file() {
    let folder = Folder::new();
    folder.write("big.csv", "old");
    let before = folder.snapshot();
    // Files over 1 KiB are refused to the process (EFBIG), its signal ignored: an I/O error
    // half way through the file, as a full disk would give.
    for command in [
        "sweep gemm --chip all --set m=1..=64 --out big.csv",
        "chips --format csv --out big.csv",
    ] {
        let output = folder.bash(&format!("trap '' XFSZ; ulimit -f 1; exec \"$0\" {command}"));
        assert_eq!(output.status.code(), Some(1), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("cannot write `big.csv`: File too large"),
            "{stderr}"
        );
        assert_eq!(folder.snapshot(), before, "{command}");
    }
}

#[test]
fn a_closed_pipe_is_success() {
    let folder = Folder::new();
    let output = folder.bash(
        "\"$0\" sweep gemm --chip all --set m=1..=20000 --out - | head -1; exit ${PIPESTATUS[0]}",
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("workload,chip,"));
}

#[test]
fn stdout_appended_to_an_input_is_refused() {
    let folder = Folder::new();
    folder.copy("workloads/gemm.yaml", "w.yaml");
    let before = folder.snapshot();
    let output = folder.bash("\"$0\" sweep w.yaml --chip h100-sxm >> w.yaml");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "cannot write to stdout: it is one of this command's inputs (`w.yaml`); stepcost never rewrites its inputs"
        ),
        "{stderr}"
    );
    assert_eq!(folder.snapshot(), before);
}

/// Issue 38: the `--out` folder renamed while a sweep writes into it kept the whole temporary
/// file. Now the sweep fails (exit 1) naming the folder, and leaves nothing in the renamed one
/// (the same file code writes every shard of `--shard`). The rename waits for the temporary
/// file to appear, so it lands while the sweep (some seconds of pricing) still runs.
#[test]
fn a_sweep_whose_folder_is_renamed_leaves_no_temporary_file() {
    let folder = Folder::new();
    let (out, moved) = (folder.path("out"), folder.path("moved"));
    std::fs::create_dir(&out).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("stepcost"))
        .current_dir(folder.0.path())
        .args([
            "sweep",
            "gemm",
            "--chip",
            "h100-sxm",
            "--set",
            "m=1..=300000",
        ])
        .args(["--shard", "1/2", "--out", "out/part.csv"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::fs::read_dir(&out).unwrap().next().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no temporary file"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::rename(&out, &moved).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write `out/part.csv`"), "{stderr}");
    assert!(
        stderr.contains("its folder `out` was moved or removed while it was written"),
        "{stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(&moved).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(!out.exists());
}
