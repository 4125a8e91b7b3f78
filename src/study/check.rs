//! `check`: load a chip, workload or engine file as pricing would, and say what it holds. A
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
    /// A chip file that loads.
    Chip {
        /// The chip's product name (`NVIDIA H100 SXM`).
        name: String,
        /// The data types of its matrix unit.
        matrix_types: Vec<&'static str>,
    },
    /// A workload file that loads and evaluates at its defaults.
    Workload {
        /// The workload's name as its file gives it.
        name: String,
        /// How many params the file declares.
        params: usize,
        /// How many blocks the file declares.
        blocks: usize,
        /// How many ops the file declares, across all its blocks.
        ops: usize,
        /// The names of its fusion plans, in file order.
        fusion_plans: Vec<String>,
    },
    /// An engine file that loads.
    Engine {
        /// The engine's id, its file stem (`vllm`).
        id: String,
        /// Its product name and version.
        name: String,
    },
}

/// Why a file could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The file could not be read, parsed or evaluated.
    #[error(transparent)]
    Load(#[from] Error),
    /// No kind was given and the file's top-level keys do not tell one; holds the path given.
    #[error("{0}: cannot tell a chip file (with `memory:` and `matrix:`) from a workload file (with `blocks:`) or an engine file (with `admission:` and `graphs:`); pass --kind")]
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
        FileKind::Engine => {
            let engine = crate::core::engine::Engine::load(&source)?;
            Checked::Engine {
                id: engine.id().to_owned(),
                name: engine.name().to_owned(),
            }
        }
    })
}

/// A chip file has `matrix`, `memory` or `vector` at the top; a workload `blocks`, `ops`,
/// `params` or `tensors`; an engine `admission`, `graphs` or `gemm_paths`.
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
    } else if keys
        .iter()
        .any(|k| matches!(*k, "admission" | "graphs" | "gemm_paths"))
    {
        Some(FileKind::Engine)
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
        assert_eq!(
            guess_kind("name: x\nadmission: on-demand\n"),
            Some(FileKind::Engine)
        );
    }
}
