//! The `state_meta` keys of the gate and the conversion, read the way the
//! triggers read them.
//!
//! A file without `state_meta` (one this module is asked about before any
//! open created it) reads as holding no key, never as an error.

use rusqlite::{Connection, OptionalExtension};

use crate::ddl;
use crate::detect;
use crate::error::SchemaError;
use hermes_state_sqlite::Context as SqliteContext;

/// A meta value as stored text; `None` when the key (or the table) is absent.
pub(super) fn meta_text(conn: &Connection, key: &str) -> Result<Option<String>, SchemaError> {
    if !detect::object_exists(conn, "table", "state_meta")? {
        return Ok(None);
    }
    conn.query_row("SELECT value FROM state_meta WHERE key = ?1", [key], |r| {
        r.get::<_, Option<String>>(0)
    })
    .optional()
    .context("reading state_meta")
    .map(Option::flatten)
    .map_err(Into::into)
}

/// A meta value as the gate reads it (`CAST(value AS INTEGER)`): present keys
/// with unparsable text count as 0.
pub(super) fn meta(conn: &Connection, key: &str) -> Result<Option<i64>, SchemaError> {
    if !detect::object_exists(conn, "table", "state_meta")? {
        return Ok(None);
    }
    conn.query_row(
        "SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = ?1",
        [key],
        |r| r.get::<_, Option<i64>>(0),
    )
    .optional()
    .context("reading state_meta")
    .map(|v| v.map(Option::unwrap_or_default))
    .map_err(Into::into)
}

/// Upserts an integer meta value (stored as its decimal text, as the original).
pub(super) fn set_meta(conn: &Connection, key: &str, value: i64) -> Result<(), SchemaError> {
    conn.execute(ddl::UPSERT_META, [key, &value.to_string()])
        .context("writing state_meta")?;
    Ok(())
}

/// Deletes the given keys; absent keys are no error.
pub(super) fn delete_meta(conn: &Connection, keys: &[&str]) -> Result<(), SchemaError> {
    for key in keys {
        conn.execute("DELETE FROM state_meta WHERE key = ?1", [key])
            .context("writing state_meta")?;
    }
    Ok(())
}
