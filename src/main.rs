//! The `stepcost` command: parses arguments, calls the library, prints. Exit status 0 on
//! success (a closed pipe counts as success), 1 for bad input, 2 for an internal error.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use stepcost::dtype::parse_role_dtype;
use stepcost::report::{self, Format};
use stepcost::scenario::parse_set;
use stepcost::{
    builtin, price, Chip, DType, FileKind, Mode, Role, Scenario, ScenarioSpec, Source, Workload,
};

#[derive(Parser)]
#[command(
    name = "stepcost",
    version,
    about = "Price one transformer step (prefill or decode) on an accelerator's roofline",
    long_about = "Price one transformer step (prefill or decode) on an accelerator's roofline.\n\n\
        WORKLOAD and CHIP are a path to a YAML file or the name of a built-in one \
        (`stepcost chips` lists the chips; built-in workloads: elementwise, gemv, gemm, llama-3.1-70b)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List chips: peaks per data type, bandwidth, capacity and ridge points
    Chips {
        /// Chips to list (built-in names or YAML files); all built-ins when omitted
        chips: Vec<String>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Price one scenario: the step's totals, and with --per-op every kernel
    Run(RunArgs),
    /// Validate chip and workload files and report every problem with its line
    Check {
        /// Files to check
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// What the files are; guessed from their top-level keys when omitted
        #[arg(long, value_enum)]
        kind: Option<KindArg>,
    },
}

#[derive(Args)]
struct OutputArgs {
    /// Output format: human-scaled table, or raw numbers as CSV or JSON
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
    /// Write to FILE instead of stdout (written whole, or not at all)
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct RunArgs {
    /// Workload: built-in name or YAML file
    workload: String,
    /// Chip: built-in name or YAML file
    #[arg(long)]
    chip: String,
    /// Override a param, e.g. --set batch=32 (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    sets: Vec<(String, f64)>,
    /// Data type of a role (weight, activation, kv), e.g. --dtype weight=fp8 (repeatable);
    /// types: fp32, tf32, bf16, fp16, fp8, fp6, int8, fp4, int4
    #[arg(long = "dtype", value_name = "ROLE=DTYPE", value_parser = parse_role_dtype)]
    dtypes: Vec<(Role, DType)>,
    /// Fusion plan of the workload (default: the workload's default_fusion, else `none`)
    #[arg(long)]
    fusion: Option<String>,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Roofline)]
    mode: ModeArg,
    /// Also list every kernel (op or fused group)
    #[arg(long)]
    per_op: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Table,
    Csv,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    /// max(FLOPs / peak, bytes / bandwidth) with datasheet peaks
    Roofline,
}

#[derive(Clone, Copy, ValueEnum)]
enum KindArg {
    Chip,
    Workload,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        }
    }
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Roofline => Mode::Roofline,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match std::panic::catch_unwind(|| run(cli)) {
        Ok(Ok(code)) => code,
        Ok(Err(err)) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Ok(Err(err)) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
        Err(_) => {
            eprintln!(
                "error: internal error (a bug in stepcost); please report it with the command line"
            );
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Chips { chips, output } => {
            let names: Vec<String> = if chips.is_empty() {
                builtin::CHIPS
                    .iter()
                    .map(|(id, _)| (*id).to_owned())
                    .collect()
            } else {
                chips
            };
            let chips = names
                .iter()
                .map(|name| Ok(Chip::load(&Source::resolve(name, FileKind::Chip)?)?))
                .collect::<Result<Vec<_>>>()?;
            let mut buffer = Vec::new();
            report::write_chips(&mut buffer, &chips, output.format.into())?;
            emit(&buffer, output.out.as_deref())?;
        }
        Command::Run(args) => {
            let chip = Chip::load(&Source::resolve(&args.chip, FileKind::Chip)?)?;
            let workload = Workload::load(&Source::resolve(&args.workload, FileKind::Workload)?)?;
            let spec = ScenarioSpec {
                sets: args.sets,
                dtypes: args.dtypes,
                fusion: args.fusion,
                mode: args.mode.into(),
            };
            let scenario = Scenario::resolve(&workload, &spec)?;
            let report = price(&workload, &chip, &scenario)?;
            let mut buffer = Vec::new();
            report::write_run(&mut buffer, &report, args.per_op, args.output.format.into())?;
            emit(&buffer, args.output.out.as_deref())?;
        }
        Command::Check { files, kind } => return check(&files, kind),
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` to stdout, or whole to `path` through a temporary file renamed into place.
fn emit(bytes: &[u8], path: Option<&Path>) -> Result<()> {
    let Some(path) = path else {
        let mut stdout = io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()?;
        return Ok(());
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("`{}` is not a file name", path.display()))?;
    let temp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = std::fs::write(&temp, bytes).and_then(|()| std::fs::rename(&temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result.with_context(|| format!("cannot write `{}`", path.display()))
}

fn guess_kind(text: &str) -> Option<FileKind> {
    let keys: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with([' ', '\t', '#', '-']))
        .filter_map(|l| l.split(':').next())
        .collect();
    if keys
        .iter()
        .any(|k| matches!(*k, "blocks" | "ops" | "params" | "tensors"))
    {
        Some(FileKind::Workload)
    } else if keys
        .iter()
        .any(|k| matches!(*k, "matrix" | "memory" | "vector"))
    {
        Some(FileKind::Chip)
    } else {
        None
    }
}

fn check(files: &[PathBuf], kind: Option<KindArg>) -> Result<ExitCode> {
    let mut failed = false;
    for path in files {
        let outcome = check_one(path, kind);
        match outcome {
            Ok(summary) => println!("ok: {}: {summary}", path.display()),
            Err(err) => {
                failed = true;
                eprintln!("{err:#}");
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn check_one(path: &Path, kind: Option<KindArg>) -> Result<String> {
    let source = Source::read(path)?;
    let kind = match kind {
        Some(KindArg::Chip) => FileKind::Chip,
        Some(KindArg::Workload) => FileKind::Workload,
        None => guess_kind(&source.text).with_context(|| {
            format!(
                "{}: cannot tell a chip file (with `memory:` and `matrix:`) from a workload file (with `blocks:`); pass --kind",
                source.name
            )
        })?,
    };
    Ok(match kind {
        FileKind::Chip => {
            let chip = Chip::load(&source)?;
            let types: Vec<&str> = chip.matrix.peaks().map(|(d, _)| d.name()).collect();
            format!("chip `{}` (matrix unit: {})", chip.name, types.join(", "))
        }
        FileKind::Workload => {
            let workload = Workload::load(&source)?;
            // Evaluating at the defaults finds what only values reveal: a division by zero,
            // a dimension that is not positive.
            workload.evaluate(&[], &mut workload.new_evaluation())?;
            let plans: Vec<&str> = workload
                .fusion_plans
                .iter()
                .map(|p| p.name.as_str())
                .collect();
            format!(
                "workload `{}` ({} params, {} blocks, {} ops; fusion plans: {})",
                workload.name,
                workload.params.len(),
                workload.blocks.len(),
                workload.ops.len(),
                plans.join(", ")
            )
        }
    })
}
