//! Turns priced steps and chip lists into bytes for people (tables with human-scaled units)
//! and programs (CSV and JSON, each number in the unit its column name ends with; see
//! `docs/columns.md`). Exporters write to any `io::Write`; where the bytes go is the caller's
//! business.
//!
//! One module per command's output: `run`, `compare`, `plan`, `validate` (with a case
//! file's serving rows), `chips`, `engines`, `workloads`, `serving`, `simulate`, `fit`, `band` (the
//! band's report and residual file), `document` (`report`), `svg` (`plot`) and `stream`
//! (a sweep's rows). None of them imports another: what two share sits below them, in
//! `rows` (the row kinds and their CSV and JSON), `format` (`OutputFormat`), `list` and
//! `shaped` (rows in the format asked), `style` (a table's look, text safe for a terminal),
//! `numbers` (numbers and bands as tables show them), `step` (what a step's tables say
//! beside their numbers), `costs`, `advice`, `escape`, `filter`, `top`, `cells`, `typed`,
//! `parquet`, `launch` and `atomic`. tests/architecture.rs holds the floors.

mod advice;
pub(crate) mod atomic;
pub(crate) mod band;
pub mod bench;
pub(crate) mod cells;
mod chips;
mod compare;
mod costs;
pub mod document;
mod engines;
mod escape;
pub mod filter;
pub mod fit;
mod format;
pub mod ingest;
pub mod launch;
mod list;
mod numbers;
#[cfg(feature = "parquet")]
pub(crate) mod parquet;
mod plan;
mod prices;
pub(crate) mod rows;
mod run;
pub(crate) mod serving;
mod shaped;
pub(crate) mod simulate;
mod step;
pub(crate) mod stream;
mod style;
pub mod svg;
pub(crate) mod top;
pub(crate) mod typed;
mod validate;
mod workloads;

// What only the front ends call is compiled without them (see lib.rs) but not re-exported.
#[cfg(any(feature = "cli", feature = "ui"))]
pub(crate) use advice::{next_step_line, unfit_warning};
#[cfg(any(feature = "cli", feature = "ui"))]
pub(crate) use chips::write_chips;
pub use compare::write_compare;
#[cfg(feature = "cli")]
pub(crate) use compare::write_compare_shaped;
#[cfg(any(feature = "cli", feature = "ui"))]
pub(crate) use engines::write_engines;
pub use format::OutputFormat;
#[cfg(feature = "cli")]
pub(crate) use plan::write_plan;
#[cfg(feature = "cli")]
pub(crate) use prices::write_prices;
pub use run::write_run;
#[cfg(feature = "cli")]
pub(crate) use run::write_run_shaped;
#[cfg(feature = "cli")]
pub(crate) use validate::{write_serving_validation, write_validation};
#[cfg(any(feature = "cli", feature = "ui"))]
pub(crate) use workloads::write_workloads;
