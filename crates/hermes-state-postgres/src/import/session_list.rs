//! `import_sessions` (`api.md` §11.2) on PostgreSQL: the original's export
//! shape, validated and converted by the facade, written in one transaction
//! by `SessionDb::import_sessions`' rules.

use std::collections::HashSet;

use hermes_state_types::stored::StoredValue;
use postgres::Transaction;
use postgres::types::ToSql;

use super::{Params, bind, closes_cycle, placeholders, session_exists, title_taken};
use crate::PgStore;
use crate::copy::columns;
use crate::error::{Context, Result};

/// One session of an import of the original's export shape (`api.md`
/// §11.2), prepared by the facade: values in SQLite's storage classes.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedSession {
    /// The session's id.
    pub id: String,
    /// The columns to write (`id` included; computed and live-state
    /// columns left out by the facade).
    pub values: Vec<(String, StoredValue)>,
    /// The parent to link once every session is written, when it exists
    /// and closes no cycle.
    pub parent: Option<String>,
    /// Its messages in list order, written under new ids.
    pub messages: Vec<ListedMessage>,
}

/// One message of a [`ListedSession`].
#[derive(Debug, Clone, PartialEq)]
pub struct ListedMessage {
    /// The columns to write (no `id`, no `session_id`).
    pub values: Vec<(String, StoredValue)>,
    /// What it adds to the session's `tool_call_count`.
    pub tool_calls: i64,
}

/// What [`PgStore::import_session_list`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListOutcome {
    /// Sessions written.
    pub imported: usize,
    /// Sessions left out because the store has their id.
    pub skipped: usize,
    /// Written sessions whose parent is missing or would close a cycle.
    pub detached: usize,
}

impl PgStore {
    /// `import_sessions` (`api.md` §11.2) after the facade's validation, in
    /// one transaction, by `SessionDb::import_sessions`' rules: existing
    /// ids skipped; a title another session holds dropped; NULL for a NOT
    /// NULL column leaves the column's default; messages under new ids,
    /// counted into `message_count` and `tool_call_count`; parents linked
    /// last, only when present and acyclic.
    pub fn import_session_list(&self, sessions: &[ListedSession]) -> Result<ListOutcome> {
        let schema = self.url().schema().to_owned();
        self.write("importing sessions", |tx| {
            let session_columns = columns(tx, &schema, "sessions")?;
            let message_columns = columns(tx, &schema, "messages")?;
            let required = not_null_columns(tx, &schema)?;
            let mut outcome = ListOutcome::default();
            let mut written = Vec::new();
            for (index, item) in sessions.iter().enumerate() {
                if session_exists(tx, &item.id)? {
                    outcome.skipped += 1;
                    continue;
                }
                let what = || format!("sessions[{index}] ({:?})", item.id);
                let mut values = Vec::with_capacity(item.values.len());
                for (column, value) in &item.values {
                    let mut value = value.clone();
                    if column == "title"
                        && let StoredValue::Text(title) = &value
                        && !title.is_empty()
                        && title_taken(tx, title, &item.id)?
                    {
                        value = StoredValue::Null;
                    }
                    if value == StoredValue::Null
                        && required.contains(&("sessions", column.clone()))
                    {
                        continue;
                    }
                    values.push((column.clone(), value));
                }
                let (names, params) = bind(&session_columns, &values, &what)?;
                insert(tx, "sessions", &names, &params, &what)?;
                let mut tool_calls = 0;
                for (at, message) in item.messages.iter().enumerate() {
                    let what = || format!("sessions[{index}].messages[{at}]");
                    let mut values =
                        vec![("session_id".to_owned(), StoredValue::Text(item.id.clone()))];
                    values.extend(
                        message
                            .values
                            .iter()
                            .filter(|(column, value)| {
                                !(*value == StoredValue::Null
                                    && required.contains(&("messages", column.clone())))
                            })
                            .cloned(),
                    );
                    let (names, params) = bind(&message_columns, &values, &what)?;
                    insert(tx, "messages", &names, &params, &what)?;
                    tool_calls += message.tool_calls;
                }
                let count = i64::try_from(item.messages.len()).unwrap_or(i64::MAX);
                tx.execute(
                    "UPDATE sessions SET message_count = $2, tool_call_count = $3 WHERE id = $1",
                    &[&item.id, &count, &tool_calls],
                )
                .context("counting imported messages")?;
                outcome.imported += 1;
                written.push(item);
            }
            for item in written {
                let Some(parent) = item.parent.as_deref().filter(|p| !p.is_empty()) else {
                    continue;
                };
                if session_exists(tx, parent)? && !closes_cycle(tx, &item.id, parent)? {
                    tx.execute(
                        "UPDATE sessions SET parent_session_id = $2 WHERE id = $1",
                        &[&item.id, &parent],
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

/// `(table, column)` of the NOT NULL columns of `sessions` and `messages`.
fn not_null_columns(
    tx: &mut Transaction<'_>,
    schema: &str,
) -> Result<HashSet<(&'static str, String)>> {
    let mut required = HashSet::new();
    for table in ["sessions", "messages"] {
        let rows = tx
            .query(
                "SELECT column_name::TEXT FROM information_schema.columns \
                 WHERE table_schema = $1 AND table_name = $2 AND is_nullable = 'NO'",
                &[&schema, &table],
            )
            .context("reading the store's columns")?;
        required.extend(rows.iter().map(|row| (table, row.get::<_, String>(0))));
    }
    Ok(required)
}

fn insert(
    tx: &mut Transaction<'_>,
    table: &str,
    names: &[String],
    params: &Params,
    what: &dyn Fn() -> String,
) -> Result<()> {
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
