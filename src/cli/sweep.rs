//! `sweep`: the grid from the command line, a progress bar on a terminal, Ctrl-C that stops
//! within a chunk, and an output file that is written whole or not at all.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::args::{SweepArgs, SweepFormatArgs};
use super::output;
use super::scenario::Given;
use crate::base::source::{FileKind, Source};
use crate::core::workload::Workload;
use crate::export::atomic::{AtomicFile, Target};
use crate::export::stream::{StreamFormat, SweepRows};
use crate::study::sweep::{self, SweepError, SweepStats};

/// The file the sweep writes, if it writes one (else stdout).
fn file_target(targets: &[Target]) -> Option<std::path::PathBuf> {
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
    let size = sweep::grid_len(
        workload,
        chips,
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

pub(crate) fn sweep_command(mut args: SweepArgs, given: &Given) -> Result<ExitCode> {
    let settled = super::scenario::sweep(&mut args, given)?;
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
    let cancel = cancel_on_ctrl_c(file.as_ref().map(|f| f.temp_path().to_owned()));
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
        report_interrupted(&stats, total, out.as_deref());
        return Ok(ExitCode::from(130));
    }
    if let (Some(file), Some(path)) = (file, &out) {
        file.commit()
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        if !args.quiet && io::stderr().is_terminal() {
            report_written(&stats, path);
        }
    }
    saver.commit()?;
    Ok(ExitCode::SUCCESS)
}

/// How the rows are encoded. Parquet goes only to a file: a reader starts from its footer,
/// which comes last, so it cannot stream to stdout.
#[cfg_attr(not(feature = "parquet"), allow(unused_variables))]
fn stream_format(format: &SweepFormatArgs, target: &Target) -> Result<StreamFormat> {
    match format.stream() {
        #[cfg(feature = "parquet")]
        Some(StreamFormat::Parquet) if !matches!(target, Target::File(_)) => anyhow::bail!(
            "--format parquet writes a file, not a stream: give --out FILE (a Parquet reader \
             starts from the file's footer, so it cannot go to stdout)"
        ),
        Some(stream) => Ok(stream),
        None => anyhow::bail!(
            "--format parquet: this stepcost was built without Parquet (cargo feature `parquet`)"
        ),
    }
}

/// Runs `sweep` into `file`: its rows' bytes as they are, or for Parquet through the writer
/// that makes row groups of them and the file's footer at the end.
#[cfg_attr(not(feature = "parquet"), allow(unused_variables))]
fn into_file(
    file: &mut AtomicFile,
    sink: &SweepRows,
    sweep: impl FnOnce(&mut (dyn Write + Send)) -> Result<SweepStats, SweepError>,
) -> Result<SweepStats, SweepError> {
    #[cfg(feature = "parquet")]
    if sink.format() == StreamFormat::Parquet {
        let mut parquet =
            crate::export::parquet::ParquetFile::new(file.writer(), sink.column_types())?;
        let stats = sweep(&mut parquet)?;
        if !stats.cancelled {
            parquet.finish()?;
        }
        return Ok(stats);
    }
    sweep(file.writer())
}

/// The sink of the sweep's rows, only those `--where` and `--fits-only` keep and then the
/// best `--top` asks for, cut to `--columns` and `--digits`.
fn rows(workload: &Workload, args: &SweepArgs, stream: StreamFormat) -> Result<SweepRows> {
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
    match sink.rank_error() {
        Some(e) => anyhow::bail!("{e}"),
        None => Ok(()),
    }
}

/// Most threads a sweep starts, whatever `RAYON_NUM_THREADS` asks for.
const MAX_THREADS: usize = 1024;

/// The threads a sweep prices on: one per CPU, or `RAYON_NUM_THREADS` of them (0 or empty
/// meaning one per CPU, as in rayon). A value that is not a whole number up to [`MAX_THREADS`], or
/// threads the system will not start, are an error, never a panic.
fn thread_pool() -> Result<rayon::ThreadPool> {
    const VAR: &str = "RAYON_NUM_THREADS";
    let text = std::env::var_os(VAR).unwrap_or_default();
    let threads = match text.to_str().map(str::trim) {
        Some("") => 0,
        read => read
            .and_then(|t| t.parse::<usize>().ok())
            .filter(|n| *n <= MAX_THREADS)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{VAR}={}: expected a whole number of threads from 0 (one per CPU) to {MAX_THREADS}",
                    text.to_string_lossy()
                )
            })?,
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        // The error's own source repeats its message: give it once.
        .map_err(|e| anyhow::anyhow!("cannot start the sweep's threads: {e}"))
}

/// A bar of scenarios priced on a terminal's stderr; hidden when quiet or not a terminal.
fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:40} {human_pos}/{human_len} scenarios  {per_sec}  ETA {eta}",
    ) {
        bar.set_style(style);
    }
    bar
}

/// A flag the first Ctrl-C sets, so the sweep stops after the chunk in flight.
fn cancel_on_ctrl_c(temp: Option<PathBuf>) -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    // A second Ctrl-C ends at once: the final file is still never half-written, and the
    // temporary one is removed (the exit runs no destructor).
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            if let Some(temp) = &temp {
                let _ = std::fs::remove_file(temp);
            }
            std::process::exit(130);
        }
    });
    cancel
}

/// Tells how far an interrupted sweep got, and that its output file was not written.
fn report_interrupted(stats: &SweepStats, total: u64, out: Option<&Path>) {
    // A closed stderr is no reason to fail (`eprintln!` would panic).
    let _ = writeln!(
        io::stderr(),
        "interrupted: {} of {total} scenarios priced ({} rows){}",
        stats.scenarios,
        stats.rows,
        match out {
            Some(path) => format!("; `{}` was not written", path.display()),
            None => String::new(),
        }
    );
}

/// Tells what a finished sweep wrote to `path`.
fn report_written(stats: &SweepStats, path: &Path) {
    let _ = writeln!(
        io::stderr(),
        "{} scenarios, {} rows ({} could not be priced) written to `{}`",
        stats.scenarios,
        stats.rows,
        stats.errors,
        path.display()
    );
}

/// A failed sweep as the command reports it: a write error keeps its `io::Error` (so a closed
/// pipe is told apart) with the file named; a scenario's failure says which one.
fn failure(error: SweepError, path: Option<&Path>) -> anyhow::Error {
    match (error, path) {
        (SweepError::Write(e), Some(path)) => {
            anyhow::Error::new(e).context(format!("cannot write `{}`", path.display()))
        }
        (SweepError::Write(e), None) => anyhow::Error::new(e).context("cannot write to stdout"),
        (e, _) => e.into(),
    }
}
