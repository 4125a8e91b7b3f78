//! The library's error: what went wrong, as a caller would tell the cases apart. One variant
//! per kind of failure a caller may act on; the text of each is the message a person reads.

use crate::base::diagnostic::{Diagnostic, Diagnostics};
use crate::base::dtype::DType;

/// A name that is neither a file nor a built-in, with the closest built-in and the list.
#[derive(Debug)]
pub struct UnknownName {
    /// `chip`, `workload` or `template`: what the name was looked up as.
    pub kind: &'static str,
    /// The name as given.
    pub name: String,
    /// ` (did you mean `x`?)`, or empty.
    pub suggestion: String,
    /// The built-in names, comma-separated.
    pub known: String,
}

/// An op the chip cannot run as the scenario asks.
#[derive(Debug)]
pub struct Unsupported {
    /// The op (or the first op of a fused kernel) that cannot run.
    pub op: String,
    /// The data type it computes or moves in.
    pub dtype: DType,
    /// The chip's id.
    pub chip: String,
    /// Why, as a sentence that follows the op's name.
    pub reason: String,
}

/// A name a workload does not have: a param or a fusion plan.
#[derive(Debug)]
pub struct NotInWorkload {
    /// `param` or `fusion plan`.
    pub what: &'static str,
    /// The param or fusion plan as named.
    pub name: String,
    /// The workload's id.
    pub workload: String,
    /// ` (did you mean `x`?)`, or empty.
    pub suggestion: String,
    /// The workload's names of that kind, comma-separated.
    pub known: String,
}

/// A step that reaches past the positions the model was trained for: `context + tokens` (or a
/// mixed step's prompt chunk over its cached positions) above the model's `max_positions`.
#[derive(Debug)]
pub struct PastPositions {
    /// The model's name.
    pub model: String,
    /// The model's `max_positions`.
    pub limit: u64,
    /// The positions the step reaches.
    pub positions: f64,
    /// How they add up, as `context 200000 + tokens 1` or `request in 130000 + out 2000`.
    pub sum: String,
}

/// Everything that can go wrong. (Kept small, large variants boxed: it is the error of every
/// hot evaluation step.)
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Problems in an input file, each with its file, line and field.
    #[error("{0}")]
    Invalid(Diagnostics),
    /// A file that cannot be opened or read.
    #[error("cannot read `{path}`")]
    Io {
        /// The path as given.
        path: String,
        /// What the operating system reported.
        #[source]
        source: std::io::Error,
    },
    /// A chip or workload name that is neither a file nor a built-in.
    #[error(
        "unknown {} `{}`{}; built-in {}s: {} (or give the path of a YAML file)",
        .0.kind, .0.name, .0.suggestion, .0.kind, .0.known
    )]
    UnknownName(Box<UnknownName>),
    /// The chip lacks what an op needs (a data type, a link that reaches the op's group). A
    /// sweep writes it in its `error` column and the levers pass over it; it says nothing is
    /// wrong with the inputs.
    #[error("op `{}` {}", .0.op, .0.reason)]
    Unsupported(Box<Unsupported>),
    /// A layout the workload's `whole:` checks refuse (`tp` not dividing the heads), as
    /// engines do: like [`Error::Unsupported`], a sweep's `error` row, a lever passed over.
    #[error("{0}")]
    Layout(Diagnostics),
    /// A step past the model's position limit (`max_positions`): like [`Error::Layout`], a
    /// sweep's `error` row, a lever passed over.
    #[error(
        "model `{}` holds at most {} positions (its max_positions): {} = {} passes it",
        .0.model, .0.limit, .0.sum, .0.positions
    )]
    PastPositions(Box<PastPositions>),
    /// A param or fusion plan the workload does not have.
    #[error(
        "workload `{}` has no {} `{}`{}; its {}s: {}",
        .0.workload, .0.what, .0.name, .0.suggestion, .0.what, .0.known
    )]
    NotInWorkload(Box<NotInWorkload>),
    /// A question needs a param the workload lacks (`plan` needs `batch`, a request `tokens`
    /// and `context`).
    #[error("workload `{workload}` has no `{param}` param, so {consequence}")]
    MissingParam {
        /// The workload's id.
        workload: Box<str>,
        /// The param's meaning the question needs.
        param: crate::base::param::ScenarioParam,
        /// What cannot be done without it, as a clause after "so".
        consequence: &'static str,
    },
    /// Expected mode on a chip whose file has no `expected` section.
    #[error("chip `{0}` has no `expected` section (achievable fractions of peak and bandwidth); price it with --mode roofline")]
    NoExpected(Box<str>),
    /// A conservative plan in roofline mode: a ceiling has no 80 % band to take the slow end of.
    #[error("--conservative plans on the slow end of expected mode's 80 % band; roofline mode, a ceiling, has none: plan in expected mode")]
    NoBand,
    /// A value outside what it may be: a non-finite param, a target of zero, a step whose
    /// totals overflow, a grid without chips.
    #[error("{0}")]
    Value(Box<str>),
    /// A picture that cannot be drawn from what it was given.
    #[error("{0}")]
    Plot(Box<str>),
    /// Work stopped before its end because its caller asked it to (the flag it passed was
    /// set: a web request past its time limit, or gone). Nothing is wrong with the inputs.
    #[error("cancelled before the end")]
    Cancelled,
}

impl Error {
    /// An [`Error::Value`] with this message.
    pub fn value(message: impl Into<String>) -> Error {
        Error::Value(message.into().into_boxed_str())
    }

    /// The first problem's place in a file, where the error comes from one.
    fn diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            Error::Invalid(d) | Error::Layout(d) => d.0.first(),
            _ => None,
        }
    }

    /// The file the first problem is in (as the user named it).
    pub fn file(&self) -> Option<&str> {
        match self {
            Error::Io { path, .. } => Some(path),
            _ => self.diagnostic().map(|d| d.file.as_str()),
        }
    }

    /// The 1-based line of the first problem, where it has one.
    pub fn line(&self) -> Option<u64> {
        self.diagnostic().map(|d| d.line).filter(|l| *l > 0)
    }

    /// The field of the first problem (`memory.bandwidth`), where it names one.
    pub fn field(&self) -> Option<&str> {
        self.diagnostic()
            .map(|d| d.field.as_str())
            .filter(|f| !f.is_empty())
    }

    /// Whether the scenario is well formed but cannot run as asked (the chip lacks what an op
    /// needs, the layout splits a shape unevenly, or the step reaches past the model's
    /// positions): a row for a sweep's `error` column, a lever to pass over.
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self,
            Error::Unsupported(_) | Error::Layout(_) | Error::PastPositions(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_small_on_the_hot_path() {
        assert!(
            std::mem::size_of::<Error>() <= 40,
            "{}",
            std::mem::size_of::<Error>()
        );
    }
}
