//! The engine: chips, workloads and their graphs, scenarios, and the pricing of a step. It
//! never parses arguments, prints, formats or chooses a format.

pub(crate) mod chip;
pub(crate) mod cost;
pub(crate) mod engine;
pub mod expr;
pub(crate) mod scenario;
pub mod timing;
pub mod workload;
