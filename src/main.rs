//! The `stepcost` command: parses the arguments, dispatches to the library's command line,
//! and maps the outcome to an exit status: 0 on success (a reader closing the pipe early
//! counts as success), 1 for bad input (a bad environment included), 2 for an internal error.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    // Bad arguments are bad input: exit 1 (clap's own default is 2, which here means a bug).
    let cli = match stepcost::cli::parse() {
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
    // A limit variable set to nonsense is told as such, before any file is read (the first
    // file read would otherwise carry the blame).
    if let Err(message) = stepcost::internals::limits::limits() {
        report(format_args!("error: {message}"));
        return ExitCode::from(1);
    }
    match std::panic::catch_unwind(|| stepcost::cli::run(cli)) {
        Ok(Ok(code)) => code,
        Ok(Err(err)) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Ok(Err(err)) => {
            report(format_args!("error: {err:#}"));
            ExitCode::from(1)
        }
        Err(_) => {
            report(format_args!(
                "error: internal error (a bug in stepcost); please report it with the command line"
            ));
            ExitCode::from(2)
        }
    }
}

/// Writes a line to stderr; a stderr that is closed or full changes nothing (`eprintln!` would
/// panic, outside the catch above).
fn report(line: fmt::Arguments) {
    let _ = writeln!(io::stderr(), "{line}");
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
