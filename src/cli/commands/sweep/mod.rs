//! `sweep`: the cartesian product of chips, param values, data types and fusion plans, from
//! the command line (and a scenario file's keys), streamed to CSV, JSON Lines or Parquet in
//! product order. Its slice of the grid (`slice`), its long help (`help`) and how it runs on
//! a terminal (`runner`: threads, progress bar, Ctrl-C, the output file) are its children.

mod help;
mod runner;
mod slice;

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

pub(crate) use help::SWEEP_HELP;
use runner::{cancel_on_ctrl_c, failure, into_file, progress_bar, thread_pool};
use slice::SliceArgs;

use crate::base::format::Format as DataFormat;
use crate::base::parse::{number_in, parse_axis, parse_dtype_axis, whole_in, AxisValues};
use crate::base::ranges;
use crate::base::source::{FileKind, Source};
use crate::base::types::TypeKey;
use crate::cli::flags::{
    AnnouncedArg, CostArgs, Given, ModeArg, ScenarioFileArgs, ShapeArgs, RAW_TEXT_HELP,
};
use crate::cli::output;
use crate::cli::scenario::save::{cost_keys, request_key, texts, type_lists_key, Doc, Node};
use crate::cli::scenario::{has, joined, Merge, Settled};
use crate::core::scenario::Mode;
use crate::core::workload::Workload;
use crate::export::atomic::Target;
use crate::export::stream::{StreamFormat as Stream, SweepRows};
use crate::study::sweep::{self, ChipAxis};
use crate::study::validate::parse_request;

#[derive(Args)]
pub(crate) struct SweepArgs {
    /// Workload: built-in name or YAML file (or the --scenario file's `workload`)
    #[arg(required_unless_present = "scenario")]
    workload: Option<String>,
    /// Chips, comma-separated (built-in names or YAML files), or `all`
    #[arg(long, value_delimiter = ',', required_unless_present = "scenario")]
    chip: Vec<String>,
    #[command(flatten)]
    announced: AnnouncedArg,
    /// Values of a param: NAME=LIST of numbers and ranges (see below; repeatable)
    #[arg(long = "set", value_name = "NAME=LIST", value_parser = parse_axis)]
    sets: Vec<(String, AxisValues)>,
    /// What-if chips: values of a field of each --chip, with units, e.g.
    /// memory.bandwidth=3.35TB/s,8TB/s or memory.capacity=80GB..=288GB:+16GB (see below;
    /// repeatable)
    #[arg(long = "chip-set", value_name = "FIELD=LIST", value_parser = ChipAxis::parse)]
    chip_sets: Vec<ChipAxis>,
    /// Formats: KEY=LIST, e.g. weight=bf16,fp8 or experts.weight=mxfp4,nvfp4 (repeatable)
    #[arg(long = "dtype", value_name = "KEY=LIST", value_parser = parse_dtype_axis)]
    dtypes: Vec<(TypeKey, Vec<DataFormat>)>,
    /// Fusion plans, comma-separated, or `all` (default: the workload's default plan)
    #[arg(long, value_delimiter = ',')]
    fusion: Vec<String>,
    /// Serving engines, comma-separated (built-in ids such as vllm, vllm@0.7, sglang,
    /// trtllm, or engine files), or `all`: an axis after the chips (default: each chip
    /// file's engine; roofline mode prices under none)
    #[arg(long, value_delimiter = ',', value_name = "NAME[@VERSION],...")]
    engine: Vec<String>,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    mode: ModeArg,
    /// Share of the chip's reported memory the serving engine uses, as vLLM's
    /// gpu_memory_utilization (default 0.9)
    #[arg(long, value_name = "F", value_parser = |t: &str| number_in(t, &ranges::MEMORY_UTILIZATION))]
    memory_utilization: Option<f64>,
    /// One row per kernel per scenario (long format) instead of one per scenario
    #[arg(long)]
    per_op: bool,
    /// Also price a whole request at each scenario: in=I,out=O tokens per sequence
    #[arg(long, value_name = "in=I,out=O", value_parser = parse_request)]
    request: Option<(u64, u64)>,
    /// Leave out scenarios that cannot be priced instead of writing a row with `error` filled
    #[arg(long)]
    skip_invalid: bool,
    /// Only the rows for which EXPR holds, e.g. 'fits && ms_per_token <= 50' (the filter
    /// language: numbers, true/false, "strings", column names, == != < <= > >=, && || !)
    #[arg(long = "where", value_name = "EXPR")]
    filter: Option<String>,
    /// Only the scenarios that fit the chip's memory (shorthand for --where fits)
    #[arg(long)]
    fits_only: bool,
    #[command(flatten)]
    slice: SliceArgs,
    #[command(flatten)]
    cost: CostArgs,
    #[command(flatten)]
    file: ScenarioFileArgs,
    #[command(flatten)]
    format: SweepFormatArgs,
    /// Write to FILE instead of stdout (`-` is stdout), whole or not at all; FILE is a
    /// regular file (through its symlinks) or a new name, never one of the command's inputs
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Refuse grids larger than this many scenarios
    #[arg(long, default_value_t = crate::study::sweep::DEFAULT_MAX_SCENARIOS,
          value_parser = |t: &str| whole_in(t, &ranges::MAX_SCENARIOS))]
    max_scenarios: u64,
    /// No progress bar (it is shown only when stderr is a terminal anyway)
    #[arg(long)]
    quiet: bool,
}

/// The format of a sweep's rows, and how its CSV writes text.
#[derive(Args, Clone)]
struct SweepFormatArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = StreamFormat::Csv)]
    format: StreamFormat,
    // CSV: text cells as they are, formula-like ones included.
    #[arg(long, help = RAW_TEXT_HELP)]
    raw_text: bool,
    #[command(flatten)]
    shape: ShapeArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StreamFormat {
    Csv,
    /// JSON Lines: one object per line
    Json,
    /// Parquet: typed, compressed columns; needs --out FILE
    Parquet,
}

impl SweepFormatArgs {
    /// The rows' encoding; `None` for Parquet in a build without it.
    fn stream(&self) -> Option<Stream> {
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

/// `sweep`: the grid priced on a thread pool, its rows through the filter and the ranking
/// into the output (a file written whole, or stdout); exit 130 when Ctrl-C stopped it.
pub(crate) fn run(mut args: SweepArgs, given: &Given) -> Result<ExitCode> {
    let settled = settle(&mut args, given)?;
    let source = Source::resolve(&settled.workload, FileKind::Workload)?;
    let inputs = settled.command_inputs(&source, &args.chip, &args.cost);
    let target = Target::from_out(args.out.as_deref());
    let format = stream_format(&args.format, &target)?;
    let saver = settled.saver(&inputs, std::slice::from_ref(&target))?;
    let plan = output::plan_all(vec![target], &inputs)?;
    let out = file_target(plan.targets());
    let workload = Workload::load(&source)?;
    let chips = args.cost.apply(args.announced.load(&args.chip)?)?;
    let total = grid_size(&workload, chips.len(), &args)?;
    let sink = rows(&workload, &args, format)?;
    let chips = sweep::what_if_chips(chips, &args.chip_sets)?;
    let axes = sweep::Axes {
        chips,
        engines: crate::cli::flags::engines(&args.engine)?,
        params: (args.sets.into_iter())
            .map(|(name, values)| (name, values.expand()))
            .collect(),
        dtypes: args.dtypes,
        fusions: args.fusion,
        mode: args.mode.into(),
        memory_utilization: args.memory_utilization,
    };
    let grid = sweep::Grid::new(&workload, axes)?;
    let pool = thread_pool()?;

    let file = plan.stream()?;
    let bar = progress_bar(total, args.quiet);
    let cancel = cancel_on_ctrl_c(file.as_ref().and_then(|f| f.temp().try_clone().ok()));
    let options = sweep::SweepOptions {
        skip_invalid: args.skip_invalid,
        request: args.request,
        shard: args.slice.shard(),
        header: args.slice.header(),
    };
    let progress = |n: u64| {
        bar.inc(n);
        // A row the filter or the ranking cannot read fails the command: stop pricing.
        if sink.filter_error().is_some() || sink.rank_error().is_some() {
            cancel.store(true, Ordering::Relaxed);
        }
    };
    let (stats, file) = match (file, &out) {
        (Some(mut file), Some(path)) => {
            let stats = pool
                .install(|| {
                    into_file(&mut file, &sink, |w| {
                        sweep::run(&grid, options, &sink, w, &progress, &cancel)
                    })
                })
                .map_err(|e| failure(e, Some(path)))?;
            (stats, Some(file))
        }
        _ => {
            let stdout = io::BufWriter::with_capacity(1 << 20, io::stdout());
            (
                pool.install(|| sweep::run(&grid, options, &sink, stdout, &progress, &cancel))
                    .map_err(|e| failure(e, None))?,
                None,
            )
        }
    };
    bar.finish_and_clear();
    filtered_whole(&sink)?;
    if stats.cancelled {
        runner::report_interrupted(&stats, total, out.as_deref());
        return Ok(ExitCode::from(130));
    }
    if let (Some(file), Some(path)) = (file, &out) {
        file.commit()
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        if !args.quiet && io::stderr().is_terminal() {
            runner::report_written(&stats, path);
        }
    }
    saver.commit()?;
    Ok(ExitCode::SUCCESS)
}

/// The file the sweep writes, if it writes one (else stdout).
fn file_target(targets: &[Target]) -> Option<PathBuf> {
    match targets {
        [Target::File(path)] => Some(path.clone()),
        _ => None,
    }
}

/// The scenarios priced (the grid's, or its shard's) from the axes' lengths, before any
/// param's values or what-if chips are made; refused past `--max-scenarios`.
fn grid_size(workload: &Workload, chips: usize, args: &SweepArgs) -> Result<u64> {
    let chips = sweep::what_if_len(chips, &args.chip_sets)
        .ok_or_else(|| anyhow::anyhow!(sweep::too_many_what_if_chips(chips)))?;
    // The engine axis multiplies the chips' (one value where none is given).
    let engines = match args.engine.as_slice() {
        [all] if all == "all" => crate::core::engine::builtin_ids().count(),
        names => names.len().max(1),
    };
    let size = sweep::grid_len(
        workload,
        chips.saturating_mul(engines),
        args.sets.iter().map(|(_, values)| values.len()),
        args.dtypes.iter().map(|(_, types)| types.len()),
        &args.fusion,
    );
    let shard = args.slice.shard();
    let priced = size.map(|n| shard.range(n)).map(|r| r.end - r.start);
    match (priced, args.slice.shard) {
        (Some(n), _) if n <= args.max_scenarios => Ok(n),
        (Some(n), Some(shard)) => anyhow::bail!(
            "shard {shard} of the sweep has {n} scenarios (of {}), more than --max-scenarios {}; \
             cut it into more shards, narrow an axis or raise the limit",
            size.unwrap_or(n),
            args.max_scenarios
        ),
        (n, _) => anyhow::bail!(
            "the sweep has {} scenarios, more than --max-scenarios {}; narrow an axis or raise the limit",
            n.map_or("more than 2^64".to_owned(), |n| n.to_string()),
            args.max_scenarios
        ),
    }
}

/// How the rows are encoded. Parquet goes only to a file: a reader starts from its footer,
/// which comes last, so it cannot stream to stdout.
#[cfg_attr(not(feature = "parquet"), allow(unused_variables))]
fn stream_format(format: &SweepFormatArgs, target: &Target) -> Result<Stream> {
    match format.stream() {
        #[cfg(feature = "parquet")]
        Some(Stream::Parquet) if !matches!(target, Target::File(_)) => anyhow::bail!(
            "--format parquet writes a file, not a stream: give --out FILE (a Parquet reader \
             starts from the file's footer, so it cannot go to stdout)"
        ),
        Some(stream) => Ok(stream),
        None => anyhow::bail!(
            "--format parquet: this stepcost was built without Parquet (cargo feature `parquet`)"
        ),
    }
}

/// The sink of the sweep's rows, only those `--where` and `--fits-only` keep and then the
/// best `--top` asks for, cut to `--columns` and `--digits`.
fn rows(workload: &Workload, args: &SweepArgs, stream: Stream) -> Result<SweepRows> {
    let format = &args.format;
    let fields = args.chip_sets.iter().map(|axis| axis.field());
    let mut sink = SweepRows::new(workload, stream, args.per_op).with_chip_fields(fields);
    if args.fits_only && args.per_op {
        anyhow::bail!(
            "--fits-only keeps scenario rows that fit; --per-op rows (kernels) have no `fits` column"
        );
    }
    // The text as typed is compiled first, so that an error points into it.
    if let Some(text) = &args.filter {
        sink = sink
            .filtered(text)
            .map_err(|e| anyhow::anyhow!("--where {e}"))?;
    }
    let filter = match (&args.filter, args.fits_only) {
        (Some(text), true) => Some(format!("fits && ({text})")),
        (None, true) => Some("fits".to_owned()),
        (_, false) => None,
    };
    if let Some(text) = filter {
        sink = sink.filtered(&text)?;
    }
    if let (Some(k), Some(by)) = (args.slice.top, &args.slice.by) {
        sink = sink.ranked(k, by, args.slice.per.as_deref())?;
    }
    Ok(sink.shaped(&format.shape.shape(false)?)?)
}

/// An error if the row filter or the ranking met a row it could not be applied to (before a
/// file is committed): rows that might have passed were left out.
fn filtered_whole(sink: &SweepRows) -> Result<()> {
    if let Some(e) = sink.filter_error() {
        anyhow::bail!("--where {e}; such rows were left out");
    }
    if let Some(e) = sink.rank_error() {
        anyhow::bail!("{e}");
    }
    let unranked = sink.unranked();
    if unranked > 0 {
        eprintln!("note: {unranked} rows left out of --top: their --by cell is empty (no price on any basis in the view, or no such figure)");
    }
    Ok(())
}

/// The scenario file's keys under the flags: chips, and lists and ranges for params, types
/// and fusion plans.
fn settle(args: &mut SweepArgs, given: &Given) -> Result<Settled> {
    let file = Merge::load(&args.file)?;
    let m = Merge::new(file.as_ref(), given, "sweep");
    let workload = m.workload(args.workload.take())?;
    let given_chips = !args.chip.is_empty();
    m.chips(&mut args.chip, given_chips)?;
    let mut sets = Vec::new();
    for (name, entry) in file.iter().flat_map(|f| &f.sets) {
        if !args.sets.iter().any(|(n, _)| n == name) {
            let text = format!("{name}={}", entry.value.join(","));
            sets.extend(m.parse(Some(&joined(entry)), |_| parse_axis(&text))?);
        }
    }
    sets.append(&mut args.sets);
    args.sets = sets;
    m.chip_sets(&mut args.chip_sets)?;
    m.type_lists(&mut args.dtypes)?;
    if args.fusion.is_empty() {
        if let Some(entry) = file.as_ref().and_then(|f| f.fusion.as_ref()) {
            args.fusion = entry.value.clone();
        }
    }
    m.engines(&mut args.engine);
    m.mode(&mut args.mode)?;
    m.memory_utilization(&mut args.memory_utilization)?;
    m.unused(&[
        ("images", has(&file, |f| f.images.is_some())),
        ("image_tokens", has(&file, |f| f.image_tokens.is_some())),
    ]);
    if args.request.is_none() {
        args.request = m.parse(
            file.as_ref().and_then(|f| f.request.as_ref()),
            parse_request,
        )?;
    }
    m.cost(&mut args.cost)?;
    let mut doc = Doc::default();
    doc.push("workload", Node::Text(workload.clone()));
    doc.push("chips", texts(&args.chip));
    let sets = (args.sets.iter())
        .map(|(name, axis)| (name.clone(), Node::scalar(axis.text())))
        .collect();
    doc.push("sets", Node::last_wins(sets));
    if !args.chip_sets.is_empty() {
        let chip_sets = (args.chip_sets.iter())
            .map(|axis| (axis.field().to_string(), Node::scalar(axis.text())))
            .collect();
        doc.push("chip_sets", Node::last_wins(chip_sets));
    }
    type_lists_key(&mut doc, &args.dtypes);
    if !args.fusion.is_empty() {
        doc.push("fusion", texts(&args.fusion));
    }
    if !args.engine.is_empty() {
        doc.push("engine", texts(&args.engine));
    }
    doc.push("mode", Node::Text(Mode::from(args.mode).name().to_owned()));
    if let Some(u) = args.memory_utilization {
        doc.push("memory_utilization", Node::Number(u));
    }
    request_key(&mut doc, args.request);
    cost_keys(&mut doc, &args.cost);
    m.settled(workload, &args.file, &doc)
}
