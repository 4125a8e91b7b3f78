//! Compiles every `hardware/*.yaml`, `workloads/*.yaml` and `workloads/templates/*.yaml` into
//! the binary, so built-in chips, workloads and templates work from any directory.

use std::fmt::Write as _;
use std::path::Path;

fn list(dir: &str) -> Vec<(String, String)> {
    println!("cargo:rerun-if-changed={dir}");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                .filter_map(|p| {
                    let stem = p.file_stem()?.to_str()?.to_owned();
                    let abs = std::fs::canonicalize(&p).ok()?;
                    println!("cargo:rerun-if-changed={}", p.display());
                    Some((stem, abs.to_str()?.to_owned()))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn main() {
    let mut out = String::new();
    for (name, dir) in [
        ("CHIPS", "hardware"),
        ("WORKLOADS", "workloads"),
        ("TEMPLATES", "workloads/templates"),
    ] {
        writeln!(out, "pub static {name}: &[(&str, &str)] = &[").unwrap();
        for (stem, path) in list(dir) {
            writeln!(out, "    ({stem:?}, include_str!({path:?})),").unwrap();
        }
        writeln!(out, "];").unwrap();
    }
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("builtin.rs");
    std::fs::write(dest, out).unwrap();
}
