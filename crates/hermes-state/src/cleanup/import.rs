//! `import_sessions`: restoring the original's export shape (`api.md`
//! §11.2), the list `export_session` / `export_all` produce, exactly as the
//! original does: its checks and their texts, its coercions and the
//! columns it writes (`hermes_state_core::cleanup::plan_sessions_import`,
//! the same for every backend), its re-linking of parents
//! (`hermes_state_query::import_links`) and its report. Everything is
//! checked before anything is written; the import is one write
//! transaction.

use rusqlite::Connection;

use hermes_state_query::import_links::{SqliteLinks, plan_parent_links};

use hermes_state_core::cleanup::{
    MESSAGE_COLUMNS, Prepared, Row, SESSION_COLUMNS, SessionsImport, plan_sessions_import,
};
pub use hermes_state_core::cleanup::{RefusedSession, SessionsImportReport};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};

impl SessionDb {
    /// Restores sessions from the original's export shape (`api.md` §11.2):
    /// a JSON list of session objects with their `messages`, as
    /// `export_session` / `export_all` give them, as the original does.
    ///
    /// First every session is checked; any refused session gives a report
    /// with `ok` false listing each one (`{index, session_id, error}`, the
    /// original's texts) and nothing is written. A session is refused when
    /// it is not an object; its id is missing or falsy (`session id is
    /// required`) or repeats an accepted one; `messages` is truthy but not a
    /// list of objects; it exceeds 10 000 messages or 5 MiB of compact JSON,
    /// or the import 50 000 messages or 25 MiB; `model_config` is neither
    /// null, an object, nor JSON text of an object; `parent_session_id` or
    /// a text column (`source`, `title`, ...) is neither text nor null; a
    /// message's `role` is not non-empty text, another text field neither
    /// text nor null, or `token_count` not an integer (`int()`: `"3"` and
    /// `3.7` are).
    ///
    /// Then, in one write transaction, in payload order: an id the store
    /// has is skipped; a new session is written with the original's columns
    /// and coercions — the id as `str(id).strip()`, `source` `import` when
    /// empty, `started_at` now when absent or not a number (`float()`:
    /// numeric text counts), counters by `int()` (0 when not integers),
    /// `archived` by truth, `message_count`/`tool_call_count` from its
    /// messages; every other column (gateway, handoff, compression state,
    /// pinned, ...) keeps its default. Its messages get new ids in list
    /// order, as fresh active rows (a message without a usable time gets
    /// the clock, each next one a microsecond later). Parents are linked
    /// last, when the parent exists and the link closes no cycle
    /// (`hermes_state_query::import_links`); otherwise the session counts
    /// as `detached`.
    ///
    /// Errors (nothing written): a payload that is not a list (`sessions
    /// must be a list`) or holds more than 500 sessions (`sessions must
    /// contain at most 500 entries`), [`crate::ErrorKind::InvalidInput`]; a
    /// written session whose title another session holds, or whose
    /// `started_at` or a message time is NaN, [`crate::ErrorKind::Constraint`]
    /// (the original's `IntegrityError`); a written session with an integer
    /// beyond 64 bits (`Python int too large to convert to SQLite INTEGER`),
    /// `InvalidInput`; a read-only handle; a failed write.
    pub fn import_sessions(&self, sessions: &serde_json::Value) -> Result<SessionsImportReport> {
        let prepared = match plan_sessions_import(sessions, self.now())? {
            SessionsImport::Write(prepared) => prepared,
            SessionsImport::Refused(report) => return Ok(report),
        };
        self.write("importing sessions", |conn| write(conn, &prepared))
    }
}

/// The import transaction on SQLite.
fn write(conn: &Connection, sessions: &[Prepared]) -> Result<SessionsImportReport> {
    let insert_session = insert_sql("sessions", &SESSION_COLUMNS);
    let insert_message = insert_sql("messages", &MESSAGE_COLUMNS);
    let (mut imported, mut skipped, mut links) = (Vec::new(), Vec::new(), Vec::new());
    for session in sessions {
        if hermes_state_query::session_exists(conn, &session.id)? {
            skipped.push(session.id.clone());
            continue;
        }
        insert(
            conn,
            &insert_session,
            &session.session,
            "importing a session",
        )?;
        for message in &session.messages {
            insert(conn, &insert_message, message, "importing a message")?;
        }
        imported.push(session.id.clone());
        if let Some(parent) = &session.parent {
            links.push((session.id.clone(), parent.clone()));
        }
    }
    let plan = plan_parent_links(&mut SqliteLinks(conn), &links)?;
    let mut detached = 0;
    for ((child, parent), link) in links.iter().zip(plan) {
        if link {
            conn.prepare_cached("UPDATE sessions SET parent_session_id = ?2 WHERE id = ?1")
                .and_then(|mut stmt| stmt.execute([child, parent]))
                .context("re-linking imported sessions")?;
        } else {
            detached += 1;
        }
    }
    Ok(SessionsImportReport::written(imported, skipped, detached))
}

/// `INSERT INTO <table> (<columns>) VALUES (?, …)`: the columns are this
/// module's constants, the values bound.
fn insert_sql(table: &str, columns: &[&str]) -> String {
    format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        columns.join(", "),
        vec!["?"; columns.len()].join(", ")
    )
}

/// Inserts one row, or fails with its refusal.
fn insert(conn: &Connection, sql: &str, row: &Row, what: &str) -> Result<()> {
    if let Some(why) = row.refusal {
        return Err(Error::InvalidInput(why.to_owned()));
    }
    let values = row
        .values
        .iter()
        .cloned()
        .map(hermes_state_query::values::sql_value);
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.execute(rusqlite::params_from_iter(values)))
        .context(what)?;
    Ok(())
}
