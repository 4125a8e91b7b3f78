//! What `stepcost ingest` writes: serving benchmarks' runs as serving cases, a case file in
//! `validate`'s format (the columns of `validation/serving.csv`), one row per figure of a run.

use std::io::{self, Write};

use serde::Serialize;

use crate::study::ingest::Run;

/// What a result file does not say, given by the caller: the rows' stack and where they ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Labels {
    /// The chip (a built-in name or a chip file beside the case file).
    pub chip: String,
    /// The workload (a built-in model or a workload file).
    pub workload: String,
    /// Chips of the instance (tensor parallel).
    pub tp: u64,
    /// The `dtypes` column (`weight=fp8;activation=fp8`), empty for the workload's own.
    pub dtypes: String,
    /// The engine, where the caller names one (else each run's harness's).
    pub engine: Option<String>,
    /// The engine's version (`unknown` where not given).
    pub version: String,
    /// The rows' id prefix: `PREFIX-1`, `PREFIX-2`, ... (the source `validate` groups by).
    pub id_prefix: String,
    /// The `source` column, where the caller gives one (else the file's name and harness).
    pub source: Option<String>,
}

/// One serving case, as the case file's columns.
#[derive(Serialize)]
struct Row<'a> {
    id: String,
    chip: &'a str,
    workload: &'a str,
    params: String,
    dtypes: &'a str,
    fusion: &'a str,
    request: String,
    tp: u64,
    metric: &'a str,
    measured: f64,
    kind: &'a str,
    source: String,
    engine: &'a str,
    version: &'a str,
    library: &'a str,
    harness: &'a str,
    notes: String,
}

/// Writes the runs of each file (its name, its runs) as serving cases, numbered in order.
pub fn write_cases(
    out: &mut dyn Write,
    files: &[(String, Vec<Run>)],
    labels: &Labels,
) -> io::Result<()> {
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    writeln!(
        out,
        "# Serving cases read by `stepcost ingest` from {}; `stepcost validate` prices them.",
        names.join(", ")
    )?;
    let mut csv = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out);
    let mut n = 0;
    for (name, runs) in files {
        for run in runs {
            let source = labels
                .source
                .clone()
                .unwrap_or_else(|| format!("{name} ({})", run.harness.name()));
            let engine = labels.engine.as_deref().unwrap_or(run.engine);
            let (input, output) = run.request;
            for figure in &run.figures {
                n += 1;
                let mut notes = vec![format!("{} {}", figure.statistic, figure.metric)];
                if let Some(model) = &run.model {
                    notes.push(format!("model {model}"));
                }
                if let Some(c) = run.completed {
                    notes.push(format!(
                        "{c} requests; in/out the mean tokens per request, rounded"
                    ));
                }
                csv.serialize(Row {
                    id: format!("{}-{n}", labels.id_prefix),
                    chip: &labels.chip,
                    workload: &labels.workload,
                    params: run.load.param(),
                    dtypes: &labels.dtypes,
                    fusion: "",
                    request: format!("in={input};out={output}"),
                    tp: labels.tp,
                    metric: figure.metric,
                    measured: figure.value,
                    kind: "serving",
                    source: source.clone(),
                    engine,
                    version: &labels.version,
                    library: "",
                    harness: run.harness.name(),
                    notes: notes.join("; "),
                })
                .map_err(io::Error::other)?;
            }
        }
    }
    csv.flush()
}
