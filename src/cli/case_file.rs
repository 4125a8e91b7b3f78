//! The case files `validate`, `validate --cross-validate` and `fit` read: the file read and
//! checked (its serving rows loaded; counted on stderr where the command leaves them out),
//! and the files a command's output must not overwrite.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::base::source::{FileKind, Source};
use crate::cli::output::Inputs;
use crate::study::validate::{self, CaseFile};

/// Reads the case file at `cases`; every serving row must name a chip, a workload and a
/// scenario that load. Unless `serving` (the command prices them), says on stderr how many
/// serving rows it leaves out.
pub(crate) fn read(cases: &Path, serving: bool) -> Result<(Source, CaseFile)> {
    let source = Source::read(cases)?;
    let file = validate::read_case_file(&source)?;
    validate::check_serving(&file.serving, &source, cases)?;
    let n = file.serving.len();
    if n > 0 && !serving {
        let rows = if n == 1 { "row" } else { "rows" };
        // A closed stderr is no reason to fail: the report is what matters.
        let _ = writeln!(
            io::stderr(),
            "note: {n} serving {rows} in {}: left out (`validate` without --cross-validate prices them)",
            source.name.escape_debug()
        );
    }
    Ok((source, file))
}

/// The files a case file's command reads: the case file, and each row's chip and workload
/// where they are files (beside the case file, or at their own path), with a workload's
/// template.
pub(crate) fn inputs(cases: &Path, file: &CaseFile) -> Inputs {
    let mut inputs = Inputs::default();
    inputs.path(cases);
    let dir = cases.parent().unwrap_or(Path::new(""));
    let names = (file.cases.iter().map(|c| (&c.chip, &c.workload)))
        .chain(file.serving.iter().map(|c| (&c.chip, &c.workload)));
    let mut seen = HashSet::new();
    for (chip, workload) in names {
        for (name, kind) in [(chip, FileKind::Chip), (workload, FileKind::Workload)] {
            if !seen.insert(name) {
                continue;
            }
            for path in [dir.join(name), PathBuf::from(name)] {
                if !path.is_file() {
                    continue;
                }
                inputs.path(&path);
                if kind == FileKind::Workload {
                    if let Ok(source) = Source::read(&path) {
                        inputs.template(&source);
                    }
                }
            }
        }
    }
    inputs
}
