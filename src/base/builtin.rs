//! The chip, workload, template and engine files shipped in `hardware/`, `workloads/`,
//! `workloads/templates/` and `engines/`, compiled in: `(id, YAML text)` pairs sorted by id.

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
