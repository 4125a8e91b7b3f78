//! The chip and workload files shipped in `hardware/` and `workloads/`, compiled in:
//! `(id, YAML text)` pairs sorted by id.

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
