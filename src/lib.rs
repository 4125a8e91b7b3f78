//! stepcost prices one transformer step (a prefill or a decode step) on an accelerator.
//!
//! A [`Workload`] is the step as a graph of ops over tensors; a [`Chip`] is the accelerator's
//! peaks, bandwidth and capacity. [`price`] places every op (or fused group of ops) on the
//! chip's roofline and returns a [`StepReport`]: per-kernel prices and the step's totals.
//!
//! ```
//! use stepcost::{price, Chip, Scenario, Source, Workload};
//!
//! let chip = Chip::load(&Source::resolve("h100-sxm", stepcost::FileKind::Chip)?)?;
//! let workload = Workload::load(&Source::resolve("gemm", stepcost::FileKind::Workload)?)?;
//! let report = price(&workload, &chip, &Scenario::defaults(&workload))?;
//! assert_eq!(report.summary.flops, 2.0 * 8192f64.powi(3));
//! # Ok::<(), stepcost::Error>(())
//! ```

pub mod builtin;
pub mod chip;
pub mod diagnostic;
pub mod dtype;
pub mod expr;
pub mod import;
pub mod lever;
pub mod limits;
pub mod output;
pub mod plan;
pub mod plot;
pub mod price;
pub mod report;
pub mod scenario;
pub mod source;
pub mod sweep;
pub mod units;
pub mod validate;
pub mod workload;

pub use chip::Chip;
pub use diagnostic::{Diagnostic, Diagnostics};
pub use dtype::{DType, Role, RoleDTypes};
pub use price::{price, Bound, Price, StepReport, StepSummary};
pub use scenario::{Mode, Scenario, ScenarioSpec};
pub use source::{FileKind, Source};
pub use workload::Workload;

/// A name that is neither a file nor a built-in, with the closest built-in and the list.
#[derive(Debug)]
pub struct UnknownName {
    pub kind: &'static str,
    pub name: String,
    /// ` (did you mean `x`?)`, or empty.
    pub suggestion: String,
    /// The built-in names, comma-separated.
    pub known: String,
}

/// Everything that can go wrong, as a caller would tell the cases apart. (Kept small: it is
/// the error of every hot evaluation step.)
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Problems in an input file, each with its file, line and field.
    #[error("{0}")]
    Invalid(Diagnostics),
    #[error("cannot read `{path}`")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A chip or workload name that is neither a file nor a built-in.
    #[error(
        "unknown {} `{}`{}; built-in {}s: {} (or give the path of a YAML file)",
        .0.kind, .0.name, .0.suggestion, .0.kind, .0.known
    )]
    UnknownName(Box<UnknownName>),
    /// A scenario the workload or chip cannot run: unknown param or plan, a data type the chip
    /// lacks.
    #[error("{0}")]
    Scenario(String),
}
