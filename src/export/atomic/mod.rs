//! Output files that appear whole or not at all, and only where stepcost may write.
//!
//! Every output goes through an [`OutputPlan`]: the command names its targets (stdout, or
//! files) and the files it reads; the plan refuses, before any work, a target that is not a
//! regular file (a directory, a device, a FIFO, a socket, a standard stream by name), one of
//! the command's own inputs, a file with other hard links, and two targets that are one file.
//! At the end it writes every file to a temporary file beside its target, and only once all
//! are written renames them into place: a failed command writes nothing.
//!
//! A temporary file never outlives a failure the process sees, even where the target's
//! folder was renamed or moved while the file was written ([`AtomicFile`]).
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
/// commit (an error, an interrupted sweep), or when the commit fails, it removes its
/// temporary file and leaves whatever was at the target untouched.
///
/// The temporary file is removed by its name in the folder it was made in, held open (on
/// Unix): where that folder was renamed or moved while the file was written, the temporary
/// file went with it, the commit fails (the target's path no longer leads to it) and the
/// temporary file is removed from wherever the folder now is. A folder removed whole takes
/// the file with it. Only a kill that runs no code (SIGKILL, a power cut) leaves a
/// `.stepcost-PID-N.tmp` behind.
pub(crate) struct AtomicFile {
    target: PathBuf,
    temp: TempFile,
    writer: Option<File>,
    committed: bool,
}

/// A temporary file's name and the folder it was made in, to remove it wherever the folder
/// has gone since (see [`AtomicFile`]).
pub(crate) struct TempFile {
    /// Its path as made (the folder as named then).
    path: PathBuf,
    /// The folder it was made in, open; `None` where it cannot be opened (or off Unix): the
    /// file is then removed by its path.
    folder: Option<File>,
}

impl TempFile {
    /// Removes the file; one already gone is no error.
    pub(crate) fn remove(&self) {
        #[cfg(unix)]
        if let (Some(folder), Some(name)) = (&self.folder, self.path.file_name()) {
            use std::os::fd::AsRawFd;
            use std::os::unix::ffi::OsStrExt;
            if let Ok(name) = std::ffi::CString::new(name.as_bytes()) {
                // SAFETY: a folder's open descriptor and a NUL-terminated name, both alive for
                // the call; unlinkat does not keep them.
                unsafe { libc::unlinkat(folder.as_raw_fd(), name.as_ptr(), 0) };
                return;
            }
        }
        let _ = std::fs::remove_file(&self.path);
    }

    /// A second handle on the same file, for a handler that must remove it when the process
    /// ends without unwinding (a second Ctrl-C).
    pub(crate) fn try_clone(&self) -> io::Result<TempFile> {
        Ok(TempFile {
            path: self.path.clone(),
            folder: self.folder.as_ref().map(File::try_clone).transpose()?,
        })
    }

    /// Whether the folder it was made in is no longer at the path it was named by.
    fn folder_moved(&self) -> bool {
        #[cfg(unix)]
        if let Some(folder) = &self.folder {
            use std::os::unix::fs::MetadataExt;
            let dir = folder_of(&self.path);
            return match (folder.metadata(), std::fs::metadata(dir)) {
                (Ok(open), Ok(named)) => (open.dev(), open.ino()) != (named.dev(), named.ino()),
                (Ok(_), Err(_)) => true,
                _ => false,
            };
        }
        false
    }
}

/// The folder `path` is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
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
        let dir = folder_of(target);
        // Opened before the file is made, so that it is the folder the file is in.
        let folder = File::open(dir).ok().filter(|_| cfg!(unix));
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
                temp: TempFile { path: temp, folder },
                writer: Some(file),
                committed: false,
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

    /// The temporary file, for a handler that must remove it when the process ends without
    /// unwinding.
    pub(crate) fn temp(&self) -> &TempFile {
        &self.temp
    }

    /// Flushes the file and moves it to its final name. (No fsync: the rename is what makes
    /// the name appear only with the whole file; surviving a power cut is not the point.) A
    /// failed rename removes the temporary file (on drop); where the target's folder was
    /// moved or removed meanwhile, the error says so.
    pub(crate) fn commit(mut self) -> io::Result<()> {
        self.writer.take();
        match std::fs::rename(&self.temp.path, &self.target) {
            Ok(()) => {
                self.committed = true;
                Ok(())
            }
            Err(e) if self.temp.folder_moved() => Err(io::Error::new(
                e.kind(),
                format!(
                    "its folder `{}` was moved or removed while it was written; nothing was \
                     written, and the temporary file was removed",
                    folder_of(&self.target).display()
                ),
            )),
            Err(e) => Err(e),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.writer.take();
        if !self.committed {
            self.temp.remove();
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
