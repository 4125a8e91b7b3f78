//! The command line: clap's types (`args`), one short function per subcommand, and where
//! the bytes go (`output`). Each function turns the typed arguments into the library's own
//! values, asks the study or the engine, and hands the result to an exporter; none of them
//! prices or formats by itself.

mod args;
mod output;
mod sweep;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches};

pub use args::Cli;
use args::{ChipsScenario, Command, KindArg, ModeArg, OutputArgs, PlanArgs, PlotCommand};
use args::{ReportArgs, RunArgs};
use output::{emit, emit_all};

use crate::base::builtin;
use crate::base::param::ScenarioParam;
use crate::base::source::{FileKind, Source};
use crate::engine::chip::Chip;
use crate::engine::price::{price, StepReport};
use crate::engine::scenario::{Scenario, ScenarioSpec};
use crate::engine::workload::Workload;
use crate::export::document::{self, Kind};
use crate::export::{self as exporter, svg};
use crate::study::check::{check, Checked};
use crate::study::compare::{compare, Compared};
use crate::study::{import, lever, plan, validate};

/// The command line's parser, its help naming the built-in chips and workloads.
pub fn command() -> clap::Command {
    let names = |files: &[(&str, &str)]| {
        let names: Vec<&str> = files.iter().map(|(id, _)| *id).collect();
        names.join(", ")
    };
    Cli::command().long_about(format!(
        "Price one transformer step (prefill or decode) on an accelerator's roofline.\n\n\
         WORKLOAD and CHIP are a path to a YAML file or the name of a built-in one.\n\
         Built-in chips: {}.\nBuilt-in workloads: {}.",
        names(builtin::CHIPS),
        names(builtin::WORKLOADS)
    ))
}

/// Parses the process's arguments.
pub fn parse() -> Result<Cli, clap::Error> {
    Cli::from_arg_matches(&command().try_get_matches()?)
}

/// Runs a parsed command line; `Ok` carries the exit code of a command that decides its own
/// (`check`, an interrupted `sweep`).
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Chips { chips, output } => chips_command(&chips, output)?,
        Command::Run(args) => run_command(args)?,
        Command::Sweep(args) => return sweep::sweep_command(args),
        Command::Compare(args) => {
            let reports = price_on_chips(args.scenario)?.into_reports();
            let mut buffer = Vec::new();
            exporter::write_compare(&mut buffer, &reports, args.output.format.into())?;
            emit(&buffer, args.output.out.as_deref())?;
        }
        Command::Plan(args) => plan_command(args)?,
        Command::Import { config, out } => import_command(&config, out)?,
        Command::Validate {
            cases,
            mode,
            output,
        } => validate_command(&cases, mode, output)?,
        Command::Check { files, kind } => return Ok(check_command(&files, kind)),
        Command::Plot { picture } => plot_command(picture)?,
        Command::Report(args) => report_command(args)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn price_on_chips(args: ChipsScenario) -> Result<Compared> {
    let workload = Workload::load(&Source::resolve(&args.workload, FileKind::Workload)?)?;
    let chips = Chip::load_all(&args.chip)?;
    Ok(compare(workload, chips, &args.scenario.spec())?)
}

fn chips_command(names: &[String], output: OutputArgs) -> Result<()> {
    let all = ["all".to_owned()];
    let chips = Chip::load_all(if names.is_empty() { &all } else { names })?;
    let mut buffer = Vec::new();
    exporter::write_chips(&mut buffer, &chips, output.format.into())?;
    emit(&buffer, output.out.as_deref())
}

fn run_command(args: RunArgs) -> Result<()> {
    let chip = Chip::load(&Source::resolve(&args.chip, FileKind::Chip)?)?;
    let workload = Workload::load(&Source::resolve(&args.workload, FileKind::Workload)?)?;
    let scenario = Scenario::resolve(&workload, &args.scenario.spec())?;
    let mut report: StepReport = price(&workload, &chip, &scenario)?;
    if let Some(request) = args.request {
        report = report.with_request(&workload, &chip, &scenario, request)?;
    }
    let mut buffer = Vec::new();
    exporter::write_run(&mut buffer, &report, args.per_op, args.output.format.into())?;
    emit(&buffer, args.output.out.as_deref())
}

/// `plan`: every chip and combination of the data types asked for (weight bf16 and fp8 when
/// none are), at the cheapest layout.
fn plan_command(args: PlanArgs) -> Result<()> {
    let workload = Workload::load(&Source::resolve(&args.workload, FileKind::Workload)?)?;
    let mut sets = args.sets;
    if let Some(context) = args.context {
        sets.push((ScenarioParam::Context.name().into(), context));
    }
    let spec = ScenarioSpec {
        sets,
        dtypes: Vec::new(),
        fusion: args.fusion,
        mode: args.mode.into(),
        overlap_comm: false,
    };
    let scenario = Scenario::resolve(&workload, &spec)?;
    let request = plan::PlanRequest {
        target_tokens_per_s: args.target_tokens_per_s,
        max_ms_per_token: args.max_ms_per_token,
        dtype_choices: plan::dtype_choices(scenario.dtypes, &args.dtypes),
        scenario,
    };
    let entries = plan::plan(&workload, &Chip::load_all(&args.chip)?, &request)?;
    let mut buffer = Vec::new();
    let format = args.output.format.into();
    exporter::write_plan(&mut buffer, &workload.name, &request, &entries, format)?;
    emit(&buffer, args.output.out.as_deref())
}

fn import_command(config: &std::path::Path, out: Option<PathBuf>) -> Result<()> {
    let source = Source::read(config)?;
    let imported = import::import(&source.text, &source.name)?;
    // The result must load: a config whose numbers make no graph is caught here.
    let name = out.as_deref().unwrap_or(config).display().to_string();
    Workload::load(&Source::from_text(&name, &imported.yaml))?;
    if !imported.not_understood.is_empty() {
        eprintln!(
            "note: fields of {} not understood, left out of the step: {}",
            source.name,
            imported.not_understood.join(", ")
        );
    }
    emit(imported.yaml.as_bytes(), out.as_deref())
}

fn validate_command(cases: &std::path::Path, mode: ModeArg, output: OutputArgs) -> Result<()> {
    let source = Source::read(cases)?;
    let outcomes = validate::validate(validate::read_cases(&source)?, cases, mode.into());
    let stats = validate::error_stats(&outcomes);
    let mut buffer = Vec::new();
    exporter::write_validation(&mut buffer, &outcomes, &stats, output.format.into())?;
    emit(&buffer, output.out.as_deref())?;
    let skipped = outcomes.iter().filter(|o| o.predicted.is_err()).count();
    if skipped > 0 {
        anyhow::bail!(
            "{skipped} of {} cases in {} could not be priced (listed as skipped in the report)",
            outcomes.len(),
            source.name
        );
    }
    Ok(())
}

/// `check`: every file, each problem on stderr; exit 1 if any file has one.
fn check_command(files: &[PathBuf], kind: Option<KindArg>) -> ExitCode {
    let mut failed = false;
    for path in files {
        match check(path, kind.map(FileKind::from)) {
            Ok(checked) => println!("ok: {}: {}", path.display(), describe(&checked)),
            Err(err) => {
                failed = true;
                eprintln!("{:#}", anyhow::Error::from(err));
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn describe(checked: &Checked) -> String {
    match checked {
        Checked::Chip { name, matrix_types } => {
            format!("chip `{name}` (matrix unit: {})", matrix_types.join(", "))
        }
        Checked::Workload {
            name,
            params,
            blocks,
            ops,
            fusion_plans,
        } => format!(
            "workload `{name}` ({params} params, {blocks} blocks, {ops} ops; fusion plans: {})",
            fusion_plans.join(", ")
        ),
    }
}

fn plot_command(picture: PlotCommand) -> Result<()> {
    let (svg, out) = match picture {
        PlotCommand::Roofline { scenario, out } => {
            (svg::roofline(&price_on_chips(scenario)?.pairs())?, out)
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
            // streamed: a sweep CSV may be far larger than a YAML file
            let limits = crate::base::limits::limits().map_err(anyhow::Error::msg)?;
            let input = crate::base::source::input::Input::open(
                &csv,
                limits.csv_bytes,
                "STEPCOST_MAX_CSV_BYTES",
            )?;
            let name = input.name.clone();
            let chart = svg::SweepChart {
                x,
                y,
                series,
                log_x,
                log_y,
            };
            (svg::sweep(input, &name, &chart)?, out)
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
    let priced = price_on_chips(args.scenario)?;
    let svg = svg::roofline(&priced.pairs())?;
    let mut sections = Vec::new();
    for (chip, report) in &priced.reports {
        let levers = lever::levers(&priced.workload, chip, &priced.scenario, report)?;
        sections.push((report, levers));
    }
    let svg_path = args.out.with_extension("svg");
    let svg_name = svg_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match kind {
        Kind::Markdown => {
            let text = document::markdown(&sections, &svg_name);
            emit_all(&[(&svg_path, svg.as_bytes()), (&args.out, text.as_bytes())])
        }
        Kind::Html => emit(document::html(&sections, &svg).as_bytes(), Some(&args.out)),
    }
}
