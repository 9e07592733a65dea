//! What SQLite's TEXT affinity makes of a REAL: the text a `TEXT` column
//! (`messages.content`) stores when a writer binds a float.
//!
//! Another backend that must hold the same value asks SQLite itself, on a
//! private in-memory connection, so the digits are SQLite's own and not a
//! re-implementation of its float formatting (which has changed between
//! SQLite releases).

use std::cell::RefCell;

use rusqlite::Connection;

use crate::error::{Context, SqliteError};

thread_local! {
    /// One in-memory connection per thread, opened on first use.
    static MEMORY: RefCell<Option<Connection>> = const { RefCell::new(None) };
}

/// The text SQLite stores for `value` in a column of TEXT affinity; `None`
/// where SQLite stores NULL (a NaN binds as NULL).
pub fn real_as_text(value: f64) -> Result<Option<String>, SqliteError> {
    MEMORY.with(|memory| {
        let mut memory = memory.borrow_mut();
        let conn = match &mut *memory {
            Some(conn) => conn,
            slot @ None => {
                slot.insert(Connection::open_in_memory().context("opening an in-memory database")?)
            }
        };
        conn.prepare_cached("SELECT CAST(?1 AS TEXT)")
            .and_then(|mut stmt| stmt.query_row([value], |row| row.get(0)))
            .context("formatting a number as SQLite does")
    })
}
