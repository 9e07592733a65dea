//! `NativeStore`: one store handle, shared by every Python thread.
//!
//! Each call converts its arguments while holding the GIL, runs the store
//! call with the GIL released (`Python::detach`), so other Python threads
//! run while one waits for the disk or the write lock, and converts the
//! answer after taking the GIL back. A panic inside the library is caught
//! on the far side of the call and raised as `sqlite3.InternalError`: the
//! gateway's threads catch `Exception`, and the process never aborts.

use hermes_state::prelude::*;
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use hermes_state::by_name;
use hermes_state::{SessionDb, SessionStore, StoreLocation, open_store};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert;
use crate::errors::{self, Sqlite3Class};

/// A store, as the Python package's `SessionDB` holds it.
///
/// `frozen`: no method needs `&mut self` (the store is `Send + Sync` and
/// locks what it must), so Python threads never contend on a borrow flag.
#[pyclass(frozen, module = "hermes_state_rs._native")]
pub struct NativeStore {
    store: Box<dyn SessionStore>,
    /// A server store after `close()`: the contract has no close (a
    /// PostgreSQL handle's connections go when it is dropped), so the
    /// binding answers every later call as the original does after close.
    closed: AtomicBool,
}

#[pymethods]
impl NativeStore {
    /// Opens the store at `path` (created when missing unless `read_only`),
    /// or, for a `postgres://` / `postgresql://` URL, the PostgreSQL store it
    /// names (the same contract, `docs/POSTGRES.md`).
    #[new]
    #[pyo3(signature = (path, read_only = false))]
    fn new(py: Python<'_>, path: String, read_only: bool) -> PyResult<Self> {
        if is_server_url(&path) {
            let store = guarded(py, "SessionDB()", || open_server(&path, read_only))?
                .map_err(|error| errors::library_error(py, &error))?;
            return Ok(NativeStore {
                store,
                closed: AtomicBool::new(false),
            });
        }
        let path = PathBuf::from(path);
        if read_only && !path.exists() {
            // The original's read-only open is SQLite's `mode=ro` connect,
            // which refuses a missing file with this error (`api.md` §14).
            return Err(
                Sqlite3Class::Operational.err(py, "unable to open database file".to_owned())
            );
        }
        let store = guarded(py, "SessionDB()", || open(&path, read_only))?
            .map_err(|error| errors::library_error(py, &error))?;
        Ok(NativeStore {
            store,
            closed: AtomicBool::new(false),
        })
    }

    /// Calls the original's method `op` with the keyword arguments the
    /// caller gave (absent ones take the original's defaults).
    fn call<'py>(
        &self,
        py: Python<'py>,
        op: &str,
        kwargs: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = convert::kwargs_to_json(kwargs)?;
        let store = self.store.as_ref();
        if store.as_sqlite().is_none() {
            if op == "close" {
                // A second close does nothing, as the original's.
                self.closed.store(true, Ordering::SeqCst);
                return Ok(py.None().into_bound(py));
            }
            if self.closed.load(Ordering::SeqCst) {
                return Err(errors::library_error(py, &hermes_state::Error::Closed));
            }
        }
        match guarded(py, op, || by_name::call(store, op, &args)) {
            Ok(Ok(answer)) => convert::to_python(py, &answer),
            Ok(Err(error)) => Err(errors::call_error(py, error)),
            Err(panicked) => Err(panicked),
        }
    }

    /// `optimize_fts_storage(progress_cb=…, vacuum=…)`: the original's
    /// progress reports (`{"phase", "percent", "indexed", "total"}`) reach
    /// `progress_cb`, called with the GIL taken back for each one. A
    /// callable cannot travel through the call by name, so this is the one
    /// method with its own door. An exception of the callback stops further
    /// reports and is raised when the run has ended (the library's run is
    /// not interrupted halfway).
    #[pyo3(signature = (vacuum = true, progress_cb = None))]
    fn optimize_fts_storage<'py>(
        &self,
        py: Python<'py>,
        vacuum: bool,
        progress_cb: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(db) = self.store.as_sqlite() else {
            return Err(Sqlite3Class::Operational.err(
                py,
                "optimize_fts_storage is an operation of the SQLite file".to_owned(),
            ));
        };
        let mut failed: Option<PyErr> = None;
        let report = guarded(py, "optimize_fts_storage", || {
            db.optimize_fts_storage_in_phases(vacuum, |phase| {
                let Some(callback) = progress_cb.as_ref() else {
                    return;
                };
                if failed.is_some() {
                    return;
                }
                let value = serde_json::to_value(phase).unwrap_or(serde_json::Value::Null);
                Python::attach(|py| {
                    let called = convert::to_python(py, &value)
                        .and_then(|report| callback.call1(py, (report,)));
                    if let Err(error) = called {
                        failed = Some(error);
                    }
                });
            })
        })?
        .map_err(|error| errors::library_error(py, &error))?;
        if let Some(error) = failed {
            return Err(error);
        }
        let value = serde_json::to_value(&report).unwrap_or(serde_json::Value::Null);
        convert::to_python(py, &value)
    }
}

/// Runs `work` with the GIL released; a panic inside it is caught there and
/// becomes `sqlite3.InternalError` naming `op`.
///
/// `AssertUnwindSafe`: after a panic the store's own locks recover from
/// poisoning, and every write is one transaction that SQLite rolls back if
/// it was not committed, so nothing half-done is observable.
fn guarded<T: Send>(py: Python<'_>, op: &str, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(work)))
        .map_err(|payload| panic_error(py, op, payload.as_ref()))
}

/// A deliberate panic behind the same guard as every store call, so the
/// binding's tests can show that a panic is an ordinary Python exception
/// and the process lives on.
#[pyfunction]
pub fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    guarded(py, "_panic_for_tests", || -> () {
        panic!("a deliberate panic (the binding's own test)")
    })
}

/// A store's location as every output shows it: a PostgreSQL URL without
/// its password, in whatever form it was given (`repr(db)` uses it).
#[pyfunction]
pub fn redacted_location(location: &str) -> String {
    StoreLocation::redact_text(location)
}

/// Whether the location names a PostgreSQL server rather than a file.
fn is_server_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// The PostgreSQL store a URL names; a writable open creates or upgrades
/// it now, as the file's writable open does (see [`open`]).
fn open_server(url: &str, read_only: bool) -> hermes_state::Result<Box<dyn SessionStore>> {
    let location = StoreLocation::parse(url)?;
    open_store(&location, read_only)
}

fn open(path: &Path, read_only: bool) -> hermes_state::Result<Box<dyn SessionStore>> {
    if read_only {
        return Ok(Box::new(SessionDb::open_read_only(path)?));
    }
    let db = SessionDb::open(path)?;
    // The original's writable open runs the whole open algorithm (upgrade,
    // repairs, FTS set-up) before its constructor returns (`api.md` §1), and
    // its callers read the file through `db._conn` right after: the library
    // would wait for the first write, so the binding asks for it now.
    db.migrate()?;
    Ok(Box::new(db))
}

/// A caught panic as `sqlite3.InternalError`, naming the call.
fn panic_error(py: Python<'_>, op: &str, payload: &(dyn Any + Send)) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    Sqlite3Class::Internal.err(
        py,
        format!("hermes-state failed inside {op} (a bug, please report it): {what}"),
    )
}

/// `SessionDB.sanitize_title` (a static method of the original): no store.
#[pyfunction]
pub fn sanitize_title(
    py: Python<'_>,
    title: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<String>> {
    let title = match title {
        None => None,
        Some(value) if value.is_none() => None,
        Some(value) => Some(convert::to_json(value, 0)?),
    };
    let text = match &title {
        None => None,
        Some(serde_json::Value::String(text)) => Some(text.as_str()),
        Some(_) => {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "a title must be a str or None",
            ));
        }
    };
    SessionDb::sanitize_title(text).map_err(|error| errors::library_error(py, &error))
}

/// The library's FTS5 query sanitizer (`api.md` §7), which the original
/// offers as the private static `SessionDB._sanitize_fts5_query`; callers
/// and its tests use it.
#[pyfunction]
pub fn sanitize_fts5_query(query: &str) -> String {
    hermes_state_query::sanitize::sanitize_fts5_query(query)
}

/// Whether `text` holds a character search routes as CJK (`api.md` §8.4),
/// the original's private static `SessionDB._contains_cjk`.
#[pyfunction]
pub fn contains_cjk(text: &str) -> bool {
    text.chars().any(hermes_state_query::search::is_router_cjk)
}
