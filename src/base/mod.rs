//! The ground floor: quantities and their units, data types, where text came from and what is
//! wrong with it, the limits on input, and the library's error. Imports nothing above it.

pub mod builtin;
pub(crate) mod chip_field;
pub(crate) mod diagnostic;
pub(crate) mod dtype;
pub(crate) mod error;
pub(crate) mod format;
pub mod limits;
pub(crate) mod param;
pub mod parse;
pub mod ranges;
pub(crate) mod source;
pub(crate) mod suggest;
pub(crate) mod text;
pub(crate) mod types;
pub mod units;
