//! The slow integration tests, a second binary that `cargo test` leaves out (`test = false`):
//! each refits chips on the whole measured set, minutes in a debug build. CI runs them with
//! `scripts/slow-tests`; `cargo test --test slow` runs them by hand (`cargo check --all-targets`
//! leaves them out as well: `cargo check --test slow`).

// The shared helpers, of which these modules use only a few.
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;

mod band;
mod fit;
