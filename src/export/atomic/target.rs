//! Where a file target's bytes land (its symlinks followed), and whether stepcost may write
//! there: a regular file, or a new name in an existing directory; never a directory, a
//! device, a FIFO, a socket or a standard stream.

use std::ffi::OsStr;
use std::fs::Metadata;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Symlinks followed from one target before it counts as a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// A file target after its symlinks: the path its bytes land at, and the file there now.
pub(super) struct Resolved {
    pub(super) path: PathBuf,
    pub(super) existing: Option<Metadata>,
}

/// A refusal: the target is not something stepcost writes.
pub(super) fn refuse(reason: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, reason)
}

/// What stepcost writes, said after every refusal of a kind of file.
const ONLY_FILES: &str = "stepcost writes only regular files (or stdout, with `--out -`)";

/// Follows `given`'s symlinks to where its bytes would land, and checks that this is a
/// regular file or a name not taken yet.
pub(super) fn resolve(given: &Path) -> io::Result<Resolved> {
    names_a_file(given)?;
    let mut path = given.to_owned();
    let mut links = 0;
    let existing = loop {
        refuse_stream(given, &path)?;
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => break None,
            Err(e) => return Err(e),
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(refuse(format!(
                        "more than {MAX_LINKS} symlinks lead on from it (a loop?)"
                    )));
                }
                let next = std::fs::read_link(&path)?;
                // An absolute link replaces the path; a relative one is read from its folder.
                path = parent(&path).join(next);
            }
            Ok(meta) => break Some(meta),
        }
    };
    if let Some(meta) = &existing {
        regular(given, &path, meta)?;
    }
    agree(given, &path, existing.as_ref())?;
    Ok(Resolved { path, existing })
}

/// The folder a path's last component is in (`""` for a bare name).
pub(super) fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new(""))
}

/// Refuses a path whose last component names no file: empty, `/`, `.`, `..`, or a trailing
/// `/` (which would make a new file of a name meant as a folder).
fn names_a_file(given: &Path) -> io::Result<()> {
    let bytes = given.as_os_str().as_encoded_bytes();
    let last = bytes.rsplit(|b| *b == b'/').next().unwrap_or(bytes);
    if bytes.is_empty() {
        return Err(refuse("the name is empty".into()));
    }
    if last.is_empty() || last == b"." || last == b".." {
        if given.is_dir() {
            return Err(refuse(format!("it is a directory; {ONLY_FILES}")));
        }
        return Err(refuse(
            "it names no file (it ends in `/`, `.` or `..`)".into(),
        ));
    }
    Ok(())
}

/// Refuses `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1` and their kin, by name and through
/// the folders they are in: writing to them goes around the file they lead to.
fn refuse_stream(given: &Path, path: &Path) -> io::Result<()> {
    let dir = match parent(path) {
        d if d.as_os_str().is_empty() => Path::new("."),
        d => d,
    };
    let canonical = path
        .file_name()
        .and_then(|name| Some(std::fs::canonicalize(dir).ok()?.join(name)));
    if is_stream_name(path) || canonical.as_deref().is_some_and(is_stream_name) {
        let what = if path == given {
            "it is a standard stream".to_owned()
        } else {
            format!("it leads to `{}`, a standard stream", path.display())
        };
        return Err(refuse(format!(
            "{what}, not a file; to write to stdout, use `--out -`"
        )));
    }
    Ok(())
}

/// `/dev/stdin`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/P/fd/N`,
/// `/proc/P/task/T/fd/N`.
fn is_stream_name(path: &Path) -> bool {
    let parts: Vec<&OsStr> = path
        .components()
        .map(|c| match c {
            Component::RootDir => OsStr::new("/"),
            other => other.as_os_str(),
        })
        .collect();
    let is = |part: &OsStr, name: &str| part == OsStr::new(name);
    match parts.as_slice() {
        [root, dev, stream] if is(root, "/") && is(dev, "dev") => {
            ["stdin", "stdout", "stderr"].iter().any(|s| is(stream, s))
        }
        [root, dev, fd, _] => is(root, "/") && is(dev, "dev") && is(fd, "fd"),
        [root, proc, _, fd, _] => is(root, "/") && is(proc, "proc") && is(fd, "fd"),
        [root, proc, _, task, _, fd, _] => {
            is(root, "/") && is(proc, "proc") && is(task, "task") && is(fd, "fd")
        }
        _ => false,
    }
}

/// Refuses anything but a regular file: a directory, a device, a FIFO, a socket.
fn regular(given: &Path, path: &Path, meta: &Metadata) -> io::Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    let kind = kind_of(meta);
    Err(refuse(if path == given {
        format!("it is {kind}; {ONLY_FILES}")
    } else {
        format!("it leads to `{}`, {kind}; {ONLY_FILES}", path.display())
    }))
}

fn kind_of(meta: &Metadata) -> &'static str {
    if meta.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    "not a regular file"
}

/// Checks that what the system finds at `given` (through every kind of link, `/proc`'s
/// included) is the file the symlinks were followed to.
fn agree(given: &Path, path: &Path, existing: Option<&Metadata>) -> io::Result<()> {
    match (std::fs::metadata(given), existing) {
        (Ok(found), _) if !found.is_file() => regular(given, path, &found),
        (Ok(found), Some(meta)) if same_file(&found, given, meta, path) => Ok(()),
        (Err(e), None) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        (Err(e), None) => Err(e),
        _ => Err(refuse(
            "its links lead to a file stepcost cannot name; give that file's own path".into(),
        )),
    }
}

/// The identity of an existing file: device and inode.
#[cfg(unix)]
pub(super) type FileId = (u64, u64);

/// The identity of an existing file: its canonical path.
#[cfg(not(unix))]
pub(super) type FileId = PathBuf;

#[cfg(unix)]
pub(super) fn file_id(meta: &Metadata, _path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
pub(super) fn file_id(_meta: &Metadata, path: &Path) -> Option<FileId> {
    std::fs::canonicalize(path).ok()
}

fn same_file(a: &Metadata, a_path: &Path, b: &Metadata, b_path: &Path) -> bool {
    match (file_id(a, a_path), file_id(b, b_path)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Names the file has (hard links).
#[cfg(unix)]
pub(super) fn links(meta: &Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
pub(super) fn links(_meta: &Metadata) -> u64 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_streams_by_name() {
        for name in [
            "/dev/stdout",
            "/dev/stderr",
            "/dev/stdin",
            "/dev/fd/1",
            "//dev/./fd/2",
            "/proc/self/fd/1",
            "/proc/123/task/123/fd/1",
        ] {
            assert!(is_stream_name(Path::new(name)), "{name}");
        }
        for name in [
            "/dev/null",
            "dev/stdout",
            "/srv/fd/1",
            "/proc/self/fdinfo/1",
        ] {
            assert!(!is_stream_name(Path::new(name)), "{name}");
        }
    }
}
