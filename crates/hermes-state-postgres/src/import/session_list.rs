//! `import_sessions` (`api.md` §11.2) on PostgreSQL: the original's export
//! shape, validated and turned into the values the original writes by the
//! facade, written here in one transaction as `SessionDb::import_sessions`
//! writes them on SQLite.

use hermes_state_core::import_links::{StoredLinks, plan_parent_links};
use hermes_state_types::stored::StoredValue;
use postgres::Transaction;
use postgres::types::ToSql;

use super::{bind, placeholders, session_exists};
use crate::PgStore;
use crate::copy::{Column, columns};
use crate::error::{Context, PgError, Result};

/// One session of an import of the original's export shape (`api.md`
/// §11.2), prepared by the facade: the values the original writes, in
/// SQLite's storage classes.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedSession {
    /// The session's id.
    pub id: String,
    /// The session's row (`id`, the counters and the reset live state
    /// included; `parent_session_id` is linked afterwards).
    pub row: ListedRow,
    /// Its messages' rows in list order (`session_id` included), written
    /// under new ids.
    pub messages: Vec<ListedRow>,
    /// The parent to link once every session is written, when it exists
    /// and closes no cycle (`hermes_state_core::import_links`).
    pub parent: Option<String>,
}

/// One row of a [`ListedSession`].
#[derive(Debug, Clone, PartialEq)]
pub struct ListedRow {
    /// The columns to write and their values.
    pub values: Vec<(String, StoredValue)>,
    /// Why the row cannot be written (a value the original cannot bind):
    /// the import fails with this message ([`PgError::InvalidInput`]) when
    /// it comes to this row (a skipped session never does).
    pub refusal: Option<String>,
}

/// What [`PgStore::import_session_list`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOutcome {
    /// The sessions written, in payload order.
    pub imported_ids: Vec<String>,
    /// The sessions left out because the store has their id, in payload order.
    pub skipped_ids: Vec<String>,
    /// Written sessions whose parent is missing or would close a cycle.
    pub detached: usize,
}

impl PgStore {
    /// `import_sessions` (`api.md` §11.2) after the facade's validation, in
    /// one transaction, as `SessionDb::import_sessions` writes: an existing
    /// id is skipped; a new session's row and its messages are inserted with
    /// the values given (a title another session holds fails the whole
    /// import, as the unique index makes it); parents are linked last, by
    /// `hermes_state_core::import_links`.
    pub fn import_session_list(&self, sessions: &[ListedSession]) -> Result<ListOutcome> {
        let schema = self.url().schema().to_owned();
        self.write("importing sessions", |tx| {
            let session_columns = columns(tx, &schema, "sessions")?;
            let message_columns = columns(tx, &schema, "messages")?;
            let mut outcome = ListOutcome::default();
            let mut links = Vec::new();
            for (index, item) in sessions.iter().enumerate() {
                if session_exists(tx, &item.id)? {
                    outcome.skipped_ids.push(item.id.clone());
                    continue;
                }
                let what = || format!("sessions[{index}] ({:?})", item.id);
                insert(tx, "sessions", &session_columns, &item.row, &what)?;
                for (at, message) in item.messages.iter().enumerate() {
                    let what = || format!("sessions[{index}].messages[{at}]");
                    insert(tx, "messages", &message_columns, message, &what)?;
                }
                outcome.imported_ids.push(item.id.clone());
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
                    outcome.detached += 1;
                }
            }
            Ok(outcome)
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

/// Inserts one row, or fails with its refusal.
fn insert(
    tx: &mut Transaction<'_>,
    table: &str,
    columns: &[Column],
    row: &ListedRow,
    what: &dyn Fn() -> String,
) -> Result<()> {
    if let Some(why) = &row.refusal {
        return Err(PgError::InvalidInput(why.clone()));
    }
    let (names, params) = bind(columns, &row.values, what)?;
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
