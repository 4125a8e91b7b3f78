//! The command line: clap's types and one short function per subcommand. Each function turns
//! the typed arguments into the library's own values, asks the study or the core, and hands
//! the result to an exporter; none of them prices or formats by itself.
//!
//! Its modules stand on floors, each importing only the floors below it, never a module of
//! its own floor:
//! 1. this module: the parser and the dispatch (`Cli`, `parse`, `run`);
//! 2. `commands`: one file per subcommand, its clap arguments and its function;
//! 3. `scenario` (a scenario file's keys under the flags, the scenario saved, and the
//!    scenario priced on chips) and `case_file` (the case files of `validate` and `fit`);
//! 4. the leaves, which import no other module of the command line: `flags` (the flag
//!    groups several commands share), `output` (the files a command reads and where its
//!    bytes go) and `launch` (a planned fleet's launch settings).

mod case_file;
mod commands;
mod flags;
mod launch;
mod output;
mod scenario;

use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[cfg(feature = "ui")]
use commands::ui;
use commands::{
    check, chips, compare, engines, fit, import, ingest, plan, plot, prices, probe, report, run,
    serving, show, simulate, sweep, validate, workloads,
};
use flags::Given;

use crate::base::builtin;

#[derive(Parser)]
#[command(
    name = "stepcost",
    version,
    about = "Price one transformer step (prefill or decode) on an accelerator's roofline"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The flags typed (set by [`parse`]): a scenario file's key gives way only to them.
    #[arg(skip)]
    given: Given,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// List chips: peaks per data type, bandwidth, capacity and ridge points
    Chips(chips::ChipsArgs),
    /// List serving engines: host work hidden, graph capture, admission, batching limits and
    /// what the fp8 choice runs as (expected mode's stack; sources in each engine file)
    Engines(engines::EnginesArgs),
    /// Price one scenario: the step's totals, and with --per-op every kernel
    Run(run::RunArgs),
    /// Price the cartesian product of chips, param values, data types and fusion plans,
    /// streamed to CSV or JSON Lines in product order
    #[command(after_long_help = sweep::SWEEP_HELP)]
    Sweep(sweep::SweepArgs),
    /// One scenario on several chips side by side, with speeds relative to the first chip
    Compare(compare::CompareArgs),
    /// Chips needed for a throughput target: the best batch per chip and data types within a
    /// latency bound and one chip's memory, ranked by cost
    Plan(plan::PlanArgs),
    /// Continuous batching in steady state: per chip and concurrency, TTFT, TPOT, tokens/s
    /// per user and per chip and $/M tokens, each with its 80 % band in expected mode; with
    /// --frontier, each chip's Pareto frontier
    Serving(Box<serving::ServingArgs>),
    /// Turn a Hugging Face config.json into a workload file (Llama, Mistral, Mixtral, Qwen2,
    /// Qwen3, Qwen3-MoE, DeepSeek-V3, DeepSeek-V3.2, Qwen3-Next, gpt-oss, Gemma-2 and Gemma-3
    /// families)
    Import(import::ImportArgs),
    /// Price measured cases and report each prediction's error, then the median and 90th
    /// percentile overall, per chip, per kind and per data type
    Validate(validate::ValidateArgs),
    /// Fit a chip's expected-mode constants (fractions of peak and bandwidth, DRAM latency) to
    /// measured cases, by least squares on log(predicted / measured); write them as an
    /// `expected:` section
    Fit(fit::FitArgs),
    /// Time the kernels stepcost prices on this machine (GEMMs over a shape grid, GEMVs,
    /// streams, elementwise, attention) through the Python package's probe, numpy or torch;
    /// write them as measured cases for `validate` and `fit --new-chip`
    Probe(probe::ProbeArgs),
    /// Read a serving benchmark's result (vLLM `bench serve --save-result` JSON, SGLang
    /// `bench_serving` JSON lines, GenAI-Perf's profile export) as serving cases that
    /// `validate` prices
    Ingest(ingest::IngestArgs),
    /// Simulate serving request by request: arrivals at a rate or from a trace, a
    /// continuous-batching scheduler with chunked prefill, KV blocks and preemption, every
    /// iteration priced; latency percentiles, throughput, goodput, whether the queue keeps up;
    /// in expected mode each percentile and rate with its 80 % band (the same arrivals
    /// simulated again at each end of the steps' bands)
    Simulate(Box<simulate::SimulateArgs>),
    /// Draw a picture as SVG: the roofline with the step's kernels on it, or curves from a
    /// sweep CSV
    Plot(plot::PlotArgs),
    /// A self-contained report of one scenario on one or more chips: summary, every kernel,
    /// what bounds the step, which lever moves it, and the roofline picture
    Report(report::ReportArgs),
    /// List the cloud price books the chips are priced on: each basis, its date, the chips it
    /// prices and those it lists without a price
    Prices(prices::PricesArgs),
    /// List the built-in workloads: models with their parameters (in all and read per decoded
    /// token), layers, hidden width and checkpoint types, then the kernel microbenchmarks
    Workloads(workloads::WorkloadsArgs),
    /// Print a built-in chip, workload, template or engine file as shipped, comments included, to
    /// copy and edit
    Show(show::ShowArgs),
    #[cfg(feature = "ui")]
    Ui(ui::UiArgs),
    /// Validate chip, workload and engine files and report every problem with its line
    Check(check::CheckArgs),
}

/// The command line's parser, its help naming the built-in chips and workloads.
pub fn command() -> clap::Command {
    let names = |files: &[(&str, &str)]| {
        let names: Vec<&str> = files.iter().map(|(id, _)| *id).collect();
        names.join(", ")
    };
    Cli::command().long_about(format!(
        "Price one transformer step (prefill or decode) on an accelerator's roofline.\n\n\
         WORKLOAD and CHIP are a path to a YAML file or the name of a built-in one.\n\
         Built-in chips: {}.\nBuilt-in workloads: {}.\nBuilt-in engines: {}.",
        names(builtin::CHIPS),
        names(builtin::WORKLOADS),
        names(builtin::ENGINES)
    ))
}

/// Parses the process's arguments.
pub fn parse() -> Result<Cli, clap::Error> {
    let matches = command().try_get_matches()?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    // The innermost subcommand's flags (`plot roofline`'s, not `plot`'s).
    let mut innermost = &matches;
    while let Some((_, sub)) = innermost.subcommand() {
        innermost = sub;
    }
    cli.given = Given::of(innermost);
    Ok(cli)
}

/// Runs a parsed command line; `Ok` carries the exit code of a command that decides its own
/// (`check`, an interrupted `sweep`).
pub fn run(cli: Cli) -> Result<ExitCode> {
    let given = &cli.given;
    match cli.command {
        Command::Chips(args) => chips::run(args)?,
        Command::Engines(args) => engines::run(args)?,
        Command::Run(args) => run::run(args, given)?,
        Command::Sweep(args) => return sweep::run(args, given),
        Command::Compare(args) => compare::run(args, given)?,
        Command::Plan(args) => plan::run(args, given)?,
        Command::Serving(args) => serving::run(*args)?,
        Command::Import(args) => import::run(args)?,
        Command::Validate(args) => validate::run(args)?,
        Command::Fit(args) => fit::run(&args)?,
        Command::Probe(args) => probe::run(args)?,
        Command::Ingest(args) => ingest::run(args)?,
        Command::Simulate(args) => simulate::run(*args)?,
        Command::Plot(args) => plot::run(args, given)?,
        Command::Report(args) => report::run(args, given)?,
        Command::Prices(args) => prices::run(args)?,
        Command::Workloads(args) => workloads::run(args)?,
        Command::Show(args) => show::run(args)?,
        #[cfg(feature = "ui")]
        Command::Ui(args) => ui::run(args)?,
        Command::Check(args) => return check::run(args),
    }
    Ok(ExitCode::SUCCESS)
}
