//! The library's errors as the exceptions the original raises.
//!
//! The original lets `sqlite3`'s exceptions through unchanged and raises
//! `ValueError` / `TypeError` for bad arguments (`api.md` §14), so callers
//! write `except sqlite3.IntegrityError`. The classes here are the standard
//! library's own (imported from `sqlite3`), never look-alikes: such an
//! `except` clause catches them. The class comes from the error's kind
//! ([`hermes_state::Error::original_class`], else its [`ErrorKind`]), never
//! from its text.

use hermes_state::{Error, ErrorKind};
use pyo3::exceptions::{PyAttributeError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use hermes_state::by_name::CallError;

/// An exception class of the standard library's `sqlite3` module.
#[derive(Clone, Copy, Debug)]
pub enum Sqlite3Class {
    /// `sqlite3.IntegrityError`: a constraint refused the write.
    Integrity,
    /// `sqlite3.OperationalError`: locks, a read-only store, a file that
    /// cannot be opened.
    Operational,
    /// `sqlite3.DatabaseError`: a damaged or foreign file.
    Database,
    /// `sqlite3.InternalError`: a failure inside this library (a Rust
    /// panic), which is no fault of the caller's.
    Internal,
}

impl Sqlite3Class {
    fn name(self) -> &'static str {
        match self {
            Sqlite3Class::Integrity => "IntegrityError",
            Sqlite3Class::Operational => "OperationalError",
            Sqlite3Class::Database => "DatabaseError",
            Sqlite3Class::Internal => "InternalError",
        }
    }

    /// The class object, looked up once per process.
    fn class<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyType>> {
        static INTEGRITY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        static OPERATIONAL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        static DATABASE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        static INTERNAL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        let cell = match self {
            Sqlite3Class::Integrity => &INTEGRITY,
            Sqlite3Class::Operational => &OPERATIONAL,
            Sqlite3Class::Database => &DATABASE,
            Sqlite3Class::Internal => &INTERNAL,
        };
        cell.import(py, "sqlite3", self.name()).cloned()
    }

    /// An exception of this class with `message`.
    pub fn err(self, py: Python<'_>, message: String) -> PyErr {
        match self.class(py) {
            Ok(class) => PyErr::from_type(class, (message,)),
            Err(error) => error,
        }
    }
}

/// A failed by-name call as the original's exception.
pub fn call_error(py: Python<'_>, error: CallError) -> PyErr {
    match error {
        CallError::Library(error) => library_error(py, &error),
        CallError::Boundary { kind, message } => boundary_error(py, kind, message),
        // No such method: what Python raises for a missing attribute.
        unknown @ CallError::UnknownOperation(_) => PyAttributeError::new_err(unknown.to_string()),
        // `CallError` may grow: its own text, as the store's failure.
        other => Sqlite3Class::Operational.err(py, other.to_string()),
    }
}

/// An error the original raises at its argument boundary, by its trace kind
/// (`invalid.argument`, `integrity.not_null`, …).
fn boundary_error(py: Python<'_>, kind: &str, message: String) -> PyErr {
    let family = kind.split('.').next().unwrap_or(kind);
    match (family, kind) {
        (_, "invalid.argument") => PyTypeError::new_err(message),
        ("integrity", _) => Sqlite3Class::Integrity.err(py, message),
        ("invalid" | "conflict" | "not_found", _) => PyValueError::new_err(message),
        ("closed", _) => PyAttributeError::new_err(message),
        // A file-only operation asked of a server backend, or a kind added
        // later: the store could not do what was asked.
        _ => Sqlite3Class::Operational.err(py, message),
    }
}

/// A library error: the original's class where it has one, else the
/// `sqlite3` class of the failure's kind.
pub fn library_error(py: Python<'_>, error: &Error) -> PyErr {
    let message = error
        .original_message()
        .unwrap_or_else(|| error.to_string());
    if let Some(class) = error.original_class() {
        return match class.python_exception() {
            "IntegrityError" => Sqlite3Class::Integrity.err(py, message),
            "ValueError" => PyValueError::new_err(message),
            "TypeError" => PyTypeError::new_err(message),
            "AttributeError" => PyAttributeError::new_err(closed_message()),
            _ => Sqlite3Class::Operational.err(py, message),
        };
    }
    match error.kind() {
        ErrorKind::InvalidInput => PyValueError::new_err(message),
        ErrorKind::Io => PyOSError::new_err(message),
        ErrorKind::Constraint => Sqlite3Class::Integrity.err(py, message),
        ErrorKind::Corrupt | ErrorKind::NotADatabase | ErrorKind::SchemaTooNew => {
            Sqlite3Class::Database.err(py, message)
        }
        // Busy, read-only, not found (a file that cannot be opened), a lost
        // server, and anything else SQLite reports: `sqlite3` raises
        // `OperationalError` for all of them.
        _ => Sqlite3Class::Operational.err(py, message),
    }
}

/// The text of a call on a closed `SessionDB`: the original's is Python's
/// own (`'NoneType' object has no attribute …`, its connection is gone);
/// this one says why.
fn closed_message() -> String {
    "'NoneType' object has no attribute 'execute' (the SessionDB is closed)".to_owned()
}
