//! Where a command's bytes go. Each command names its targets (`--out FILE`, or stdout) and
//! the files it reads before it does any work: the output plan refuses a target that is not a
//! regular file, that is one of those inputs, or that has other hard links (see
//! [`crate::export::atomic`]). At the end the command hands over all its bytes at once; each
//! file is written whole through a temporary file, and none unless all can be. Also the
//! warning over a scenario that does not fit, above a table or on stderr. A leaf: it imports
//! no other module of the command line.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::base::source::Source;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::timing::StepReport;
use crate::core::workload::Workload;
use crate::export::atomic::{OutputError, OutputPlan, Target};
use crate::export::{self as exporter, OutputFormat};
use crate::study::fix;

/// The files a command reads, as far as the command line and the files themselves name them;
/// an output may not be any of them. Names that are not files (built-ins) are passed over.
#[derive(Default)]
pub(crate) struct Inputs(Vec<PathBuf>);

impl Inputs {
    pub(crate) fn path(&mut self, path: &Path) {
        self.0.push(path.to_owned());
    }

    /// A file a flag names, where it names one (`--prices FILE`).
    pub(crate) fn optional(&mut self, path: Option<&Path>) {
        if let Some(path) = path {
            self.path(path);
        }
    }

    pub(crate) fn paths(&self) -> &[PathBuf] {
        &self.0
    }

    /// Chips or workloads named on the command line: each is a file where one exists by that
    /// name (as [`Source::resolve`] decides).
    pub(crate) fn named(&mut self, names: &[impl AsRef<str>]) {
        for name in names.iter().map(AsRef::as_ref) {
            if Path::new(name).is_file() {
                self.path(Path::new(name));
            }
        }
    }

    /// A workload named `spec` and resolved to `source`: its file, and the template it names
    /// by path (read from the folder of the workload's file).
    pub(crate) fn workload(&mut self, spec: &str, source: &Source) {
        self.named(&[spec]);
        self.template(source);
    }

    /// The template the workload file `source` names by path, if it does.
    pub(crate) fn template(&mut self, source: &Source) {
        if let Some(template) = template_path(source) {
            self.path(&template);
        }
    }
}

/// The path of the template `source` names, where it names one by path (as
/// [`Source::resolve_template`] reads it).
fn template_path(source: &Source) -> Option<PathBuf> {
    #[derive(serde::Deserialize)]
    struct Named {
        template: Option<String>,
    }
    if source.name.ends_with("(built-in)") || !source.text.contains("template") {
        return None;
    }
    let name = source.parse::<Named>().ok()?.template?;
    Source::template_path(&name, source)
}

/// The plan of a command with one output: `--out FILE`, or stdout when `out` is absent or `-`.
pub(crate) fn plan(out: Option<&Path>, inputs: &Inputs) -> Result<OutputPlan> {
    plan_all(vec![Target::from_out(out)], inputs)
}

/// The plan of a command's outputs, checked now: a refusal ends the command before it works.
pub(crate) fn plan_all(targets: Vec<Target>, inputs: &Inputs) -> Result<OutputPlan> {
    if targets.contains(&Target::Stdout) && stdout_closed_at_start() {
        return Err(OutputError::stdout(io::Error::other(
            "it was closed when stepcost started (as with `>&-`), so the output would be lost; \
             redirect it, or give --out FILE",
        ))
        .into());
    }
    Ok(OutputPlan::new(targets, &inputs.0)?)
}

/// Writes the one output of `plan`.
pub(crate) fn emit(plan: OutputPlan, bytes: &[u8]) -> Result<()> {
    Ok(plan.commit(&[bytes])?)
}

/// When `report`'s scenario does not fit (or its request, at its end): a line saying so, with
/// the changes that would make the scenario fit priced, above a table (in `out`) or on stderr
/// beside rows a program reads.
pub(crate) fn warn_unfit(
    out: &mut Vec<u8>,
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    report: &StepReport,
    format: OutputFormat,
) -> Result<()> {
    let fixes = || fix::fixes(workload, chip, scenario, report);
    let Some(line) = exporter::unfit_warning(report, fixes) else {
        return Ok(());
    };
    if format == OutputFormat::Table {
        writeln!(out, "{line}")?;
    } else {
        // A closed stderr is no reason to fail: the rows still say `fits`.
        let _ = writeln!(io::stderr(), "{line}");
    }
    Ok(())
}

/// Whether stdout (descriptor 1) was closed when the process started. Rust's runtime opens
/// `/dev/null` on a closed standard descriptor before `main` runs, so writes to it would
/// vanish with success; the probe runs before that, among the program's initializers.
#[cfg(target_os = "linux")]
pub(crate) fn stdout_closed_at_start() -> bool {
    closed_stdout::CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn stdout_closed_at_start() -> bool {
    false
}

#[cfg(target_os = "linux")]
mod closed_stdout {
    use std::os::fd::AsFd;
    use std::sync::atomic::{AtomicBool, Ordering};

    pub(super) static CLOSED: AtomicBool = AtomicBool::new(false);

    /// Duplicating a closed descriptor fails with EBADF; the duplicate is closed again.
    extern "C" fn probe() {
        let dup = std::io::stdout().as_fd().try_clone_to_owned();
        let closed = dup.is_err_and(|e| e.raw_os_error() == Some(libc::EBADF));
        CLOSED.store(closed, Ordering::Relaxed);
    }

    /// Run by the loader before `main` (and before Rust's runtime replaces a closed stdout).
    #[used]
    #[link_section = ".init_array"]
    static PROBE: extern "C" fn() = probe;
}
