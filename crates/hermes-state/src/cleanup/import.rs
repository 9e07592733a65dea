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

use hermes_state_core::cleanup::{MESSAGE_COLUMNS, Prepared, Row, SESSION_COLUMNS};
pub use hermes_state_core::cleanup::{RefusedSession, SessionsImportReport};

use crate::error::{Error, Result, WriteContext};

/// The import transaction on SQLite.
pub(crate) fn write(conn: &Connection, sessions: &[Prepared]) -> Result<SessionsImportReport> {
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
