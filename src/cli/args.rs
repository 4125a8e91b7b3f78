//! The command line as typed ("low" arguments): clap types, value parsers, and the conversions
//! to the library's own types. Nothing here prices or prints.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::announced::AnnouncedArg;
use super::columns::ShapeArgs;
pub(crate) use super::cost::CostArgs;
use super::help::SWEEP_HELP;
pub(crate) use super::plan_command::PlanArgs;
pub(crate) use super::scenario::ScenarioFileArgs;
use crate::base::format::Format as DataFormat;
use crate::base::parse::AxisValues;
pub(crate) use crate::base::parse::{number_in, parse_axis, parse_dtype_axis, parse_set, whole_in};
use crate::base::ranges;
use crate::base::source::FileKind;
use crate::base::types::{parse_type, TypeKey};
use crate::core::scenario::{Mode, ScenarioSpec};
use crate::export::stream::StreamFormat as Stream;
use crate::export::OutputFormat;
use crate::study::sweep::ChipAxis;
pub(crate) use crate::study::validate::parse_request;

#[derive(Parser)]
#[command(
    name = "stepcost",
    version,
    about = "Price one transformer step (prefill or decode) on an accelerator's roofline"
)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// The flags typed (set by `cli::parse`): a scenario file's key gives way only to them.
    #[arg(skip)]
    pub(crate) given: super::scenario::Given,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// Continuous batching in steady state: per chip and concurrency, TTFT, TPOT, tokens/s
    /// per user and per chip and $/M tokens, each with its 80 % band in expected mode; with
    /// --frontier, each chip's Pareto frontier
    Serving(Box<super::serving_command::ServingArgs>),
    /// Turn a Hugging Face config.json into a workload file (Llama, Mistral, Mixtral, Qwen2,
    /// Qwen3, Qwen3-MoE, DeepSeek-V3, gpt-oss, Gemma-2 and Gemma-3 families)
    Import {
        /// The config.json
        config: PathBuf,
        /// Write the workload to FILE instead of stdout (`-` is stdout); never the config itself
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
        /// Hold out each source (a row's id prefix: `MAMF` of `MAMF-7`) in turn, fit its
        /// chips' expected-mode constants to the other sources' rows, predict its rows, and
        /// report those errors beside the in-sample ones (a table)
        #[arg(long)]
        cross_validate: bool,
        /// With --cross-validate: write each row's held-out residual, ln(measured / predicted
        /// step time), to FILE (`validation/band.csv` is this for the shipped set: the 80 %
        /// band of every expected-mode number is taken from it)
        #[arg(long, value_name = "FILE", requires = "cross_validate")]
        residuals: Option<PathBuf>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Fit a chip's expected-mode constants (fractions of peak and bandwidth, DRAM latency) to
    /// measured cases, by least squares on log(predicted / measured); write them as an
    /// `expected:` section
    Fit(super::fit_command::FitArgs),
    /// Simulate serving request by request: arrivals at a rate or from a trace, a
    /// continuous-batching scheduler with chunked prefill, KV blocks and preemption, every
    /// iteration priced; latency percentiles, throughput, goodput, whether the queue keeps up;
    /// in expected mode each percentile and rate with its 80 % band (the same arrivals
    /// simulated again at each end of the steps' bands)
    Simulate(Box<super::simulate_command::SimulateArgs>),
    /// Draw a picture as SVG: the roofline with the step's kernels on it, or curves from a
    /// sweep CSV
    Plot {
        #[command(subcommand)]
        picture: PlotCommand,
    },
    /// A self-contained report of one scenario on one or more chips: summary, every kernel,
    /// what bounds the step, which lever moves it, and the roofline picture
    Report(ReportArgs),
    /// List the built-in workloads: models with their parameters (in all and read per decoded
    /// token), layers, hidden width and checkpoint types, then the kernel microbenchmarks
    Workloads {
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Print a built-in chip, workload or template file as shipped, comments included, to
    /// copy and edit
    Show(super::show::ShowArgs),
    #[cfg(feature = "ui")]
    Ui(super::ui_command::UiArgs),
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
pub(crate) struct OutputArgs {
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    /// Write to FILE instead of stdout (`-` is stdout), whole or not at all; FILE is a
    /// regular file (through its symlinks) or a new name, never one of the command's inputs
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
}

/// The format of a command's output, and how its CSV writes text.
#[derive(Args, Clone)]
pub(crate) struct FormatArgs {
    /// Output format: human-scaled table, or CSV or JSON with units in the column names
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub(crate) format: FormatArg,
    // CSV: text cells as they are, formula-like ones included.
    #[arg(long, help = RAW_TEXT_HELP)]
    pub(crate) raw_text: bool,
    #[command(flatten)]
    pub(crate) shape: ShapeArgs,
}

impl FormatArgs {
    /// The rows' shape (`--columns`, `--digits`) for this format.
    pub(crate) fn shape(&self) -> anyhow::Result<crate::export::rows::Shape> {
        self.shape.shape(matches!(self.format, FormatArg::Table))
    }
}

const RAW_TEXT_HELP: &str = "CSV: write text cells as they are. Without it, a name, id, note or \
    error that starts with `=`, `+`, `-`, `@`, a tab or a carriage return (which a spreadsheet \
    would run as a formula) gets a `'` before it; numbers are never changed, JSON is always raw";

#[derive(Args)]
pub(crate) struct RunArgs {
    /// Workload: built-in name or YAML file (or the --scenario file's `workload`)
    #[arg(required_unless_present = "scenario")]
    pub(crate) workload: Option<String>,
    /// Chip: built-in name or YAML file
    #[arg(long, required_unless_present = "scenario")]
    pub(crate) chip: Option<String>,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) cost: CostArgs,
    /// Also list every kernel (op or fused group)
    #[arg(long)]
    pub(crate) per_op: bool,
    /// Also price a whole request at the scenario's batch: in=I,out=O tokens per sequence
    /// (time to first token, time per output token, end to end, output tokens/s)
    #[arg(long, value_name = "in=I,out=O", value_parser = parse_request)]
    pub(crate) request: Option<(u64, u64)>,
    #[command(flatten)]
    pub(crate) file: ScenarioFileArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Args)]
pub(crate) struct SweepArgs {
    /// Workload: built-in name or YAML file (or the --scenario file's `workload`)
    #[arg(required_unless_present = "scenario")]
    pub(crate) workload: Option<String>,
    /// Chips, comma-separated (built-in names or YAML files), or `all`
    #[arg(long, value_delimiter = ',', required_unless_present = "scenario")]
    pub(crate) chip: Vec<String>,
    #[command(flatten)]
    pub(crate) announced: AnnouncedArg,
    /// Values of a param: NAME=LIST of numbers and ranges (see below; repeatable)
    #[arg(long = "set", value_name = "NAME=LIST", value_parser = parse_axis)]
    pub(crate) sets: Vec<(String, AxisValues)>,
    /// What-if chips: values of a field of each --chip, with units, e.g.
    /// memory.bandwidth=3.35TB/s,8TB/s or memory.capacity=80GB..=288GB:+16GB (see below;
    /// repeatable)
    #[arg(long = "chip-set", value_name = "FIELD=LIST", value_parser = ChipAxis::parse)]
    pub(crate) chip_sets: Vec<ChipAxis>,
    /// Formats: KEY=LIST, e.g. weight=bf16,fp8 or experts.weight=mxfp4,nvfp4 (repeatable)
    #[arg(long = "dtype", value_name = "KEY=LIST", value_parser = parse_dtype_axis)]
    pub(crate) dtypes: Vec<(TypeKey, Vec<DataFormat>)>,
    /// Fusion plans, comma-separated, or `all` (default: the workload's default plan)
    #[arg(long, value_delimiter = ',')]
    pub(crate) fusion: Vec<String>,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    pub(crate) mode: ModeArg,
    /// Share of the chip's reported memory the serving engine uses, as vLLM's
    /// gpu_memory_utilization (default 0.9)
    #[arg(long, value_name = "F", value_parser = |t: &str| number_in(t, &ranges::MEMORY_UTILIZATION))]
    pub(crate) memory_utilization: Option<f64>,
    /// One row per kernel per scenario (long format) instead of one per scenario
    #[arg(long)]
    pub(crate) per_op: bool,
    /// Also price a whole request at each scenario: in=I,out=O tokens per sequence
    #[arg(long, value_name = "in=I,out=O", value_parser = parse_request)]
    pub(crate) request: Option<(u64, u64)>,
    /// Leave out scenarios that cannot be priced instead of writing a row with `error` filled
    #[arg(long)]
    pub(crate) skip_invalid: bool,
    /// Only the rows for which EXPR holds, e.g. 'fits && ms_per_token <= 50' (the filter
    /// language: numbers, true/false, "strings", column names, == != < <= > >=, && || !)
    #[arg(long = "where", value_name = "EXPR")]
    pub(crate) filter: Option<String>,
    /// Only the scenarios that fit the chip's memory (shorthand for --where fits)
    #[arg(long)]
    pub(crate) fits_only: bool,
    #[command(flatten)]
    pub(crate) slice: super::slice::SliceArgs,
    #[command(flatten)]
    pub(crate) cost: CostArgs,
    #[command(flatten)]
    pub(crate) file: ScenarioFileArgs,
    #[command(flatten)]
    pub(crate) format: SweepFormatArgs,
    /// Write to FILE instead of stdout (`-` is stdout), whole or not at all; FILE is a
    /// regular file (through its symlinks) or a new name, never one of the command's inputs
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Refuse grids larger than this many scenarios
    #[arg(long, default_value_t = crate::study::sweep::DEFAULT_MAX_SCENARIOS,
          value_parser = |t: &str| whole_in(t, &ranges::MAX_SCENARIOS))]
    pub(crate) max_scenarios: u64,
    /// No progress bar (it is shown only when stderr is a terminal anyway)
    #[arg(long)]
    pub(crate) quiet: bool,
}

/// The format of a sweep's rows, and how its CSV writes text.
#[derive(Args, Clone)]
pub(crate) struct SweepFormatArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = StreamFormat::Csv)]
    pub(crate) format: StreamFormat,
    // CSV: text cells as they are, formula-like ones included.
    #[arg(long, help = RAW_TEXT_HELP)]
    pub(crate) raw_text: bool,
    #[command(flatten)]
    pub(crate) shape: ShapeArgs,
}

#[derive(Args)]
pub(crate) struct CompareArgs {
    #[command(flatten)]
    pub(crate) scenario: ChipsScenario,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// One scenario's choices, as `run`, `compare`, `plot roofline` and `report` take them.
#[derive(Args)]
pub(crate) struct ScenarioArgs {
    /// Override a param, e.g. --set batch=32 (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    pub(crate) sets: Vec<(String, f64)>,
    /// Format of every weight, one weight group, the activations (GEMM inputs), the GEMM
    /// outputs or the KV cache (repeatable, later wins): keys weight, embed.weight,
    /// attention.weight, ffn.weight, experts.weight, activation, output (default: activation
    /// where 16 bits or wider, else bf16), kv; types fp32, tf32, bf16, fp16, fp8, fp8-b128,
    /// fp6, int8, mxfp4, nvfp4, fp4, int4, int4-g128. E.g. --dtype weight=fp8 --dtype
    /// embed.weight=bf16
    #[arg(long = "dtype", value_name = "KEY=TYPE", value_parser = parse_type)]
    pub(crate) dtypes: Vec<(TypeKey, DataFormat)>,
    /// Fusion plan of the workload (default: the workload's default_fusion, else `none`)
    #[arg(long)]
    pub(crate) fusion: Option<String>,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    pub(crate) mode: ModeArg,
    /// Let each collective's transfer overlap the kernel before it (off: they run in turn)
    #[arg(long)]
    pub(crate) overlap_comm: bool,
    /// Share of the chip's reported memory the serving engine uses, as vLLM's
    /// gpu_memory_utilization (default 0.9)
    #[arg(long, value_name = "F", value_parser = |t: &str| number_in(t, &ranges::MEMORY_UTILIZATION))]
    pub(crate) memory_utilization: Option<f64>,
}

impl ScenarioArgs {
    pub(crate) fn spec(self) -> ScenarioSpec {
        ScenarioSpec {
            sets: self.sets,
            dtypes: self.dtypes,
            fusion: self.fusion,
            mode: self.mode.into(),
            overlap_comm: self.overlap_comm,
            memory_utilization: self.memory_utilization,
        }
    }
}

#[derive(Subcommand)]
pub(crate) enum PlotCommand {
    /// Log-log roofline of each chip (memory slope, compute roofs, ridge points; achievable
    /// roofs dashed in expected mode) with every kernel at its intensity and attained rate,
    /// marker area proportional to its share of the step
    Roofline {
        #[command(flatten)]
        scenario: ChipsScenario,
        /// Write the SVG to FILE instead of stdout (`-` is stdout), whole or not at all
        #[arg(long, value_name = "FILE.svg")]
        out: Option<PathBuf>,
    },
    /// Line chart of two columns of a sweep CSV, one line per value of --series, titled
    /// with the scenario the plotted rows share
    Sweep {
        /// The CSV written by `stepcost sweep`
        csv: PathBuf,
        /// Column for the horizontal axis, e.g. batch
        #[arg(long)]
        x: String,
        /// Column for the vertical axis, e.g. tokens_per_s
        #[arg(long)]
        y: String,
        /// Columns whose values make separate lines, e.g. chip or chip,weight_dtype (one
        /// line per combination)
        #[arg(long, value_delimiter = ',')]
        series: Vec<String>,
        /// Plot only the rows that pass this filter, e.g. 'fits && context == 4096' (see
        /// the README's "Filters")
        #[arg(long = "where", value_name = "EXPR")]
        filter: Option<String>,
        /// Also draw the rows that do not fit the chip's memory (`fits` false); without it a
        /// curve stops where memory ends
        #[arg(long)]
        include_unfit: bool,
        /// Logarithmic horizontal axis
        #[arg(long)]
        log_x: bool,
        /// Logarithmic vertical axis
        #[arg(long)]
        log_y: bool,
        /// Write this column's value beside each point where it changes along the line
        /// (and at each line's first point), e.g. layout
        #[arg(long, value_name = "COLUMN")]
        label: Option<String>,
        /// Write the SVG to FILE instead of stdout (`-` is stdout), whole or not at all
        #[arg(long, value_name = "FILE.svg")]
        out: Option<PathBuf>,
    },
}

/// A workload, one scenario and the chips to price it on.
#[derive(Args)]
pub(crate) struct ChipsScenario {
    /// Workload: built-in name or YAML file (or the --scenario file's `workload`)
    #[arg(required_unless_present = "scenario")]
    pub(crate) workload: Option<String>,
    /// Chips, comma-separated (built-in names or YAML files), or `all`
    #[arg(long, value_delimiter = ',', required_unless_present = "scenario")]
    pub(crate) chip: Vec<String>,
    #[command(flatten)]
    pub(crate) announced: AnnouncedArg,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) cost: CostArgs,
    #[command(flatten)]
    pub(crate) file: ScenarioFileArgs,
}

#[derive(Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    pub(crate) scenario: ChipsScenario,
    /// The report: FILE.md (the roofline written beside it as FILE.svg) or FILE.html (the
    /// roofline inline); both files are written only when the whole report is made, and
    /// never to stdout
    #[arg(long, value_name = "FILE.md|FILE.html")]
    pub(crate) out: PathBuf,
    /// Also list the levers whose change would not fit the chip's memory
    #[arg(long)]
    pub(crate) include_unfit: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StreamFormat {
    Csv,
    /// JSON Lines: one object per line
    Json,
    /// Parquet: typed, compressed columns; needs --out FILE
    Parquet,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum FormatArg {
    Table,
    Csv,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ModeArg {
    /// What real kernels achieve: achievable fractions of peak and bandwidth, a fixed cost per
    /// kernel, tile and wave quantization, cache hits, dequantization
    Expected,
    /// max(FLOPs / peak, bytes / bandwidth) with datasheet peaks: the ceiling
    Roofline,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum KindArg {
    Chip,
    Workload,
}

impl SweepFormatArgs {
    /// The rows' encoding; `None` for Parquet in a build without it.
    pub(crate) fn stream(&self) -> Option<Stream> {
        match (self.format, self.raw_text) {
            (StreamFormat::Csv, false) => Some(Stream::Csv),
            (StreamFormat::Csv, true) => Some(Stream::CsvRaw),
            (StreamFormat::Json, _) => Some(Stream::JsonLines),
            #[cfg(feature = "parquet")]
            (StreamFormat::Parquet, _) => Some(Stream::Parquet),
            #[cfg(not(feature = "parquet"))]
            (StreamFormat::Parquet, _) => None,
        }
    }
}

impl From<KindArg> for FileKind {
    fn from(k: KindArg) -> FileKind {
        match k {
            KindArg::Chip => FileKind::Chip,
            KindArg::Workload => FileKind::Workload,
        }
    }
}

impl From<&FormatArgs> for OutputFormat {
    fn from(f: &FormatArgs) -> OutputFormat {
        match (f.format, f.raw_text) {
            (FormatArg::Table, _) => OutputFormat::Table,
            (FormatArg::Csv, false) => OutputFormat::Csv,
            (FormatArg::Csv, true) => OutputFormat::CsvRaw,
            (FormatArg::Json, _) => OutputFormat::Json,
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
