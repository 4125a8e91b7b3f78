//! Problems found in an input file, each with the file, line, column and field it concerns and
//! what was expected. Loading collects every problem it can before giving up, so `check` can
//! report them all at once.
//!
//! # What a message may quote
//!
//! A diagnostic quotes the offending line of a file ([`Diagnostic::source_line`]) only when
//! the file is text of the kind it was given as, up to the problem; before that, a message
//! gives file, line and column and quotes nothing of the file, so that a file named by
//! mistake (a secret given as a template, or as a case's chip) is never echoed:
//!
//! - a chip, workload or template file is quoted only once its text is UTF-8 and YAML whose
//!   top level is a mapping whose keys up to the problem (at least the first) are fields
//!   of that kind (`Source::parse` asks `source::shape` when a parse fails; problems found
//!   after a successful parse are quoted). A file that is not UTF-8 or not YAML, whose top level is a
//!   scalar or a sequence, or that has a top-level key the kind lacks is not quoted: the
//!   message names the unknown key, as the field a typo would be, but no line or value, and
//!   only where the key is a name (1 to 64 ASCII letters, digits, `_`, `-`, `.`, `+`): a
//!   password file's `root:$6$...` line reads as a YAML key, and is named by no message;
//! - a price book (a mapping of chip ids) is quoted only while its keys are names, and a
//!   problem of its parse only where the file's name ends in `.yaml` or `.yml`; a bad
//!   figure's line and value only where its key is a built-in chip or the name ends so (a
//!   `.env` or JSON credentials file keyed `api_key` is told what was expected, not what it
//!   holds; a YAML file named `.yaml` may be quoted);
//! - a case file (CSV) is quoted only once its header holds the case columns: a missing
//!   column or an unreadable header quotes nothing;
//! - a `config.json` is quoted by no problem until it parsed as a JSON object;
//! - a sweep CSV that `plot sweep` reads lists its header back only when the header is a
//!   row of column names; messages quote none of its rows.
//!
//! `Source::problem` quotes; `Source::unquoted_problem` (and `Diagnostic::at` without
//! text) does not. Built-in files are always of their kind.

use std::fmt;

use std::sync::Arc;

use serde_saphyr::Spanned;

/// The text of one input file and the name it is reported under: what a diagnostic points
/// into. (Reading and resolving files is `base::source`'s.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The file as errors name it: the path given, or `hardware/h100-sxm.yaml (built-in)`.
    pub name: String,
    /// The id of the chip or workload: the file stem.
    pub id: String,
    /// The file's whole text, which a diagnostic quotes its offending line from.
    pub text: String,
}

/// Where in a file a value came from: 1-based line and column (0 when unknown), the field's
/// path (`blocks[0].ops[2].gemm.n`) and, where a value may come from another file than the
/// one being read (a workload's template), that file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    pub line: u64,
    pub column: u64,
    pub field: String,
    pub file: Option<Arc<Source>>,
}

impl Origin {
    pub fn new(field: impl Into<String>, line: u64, column: u64) -> Self {
        Origin {
            line,
            column,
            field: field.into(),
            file: None,
        }
    }

    /// The origin of a spanned YAML value, named `field`.
    pub fn of<T>(field: impl Into<String>, value: &Spanned<T>) -> Self {
        Origin::new(field, value.referenced.line(), value.referenced.column())
    }

    /// The same place, in `file`.
    pub fn in_file(mut self, file: &Arc<Source>) -> Self {
        self.file = Some(Arc::clone(file));
        self
    }
}

/// One problem in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file as the user named it (a path, or `hardware/h100-sxm.yaml (built-in)`).
    pub file: String,
    /// 1-based line; 0 when the problem has no single place in the file.
    pub line: u64,
    /// 1-based column; 0 when unknown.
    pub column: u64,
    /// The field concerned (`memory.bandwidth`, `blocks[0].ops[3].gemm.m`); empty when unknown.
    pub field: String,
    /// What is wrong and what was expected.
    pub message: String,
    /// The offending source line, when the file's text is at hand and may be quoted: only
    /// text that reads as the kind of file it was given as, up to the problem (UTF-8, YAML
    /// whose top level is a mapping of the kind's fields; a case CSV with the case columns; a
    /// JSON object). A file named by mistake, a secret say, is never echoed.
    pub source_line: Option<String>,
}

impl Diagnostic {
    /// A problem at `origin` in `file`, quoting its line from `source` (or from the origin's
    /// own file, where it names one): pass `None` for a file that may not be quoted yet.
    pub fn at(
        file: &str,
        source: Option<&str>,
        origin: &Origin,
        message: impl Into<String>,
    ) -> Self {
        let (file, source) = match &origin.file {
            Some(f) => (f.name.as_str(), Some(f.text.as_str())),
            None => (file, source),
        };
        let source_line = source
            .filter(|_| origin.line > 0)
            .and_then(|text| text.lines().nth((origin.line - 1) as usize))
            .map(str::to_owned);
        Diagnostic {
            file: file.to_owned(),
            line: origin.line,
            column: origin.column,
            field: origin.field.clone(),
            message: message.into(),
            source_line,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.column > 0 {
                write!(f, ":{}", self.column)?;
            }
        }
        f.write_str(": ")?;
        if !self.field.is_empty() {
            write!(f, "field `{}`: ", self.field)?;
        }
        f.write_str(&self.message)?;
        if let Some(line) = &self.source_line {
            let width = self.line.to_string().len();
            write!(f, "\n {:>width$} | {line}", self.line)?;
            if self.column > 0 {
                let pad: String = line
                    .chars()
                    .take((self.column - 1) as usize)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                write!(f, "\n {:>width$} | {pad}^", "")?;
            }
        }
        Ok(())
    }
}

/// Every problem found in one or more files; never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

pub(crate) use crate::base::suggest::did_you_mean;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_file_line_field_and_source() {
        let d = Diagnostic::at(
            "chip.yaml",
            Some("name: x\nmemory: {bandwidth: 3 TB}\n"),
            &Origin::new("memory.bandwidth", 2, 21),
            "expected a bandwidth",
        );
        let text = d.to_string();
        assert!(text.starts_with("chip.yaml:2:21: field `memory.bandwidth`: expected a bandwidth"));
        assert!(text.contains("2 | memory: {bandwidth: 3 TB}"));
    }
}
