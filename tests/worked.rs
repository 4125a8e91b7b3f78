//! The worked examples of README.md and the book (`docs/book/src/`): every ```console block
//! there is run by trycmd, each `$ ` line a command and the lines under it the output it must
//! print (stdout and stderr together; `...` on a line of its own stands for any lines, `[..]`
//! for the rest of a line). Not part of `cargo test` (Cargo.toml: `test = false`):
//!
//!     cargo test --test worked                            # or scripts/worked-tests
//!     cargo test --test worked -- trycmd=sweeps           # the files whose path holds `sweeps`
//!     TRYCMD=overwrite cargo test --test worked           # write what the commands print now
//!
//! The commands run in a scratch folder that links to the repository's input folders (`docs`,
//! `validation`, `tests`, ...), so a path in an example reads as it does from the repository's
//! root, while a file a command writes (`--out sweep.csv`, `--save-scenario mine.yaml`) lands
//! in the scratch folder and goes with it. Besides `stepcost`, a block may run `cat` and `cut`
//! (to show a file written) and `python3` (a script under `scripts/`); any other program would
//! be skipped silently by trycmd, so the book's own test (`tests/book.rs`) refuses it.

use std::path::{Path, PathBuf};

/// The repository's folders a worked example may read from.
const INPUTS: [&str; 7] = [
    "docs",
    "hardware",
    "python",
    "scripts",
    "tests",
    "validation",
    "workloads",
];

/// The programs other than stepcost a worked example may run (tests/book.rs holds the same list).
const TOOLS: [&str; 3] = ["cat", "cut", "python3"];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scratch = tempfile::tempdir().expect("a scratch folder for the examples' outputs");
    for input in INPUTS {
        link(&root.join(input), &scratch.path().join(input));
    }
    // trycmd runs a Markdown file's commands in the current folder.
    std::env::set_current_dir(scratch.path()).expect("the scratch folder is usable");

    let cases = trycmd::TestCases::new();
    cases.register_bin("stepcost", Path::new(env!("CARGO_BIN_EXE_stepcost")));
    for tool in TOOLS {
        cases.register_bin(tool, on_path(tool));
    }
    for file in markdown(root) {
        cases.case(file);
    }
    cases.run();
}

/// README.md and every Markdown file of the book, in a fixed order.
fn markdown(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut folders = vec![root.join("docs/book/src")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("docs/book/src is readable") {
            let path = entry.expect("a readable folder entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A program on PATH; a worked example that needs one this machine lacks is a failure, not a
/// silent skip.
fn on_path(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("the worked examples run `{name}`, which is not on PATH"))
}

#[cfg(unix)]
fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).expect("a link in the scratch folder");
}

#[cfg(not(unix))]
fn link(_target: &Path, _at: &Path) {
    panic!("the worked examples link the repository's folders into a scratch folder: Unix only");
}
