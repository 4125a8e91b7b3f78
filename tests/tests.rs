//! One integration test binary (one link on a 2-core machine), modules by feature. The slow
//! refits of the measured set are a second binary, `tests/slow/`, that `cargo test` leaves out.

mod common;

mod architecture;
mod band;
mod book;
mod builtins;
mod catalogue;
mod checked_scenario;
mod chip_catalogue;
mod cli;
mod columns;
mod cost;
mod engines;
mod errors;
mod expected;
mod fabric;
mod filter;
mod fit;
mod fleet;
mod formats;
mod fusion;
mod hostile_escaping;
mod hostile_inputs;
mod hostile_numbers;
mod hostile_outputs;
mod hostile_work;
mod images;
mod import;
mod import_zoo;
mod ingest;
mod memory;
mod mixed;
mod mla;
mod model_catalogue;
mod models;
mod multinode;
mod ops;
mod parallel;
#[cfg(feature = "parquet")]
mod parquet;
mod plot;
mod prices;
mod properties;
mod provenance;
mod request_band;
mod scenario_files;
mod seeds;
mod serving;
mod serving_band;
mod serving_cases;
mod shards;
mod simulate;
mod simulate_ranges;
mod snapshots;
mod suggest;
mod sweep;
#[cfg(feature = "ui")]
mod ui;
mod ui_budget;
#[cfg(feature = "ui")]
mod ui_guard;
mod whatif;
mod zoo;
