//! Where a command's bytes go: stdout, or a file written whole (through a temporary file
//! renamed into place) or not at all.

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result};

use crate::export::atomic::write_atomically;

/// Writes `bytes` to stdout, or whole to `path`.
pub(crate) fn emit(bytes: &[u8], path: Option<&Path>) -> Result<()> {
    match path {
        None => {
            let mut stdout = io::stdout().lock();
            stdout.write_all(bytes)?;
            stdout.flush()?;
            Ok(())
        }
        Some(path) => write_atomically(path, bytes)
            .with_context(|| format!("cannot write `{}`", path.display())),
    }
}

/// Writes each `(path, bytes)` whole, in order.
pub(crate) fn emit_all(files: &[(&Path, &[u8])]) -> Result<()> {
    for (path, bytes) in files {
        emit(bytes, Some(path))?;
    }
    Ok(())
}
