//! `check`: chip, workload and engine files validated, every problem reported with its line.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::base::source::FileKind;
use crate::study::check::{check, Checked};

#[derive(Args)]
pub(crate) struct CheckArgs {
    /// Files to check
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// What the files are; guessed from their top-level keys when omitted
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
}

#[derive(Clone, Copy, ValueEnum)]
enum KindArg {
    Chip,
    Workload,
    Engine,
}

impl From<KindArg> for FileKind {
    fn from(k: KindArg) -> FileKind {
        match k {
            KindArg::Chip => FileKind::Chip,
            KindArg::Workload => FileKind::Workload,
            KindArg::Engine => FileKind::Engine,
        }
    }
}

/// `check`: every file, each problem on stderr; exit 1 if any file has one. (Written, not
/// printed: a closed pipe ends the command quietly, and a closed stderr is no panic.)
pub(crate) fn run(args: CheckArgs) -> Result<ExitCode> {
    let mut failed = false;
    let mut stdout = io::stdout().lock();
    for path in &args.files {
        match check(path, args.kind.map(FileKind::from)) {
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
        Checked::Engine { id, name } => format!("engine `{id}` ({name})"),
    }
}
