//! The questions people ask of the engine: sweeps over grids, plans for a target, levers,
//! validation against measurements, checks of files, imports of model configs. Returns data;
//! never formats it.

pub mod band;
pub(crate) mod check;
pub(crate) mod compare;
pub mod fit;
pub(crate) mod fix;
pub(crate) mod images;
pub mod import;
pub mod ingest;
pub mod lever;
pub(crate) mod models;
pub(crate) mod plan;
pub(crate) mod request;
pub(crate) mod scenario_file;
pub(crate) mod serving;
pub(crate) mod simulate;
pub mod sweep;
pub mod validate;
