//! How a sweep runs from the command line: on a pool of threads, with a progress bar on a
//! terminal, Ctrl-C that stops it within a chunk, its rows into the output file (through the
//! Parquet writer where asked), and what it tells on stderr when it ends.

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::export::atomic::{AtomicFile, TempFile};
#[cfg(feature = "parquet")]
use crate::export::stream::StreamFormat;
use crate::export::stream::SweepRows;
use crate::study::sweep::{SweepError, SweepStats};

/// Runs `sweep` into `file`: its rows' bytes as they are, or for Parquet through the writer
/// that makes row groups of them and the file's footer at the end.
#[cfg_attr(not(feature = "parquet"), allow(unused_variables))]
pub(super) fn into_file(
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

/// Most threads a sweep starts, whatever `RAYON_NUM_THREADS` asks for.
const MAX_THREADS: usize = 1024;

/// The threads a sweep prices on: one per CPU, or `RAYON_NUM_THREADS` of them (0 or empty
/// meaning one per CPU, as in rayon). A value that is not a whole number up to [`MAX_THREADS`], or
/// threads the system will not start, are an error, never a panic.
pub(super) fn thread_pool() -> Result<rayon::ThreadPool> {
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
pub(super) fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
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
pub(super) fn cancel_on_ctrl_c(temp: Option<TempFile>) -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    // A second Ctrl-C ends at once: the final file is still never half-written, and the
    // temporary one is removed (the exit runs no destructor).
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            if let Some(temp) = &temp {
                temp.remove();
            }
            std::process::exit(130);
        }
    });
    cancel
}

/// Tells how far an interrupted sweep got, and that its output file was not written.
pub(super) fn report_interrupted(stats: &SweepStats, total: u64, out: Option<&Path>) {
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
pub(super) fn report_written(stats: &SweepStats, path: &Path) {
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
pub(super) fn failure(error: SweepError, path: Option<&Path>) -> anyhow::Error {
    match (error, path) {
        (SweepError::Write(e), Some(path)) => {
            anyhow::Error::new(e).context(format!("cannot write `{}`", path.display()))
        }
        (SweepError::Write(e), None) => anyhow::Error::new(e).context("cannot write to stdout"),
        (e, _) => e.into(),
    }
}
