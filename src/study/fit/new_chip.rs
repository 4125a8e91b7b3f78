//! A chip file for a machine no built-in describes (`stepcost fit --new-chip NAME`): its
//! peaks are the measurements' own (the largest GEMM rate per data type as the matrix peak,
//! a floor for it: no kernel outruns the unit; the fastest copy's bandwidth as the memory's;
//! the smallest elementwise kernel's time, under 1 ms, as the launch floor), its capacity and name from the
//! `# probe-device:` line `stepcost probe` writes first, and its `expected:` section then fitted
//! to the same rows, as `fit` fits a built-in chip's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::base::dtype::DType;
use crate::base::dtype::Role;
use crate::base::error::Error;
use crate::base::source::Source;
use crate::base::types::TypeKey;
use crate::core::chip::Chip;
use crate::study::validate::{Case, Metric};

/// What the probe's `# probe-device:` line says of the device it ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// The device's own name (`Intel(R) Xeon(R) Processor`, `NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Its memory, in bytes.
    pub memory_bytes: f64,
}

impl Device {
    /// The device line of a probe's case file (`# probe-device: name=...; memory_bytes=...`),
    /// where the text has one with a name and a positive memory.
    pub fn from_case_file(text: &str) -> Option<Device> {
        let line = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("# probe-device:"))?;
        let field = |key: &str| {
            line.split(';').find_map(|part| {
                let (k, v) = part.split_once('=')?;
                (k.trim() == key).then(|| v.trim().to_owned())
            })
        };
        let memory_bytes: f64 = field("memory_bytes")?.parse().ok()?;
        (memory_bytes > 0.0).then(|| Device {
            name: field("name").unwrap_or_default(),
            memory_bytes,
        })
    }
}

/// A new chip named `name`: its file's text up to its `expected:` section (peaks from `cases`'
/// rows naming it), and the chip it loads to with a section to start a fit from. `cases_name` is what
/// the file's comments cite.
pub fn start_chip(
    name: &str,
    cases: &[Case],
    device: Option<&Device>,
    cases_name: &str,
) -> Result<(String, Chip), Error> {
    let own: Vec<&Case> = cases.iter().filter(|c| c.chip == name).collect();
    let missing = |what: &str| {
        Error::value(format!(
            "--new-chip {name}: {cases_name} has no {what} naming chip `{name}` (a new chip's peaks are its own GEMM and stream rows; `stepcost probe` writes them)"
        ))
    };
    let mut matrix: BTreeMap<DType, f64> = BTreeMap::new();
    for c in own.iter().filter(|c| is_gemm(c)) {
        let peak = matrix.entry(gemm_type(c)).or_insert(0.0);
        *peak = peak.max(c.measured * 1e12);
    }
    if matrix.is_empty() {
        return Err(missing("GEMM row (attained_tflops)"));
    }
    let bandwidth = (own.iter())
        .filter(|c| c.workload == "copy" && c.metric == Metric::BandwidthTbS)
        .map(|c| c.measured * 1e12)
        .fold(0.0, f64::max);
    if bandwidth <= 0.0 {
        return Err(missing("copy row (bandwidth_tb_s)"));
    }
    let device = device.ok_or_else(|| {
        Error::value(format!(
            "--new-chip {name}: {cases_name} has no `# probe-device: ...; memory_bytes=N` line for the chip's memory capacity (`stepcost probe` writes it first)"
        ))
    })?;
    // A launch is under 1 ms (the chip file's bound): a longer time is a large kernel's.
    let launch_s = (own.iter())
        .filter(|c| c.workload == "elementwise" && c.metric == Metric::StepTimeUs)
        .map(|c| c.measured * 1e-6)
        .filter(|t| *t < 1e-3)
        .fold(f64::INFINITY, f64::min);
    let head = chip_text(name, &matrix, bandwidth, launch_s, device, cases_name);
    let fractions: Vec<String> = matrix.keys().map(|d| format!("{d}: 0.9")).collect();
    // Where the fit starts (it moves every number inside its bounds).
    let start = format!(
        "{head}expected:\n  matrix: {{{}}}\n  vector: 0.5\n  memory: 0.9\n  small_m_memory: 0.9\n  dram_latency: 1e-7 s\n",
        fractions.join(", ")
    );
    let chip = Chip::load(&Source::from_text(&format!("{name}.yaml"), &start))?;
    Ok((head, chip))
}

/// A GEMM or GEMV row measured as a rate: what sets a matrix peak.
fn is_gemm(c: &Case) -> bool {
    matches!(c.workload.as_str(), "gemm" | "gemv") && c.metric == Metric::AttainedTflops
}

/// The type a GEMM row computes in: its weights' (bf16 where the row does not say).
fn gemm_type(c: &Case) -> DType {
    (c.dtypes.iter())
        .find(|(key, _)| *key == TypeKey::Role(Role::Weight))
        .map_or(DType::Bf16, |(_, f)| f.element())
}

/// The chip file's text, every number with where it comes from.
fn chip_text(
    name: &str,
    matrix: &BTreeMap<DType, f64>,
    bandwidth: f64,
    launch_s: f64,
    device: &Device,
    cases_name: &str,
) -> String {
    let mut t = String::new();
    let peaks: Vec<String> = (matrix.iter())
        .map(|(d, v)| format!("{d}: {} TFLOPS", v / 1e12))
        .collect();
    let device_name = if device.name.is_empty() {
        name
    } else {
        device.name.as_str()
    };
    let _ = writeln!(
        t,
        "# {device_name}: a chip file written by `stepcost fit --new-chip {name}` from the measurements in {cases_name}.\n\
         # Peaks are the measurements' own, floors for the datasheet's: the largest GEMM rate per type, the\n\
         # fastest copy's bandwidth, the smallest elementwise kernel's time as the launch floor."
    );
    let _ = writeln!(t, "name: {}", yaml_string(device_name));
    let _ = writeln!(t, "memory:");
    let _ = writeln!(
        t,
        "  capacity: {} B   # the probe's device line (memory_bytes)",
        device.memory_bytes
    );
    let _ = writeln!(
        t,
        "  bandwidth: {} TB/s   # the fastest copy (read + write counted)",
        bandwidth / 1e12
    );
    let _ = writeln!(
        t,
        "matrix: {{{}}}   # the largest GEMM rate per type",
        peaks.join(", ")
    );
    let _ = writeln!(
        t,
        "vector: {{{}}}   # assumption: the matrix rate (no vector kernel timed)",
        peaks.join(", ")
    );
    if launch_s.is_finite() && launch_s > 0.0 {
        let us = launch_s * 1e6;
        let _ = writeln!(
            t,
            "launch: {us} us   # the smallest elementwise kernel's time\neager_launch: {us} us"
        );
    }
    t
}

/// `text` as a YAML string: quoted, its quotes and backslashes escaped.
fn yaml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}
