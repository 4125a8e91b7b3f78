//! Where a chip or workload file comes from (a path, or a built-in compiled into the binary),
//! its text, and the strict YAML parse every file goes through.

pub(crate) mod input;
mod shape;

pub(crate) use shape::is_name;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::base::builtin;
pub use crate::base::diagnostic::Source;
use crate::base::diagnostic::{did_you_mean, Diagnostic, Diagnostics, Origin};
use crate::base::error::Error;

/// What a file describes; decides which built-ins a bare name is looked up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A chip file: built-ins in `hardware/`.
    Chip,
    /// A workload file: built-ins in `workloads/`.
    Workload,
    /// A workload graph other workloads reuse with their own param values.
    Template,
    /// An engine file (the serving software): built-ins in `engines/`.
    Engine,
}

impl FileKind {
    /// `chip`, `workload` or `template`, as messages name the kind.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Chip => "chip",
            FileKind::Workload => "workload",
            FileKind::Template => "template",
            FileKind::Engine => "engine",
        }
    }

    fn builtins(self) -> &'static [(&'static str, &'static str)] {
        match self {
            FileKind::Chip => builtin::CHIPS,
            FileKind::Workload => builtin::WORKLOADS,
            FileKind::Template => builtin::TEMPLATES,
            FileKind::Engine => builtin::ENGINES,
        }
    }

    fn folder(self) -> &'static str {
        match self {
            FileKind::Chip => "hardware",
            FileKind::Workload => "workloads",
            FileKind::Template => "workloads/templates",
            FileKind::Engine => "engines",
        }
    }
}

impl Source {
    /// A file from memory, for tests and embedders.
    pub fn from_text(name: &str, text: &str) -> Source {
        Source {
            name: name.to_owned(),
            id: stem(name),
            text: text.to_owned(),
        }
    }

    /// Reads the file at `path`: only a regular file (see `Input::open`), at most
    /// `STEPCOST_MAX_FILE_BYTES` of it (see [`crate::base::limits`]), and only UTF-8 text.
    pub fn read(path: &Path) -> Result<Source, Error> {
        let limit = crate::base::limits::limits()
            .map_err(|e| whole_file(&path.display().to_string(), e))?
            .file_bytes;
        let (name, bytes) = input::read_all(path, limit, "STEPCOST_MAX_FILE_BYTES")?;
        let text = String::from_utf8(bytes).map_err(|e| {
            whole_file(
                &name,
                format!(
                    "file is not UTF-8 text (invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })?;
        Ok(Source {
            id: stem(&name),
            name,
            text,
        })
    }

    /// Resolves a name given on the command line: an existing file, else a built-in of `kind`.
    pub fn resolve(spec: &str, kind: FileKind) -> Result<Source, Error> {
        let path = Path::new(spec);
        let builtin = kind.builtins().iter().find(|(id, _)| *id == spec);
        // A path that exists but is not a regular file (a FIFO, a device, a directory) is
        // refused as such by `read`, unless a built-in has its name.
        if path.is_file() || (builtin.is_none() && path.symlink_metadata().is_ok()) {
            return Source::read(path);
        }
        if builtin.is_none()
            && (spec.contains(['/', '\\']) || spec.ends_with(".yaml") || spec.ends_with(".yml"))
        {
            return Err(Error::Io {
                path: spec.to_owned(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        Source::builtin(spec, kind)
    }

    /// The built-in file of `kind` named `spec`, never a file on disk (the web page takes no
    /// path from a request); an unknown name gets the closest known one.
    pub fn builtin(spec: &str, kind: FileKind) -> Result<Source, Error> {
        if let Some((_, text)) = kind.builtins().iter().find(|(id, _)| *id == spec) {
            return Ok(Source {
                name: format!("{}/{spec}.yaml (built-in)", kind.folder()),
                id: spec.to_owned(),
                text: (*text).to_owned(),
            });
        }
        let known: Vec<&str> = kind.builtins().iter().map(|(id, _)| *id).collect();
        Err(Error::UnknownName(Box::new(
            crate::base::error::UnknownName {
                kind: kind.name(),
                name: spec.to_owned(),
                suggestion: did_you_mean(spec, known.iter().copied()),
                known: known.join(", "),
            },
        )))
    }

    /// Resolves the template a workload names: a path relative to the workload's own file,
    /// or a built-in template.
    pub fn resolve_template(name: &str, from: &Source) -> Result<Source, Error> {
        match Source::template_path(name, from) {
            Some(path) => Source::read(&path),
            None => Source::resolve(name, FileKind::Template),
        }
    }

    /// Where the template `name` that `from` names is a file: a name that looks like a path
    /// (a `/`, or `.yaml` at the end), relative to `from`'s folder, unless `from` is built in;
    /// `None` for a built-in template's name.
    pub fn template_path(name: &str, from: &Source) -> Option<PathBuf> {
        let looks_like_path = name.contains(['/', '\\']) || name.ends_with(".yaml");
        (looks_like_path && !from.name.ends_with("(built-in)")).then(|| {
            let base = Path::new(&from.name).parent().unwrap_or(Path::new(""));
            base.join(name)
        })
    }

    /// A problem at `origin` in this file, quoting its line: only for text that reads as a
    /// file of the kind it was given as (the rule on [`Diagnostic::source_line`]).
    pub fn problem(&self, origin: &Origin, message: impl Into<String>) -> Diagnostic {
        Diagnostic::at(&self.name, Some(&self.text), origin, message)
    }

    /// Parses the text as YAML into `T`: duplicate keys are errors, `n`/`y`/`on`/`off` stay
    /// strings (a field named `n` must not read as a boolean), and unknown fields get the
    /// closest valid name.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, Diagnostics> {
        let limits = crate::base::limits::limits()
            .map_err(|e| Diagnostics(vec![self.problem(&Origin::default(), e)]))?;
        let options = serde_saphyr::options! {
            strict_booleans: true,
            budget: serde_saphyr::budget! {
                max_depth: limits.yaml_depth,
                max_nodes: limits.yaml_nodes,
            },
        };
        serde_saphyr::from_str_with_options(&self.text, options.clone()).map_err(|err| {
            let location = err.location();
            let raw = err.without_snippet().to_string();
            let message = clean_message(&raw);
            let field = unknown_name(message).unwrap_or_default();
            let mut message = message.to_owned();
            if let Some((name, expected)) = message.split_once(", expected one of ") {
                if let Some(unknown) = unknown_name(name) {
                    let candidates: Vec<String> = expected
                        .split(',')
                        .map(|s| s.trim().trim_matches('`').to_owned())
                        .collect();
                    message.push_str(&did_you_mean(
                        &unknown,
                        candidates.iter().map(String::as_str),
                    ));
                }
            }
            let origin = location
                .map(|l| Origin::new(field, l.line(), l.column()))
                .unwrap_or_default();
            // The rule of `base::diagnostic`: quote a line only of text that reads as a file
            // of this kind up to the problem.
            let quote = shape::may_quote::<T>(&self.text, options, origin.line, origin.column);
            let problem = match quote {
                true => self.problem(&origin, message),
                // Nor echo its text: a key that is no name (a password file's line) is not
                // named, as field or in the message.
                false => {
                    let mut origin = origin;
                    if !shape::is_name(&origin.field) {
                        origin.field.clear();
                    }
                    let mut redacted = shape::redact(&message);
                    if redacted != message {
                        redacted.push_str(
                            " (the file's text is not shown: it does not read as this kind of file)",
                        );
                    }
                    self.unquoted_problem(&origin, redacted)
                }
            };
            Diagnostics(vec![problem])
        })
    }

    /// A problem at `origin` in this file, quoting no line of it: for text not yet known to
    /// be a file of the kind it was given as (the rule on [`Diagnostic::source_line`]).
    pub fn unquoted_problem(&self, origin: &Origin, message: impl Into<String>) -> Diagnostic {
        Diagnostic::at(&self.name, None, origin, message)
    }
}

/// Drops the `error: line N column M: ` prefix the YAML parser puts before its message.
fn clean_message(raw: &str) -> &str {
    let first = raw.lines().next().unwrap_or(raw);
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let message = match first.strip_prefix("line ") {
        Some(rest) => rest.split_once(": ").map(|(_, m)| m).unwrap_or(first),
        None => first,
    };
    // The location is reported separately, and the parser's advice on duplicate keys is for
    // programmers, not for the file's author.
    let message = message.split(" at line ").next().unwrap_or(message);
    message
        .split(", set DuplicateKeyPolicy")
        .next()
        .unwrap_or(message)
}

/// The name in "unknown field `x`", "unknown variant `x`" or "missing field `x`".
fn unknown_name(message: &str) -> Option<String> {
    let rest = ["unknown field `", "unknown variant `", "missing field `"]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))?;
    rest.split('`').next().map(str::to_owned)
}

fn whole_file(name: &str, message: String) -> Error {
    Error::Invalid(Diagnostics(vec![Diagnostic::at(
        name,
        None,
        &Origin::default(),
        message,
    )]))
}

fn stem(name: &str) -> String {
    Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_parser_prefix() {
        assert_eq!(
            clean_message("error: line 2 column 27: unknown field `capcity`, expected one of capacity, n\n --> x"),
            "unknown field `capcity`, expected one of capacity, n"
        );
        assert_eq!(
            unknown_name("unknown variant `conv`, expected"),
            Some("conv".into())
        );
    }
}
