//! Output files that appear whole or not at all: written to a temporary file beside the
//! target and renamed over it only once everything is written.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file being written; it takes its final name on [`AtomicFile::commit`]. Dropped without a
/// commit (an error, an interrupted sweep), it removes its temporary file and leaves whatever
/// was at the target untouched.
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    writer: Option<File>,
}

impl AtomicFile {
    /// Creates the temporary file in the target's directory.
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        let name = target.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
        })?;
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let temp = dir.join(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = File::create(&temp)?;
        Ok(AtomicFile {
            target: target.to_owned(),
            temp,
            writer: Some(file),
        })
    }

    /// Where to write; unbuffered, so write in large pieces.
    pub fn writer(&mut self) -> &mut File {
        self.writer
            .as_mut()
            .expect("an AtomicFile has its writer until it is committed or dropped")
    }

    /// Flushes the file and moves it to its final name. (No fsync: the rename is what makes
    /// the name appear only with the whole file; surviving a power cut is not the point.)
    pub fn commit(mut self) -> io::Result<()> {
        self.writer.take();
        std::fs::rename(&self.temp, &self.target)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() || self.temp.exists() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` whole to `path`, or leaves it untouched.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.writer().write_all(bytes)?;
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appears_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        std::fs::write(&target, "old").unwrap();
        {
            let mut file = AtomicFile::create(&target).unwrap();
            file.writer().write_all(b"new, partial").unwrap();
            // dropped without commit
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        write_atomically(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
