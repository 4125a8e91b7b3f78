//! The library's errors as Python exceptions: `InputError` (with the file, line and field
//! of the first problem, where one comes from a file) and `UnsupportedError` (a chip that
//! lacks what an op needs), both `StepcostError`s. The message is the command line's: the
//! error and its causes, joined by `: `.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    _stepcost,
    StepcostError,
    PyException,
    "Base of stepcost's errors."
);
create_exception!(
    _stepcost,
    InputError,
    StepcostError,
    "Bad input: a file, a name, a value. `.file`, `.line` and `.field` say where, when the problem is in a file."
);
create_exception!(
    _stepcost,
    UnsupportedError,
    StepcostError,
    "The chip lacks what an op needs (a data type, a link that reaches the op's group)."
);

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

/// An exception for a library error; `context` is what the command line puts before it (a
/// sweep's failing scenario), if anything.
pub fn from_error(error: &stepcost::Error, context: Option<String>) -> PyErr {
    let message = match context {
        Some(c) => format!("{c}: {}", chain(error)),
        None => chain(error),
    };
    let err = match error.is_unsupported() {
        true => UnsupportedError::new_err(message),
        false => InputError::new_err(message),
    };
    Python::attach(|py| {
        let value = err.value(py);
        let placed = value
            .setattr("file", error.file())
            .and_then(|_| value.setattr("line", error.line()))
            .and_then(|_| value.setattr("field", error.field()));
        match placed {
            Ok(()) => err,
            Err(e) => e,
        }
    })
}

/// An `InputError` of `message`, with no place in a file.
pub fn input(message: impl Into<String>) -> PyErr {
    let err = InputError::new_err(message.into());
    Python::attach(|py| {
        let value = err.value(py);
        for name in ["file", "line", "field"] {
            if let Err(e) = value.setattr(name, py.None()) {
                return e;
            }
        }
        err
    })
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
