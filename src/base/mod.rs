//! The ground floor: quantities and their units, data types, where text came from and what is
//! wrong with it, the limits on input, and the library's error. Imports nothing above it.

pub mod builtin;
pub mod chip_field;
pub mod diagnostic;
pub mod dtype;
pub mod error;
pub mod format;
pub mod limits;
pub mod param;
pub mod parse;
pub mod ranges;
pub mod source;
pub mod suggest;
pub(crate) mod text;
pub mod types;
pub mod units;
