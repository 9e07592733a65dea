//! The Python extension module `hermes_state_rs._native`.
//!
//! The Python package `hermes_state_rs` (in `python/`) builds the original's
//! `SessionDB` class on top of it: one method per method of the original,
//! with its signature, each passing the arguments its caller gave to
//! `NativeStore`'s `call` under the method's name. This crate only
//! converts values and errors at that boundary; what a call means is the
//! library's (`hermes_state::by_name`). `docs/PYTHON.md` is the user's guide.

mod convert;
mod errors;
mod store;

use hermes_state::by_name;
use pyo3::prelude::*;

/// The module's contents.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // Inside the agent this stands in for the original's default
    // installation, which has no CJK tokenizer and creates no CJK index:
    // unless HERMES_CJK_FTS asks for it, a store created here gets none, so
    // `db._conn` and original processes can write messages to it
    // (docs/PYTHON.md). Existing indexes are maintained as before.
    hermes_state_sqlite::connection::set_cjk_index_in_new_stores(false);
    m.add_class::<store::NativeStore>()?;
    m.add_function(wrap_pyfunction!(store::sanitize_title, m)?)?;
    m.add_function(wrap_pyfunction!(store::_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(store::sanitize_fts5_query, m)?)?;
    m.add_function(wrap_pyfunction!(store::contains_cjk, m)?)?;
    m.add_function(wrap_pyfunction!(store::redacted_location, m)?)?;
    m.add("SCHEMA_VERSION", hermes_state::SCHEMA_VERSION)?;
    m.add(
        "FTS_STORAGE_VERSION",
        hermes_state_types::FTS_STORAGE_VERSION,
    )?;
    m.add(
        "MAX_FTS5_QUERY_CHARS",
        hermes_state_query::sanitize::MAX_QUERY_CHARS,
    )?;
    m.add(
        "FTS_CJK_STALE_KEY",
        hermes_state_sqlite::names::CJK_STALE_KEY,
    )?;
    m.add("SCHEMA_SQL", schema_sql())?;
    let signatures = by_name::SIGNATURES
        .iter()
        .map(|signature| {
            (signature.name, signature.parameters, signature.is_static).into_pyobject(py)
        })
        .collect::<PyResult<Vec<_>>>()?;
    m.add("SIGNATURES", signatures)?;
    Ok(())
}

/// The main schema script of a v23 store: its tables and their indexes, as
/// one script (the original's module offers it as `SCHEMA_SQL`; its tests
/// build stores with `executescript`). The FTS objects are not part of it.
fn schema_sql() -> String {
    let tables = hermes_state_schema::ddl::TABLES.iter().map(|(_, ddl)| *ddl);
    let indexes = hermes_state_schema::ddl::MAIN_INDEXES.iter().copied();
    let mut script = String::new();
    for statement in tables.chain(indexes) {
        script.push_str(statement);
        script.push_str(";\n");
    }
    script
}
