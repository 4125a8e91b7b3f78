//! The questions people ask of the engine: sweeps over grids, plans for a target, levers,
//! validation against measurements, checks of files, imports of model configs. Returns data;
//! never formats it.

pub mod band;
pub mod check;
pub mod compare;
pub mod fit;
pub mod fix;
pub mod import;
pub mod lever;
pub mod models;
pub mod plan;
pub mod request;
pub mod scenario_file;
pub mod serving;
pub mod simulate;
pub mod sweep;
pub mod validate;
