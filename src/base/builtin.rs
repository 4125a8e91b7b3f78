//! The chip, workload and template files shipped in `hardware/`, `workloads/` and
//! `workloads/templates/`, compiled in: `(id, YAML text)` pairs sorted by id.

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
