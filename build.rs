//! Compiles every `hardware/*.yaml`, `workloads/*.yaml`, `workloads/templates/*.yaml` and
//! `engines/*.yaml` into the binary, so built-in chips, workloads, templates and engines work
//! from any directory. A missing or empty folder fails the build with its path: a crate that
//! builds must be able to price its own built-in models.

use std::fmt::Write as _;
use std::path::Path;

fn list(dir: &str) -> Vec<(String, String)> {
    println!("cargo:rerun-if-changed={dir}");
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| {
        panic!("cannot read the data folder `{dir}` ({e}); the crate ships it and embeds every YAML file in it")
    });
    let mut files: Vec<(String, String)> = entries
        .map(|e| {
            e.unwrap_or_else(|e| panic!("cannot list `{dir}`: {e}"))
                .path()
        })
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            let stem = p.file_stem().and_then(|s| s.to_str());
            let stem = stem.unwrap_or_else(|| panic!("`{}`: not a UTF-8 name", p.display()));
            let abs = std::fs::canonicalize(&p)
                .unwrap_or_else(|e| panic!("cannot resolve `{}`: {e}", p.display()));
            println!("cargo:rerun-if-changed={}", p.display());
            let abs = abs
                .to_str()
                .unwrap_or_else(|| panic!("`{}`: not a UTF-8 path", abs.display()));
            (stem.to_owned(), abs.to_owned())
        })
        .collect();
    assert!(
        !files.is_empty(),
        "the data folder `{dir}` has no YAML file"
    );
    files.sort();
    files
}

fn main() {
    let mut out = String::new();
    for (name, dir, doc) in [
        (
            "CHIPS",
            "hardware",
            "The built-in chips: `(id, YAML text)` for each `hardware/*.yaml`, the id being the file stem, sorted by id.",
        ),
        (
            "WORKLOADS",
            "workloads",
            "The built-in workloads: `(id, YAML text)` for each `workloads/*.yaml`, the id being the file stem, sorted by id.",
        ),
        (
            "TEMPLATES",
            "workloads/templates",
            "The built-in workload templates: `(id, YAML text)` for each `workloads/templates/*.yaml`, sorted by id.",
        ),
        (
            "ENGINES",
            "engines",
            "The built-in engines: `(id, YAML text)` for each `engines/*.yaml`, the id being the file stem (`vllm@0.7`), sorted by id.",
        ),
    ] {
        writeln!(out, "/// {doc}").unwrap();
        writeln!(out, "pub static {name}: &[(&str, &str)] = &[").unwrap();
        for (stem, path) in list(dir) {
            writeln!(out, "    ({stem:?}, include_str!({path:?})),").unwrap();
        }
        writeln!(out, "];").unwrap();
    }
    let dest = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("builtin.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("cannot write `{}`: {e}", dest.display()));
}
