//! The output plan: every target a command writes, checked before the command works and
//! again when it commits, and written together at the end.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::target::{self, file_id, links, refuse, FileId, Resolved};
use super::{write_whole, AtomicFile};

/// Where one output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// Standard output (`--out -`, or no `--out`).
    Stdout,
    /// A regular file, replaced whole (through its symlinks) or created.
    File(PathBuf),
}

impl Target {
    /// The target of an `--out` option: stdout when it is absent or `-` (a file named `-` is
    /// `./-`).
    pub(crate) fn from_out(out: Option<&Path>) -> Target {
        match out {
            Some(path) if path.as_os_str() != "-" => Target::File(path.to_owned()),
            _ => Target::Stdout,
        }
    }
}

/// An output that could not be written, or that stepcost refuses to write; its source says
/// why (an `io::Error`, so that a closed pipe is told apart).
#[derive(Debug)]
pub(crate) struct OutputError {
    /// The target as the user named it; `None` for stdout.
    target: Option<PathBuf>,
    source: io::Error,
}

impl OutputError {
    fn file(path: &Path, source: io::Error) -> OutputError {
        OutputError {
            target: Some(path.to_owned()),
            source,
        }
    }

    /// A failure to write to stdout.
    pub(crate) fn stdout(source: io::Error) -> OutputError {
        OutputError {
            target: None,
            source,
        }
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Some(path) => write!(f, "cannot write `{}`", path.display()),
            None => write!(f, "cannot write to stdout"),
        }
    }
}

impl std::error::Error for OutputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The targets a command writes and the files it reads. [`OutputPlan::new`] checks every
/// target (see the [module](super)) before the command does any work; [`OutputPlan::commit`]
/// checks them again, writes every file to a temporary file beside its target, renames them
/// all into place once all are written, and writes stdout last.
#[derive(Debug)]
pub(crate) struct OutputPlan {
    targets: Vec<Target>,
    inputs: Vec<PathBuf>,
}

/// A target that passed the checks: a file as named and resolved, or `None` for stdout.
type Checked<'a> = Option<(&'a Path, Resolved)>;

impl OutputPlan {
    /// Checks `targets` against each other and against `inputs`, the files the command reads
    /// (any that does not exist is passed over).
    pub(crate) fn new(targets: Vec<Target>, inputs: &[PathBuf]) -> Result<OutputPlan, OutputError> {
        let plan = OutputPlan {
            targets,
            inputs: inputs.to_vec(),
        };
        plan.check()?;
        Ok(plan)
    }

    pub(crate) fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// Writes `contents[i]` to target `i`: every file whole, or none at all (short of a
    /// rename failing between two renames), then stdout.
    pub(crate) fn commit(self, contents: &[&[u8]]) -> Result<(), OutputError> {
        assert_eq!(contents.len(), self.targets.len(), "one content per target");
        let checked = self.check()?;
        let mut files = Vec::new();
        for (target, bytes) in checked.iter().zip(contents) {
            if let Some((given, resolved)) = target {
                let error = |e| OutputError::file(given, e);
                let mut file = AtomicFile::beside(&resolved.path, resolved.existing.as_ref())
                    .map_err(error)?;
                write_whole(&mut file, bytes).map_err(error)?;
                files.push((given, file));
            }
        }
        for (given, file) in files {
            file.commit().map_err(|e| OutputError::file(given, e))?;
        }
        for (target, bytes) in checked.iter().zip(contents) {
            if target.is_none() {
                let mut stdout = io::stdout().lock();
                stdout
                    .write_all(bytes)
                    .and_then(|()| stdout.flush())
                    .map_err(OutputError::stdout)?;
            }
        }
        Ok(())
    }

    /// For a command that streams its one output: the temporary file to write and then
    /// commit, or `None` for stdout.
    pub(crate) fn stream(self) -> Result<Option<AtomicFile>, OutputError> {
        assert_eq!(self.targets.len(), 1, "one streamed target");
        match self.check()?.pop() {
            Some(Some((given, resolved))) => {
                AtomicFile::beside(&resolved.path, resolved.existing.as_ref())
                    .map(Some)
                    .map_err(|e| OutputError::file(given, e))
            }
            _ => Ok(None),
        }
    }

    /// Every target, resolved and checked: none is an input, none has other hard links, each
    /// may be written, and no two are one file.
    fn check(&self) -> Result<Vec<Checked<'_>>, OutputError> {
        let inputs: Vec<(FileId, &Path)> = self
            .inputs
            .iter()
            .filter_map(|p| Some((file_id(&std::fs::metadata(p).ok()?, p)?, p.as_path())))
            .collect();
        let mut seen: Vec<(PathBuf, &Path)> = Vec::new();
        let mut checked = Vec::new();
        for target in &self.targets {
            let Target::File(given) = target else {
                // `>>` onto an input would append to it.
                let id = stdout_id();
                if let Some((_, input)) = inputs.iter().find(|(i, _)| Some(i) == id.as_ref()) {
                    return Err(OutputError::stdout(is_input(None, input)));
                }
                checked.push(None);
                continue;
            };
            let error = |e| OutputError::file(given, e);
            let resolved = target::resolve(given).map_err(error)?;
            if let Some(meta) = &resolved.existing {
                let id = file_id(meta, &resolved.path);
                if let Some((_, input)) = inputs.iter().find(|(i, _)| Some(i) == id.as_ref()) {
                    return Err(error(is_input(Some(given), input)));
                }
                writable(&resolved.path, links(meta)).map_err(error)?;
            }
            let key = canonical(&resolved.path).map_err(error)?;
            if key.parent() == Some(Path::new("/dev")) {
                // Where a device is missing or was replaced, a new file would stand in for it.
                return Err(error(refuse(format!(
                    "`{}` is in /dev, where devices live; stepcost writes no file there",
                    key.display()
                ))));
            }
            if let Some((_, other)) = seen.iter().find(|(k, _)| *k == key) {
                return Err(error(refuse(format!(
                    "it is the same file as `{}`, also written by this command",
                    other.display()
                ))));
            }
            seen.push((key, given));
            checked.push(Some((given.as_path(), resolved)));
        }
        Ok(checked)
    }
}

fn is_input(given: Option<&Path>, input: &Path) -> io::Error {
    let which = if given == Some(input) {
        String::new()
    } else {
        format!(" (`{}`)", input.display())
    };
    refuse(format!(
        "it is one of this command's inputs{which}; stepcost never rewrites its inputs: write to another file"
    ))
}

/// The identity of stdout where it is a regular file.
#[cfg(unix)]
fn stdout_id() -> Option<FileId> {
    use std::os::fd::AsFd;
    let stdout = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned().ok()?);
    let meta = stdout.metadata().ok().filter(|m| m.is_file())?;
    file_id(&meta, Path::new(""))
}

#[cfg(not(unix))]
fn stdout_id() -> Option<FileId> {
    None
}

/// Refuses an existing file with other names (a rename cannot keep them) or one the user
/// may not write.
fn writable(path: &Path, links: u64) -> io::Result<()> {
    if links > 1 {
        return Err(refuse(format!(
            "it has {links} hard links, and an atomic replace (a new file renamed over it) \
             cannot keep the others; write to another name, or remove the other links first"
        )));
    }
    // Opened for writing without truncation: nothing changes, but a file the user may not
    // write is refused here as `>` would refuse it.
    std::fs::OpenOptions::new().write(true).open(path).map(drop)
}

/// The path with its folder's symlinks resolved, to tell two targets apart; fails when the
/// folder does not exist.
fn canonical(path: &Path) -> io::Result<PathBuf> {
    let dir = match target::parent(path) {
        d if d.as_os_str().is_empty() => Path::new("."),
        d => d,
    };
    let name = path.file_name().unwrap_or(path.as_os_str());
    match std::fs::canonicalize(dir) {
        Ok(dir) => Ok(dir.join(name)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the folder `{}` does not exist", dir.display()),
        )),
        Err(e) => Err(e),
    }
}
