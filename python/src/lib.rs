//! `stepcost._stepcost`, the native module of the Python package `stepcost`: the library's
//! front door called from Python. Arguments become the library's types, the library prices
//! (with the GIL released), and its typed tables go back as Arrow streams. No pricing, no
//! formatting of its own: the package's Python layer (`python/stepcost/__init__.py`) turns
//! the streams into `pyarrow.Table`s and keyword arguments into these calls.

mod calls;
mod errors;
mod flags;
mod inputs;
mod memory;
mod tables;

use pyo3::prelude::*;

/// The ids of the built-in chips, sorted.
#[pyfunction]
fn chips() -> Vec<&'static str> {
    stepcost::chip::builtin().collect()
}

/// The ids of the built-in workloads, sorted.
#[pyfunction]
fn workloads() -> Vec<&'static str> {
    stepcost::workload::builtin().collect()
}

/// Starts the pool a sweep prices on, each of its threads allocating once, and returns its
/// threads: so that the memory they take (a stack, and the C allocator's arena, 64 MiB of
/// address space each) is in use before the package measures what is left.
#[pyfunction]
fn start_threads(py: Python<'_>) -> usize {
    py.detach(|| {
        rayon::broadcast(|_| drop(std::hint::black_box(Box::new(0u8))));
        rayon::current_num_threads()
    })
}

#[pymodule]
fn _stepcost(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("StepcostError", py.get_type::<errors::StepcostError>())?;
    m.add("InputError", errors::input_error_type(py)?)?;
    m.add(
        "UnsupportedError",
        py.get_type::<errors::UnsupportedError>(),
    )?;
    m.add_class::<inputs::PyChip>()?;
    m.add_class::<inputs::PyWorkload>()?;
    m.add_class::<calls::Run>()?;
    m.add_class::<tables::ArrowStream>()?;
    m.add_function(wrap_pyfunction!(chips, m)?)?;
    m.add_function(wrap_pyfunction!(workloads, m)?)?;
    m.add_function(wrap_pyfunction!(calls::run, m)?)?;
    m.add_function(wrap_pyfunction!(calls::compare, m)?)?;
    m.add_function(wrap_pyfunction!(calls::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(calls::grid_len, m)?)?;
    m.add_function(wrap_pyfunction!(calls::check_grid, m)?)?;
    m.add_function(wrap_pyfunction!(calls::shard, m)?)?;
    m.add_function(wrap_pyfunction!(start_threads, m)?)?;
    m.add(
        "MAX_AXIS_VALUES",
        stepcost::internals::sweep::MAX_AXIS_VALUES,
    )?;
    m.add("SWEEP_BYTES", memory::SWEEP_BYTES)?;
    m.add_function(wrap_pyfunction!(calls::plan, m)?)?;
    Ok(())
}
