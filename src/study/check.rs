//! `check`: load a chip or workload file as the engine would, and say what it holds. A
//! workload is also evaluated at its defaults, which finds what only values reveal (a
//! division by zero, a dimension that is not positive).

use std::path::Path;

use crate::base::error::Error;
use crate::base::source::{FileKind, Source};
use crate::core::chip::Chip;
use crate::core::workload::Workload;

/// What a file that loads holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    Chip {
        name: String,
        /// The data types of its matrix unit.
        matrix_types: Vec<&'static str>,
    },
    Workload {
        name: String,
        params: usize,
        blocks: usize,
        ops: usize,
        fusion_plans: Vec<String>,
    },
}

/// Why a file could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Load(#[from] Error),
    #[error("{0}: cannot tell a chip file (with `memory:` and `matrix:`) from a workload file (with `blocks:`); pass --kind")]
    UnknownKind(String),
}

/// Loads the file at `path` as `kind` (guessed from its top-level keys when `None`).
pub fn check(path: &Path, kind: Option<FileKind>) -> Result<Checked, CheckError> {
    let source = Source::read(path)?;
    let kind = match kind {
        Some(kind) => kind,
        None => {
            guess_kind(&source.text).ok_or_else(|| CheckError::UnknownKind(source.name.clone()))?
        }
    };
    Ok(match kind {
        FileKind::Chip => {
            let chip = Chip::load(&source)?;
            Checked::Chip {
                matrix_types: chip.matrix.peaks().map(|(d, _)| d.name()).collect(),
                name: chip.name,
            }
        }
        FileKind::Workload | FileKind::Template => {
            let workload = Workload::load(&source)?;
            workload.evaluate(&[], &mut workload.new_evaluation())?;
            Checked::Workload {
                params: workload.params.len(),
                blocks: workload.blocks.len(),
                ops: workload.ops.len(),
                fusion_plans: workload
                    .fusion_plans
                    .iter()
                    .map(|p| p.name.clone())
                    .collect(),
                name: workload.name,
            }
        }
    })
}

/// A chip file has `matrix`, `memory` or `vector` at the top; a workload `blocks`, `ops`,
/// `params` or `tensors`.
pub(crate) fn guess_kind(text: &str) -> Option<FileKind> {
    let keys: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with([' ', '\t', '#', '-']))
        .filter_map(|l| l.split(':').next())
        .collect();
    if keys
        .iter()
        .any(|k| matches!(*k, "blocks" | "ops" | "params" | "tensors"))
    {
        Some(FileKind::Workload)
    } else if keys
        .iter()
        .any(|k| matches!(*k, "matrix" | "memory" | "vector"))
    {
        Some(FileKind::Chip)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_kind_from_top_level_keys() {
        assert_eq!(guess_kind("name: x\nmemory: {}\n"), Some(FileKind::Chip));
        assert_eq!(
            guess_kind("name: x\nblocks: []\n"),
            Some(FileKind::Workload)
        );
        assert_eq!(guess_kind("name: x\n  blocks: []\n"), None);
    }
}
