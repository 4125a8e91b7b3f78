//! The `stepcost` command: parses arguments, calls the library, prints. Exit status 0 on
//! success (a closed pipe counts as success), 1 for bad input, 2 for an internal error.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use stepcost::dtype::parse_role_dtype;
use stepcost::output::{write_atomically, AtomicFile};
use stepcost::report::document::{self, Kind};
use stepcost::report::{self, Format};
use stepcost::scenario::parse_set;
use stepcost::sweep;
use stepcost::{
    builtin, price, Chip, DType, FileKind, Mode, Role, Scenario, ScenarioSpec, Source, StepReport,
    Workload,
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
    /// Price the cartesian product of chips, param values, data types and fusion plans,
    /// streamed to CSV or JSON Lines in product order
    #[command(after_long_help = SWEEP_HELP)]
    Sweep(SweepArgs),
    /// One scenario on several chips side by side, with speeds relative to the first chip
    Compare(CompareArgs),
    /// Chips needed for a throughput target: the best batch per chip and data types within a
    /// latency bound and one chip's memory, ranked by cost
    Plan(PlanArgs),
    /// Turn a Hugging Face config.json into a workload file (Llama, Mistral, Mixtral, Qwen2,
    /// Qwen3, Qwen3-MoE, DeepSeek-V3, gpt-oss and Gemma-2 families)
    Import {
        /// The config.json
        config: PathBuf,
        /// Write the workload to FILE instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Price measured cases and report each prediction's error, then the median and 90th
    /// percentile overall, per chip, per kind and per data type
    Validate {
        /// Case file (CSV): id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,notes
        cases: PathBuf,
        /// Pricing mode
        #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
        mode: ModeArg,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Draw a picture as SVG: the roofline with the step's kernels on it, or curves from a
    /// sweep CSV
    Plot {
        #[command(subcommand)]
        picture: PlotCommand,
    },
    /// A self-contained report of one scenario on one or more chips: summary, every kernel,
    /// what bounds the step, which lever moves it, and the roofline picture
    Report(ReportArgs),
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
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// Also list every kernel (op or fused group)
    #[arg(long)]
    per_op: bool,
    /// Also price a whole request at the scenario's batch: in=I,out=O tokens per sequence
    /// (time to first token, time per output token, end to end, output tokens/s)
    #[arg(long, value_name = "in=I,out=O", value_parser = stepcost::validate::parse_request)]
    request: Option<(u64, u64)>,
    #[command(flatten)]
    output: OutputArgs,
}

const SWEEP_HELP: &str = "\
Axes (the sweep is their cartesian product):
  --set NAME=LIST     values of a param; LIST is comma-separated numbers and ranges:
                        1,2,4            a list
                        1..=256          1, 2, ..., 256 (inclusive; `1..256` excludes 256)
                        1..=256:x2       1, 2, 4, ..., 256 (geometric)
                        128..=4096:+128  128, 256, ..., 4096 (arithmetic)
                        1,8..=64:x2,100  lists and ranges mixed
  --dtype ROLE=LIST   data types of a role, e.g. weight=bf16,fp8,int4
  --fusion LIST|all   fusion plans of the workload
  --chip LIST|all     chips (built-in names or files), `all` for every built-in chip

Rows come in product order: chip, then params in the order given, then data types, then
fusion plan. Columns: workload, chip, mode, fusion, weight_dtype, activation_dtype, kv_dtype,
one per param, then the totals of `stepcost run --format csv` and `error` (filled when a
scenario cannot be priced, e.g. a data type the chip lacks). With --per-op, one row per kernel.

Examples:
  stepcost sweep llama-3.1-70b --chip h100-sxm,h200 --set batch=1..=256:x2 \\
      --dtype weight=bf16,fp8 --fusion none,flash --out sweep.csv
  stepcost sweep llama-3.1-70b --chip all --set batch=1..=1024 --set context=1024,8192 \\
      --skip-invalid --format json --out sweep.jsonl";

#[derive(Args)]
struct SweepArgs {
    /// Workload: built-in name or YAML file
    workload: String,
    /// Chips, comma-separated (built-in names or YAML files), or `all`
    #[arg(long, value_delimiter = ',', required = true)]
    chip: Vec<String>,
    /// Values of a param: NAME=LIST of numbers and ranges (see below; repeatable)
    #[arg(long = "set", value_name = "NAME=LIST", value_parser = parse_axis)]
    sets: Vec<(String, Vec<f64>)>,
    /// Data types of a role: ROLE=LIST, e.g. weight=bf16,fp8 (repeatable)
    #[arg(long = "dtype", value_name = "ROLE=LIST", value_parser = parse_dtype_axis)]
    dtypes: Vec<(Role, Vec<DType>)>,
    /// Fusion plans, comma-separated, or `all` (default: the workload's default plan)
    #[arg(long, value_delimiter = ',')]
    fusion: Vec<String>,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    mode: ModeArg,
    /// One row per kernel per scenario (long format) instead of one per scenario
    #[arg(long)]
    per_op: bool,
    /// Also price a whole request at each scenario: in=I,out=O tokens per sequence
    #[arg(long, value_name = "in=I,out=O", value_parser = stepcost::validate::parse_request)]
    request: Option<(u64, u64)>,
    /// Leave out scenarios that cannot be priced instead of writing a row with `error` filled
    #[arg(long)]
    skip_invalid: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t = StreamFormat::Csv)]
    format: StreamFormat,
    /// Write to FILE instead of stdout (written whole, or not at all)
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Refuse grids larger than this many scenarios
    #[arg(long, default_value_t = sweep::DEFAULT_MAX_SCENARIOS)]
    max_scenarios: u64,
    /// No progress bar (it is shown only when stderr is a terminal anyway)
    #[arg(long)]
    quiet: bool,
}

#[derive(Args)]
struct CompareArgs {
    #[command(flatten)]
    scenario: ChipsScenario,
    #[command(flatten)]
    output: OutputArgs,
}

/// One scenario's choices, as `run`, `compare`, `plot roofline` and `report` take them.
#[derive(Args)]
struct ScenarioArgs {
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
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    mode: ModeArg,
    /// Let each collective's transfer overlap the kernel before it (off: they run in turn)
    #[arg(long)]
    overlap_comm: bool,
}

impl ScenarioArgs {
    fn spec(self) -> ScenarioSpec {
        ScenarioSpec {
            sets: self.sets,
            dtypes: self.dtypes,
            fusion: self.fusion,
            mode: self.mode.into(),
            overlap_comm: self.overlap_comm,
        }
    }
}

#[derive(Subcommand)]
enum PlotCommand {
    /// Log-log roofline of each chip (memory slope, compute roofs, ridge points; achievable
    /// roofs dashed in expected mode) with every kernel at its intensity and attained rate,
    /// marker area proportional to its share of the step
    Roofline {
        #[command(flatten)]
        scenario: ChipsScenario,
        /// Write the SVG to FILE instead of stdout
        #[arg(long, value_name = "FILE.svg")]
        out: Option<PathBuf>,
    },
    /// Line chart of two columns of a sweep CSV, one line per value of --series
    Sweep {
        /// The CSV written by `stepcost sweep`
        csv: PathBuf,
        /// Column for the horizontal axis, e.g. batch
        #[arg(long)]
        x: String,
        /// Column for the vertical axis, e.g. tokens_per_s
        #[arg(long)]
        y: String,
        /// Column whose values make separate lines, e.g. chip
        #[arg(long)]
        series: Option<String>,
        /// Logarithmic horizontal axis
        #[arg(long)]
        log_x: bool,
        /// Logarithmic vertical axis
        #[arg(long)]
        log_y: bool,
        /// Write the SVG to FILE instead of stdout
        #[arg(long, value_name = "FILE.svg")]
        out: Option<PathBuf>,
    },
}

/// A workload, one scenario and the chips to price it on.
#[derive(Args)]
struct ChipsScenario {
    /// Workload: built-in name or YAML file
    workload: String,
    /// Chips, comma-separated (built-in names or YAML files), or `all`
    #[arg(long, value_delimiter = ',', required = true)]
    chip: Vec<String>,
    #[command(flatten)]
    scenario: ScenarioArgs,
}

/// A scenario priced on each chip asked for.
struct Priced {
    workload: Workload,
    scenario: Scenario,
    reports: Vec<(Chip, StepReport)>,
}

impl Priced {
    fn pairs(&self) -> Vec<(&Chip, &StepReport)> {
        self.reports.iter().map(|(c, r)| (c, r)).collect()
    }
}

impl ChipsScenario {
    fn price(self) -> Result<Priced> {
        let workload = Workload::load(&Source::resolve(&self.workload, FileKind::Workload)?)?;
        let scenario = Scenario::resolve(&workload, &self.scenario.spec())?;
        let priced = load_chips(&self.chip)?
            .into_iter()
            .map(|chip| {
                let report = price(&workload, &chip, &scenario)?;
                Ok((chip, report))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Priced {
            workload,
            scenario,
            reports: priced,
        })
    }
}

#[derive(Args)]
struct ReportArgs {
    #[command(flatten)]
    scenario: ChipsScenario,
    /// The report: FILE.md (the roofline written beside it as FILE.svg) or FILE.html (the
    /// roofline inline)
    #[arg(long, value_name = "FILE.md|FILE.html")]
    out: PathBuf,
}

#[derive(Args)]
struct PlanArgs {
    /// Workload: built-in name or YAML file (it needs a `batch` param)
    workload: String,
    /// Tokens per second the deployment must serve
    #[arg(long, value_name = "N")]
    target_tokens_per_s: f64,
    /// Most milliseconds per output token a sequence may see
    #[arg(long, value_name = "L")]
    max_ms_per_token: Option<f64>,
    /// Tokens already in each sequence's KV cache (the workload's `context` param)
    #[arg(long, value_name = "C")]
    context: Option<f64>,
    /// Chips to consider, comma-separated, or `all`
    #[arg(long, value_delimiter = ',', default_value = "all")]
    chip: Vec<String>,
    /// Data types to try: ROLE=LIST (repeatable; default weight=bf16,fp8); every combination
    /// is tried on every chip
    #[arg(long = "dtype", value_name = "ROLE=LIST", value_parser = parse_dtype_axis)]
    dtypes: Vec<(Role, Vec<DType>)>,
    /// Override a param, e.g. --set tokens=1 (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    sets: Vec<(String, f64)>,
    /// Fusion plan of the workload
    #[arg(long)]
    fusion: Option<String>,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    mode: ModeArg,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StreamFormat {
    Csv,
    /// JSON Lines: one object per line
    Json,
}

fn parse_axis(text: &str) -> Result<(String, Vec<f64>), String> {
    let (name, list) = text
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=LIST (e.g. batch=1..=64:x2), found `{text}`"))?;
    Ok((name.trim().to_owned(), sweep::parse_values(list)?))
}

fn parse_dtype_axis(text: &str) -> Result<(Role, Vec<DType>), String> {
    let (role, list) = text
        .split_once('=')
        .ok_or_else(|| format!("expected ROLE=LIST (e.g. weight=bf16,fp8), found `{text}`"))?;
    let types = list
        .split(',')
        .map(|d| d.parse::<DType>())
        .collect::<Result<Vec<_>, _>>()?;
    Ok((role.parse()?, types))
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Table,
    Csv,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    /// What real kernels achieve: achievable fractions of peak and bandwidth, a fixed cost per
    /// kernel, tile and wave quantization, cache hits, dequantization
    Expected,
    /// max(FLOPs / peak, bytes / bandwidth) with datasheet peaks: the ceiling
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
            ModeArg::Expected => Mode::Expected,
            ModeArg::Roofline => Mode::Roofline,
        }
    }
}

fn main() -> ExitCode {
    // Bad arguments are bad input: exit 1 (clap's own default is 2, which here means a bug).
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS // --help, --version
            };
        }
    };
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
            let all = ["all".to_owned()];
            let chips = load_chips(if chips.is_empty() { &all } else { &chips })?;
            let mut buffer = Vec::new();
            report::write_chips(&mut buffer, &chips, output.format.into())?;
            emit(&buffer, output.out.as_deref())?;
        }
        Command::Run(args) => {
            let chip = Chip::load(&Source::resolve(&args.chip, FileKind::Chip)?)?;
            let workload = Workload::load(&Source::resolve(&args.workload, FileKind::Workload)?)?;
            let scenario = Scenario::resolve(&workload, &args.scenario.spec())?;
            let mut report = price(&workload, &chip, &scenario)?;
            if let Some(request) = args.request {
                report = report.with_request(&workload, &chip, &scenario, request)?;
            }
            let mut buffer = Vec::new();
            report::write_run(&mut buffer, &report, args.per_op, args.output.format.into())?;
            emit(&buffer, args.output.out.as_deref())?;
        }
        Command::Sweep(args) => return sweep_command(args),
        Command::Compare(args) => {
            let reports: Vec<StepReport> = (args.scenario.price()?.reports)
                .into_iter()
                .map(|(_, report)| report)
                .collect();
            let mut buffer = Vec::new();
            report::write_compare(&mut buffer, &reports, args.output.format.into())?;
            emit(&buffer, args.output.out.as_deref())?;
        }
        Command::Plan(args) => plan_command(args)?,
        Command::Import { config, out } => {
            let source = Source::read(&config)?;
            let imported = stepcost::import::import(&source.text, &source.name)?;
            // The result must load: a config whose numbers make no graph is caught here.
            let name = out.as_ref().unwrap_or(&config).display().to_string();
            Workload::load(&Source::from_text(&name, &imported.yaml))?;
            if !imported.not_understood.is_empty() {
                eprintln!(
                    "note: fields of {} not understood, left out of the step: {}",
                    source.name,
                    imported.not_understood.join(", ")
                );
            }
            emit(imported.yaml.as_bytes(), out.as_deref())?;
        }
        Command::Validate {
            cases,
            mode,
            output,
        } => {
            let source = Source::read(&cases)?;
            let outcomes = stepcost::validate::validate(
                stepcost::validate::read_cases(&source)?,
                &cases,
                mode.into(),
            );
            let stats = stepcost::validate::error_stats(&outcomes);
            let mut buffer = Vec::new();
            report::write_validation(&mut buffer, &outcomes, &stats, output.format.into())?;
            emit(&buffer, output.out.as_deref())?;
            let skipped = outcomes.iter().filter(|o| o.predicted.is_err()).count();
            if skipped > 0 {
                anyhow::bail!(
                    "{skipped} of {} cases in {} could not be priced (listed as skipped in the report)",
                    outcomes.len(),
                    source.name
                );
            }
        }
        Command::Check { files, kind } => return check(&files, kind),
        Command::Plot { picture } => plot_command(picture)?,
        Command::Report(args) => report_command(args)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn plot_command(picture: PlotCommand) -> Result<()> {
    let (svg, out) = match picture {
        PlotCommand::Roofline { scenario, out } => {
            (stepcost::plot::roofline(&scenario.price()?.pairs())?, out)
        }
        PlotCommand::Sweep {
            csv,
            x,
            y,
            series,
            log_x,
            log_y,
            out,
        } => {
            let source = Source::read(&csv)?;
            let chart = stepcost::plot::SweepChart {
                x,
                y,
                series,
                log_x,
                log_y,
            };
            (
                stepcost::plot::sweep(&source.text, &source.name, &chart)?,
                out,
            )
        }
    };
    emit(svg.as_bytes(), out.as_deref())
}

fn report_command(args: ReportArgs) -> Result<()> {
    let kind = match args.out.extension().and_then(|e| e.to_str()) {
        Some("md") => Kind::Markdown,
        Some("html" | "htm") => Kind::Html,
        _ => anyhow::bail!(
            "--out {}: the report is Markdown or HTML; name the file FILE.md or FILE.html",
            args.out.display()
        ),
    };
    let priced = args.scenario.price()?;
    let svg = stepcost::plot::roofline(&priced.pairs())?;
    let mut sections = Vec::new();
    for (chip, report) in &priced.reports {
        let levers = stepcost::lever::levers(&priced.workload, chip, &priced.scenario, report)?;
        sections.push((report, levers));
    }
    let svg_path = args.out.with_extension("svg");
    let svg_name = svg_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = match kind {
        Kind::Markdown => {
            emit(svg.as_bytes(), Some(&svg_path))?;
            document::markdown(&sections, &svg_name)
        }
        Kind::Html => document::html(&sections, &svg),
    };
    emit(text.as_bytes(), Some(&args.out))
}

/// Loads the chips named on the command line; `all` is every built-in chip.
fn load_chips(names: &[String]) -> Result<Vec<Chip>> {
    let mut chips = Vec::new();
    for name in names {
        if name == "all" {
            for (id, _) in builtin::CHIPS {
                chips.push(Chip::load(&Source::resolve(id, FileKind::Chip)?)?);
            }
        } else {
            chips.push(Chip::load(&Source::resolve(name, FileKind::Chip)?)?);
        }
    }
    Ok(chips)
}

/// `plan`: every chip and combination of the data types asked for (weight bf16 and fp8 when
/// none are), at the cheapest layout.
fn plan_command(args: PlanArgs) -> Result<()> {
    let workload = Workload::load(&Source::resolve(&args.workload, FileKind::Workload)?)?;
    let mut sets = args.sets;
    if let Some(context) = args.context {
        sets.push(("context".into(), context));
    }
    let spec = ScenarioSpec {
        sets,
        dtypes: Vec::new(),
        fusion: args.fusion,
        mode: args.mode.into(),
        overlap_comm: false,
    };
    let scenario = Scenario::resolve(&workload, &spec)?;
    let axes = if args.dtypes.is_empty() {
        vec![(Role::Weight, vec![DType::Bf16, DType::Fp8])]
    } else {
        args.dtypes
    };
    let mut dtype_choices = vec![scenario.dtypes];
    for (role, types) in &axes {
        dtype_choices = dtype_choices
            .iter()
            .flat_map(|base| {
                types.iter().map(move |t| {
                    let mut d = *base;
                    d.set(*role, *t);
                    d
                })
            })
            .collect();
    }
    let request = stepcost::plan::PlanRequest {
        target_tokens_per_s: args.target_tokens_per_s,
        max_ms_per_token: args.max_ms_per_token,
        scenario,
        dtype_choices,
    };
    let entries = stepcost::plan::plan(&workload, &load_chips(&args.chip)?, &request)?;
    let mut buffer = Vec::new();
    report::write_plan(
        &mut buffer,
        &workload.name,
        &request,
        &entries,
        args.output.format.into(),
    )?;
    emit(&buffer, args.output.out.as_deref())?;
    Ok(())
}

fn sweep_command(args: SweepArgs) -> Result<ExitCode> {
    let workload = Workload::load(&Source::resolve(&args.workload, FileKind::Workload)?)?;
    let chips = load_chips(&args.chip)?;
    let mut params = Vec::new();
    for (name, values) in args.sets {
        let index = workload.param_index(&name)?;
        if params.iter().any(|(i, _)| *i == index) {
            anyhow::bail!("param `{name}` is set twice; give all its values in one --set");
        }
        params.push((index, values));
    }
    let mut dtypes: Vec<(Role, Vec<DType>)> = Vec::new();
    for (role, types) in args.dtypes {
        if dtypes.iter().any(|(r, _)| *r == role) {
            anyhow::bail!("role `{role}` is set twice; give all its types in one --dtype");
        }
        dtypes.push((role, types));
    }
    let fusions = match args.fusion.as_slice() {
        [] => vec![workload.default_fusion],
        [all] if all == "all" => (0..workload.fusion_plans.len()).collect(),
        names => names
            .iter()
            .map(|n| workload.fusion_index(n))
            .collect::<Result<Vec<_>, _>>()?,
    };
    let grid = sweep::Grid {
        workload: &workload,
        chips,
        params,
        dtypes,
        fusions,
        mode: args.mode.into(),
    };
    let total = match grid.len() {
        Some(n) if n <= args.max_scenarios => n,
        size => anyhow::bail!(
            "the sweep has {} scenarios, more than --max-scenarios {}; narrow an axis or raise the limit",
            size.map_or("more than 2^64".to_owned(), |n| n.to_string()),
            args.max_scenarios
        ),
    };

    let bar = if args.quiet || !io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:40} {human_pos}/{human_len} scenarios  {per_sec}  ETA {eta}",
        ) {
            bar.set_style(style);
        }
        bar
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    // A second Ctrl-C ends at once; the final file is still never half-written.
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    let options = sweep::SweepOptions {
        per_op: args.per_op,
        json: args.format == StreamFormat::Json,
        skip_invalid: args.skip_invalid,
        request: args.request,
    };
    let progress = |n: u64| bar.inc(n);
    let (stats, file) = match &args.out {
        Some(path) => {
            let mut file = AtomicFile::create(path)
                .with_context(|| format!("cannot write `{}`", path.display()))?;
            let stats = sweep::run(&grid, options, file.writer(), &progress, &cancel)
                .with_context(|| format!("cannot write `{}`", path.display()))?;
            (stats, Some(file))
        }
        None => {
            let stdout = io::BufWriter::with_capacity(1 << 20, io::stdout());
            (
                sweep::run(&grid, options, stdout, &progress, &cancel)?,
                None,
            )
        }
    };
    bar.finish_and_clear();
    if stats.cancelled {
        eprintln!(
            "interrupted: {} of {total} scenarios priced ({} rows){}",
            stats.scenarios,
            stats.rows,
            match &args.out {
                Some(path) => format!("; `{}` was not written", path.display()),
                None => String::new(),
            }
        );
        return Ok(ExitCode::from(130));
    }
    if let (Some(file), Some(path)) = (file, &args.out) {
        file.commit()
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        if !args.quiet && io::stderr().is_terminal() {
            eprintln!(
                "{} scenarios, {} rows ({} could not be priced) written to `{}`",
                stats.scenarios,
                stats.rows,
                stats.errors,
                path.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` to stdout, or whole to `path` (through a temporary file renamed into place).
fn emit(bytes: &[u8], path: Option<&Path>) -> Result<()> {
    match path {
        None => {
            let mut stdout = io::stdout().lock();
            stdout.write_all(bytes)?;
            stdout.flush()?;
            Ok(())
        }
        Some(path) => write_atomically(path, bytes)
            .with_context(|| format!("cannot write `{}`", path.display())),
    }
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
        FileKind::Workload | FileKind::Template => {
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
