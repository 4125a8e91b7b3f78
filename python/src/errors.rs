//! The library's errors as Python exceptions: `InputError` (with the file, line and field
//! of the first problem, where one comes from a file) and `UnsupportedError` (a chip that
//! lacks what an op needs), both `StepcostError`s. An `InputError` is also a `ValueError`:
//! a bad value (an argument, or a file's contents) is what Python's own `ValueError` means.
//! The message is the command line's: the error and its causes, joined by `: `. The classes
//! live in the module `stepcost`, so that an error raised on a cluster's worker pickles back to
//! the driver.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

create_exception!(
    stepcost,
    StepcostError,
    PyException,
    "Base of stepcost's errors."
);
create_exception!(
    stepcost,
    UnsupportedError,
    StepcostError,
    "The chip lacks what an op needs (a data type, a link that reaches the op's group)."
);

/// `InputError`: a `StepcostError` and a `ValueError`. `create_exception!` takes one base,
/// so the class is made as Python's `class` statement makes it.
static INPUT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

const INPUT_ERROR_DOC: &str = "Bad input: a file, a name, a value (a `ValueError`). `.file`, \
    `.line` and `.field` say where, when the problem is in a file.";

/// The class `InputError`, made on first use.
pub fn input_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let class = INPUT_ERROR.get_or_try_init(py, || {
        let bases = PyTuple::new(
            py,
            [
                py.get_type::<StepcostError>(),
                py.get_type::<PyValueError>(),
            ],
        )?;
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "stepcost")?;
        namespace.set_item("__doc__", INPUT_ERROR_DOC)?;
        let class = py
            .get_type::<PyType>()
            .call1(("InputError", bases, namespace))?;
        Ok::<_, PyErr>(class.cast_into::<PyType>()?.unbind())
    })?;
    Ok(class.bind(py))
}

/// `error` and its causes, as the command line prints them after `error: `.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

/// An exception of `class` with `message`, its `file`, `line` and `field` set.
fn placed(
    py: Python<'_>,
    class: &Bound<'_, PyType>,
    message: String,
    file: Option<&str>,
    line: Option<u64>,
    field: Option<&str>,
) -> PyErr {
    let err = PyErr::from_type(class.clone(), message);
    let value = err.value(py);
    let set = value
        .setattr("file", file)
        .and_then(|_| value.setattr("line", line))
        .and_then(|_| value.setattr("field", field));
    match set {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// An exception for a library error; `context` is what the command line puts before it (a
/// sweep's failing scenario), if anything.
pub fn from_error(error: &stepcost::Error, context: Option<String>) -> PyErr {
    let message = match context {
        Some(c) => format!("{c}: {}", chain(error)),
        None => chain(error),
    };
    Python::attach(|py| {
        let class = match error.is_unsupported() {
            true => py.get_type::<UnsupportedError>(),
            false => match input_error_type(py) {
                Ok(class) => class.clone(),
                Err(e) => return e,
            },
        };
        placed(
            py,
            &class,
            message,
            error.file(),
            error.line(),
            error.field(),
        )
    })
}

/// An `InputError` of `message`, with no place in a file.
pub fn input(message: impl Into<String>) -> PyErr {
    Python::attach(|py| match input_error_type(py) {
        Ok(class) => placed(py, class, message.into(), None, None, None),
        Err(e) => e,
    })
}

/// A `MemoryError` of `message`: a table that would not fit, refused before it is made.
pub fn memory(message: impl Into<String>) -> PyErr {
    PyMemoryError::new_err(message.into())
}

/// `Result<T, stepcost::Error>` as a Python result.
pub trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, stepcost::Error> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(|e| from_error(&e, None))
    }
}

impl<T> OrRaise<T> for Result<T, std::io::Error> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(|e| input(chain(&e)))
    }
}
