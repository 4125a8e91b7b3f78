//! Opening an input file: only a regular file, checked on the open handle, and never more
//! than its limit read.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::whole_file;
use crate::base::error::Error;

/// An input file opened for reading: a regular file, of which at most its limit is read. Reading
/// past the limit (a file that grew, or one whose file system misstates its size) is an error
/// that names the limit's variable.
#[derive(Debug)]
pub(crate) struct Input {
    /// The file as messages name it: the path given.
    pub name: String,
    file: File,
    limit: u64,
    variable: &'static str,
    read: u64,
}

impl Input {
    /// Opens `path` without blocking (a FIFO with no writer must not hang the command), then
    /// checks on the opened handle that it is a regular file (a directory, FIFO, socket or
    /// device, or a symlink to one, is refused before a byte is read) of at most `limit`
    /// bytes; `variable` names the environment variable that moves the limit.
    pub(crate) fn open(path: &Path, limit: u64, variable: &'static str) -> Result<Input, Error> {
        let name = path.display().to_string();
        let io = |source| Error::Io {
            path: name.clone(),
            source,
        };
        let file = open_nonblocking(path).map_err(|source| match std::fs::metadata(path) {
            // opening a socket fails (ENXIO): say what it is rather than the errno
            Ok(meta) if !meta.is_file() => not_regular(&name, path, &meta),
            _ => io(source),
        })?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(not_regular(&name, path, &meta));
        }
        if meta.len() > limit {
            return Err(too_large(&name, Some(meta.len()), limit, variable));
        }
        Ok(Input {
            name,
            file,
            limit,
            variable,
            read: 0,
        })
    }

    fn over_limit(&self) -> bool {
        self.read > self.limit
    }

    fn over_limit_error(&self) -> std::io::Error {
        std::io::Error::other(over_limit_message(None, self.limit, self.variable))
    }
}

/// The whole of the file at `path` (see [`Input::open`]), and its name for messages.
pub(super) fn read_all(
    path: &Path,
    limit: u64,
    variable: &'static str,
) -> Result<(String, Vec<u8>), Error> {
    let mut input = Input::open(path, limit, variable)?;
    let mut bytes = Vec::new();
    if let Err(source) = input.read_to_end(&mut bytes) {
        return Err(match input.over_limit() {
            true => too_large(&input.name, None, limit, variable),
            false => Error::Io {
                path: input.name,
                source,
            },
        });
    }
    Ok((input.name, bytes))
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.over_limit() {
            return Err(self.over_limit_error());
        }
        // at most one byte past the limit, to tell a file at the limit from one over it
        let room = (self.limit - self.read).saturating_add(1);
        let room = usize::try_from(room).unwrap_or(usize::MAX).min(buf.len());
        let n = self.file.read(&mut buf[..room])?;
        self.read += n as u64;
        if self.over_limit() {
            return Err(self.over_limit_error());
        }
        Ok(n)
    }
}

/// Opens for reading with `O_NONBLOCK`: a FIFO opens at once even with no writer, and is
/// then refused as not a regular file; reads of a regular file ignore the flag.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// Elsewhere a plain open: the file type is still checked before a byte is read.
#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// A path that exists but is not a regular file, named for what it is.
fn not_regular(name: &str, path: &Path, meta: &std::fs::Metadata) -> Error {
    let kind = meta.file_type();
    let what = if kind.is_dir() {
        "a directory"
    } else {
        special_file(kind)
    };
    let via = match path.symlink_metadata() {
        Ok(link) if link.file_type().is_symlink() => "a symlink to ",
        _ => "",
    };
    whole_file(
        name,
        format!(
            "not a regular file ({via}{what}); stepcost reads its inputs only from regular files"
        ),
    )
}

#[cfg(unix)]
fn special_file(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn special_file(_: std::fs::FileType) -> &'static str {
    "not a file"
}

/// `file is N bytes` (or `more than the limit`, when the size was found by reading) and the
/// limit with the variable that raises it.
fn over_limit_message(size: Option<u64>, limit: u64, variable: &str) -> String {
    let size = match size {
        Some(n) => format!("file is {n} bytes"),
        None => format!("file has more than {limit} bytes"),
    };
    format!("{size}; the limit is {limit} bytes ({variable} raises it)")
}

fn too_large(name: &str, size: Option<u64>, limit: u64, variable: &str) -> Error {
    whole_file(name, over_limit_message(size, limit, variable))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_up_to_its_limit_and_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "12345678").unwrap();
        let mut all = Vec::new();
        let mut input = Input::open(&path, 8, "VAR").unwrap();
        input.read_to_end(&mut all).unwrap();
        assert_eq!(all, b"12345678");
        let refused = Input::open(&path, 7, "VAR").unwrap_err().to_string();
        assert!(refused.contains("file is 8 bytes; the limit is 7 bytes (VAR raises it)"));

        // a file that grows after it was opened (and checked)
        std::fs::write(&path, "12345").unwrap();
        let mut input = Input::open(&path, 8, "VAR").unwrap();
        std::fs::write(&path, "1234567890").unwrap();
        let mut some = Vec::new();
        let err = input.read_to_end(&mut some).unwrap_err().to_string();
        assert!(err.contains("more than 8 bytes; the limit is 8 bytes (VAR raises it)"));
        assert!(some.len() <= 9, "{} bytes read", some.len());
    }
}
