//! Output files that appear whole or not at all, and only where stepcost may write.
//!
//! Every output goes through an [`OutputPlan`]: the command names its targets (stdout, or
//! files) and the files it reads; the plan refuses, before any work, a target that is not a
//! regular file (a directory, a device, a FIFO, a socket, a standard stream by name), one of
//! the command's own inputs, a file with other hard links, and two targets that are one file.
//! At the end it writes every file to a temporary file beside its target, and only once all
//! are written renames them into place: a failed command writes nothing.
//!
//! A symlink is written through (the file it leads to is replaced, the link stays); a file
//! that is replaced keeps its mode and, where the user may give it, its owner.

mod plan;
mod target;

// Only the command line writes files; without it the plan stays compiled, unused.
#[cfg_attr(not(feature = "cli"), allow(unused_imports))]
pub(crate) use plan::{OutputError, OutputPlan, Target};

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file being written; it takes its final name on [`AtomicFile::commit`]. Dropped without a
/// commit (an error, an interrupted sweep), it removes its temporary file and leaves whatever
/// was at the target untouched.
pub(crate) struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    writer: Option<File>,
}

/// Temporary files made by this process so far: each gets a new number.
static TEMPS: AtomicU64 = AtomicU64::new(0);

impl AtomicFile {
    /// Creates the temporary file beside `target`, which must be where the bytes land (no
    /// symlink at its end). Where `existing` (the metadata of the file at `target`) is given,
    /// the temporary file takes its owner (where permitted) and its mode before any byte is
    /// written. The temporary name is short (`.stepcost-PID-N.tmp`), so a target whose name
    /// is as long as the system allows still works.
    pub(crate) fn beside(target: &Path, existing: Option<&Metadata>) -> io::Result<AtomicFile> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let pid = std::process::id();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let n = TEMPS.fetch_add(1, Ordering::Relaxed);
            let temp = dir.join(format!(".stepcost-{pid}-{n}.tmp"));
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            if existing.is_some() {
                // Readable by no one else until it takes the replaced file's mode.
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            }
            let file = match options.open(&temp) {
                Ok(file) => file,
                // A leftover of an earlier process with this id: take the next number.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 100 => continue,
                Err(e) => return Err(e),
            };
            let atomic = AtomicFile {
                target: target.to_owned(),
                temp,
                writer: Some(file),
            };
            if let Some(existing) = existing {
                take_mode_and_owner(atomic.writer.as_ref().expect("just opened"), existing)?;
            }
            return Ok(atomic);
        }
    }

    /// Where to write; unbuffered, so write in large pieces.
    pub(crate) fn writer(&mut self) -> &mut File {
        self.writer
            .as_mut()
            .expect("an AtomicFile has its writer until it is committed or dropped")
    }

    /// The temporary file's path, for a handler that must remove it when the process ends
    /// without unwinding.
    pub(crate) fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Flushes the file and moves it to its final name. (No fsync: the rename is what makes
    /// the name appear only with the whole file; surviving a power cut is not the point.)
    pub(crate) fn commit(mut self) -> io::Result<()> {
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

/// Gives `file` the owner (where the user may: a refusal is not an error) and the mode of
/// `existing`.
#[cfg(unix)]
fn take_mode_and_owner(file: &File, existing: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::{fchown, MetadataExt, PermissionsExt};
    let denied = |r: io::Result<()>| match r {
        // EPERM: not root, or not a group of the user's
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Ok(false),
        Err(e) => Err(e),
        Ok(()) => Ok(true),
    };
    if !denied(fchown(file, Some(existing.uid()), Some(existing.gid())))? {
        // Not the owner's: keep at least the group, where the user belongs to it.
        denied(fchown(file, None, Some(existing.gid())))?;
    }
    // After the owner: a change of owner clears the set-user-id bit.
    file.set_permissions(std::fs::Permissions::from_mode(existing.mode() & 0o7777))
}

#[cfg(not(unix))]
fn take_mode_and_owner(file: &File, existing: &Metadata) -> io::Result<()> {
    file.set_permissions(existing.permissions())
}

/// Writes `bytes` to an open temporary file.
fn write_whole(file: &mut AtomicFile, bytes: &[u8]) -> io::Result<()> {
    file.writer().write_all(bytes)
}

#[cfg(all(test, unix))]
mod tests;
