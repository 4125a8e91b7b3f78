//! Helpers shared by the integration tests.

#[cfg(feature = "ui")]
pub(crate) mod server;

use assert_cmd::Command;
use stepcost::{
    price, workload::FileKind, Chip, Scenario, ScenarioSpec, Source, StepReport, Workload,
};

/// The `stepcost` binary, with no inherited terminal.
pub(crate) fn stepcost() -> Command {
    Command::cargo_bin("stepcost").expect("the stepcost binary is built")
}

pub(crate) fn chip(name: &str) -> Chip {
    Chip::load(&Source::resolve(name, FileKind::Chip).unwrap()).unwrap()
}

pub(crate) fn workload(name: &str) -> Workload {
    Workload::load(&Source::resolve(name, FileKind::Workload).unwrap()).unwrap()
}

/// Prices a built-in workload on a built-in chip with `sets` and `spec`'s other choices.
pub(crate) fn run(
    workload_name: &str,
    chip_name: &str,
    sets: &[(&str, f64)],
    spec: ScenarioSpec,
) -> StepReport {
    let w = workload(workload_name);
    let spec = ScenarioSpec {
        sets: sets.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect(),
        ..spec
    };
    let scenario = Scenario::resolve(&w, &spec).unwrap();
    price(&w, &chip(chip_name), &scenario).unwrap()
}

/// Parses CSV text into a header and rows.
/// The standard output of a command that must have succeeded (its standard error shown where
/// it did not).
pub(crate) fn succeeded(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

pub(crate) fn csv_rows(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (header, rows)
}

/// The value of `column` in `row`.
pub(crate) fn cell<'a>(header: &[String], row: &'a [String], column: &str) -> &'a str {
    let i = header
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column `{column}` in {header:?}"));
    &row[i]
}

/// Asserts `actual` is within `rel` relative distance of `expected`.
pub(crate) fn assert_close(actual: f64, expected: f64, rel: f64) {
    assert!(
        (actual - expected).abs() <= rel * expected.abs(),
        "{actual} is not within {rel} of {expected}"
    );
}

/// A scenario spec in roofline mode: the seeds' numbers and hand counts are roofline numbers.
/// The `fitted` engine: the chip file's constants and no engine's own terms, as the tests that
/// count the abstract stack by hand price it.
pub(crate) fn fitted_engine() -> Option<std::sync::Arc<stepcost::engine::Engine>> {
    Some(stepcost::engine::builtin("fitted").unwrap())
}

pub(crate) fn roofline() -> ScenarioSpec {
    ScenarioSpec {
        mode: stepcost::Mode::Roofline,
        ..ScenarioSpec::default()
    }
}

/// Every file under `dir` (hidden and temporary ones included) with its bytes, to check that
/// a command changed nothing but what it was asked to write.
pub(crate) fn snapshot(
    dir: &std::path::Path,
) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), bytes);
            }
        }
    }
    files
}
