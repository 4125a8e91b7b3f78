//! One file per subcommand: its clap arguments and its function, which turns them into the
//! library's own values, asks the study or the core, and hands the result to an exporter.
//! A command imports the floors below it (`scenario`, `case_file`, `launch`, and the leaves
//! `flags` and `output`), never another command.

pub(crate) mod check;
pub(crate) mod chips;
pub(crate) mod compare;
pub(crate) mod engines;
pub(crate) mod fit;
pub(crate) mod import;
pub(crate) mod ingest;
pub(crate) mod plan;
pub(crate) mod plot;
pub(crate) mod prices;
pub(crate) mod probe;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod serving;
pub(crate) mod show;
pub(crate) mod simulate;
pub(crate) mod sweep;
#[cfg(feature = "ui")]
pub(crate) mod ui;
pub(crate) mod validate;
pub(crate) mod workloads;
