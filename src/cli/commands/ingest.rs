//! `ingest`: a serving benchmark's result (vLLM's `bench serve`, SGLang's `bench_serving`,
//! GenAI-Perf's `profile`) as serving cases that `validate` prices and `fit` fits.

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::base::source::Source;
use crate::cli::output::{self, emit, Inputs};
use crate::export::ingest::{write_cases, Labels};
use crate::study::ingest::read_results;

/// `stepcost ingest`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct IngestArgs {
    /// Result files: `vllm bench serve --save-result` JSON, `sglang.bench_serving
    /// --output-file` JSON lines, GenAI-Perf's profile_export_genai_perf.json
    #[arg(required = true, value_name = "RESULT")]
    results: Vec<PathBuf>,
    /// The chip the runs ran on (a built-in name or a chip file's path): results do not say
    #[arg(long)]
    chip: String,
    /// The workload the runs served (a built-in model such as `llama-3.1-8b`, or a file)
    #[arg(long)]
    workload: String,
    /// Chips of the serving instance (its tensor-parallel size)
    #[arg(long, default_value_t = 1)]
    tp: u64,
    /// Data types as `validate`'s dtypes column writes them (`weight=fp8;activation=fp8`);
    /// default: the workload's own
    #[arg(long, default_value = "")]
    dtypes: String,
    /// The serving engine (a built-in engine id: `vllm`, `sglang`, `trtllm`); default: vLLM's
    /// results `vllm`, SGLang's `sglang`, GenAI-Perf's `unknown` (the chip's default engine)
    #[arg(long)]
    engine: Option<String>,
    /// The engine's version, for the `version` column
    #[arg(long, default_value = "unknown")]
    version: String,
    /// The rows' id prefix (`validate --cross-validate` holds out each prefix as one source)
    #[arg(long, default_value = "BENCH")]
    id: String,
    /// The `source` column (default: the file's name and its harness)
    #[arg(long)]
    source: Option<String>,
    /// Where the case file goes (default: stdout); never one of the results
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Reads the results and writes their serving cases.
pub(crate) fn run(args: IngestArgs) -> Result<()> {
    if args.tp == 0 {
        bail!("--tp: expected at least 1 chip");
    }
    if args.id.is_empty() || !args.id.chars().all(|c| c.is_ascii_alphanumeric()) {
        bail!(
            "--id: `{}` is not a prefix of letters and digits (ids are PREFIX-1, PREFIX-2, ...)",
            args.id
        );
    }
    let mut inputs = Inputs::default();
    for path in &args.results {
        inputs.path(path);
    }
    let plan = output::plan(args.out.as_deref(), &inputs)?;
    let mut files = Vec::new();
    for path in &args.results {
        let source = Source::read(path)?;
        let runs = read_results(&source.text, &source.name)?;
        files.push((path.display().to_string(), runs));
    }
    let labels = Labels {
        chip: args.chip,
        workload: args.workload,
        tp: args.tp,
        dtypes: args.dtypes,
        engine: args.engine,
        version: args.version,
        id_prefix: args.id,
        source: args.source,
    };
    let mut bytes = Vec::new();
    write_cases(&mut bytes, &files, &labels)?;
    emit(plan, &bytes)
}
