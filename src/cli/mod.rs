//! The command line: clap's types (`args`), one short function per subcommand, and where
//! the bytes go (`output`). Each function turns the typed arguments into the library's own
//! values, asks the study or the engine, and hands the result to an exporter; none of them
//! prices or formats by itself.

mod announced;
mod args;
mod case_file;
mod columns;
pub(crate) mod cost;
mod fit_command;
mod help;
mod output;
mod plan_command;
mod scenario;
mod serving_command;
mod show;
mod simulate_command;
mod slice;
mod sweep;
#[cfg(feature = "ui")]
mod ui_command;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches};

pub use args::Cli;
use args::{ChipsScenario, Command, KindArg, ModeArg, OutputArgs, PlotCommand};
use args::{ReportArgs, RunArgs};
use output::{emit, Inputs};

use crate::base::builtin;
use crate::base::source::{FileKind, Source};
use crate::core::chip::{Announced, Chip};
use crate::core::scenario::Scenario;
use crate::core::timing::{price, StepReport};
use crate::core::workload::Workload;
use crate::export::atomic::{OutputPlan, Target};
use crate::export::document::{self, Kind};
use crate::export::{self as exporter, svg};
use crate::study::check::{check, Checked};
use crate::study::compare::{compare, Compared};
use crate::study::{fix, import, lever, validate};

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
    let matches = command().try_get_matches()?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    // The innermost subcommand's flags (`plot roofline`'s, not `plot`'s).
    let mut innermost = &matches;
    while let Some((_, sub)) = innermost.subcommand() {
        innermost = sub;
    }
    cli.given = scenario::Given::of(innermost);
    Ok(cli)
}

/// Runs a parsed command line; `Ok` carries the exit code of a command that decides its own
/// (`check`, an interrupted `sweep`).
pub fn run(cli: Cli) -> Result<ExitCode> {
    let given = &cli.given;
    match cli.command {
        Command::Chips { chips, output } => chips_command(&chips, output)?,
        Command::Run(args) => run_command(args, given)?,
        Command::Sweep(args) => return sweep::sweep_command(args, given),
        Command::Compare(mut args) => {
            let target = Target::from_out(args.output.out.as_deref());
            let settled = scenario::chips_scenario(&mut args.scenario, given, "compare")?;
            let (compared, plan, saver) = price_on_chips(args.scenario, settled, vec![target])?;
            let format = (&args.output.format).into();
            let mut buffer = Vec::new();
            for (chip, report) in &compared.reports {
                warn_unfit(
                    &mut buffer,
                    &compared.workload,
                    chip,
                    &compared.scenario,
                    report,
                    format,
                )?;
            }
            let reports = compared.into_reports();
            let shape = args.output.format.shape()?;
            exporter::write_compare_shaped(&mut buffer, &reports, format, &shape)?;
            emit(plan, &buffer)?;
            saver.commit()?;
        }
        Command::Plan(args) => plan_command::plan_command(args, given)?,
        Command::Serving(args) => serving_command::serving_command(*args)?,
        Command::Import { config, out } => import_command(&config, out)?,
        Command::Validate {
            cases,
            mode,
            cross_validate: true,
            residuals,
            output,
        } => fit_command::cross_validate_command(&cases, mode, residuals.as_deref(), output)?,
        Command::Validate {
            cases,
            mode,
            output,
            ..
        } => validate_command(&cases, mode, output)?,
        Command::Fit(args) => fit_command::fit_command(&args)?,
        Command::Simulate(args) => simulate_command::simulate_command(*args)?,
        Command::Workloads { output } => show::workloads_command(output)?,
        Command::Show(args) => show::show_command(args)?,
        Command::Check { files, kind } => return check_command(&files, kind),
        Command::Plot { picture } => plot_command(picture, given)?,
        Command::Report(args) => report_command(args, given)?,
        #[cfg(feature = "ui")]
        Command::Ui(args) => ui_command::ui_command(args)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Prices the scenario on each chip, once `targets` (and the scenario to save) pass their
/// checks against the files read.
fn price_on_chips(
    args: ChipsScenario,
    settled: scenario::Settled,
    targets: Vec<Target>,
) -> Result<(Compared, OutputPlan, scenario::Saver)> {
    let source = Source::resolve(&settled.workload, FileKind::Workload)?;
    let inputs = settled.command_inputs(&source, &args.chip, &args.cost);
    let saver = settled.saver(&inputs, &targets)?;
    let plan = output::plan_all(targets, &inputs)?;
    let workload = Workload::load(&source)?;
    let chips = args.cost.apply(args.announced.load(&args.chip)?)?;
    let compared = compare(workload, chips, &args.scenario.spec())?;
    Ok((compared, plan, saver))
}

fn chips_command(names: &[String], output: OutputArgs) -> Result<()> {
    let mut inputs = Inputs::default();
    inputs.named(names);
    let plan = output::plan(output.out.as_deref(), &inputs)?;
    let all = ["all".to_owned()];
    // The catalogue lists the announced chips too, marked as such.
    let chips = Chip::load_selected(
        if names.is_empty() { &all } else { names },
        Announced::Include,
    )?;
    let mut buffer = Vec::new();
    let format = &output.format;
    exporter::write_chips(&mut buffer, &chips, format.into(), &format.shape()?)?;
    emit(plan, &buffer)
}

fn run_command(mut args: RunArgs, given: &scenario::Given) -> Result<()> {
    let (settled, chip_name) = scenario::run(&mut args, given)?;
    let workload_name = &settled.workload;
    if chip_name.contains(',') && !Path::new(&chip_name).is_file() {
        anyhow::bail!(
            "`run` prices one chip, and --chip {chip_name} names several; price them side by \
             side with `stepcost compare {workload_name} --chip {chip_name}`",
        );
    }
    let chip = Chip::load(&Source::resolve(&chip_name, FileKind::Chip)?)?;
    let source = Source::resolve(workload_name, FileKind::Workload)?;
    let mut inputs = Inputs::default();
    inputs.named(&[&chip_name]);
    inputs.workload(workload_name, &source);
    args.cost.inputs(&mut inputs);
    settled.inputs(&mut inputs);
    let target = Target::from_out(args.output.out.as_deref());
    let saver = settled.saver(&inputs, std::slice::from_ref(&target))?;
    let plan = output::plan_all(vec![target], &inputs)?;
    let chip = args.cost.apply(vec![chip])?.remove(0);
    let workload = Workload::load(&source)?;
    let scenario = Scenario::resolve(&workload, &args.scenario.spec())?;
    let mut report: StepReport = price(&workload, &chip, &scenario)?;
    if let Some(request) = args.request {
        report = report.with_request(&workload, &chip, &scenario, request)?;
    }
    let format = (&args.output.format).into();
    let mut buffer = Vec::new();
    warn_unfit(&mut buffer, &workload, &chip, &scenario, &report, format)?;
    let shape = args.output.format.shape()?;
    exporter::write_run_shaped(&mut buffer, &report, args.per_op, format, &shape)?;
    if format == exporter::OutputFormat::Table && report.fits() {
        let levers = lever::levers(&workload, &chip, &scenario, &report)?;
        if let Some(next) = lever::next_step(&levers) {
            writeln!(buffer, "{}", exporter::next_step_line(next))?;
        }
    }
    emit(plan, &buffer)?;
    saver.commit()
}

/// When `report`'s scenario does not fit (or its request, at its end): a line saying so, with
/// the changes that would make the scenario fit priced, above a table (in `out`) or on stderr
/// beside rows a program reads.
fn warn_unfit(
    out: &mut Vec<u8>,
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    report: &StepReport,
    format: exporter::OutputFormat,
) -> Result<()> {
    let fixes = || fix::fixes(workload, chip, scenario, report);
    let Some(line) = exporter::unfit_warning(report, fixes) else {
        return Ok(());
    };
    if format == exporter::OutputFormat::Table {
        writeln!(out, "{line}")?;
    } else {
        // A closed stderr is no reason to fail: the rows still say `fits`.
        let _ = writeln!(io::stderr(), "{line}");
    }
    Ok(())
}

fn import_command(config: &Path, out: Option<PathBuf>) -> Result<()> {
    let mut inputs = Inputs::default();
    inputs.path(config);
    let plan = output::plan(out.as_deref(), &inputs)?;
    let source = Source::read(config)?;
    let imported = import::import(&source.text, &source.name, folder_of(config).as_deref())?;
    // The result must load: a config whose numbers make no graph is caught here.
    let name = match plan.targets() {
        [Target::File(path)] => path.display().to_string(),
        _ => config.display().to_string(),
    };
    Workload::load(&Source::from_text(&name, &imported.yaml))?;
    note_fields(
        &source.name,
        "ignored (they change nothing counted)",
        &imported.ignored,
    );
    note_fields(
        &source.name,
        "not understood, left out of the step",
        &imported.not_understood,
    );
    emit(plan, imported.yaml.as_bytes())
}

/// The name of the folder `config` is in (made absolute first: `config.json` alone is in the
/// current folder), the model's name when its config has no `_name_or_path`.
fn folder_of(config: &Path) -> Option<String> {
    let absolute = std::path::absolute(config).ok()?;
    let name = absolute.parent()?.file_name()?;
    Some(name.to_string_lossy().into_owned())
}

/// A note on stderr listing config keys. Keys come from the config: control characters are
/// shown escaped, never sent to the terminal. A closed stderr is no reason to fail.
fn note_fields(file: &str, what: &str, keys: &[String]) {
    if keys.is_empty() {
        return;
    }
    let keys: Vec<String> = keys.iter().map(|k| k.escape_debug().to_string()).collect();
    let _ = writeln!(
        io::stderr(),
        "note: fields of {} {what}: {}",
        file.escape_debug(),
        keys.join(", ")
    );
}

fn validate_command(cases: &Path, mode: ModeArg, output: OutputArgs) -> Result<()> {
    let (source, file) = case_file::read(cases, true)?;
    let plan = output::plan(output.out.as_deref(), &case_file::inputs(cases, &file))?;
    let serving = validate::validate_serving(&file.serving, cases, mode.into());
    let steps = !file.cases.is_empty() || serving.is_empty();
    let outcomes = validate::validate(file.cases, cases, mode.into());
    let stats = validate::error_stats(&outcomes);
    let format = &output.format;
    let mut buffer = Vec::new();
    if steps {
        let shape = format.shape()?;
        exporter::write_validation(&mut buffer, &outcomes, &stats, format.into(), &shape)?;
    }
    if !serving.is_empty() {
        let serving_stats = validate::serving_stats(&serving);
        let mut section = Vec::new();
        let kind = format.into();
        exporter::serving_cases::write_serving_validation(
            &mut section,
            &serving,
            &serving_stats,
            kind,
        )?;
        buffer = match (steps, kind) {
            (false, _) => section,
            (true, exporter::OutputFormat::Table) => [buffer, b"\n".to_vec(), section].concat(),
            (true, exporter::OutputFormat::Json) => merge_json(&buffer, &section)?,
            (true, _) => {
                // One CSV has one header: the step rows' report, the serving rows told apart.
                let _ = writeln!(
                    io::stderr(),
                    "note: {} serving rows in {}: listed with --format table or json",
                    serving.len(),
                    source.name.escape_debug()
                );
                buffer
            }
        };
    }
    emit(plan, &buffer)?;
    let skipped = outcomes.iter().filter(|o| o.predicted.is_err()).count()
        + serving.iter().filter(|o| o.predicted.is_err()).count();
    if skipped > 0 {
        anyhow::bail!(
            "{skipped} of {} cases in {} could not be priced (listed as skipped in the report)",
            outcomes.len() + serving.len(),
            source.name
        );
    }
    Ok(())
}

/// Two JSON objects' keys as one object (the step rows' report, then the serving rows').
fn merge_json(first: &[u8], second: &[u8]) -> Result<Vec<u8>> {
    let mut a: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(first)?;
    let b: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(second)?;
    a.extend(b);
    let mut out = serde_json::to_vec_pretty(&a)?;
    out.push(b'\n');
    Ok(out)
}

/// `check`: every file, each problem on stderr; exit 1 if any file has one. (Written, not
/// printed: a closed pipe ends the command quietly, and a closed stderr is no panic.)
fn check_command(files: &[PathBuf], kind: Option<KindArg>) -> Result<ExitCode> {
    let mut failed = false;
    let mut stdout = io::stdout().lock();
    for path in files {
        match check(path, kind.map(FileKind::from)) {
            Ok(checked) => writeln!(stdout, "ok: {}: {}", path.display(), describe(&checked))?,
            Err(err) => {
                failed = true;
                let _ = writeln!(io::stderr(), "{:#}", anyhow::Error::from(err));
            }
        }
    }
    stdout.flush()?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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

fn plot_command(picture: PlotCommand, given: &scenario::Given) -> Result<()> {
    let (svg, plan) = match picture {
        PlotCommand::Roofline { mut scenario, out } => {
            let settled = scenario::chips_scenario(&mut scenario, given, "plot roofline")?;
            let target = Target::from_out(out.as_deref());
            let (priced, plan, saver) = price_on_chips(scenario, settled, vec![target])?;
            let svg = svg::roofline(&priced.pairs())?;
            emit(plan, svg.as_bytes())?;
            return saver.commit();
        }
        PlotCommand::Sweep {
            csv,
            x,
            y,
            series,
            filter,
            include_unfit,
            log_x,
            log_y,
            label,
            out,
        } => {
            let mut inputs = Inputs::default();
            inputs.path(&csv);
            let plan = output::plan(out.as_deref(), &inputs)?;
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
                filter,
                include_unfit,
                log_x,
                log_y,
                label,
            };
            (svg::sweep(input, &name, &chart)?, plan)
        }
    };
    emit(plan, svg.as_bytes())
}

/// `report`: the Markdown file with its SVG beside it, or one HTML file; both files of a
/// Markdown report are written only when the whole report is made. Not to stdout: a
/// Markdown report is two files, and its kind is told by the file's extension.
fn report_command(mut args: ReportArgs, given: &scenario::Given) -> Result<()> {
    if Target::from_out(Some(&args.out)) == Target::Stdout {
        anyhow::bail!(
            "--out -: a report is written to files (FILE.md with FILE.svg beside it, or FILE.html), not to stdout"
        );
    }
    let kind = match args.out.extension().and_then(|e| e.to_str()) {
        Some("md") => Kind::Markdown,
        Some("html" | "htm") => Kind::Html,
        _ => anyhow::bail!(
            "--out {}: the report is Markdown or HTML; name the file FILE.md or FILE.html",
            args.out.display()
        ),
    };
    let svg_path = args.out.with_extension("svg");
    let targets = match kind {
        Kind::Markdown => vec![
            Target::File(svg_path.clone()),
            Target::File(args.out.clone()),
        ],
        Kind::Html => vec![Target::File(args.out.clone())],
    };
    let settled = scenario::chips_scenario(&mut args.scenario, given, "report")?;
    let (priced, plan, saver) = price_on_chips(args.scenario, settled, targets)?;
    let svg = svg::roofline(&priced.pairs())?;
    let mut sections = Vec::new();
    for (chip, report) in &priced.reports {
        let mut levers = lever::levers(&priced.workload, chip, &priced.scenario, report)?;
        levers.retain(|l| l.fits || args.include_unfit);
        sections.push((report, levers));
    }
    let svg_name = svg_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match kind {
        Kind::Markdown => {
            let text = document::markdown(&sections, &svg_name);
            plan.commit(&[svg.as_bytes(), text.as_bytes()])?
        }
        Kind::Html => emit(plan, document::html(&sections, &svg).as_bytes())?,
    }
    saver.commit()
}
