//! `import_sessions` (`api.md` §11.2) on PostgreSQL: the original's export
//! shape, validated and turned into the values the original writes by the
//! contract crate (`hermes_state_core::cleanup::plan_sessions_import`),
//! written here in one transaction as `SessionDb::import_sessions` writes
//! them on SQLite.

use hermes_state_core::cleanup::{
    MESSAGE_COLUMNS, Prepared, Row, SESSION_COLUMNS, SessionsImport, SessionsImportReport,
    plan_sessions_import,
};
use hermes_state_core::import_links::{StoredLinks, plan_parent_links};
use postgres::Transaction;
use postgres::types::ToSql;

use super::{bind, placeholders, session_exists};
use crate::PgStore;
use crate::copy::{Column, columns};
use crate::error::{Context, PgError, Result};

impl PgStore {
    /// `import_sessions` (`api.md` §11.2): restores the original's export
    /// shape with the original's checks, in one transaction, as
    /// `SessionDb::import_sessions` does: an existing id is skipped; a new
    /// session's row and its messages are inserted with the original's
    /// values (a title another session holds fails the whole import, as the
    /// unique index makes it); parents are linked last, by
    /// `hermes_state_core::import_links`.
    pub fn import_sessions(
        &self,
        sessions: &serde_json::Value,
    ) -> hermes_state_core::Result<SessionsImportReport> {
        match plan_sessions_import(sessions, self.now())? {
            SessionsImport::Write(prepared) => Ok(self.write_session_list(&prepared)?),
            SessionsImport::Refused(report) => Ok(report),
        }
    }

    fn write_session_list(&self, sessions: &[Prepared]) -> Result<SessionsImportReport> {
        let schema = self.url().schema().to_owned();
        self.write("importing sessions", |tx| {
            let session_columns = columns(tx, &schema, "sessions")?;
            let message_columns = columns(tx, &schema, "messages")?;
            let (mut imported, mut skipped, mut detached) = (Vec::new(), Vec::new(), 0);
            let mut links = Vec::new();
            for (index, item) in sessions.iter().enumerate() {
                if session_exists(tx, &item.id)? {
                    skipped.push(item.id.clone());
                    continue;
                }
                let what = || format!("sessions[{index}] ({:?})", item.id);
                let table = ("sessions", &session_columns[..], &SESSION_COLUMNS[..]);
                insert(tx, table, &item.session, &what)?;
                for (at, message) in item.messages.iter().enumerate() {
                    let what = || format!("sessions[{index}].messages[{at}]");
                    let table = ("messages", &message_columns[..], &MESSAGE_COLUMNS[..]);
                    insert(tx, table, message, &what)?;
                }
                imported.push(item.id.clone());
                if let Some(parent) = &item.parent {
                    links.push((item.id.clone(), parent.clone()));
                }
            }
            let plan = plan_parent_links(&mut PgLinks(tx), &links)?;
            for ((child, parent), link) in links.iter().zip(plan) {
                if link {
                    tx.execute(
                        "UPDATE sessions SET parent_session_id = $2 WHERE id = $1",
                        &[child, parent],
                    )
                    .context("re-linking imported sessions")?;
                } else {
                    detached += 1;
                }
            }
            Ok(SessionsImportReport::written(imported, skipped, detached))
        })
    }
}

/// The import's transaction as [`StoredLinks`].
struct PgLinks<'t, 'c>(&'t mut Transaction<'c>);

impl StoredLinks for PgLinks<'_, '_> {
    type Error = PgError;

    fn session_exists(&mut self, id: &str) -> Result<bool> {
        session_exists(self.0, id)
    }

    fn parent_of(&mut self, id: &str) -> Result<Option<String>> {
        Ok(self
            .0
            .query_opt(
                "SELECT parent_session_id FROM sessions WHERE id = $1",
                &[&id],
            )
            .context("following parents")?
            .and_then(|row| row.get(0)))
    }
}

/// Inserts one row (`table`: its name, its columns in the store, the
/// columns `row` gives), or fails with its refusal.
fn insert(
    tx: &mut Transaction<'_>,
    (table, columns, given): (&str, &[Column], &[&str]),
    row: &Row,
    what: &dyn Fn() -> String,
) -> Result<()> {
    if let Some(why) = row.refusal {
        return Err(PgError::InvalidInput(why.to_owned()));
    }
    let (names, params) = bind(columns, given.iter().copied().zip(&row.values), what)?;
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        names.join(", "),
        placeholders(names.len())
    );
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
    tx.execute(&sql, &refs)
        .context(&format!("importing {}", what()))?;
    Ok(())
}
