//! The JSONL import's writer on SQLite: the rows the contract's reader
//! (`hermes_state_core::export::import_jsonl`) checked, written through the
//! write path in short transactions, by the rules of
//! `docs/EXPORT-FORMAT.md` ("Import", 3–4).

use std::collections::HashSet;

use hermes_state_core::export::{
    BatchLimits, Cell, ImportOptions, ImportOutcome, ImportRow, ImportSink, TargetColumns,
};
use hermes_state_schema::reconcile::quote_identifier;
use hermes_state_types::stored::StoredValue;
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use super::snapshot::bind;
use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};

/// SQLite's one write lock is held for short transactions: at most 500
/// sessions, about 10 000 messages or 32 MiB of lines each.
const BATCH_LIMITS: BatchLimits = BatchLimits {
    sessions: 500,
    messages: 10_000,
    bytes: 32 << 20,
};

/// What the last written row decided for the session being imported.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cursor {
    Idle,
    /// The session exists and is kept: its messages are skipped.
    Skipping,
    /// The session was written; its messages follow.
    Writing {
        id: String,
        /// Created by this import (not replaced).
        created: bool,
        /// Still inserting the exported ids.
        explicit_ids: bool,
        last_id: i64,
    },
}

/// An import into a SQLite store, one batch per write transaction.
pub(super) struct SqliteSink<'a> {
    db: &'a SessionDb,
    /// The cursor after the last committed batch.
    cursor: Cursor,
    /// A session created by this import whose messages are partly committed.
    partial: Option<String>,
}

impl<'a> SqliteSink<'a> {
    pub(super) fn new(db: &'a SessionDb) -> Self {
        SqliteSink {
            db,
            cursor: Cursor::Idle,
            partial: None,
        }
    }
}

impl ImportSink for SqliteSink<'_> {
    fn begin(&mut self) -> Result<TargetColumns> {
        if self.db.is_read_only() {
            return Err(Error::ReadOnly("importing sessions".to_owned()));
        }
        self.db.read(|conn| {
            let names = |table: &str| -> Result<Vec<String>> {
                Ok(hermes_state_schema::reconcile::live_columns(conn, table)?
                    .into_iter()
                    .map(|c| c.name)
                    .collect())
            };
            Ok(TargetColumns::from_names(
                names("sessions")?,
                names("messages")?,
            ))
        })
    }

    fn batch_limits(&self) -> Option<BatchLimits> {
        Some(BATCH_LIMITS)
    }

    fn write(
        &mut self,
        rows: &[ImportRow],
        options: &ImportOptions,
        at_boundary: bool,
    ) -> Result<ImportOutcome> {
        let start = self.cursor.clone();
        let (cursor, outcome) = self.db.write("importing sessions", |conn| {
            let mut cursor = start.clone();
            let mut outcome = ImportOutcome::default();
            for row in rows {
                apply_line(
                    conn,
                    row,
                    options.overwrite_existing,
                    &mut cursor,
                    &mut outcome,
                )?;
            }
            Ok((cursor, outcome))
        })?;
        self.partial = match &cursor {
            Cursor::Writing {
                id, created: true, ..
            } if !at_boundary => Some(id.clone()),
            _ => None,
        };
        self.cursor = cursor;
        Ok(outcome)
    }

    /// Removes a session this import created but could not finish, so that
    /// no half-imported session stays.
    fn abandon(&mut self) {
        let Some(id) = &self.partial else { return };
        let _ = self.db.write("removing a partly imported session", |conn| {
            for sql in [
                "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
                "DELETE FROM messages WHERE session_id = ?1",
                "DELETE FROM sessions WHERE id = ?1",
            ] {
                conn.execute(sql, [id])
                    .context("removing a partly imported session")?;
            }
            Ok(())
        });
    }
}

fn apply_line(
    conn: &Connection,
    line: &ImportRow,
    overwrite: bool,
    cursor: &mut Cursor,
    outcome: &mut ImportOutcome,
) -> Result<()> {
    match line {
        ImportRow::Session { id, values, .. } => {
            let exists = session_exists(conn, id)?;
            if exists && !overwrite {
                outcome.skipped.push(id.clone());
                *cursor = Cursor::Skipping;
                return Ok(());
            }
            if exists {
                conn.execute("DELETE FROM messages WHERE session_id = ?1", [id])
                    .context("replacing a session's messages")?;
                outcome.replaced.push(id.clone());
            }
            let mut values = values.clone();
            for (column, value) in &mut values {
                match column.as_str() {
                    "parent_session_id"
                        if *value != Cell::Stored(StoredValue::Null)
                            && (!parent_exists(conn, value)? || closes_cycle(conn, id, value)?) =>
                    {
                        *value = Cell::Stored(StoredValue::Null);
                        outcome.orphaned.push(id.clone());
                    }
                    "title" => {
                        if let Some(title) = value.as_text()
                            && title_holder(conn, title, id)?.is_some()
                        {
                            outcome.title_conflicts.push((id.clone(), title.to_owned()));
                            *value = Cell::Stored(StoredValue::Null);
                        }
                    }
                    _ => {}
                }
            }
            upsert_session(conn, &values)?;
            outcome.imported += 1;
            *cursor = Cursor::Writing {
                id: id.clone(),
                created: !exists,
                explicit_ids: true,
                last_id: i64::MIN,
            };
            Ok(())
        }
        ImportRow::Message { id, values, .. } => {
            let Cursor::Writing {
                explicit_ids,
                last_id,
                ..
            } = cursor
            else {
                return Ok(());
            };
            let keep = *explicit_ids
                && match id {
                    Some(id) => *id > *last_id && !message_exists(conn, *id)?,
                    None => false,
                };
            if !keep {
                *explicit_ids = false;
                if id.is_some() {
                    outcome.renumbered += 1;
                }
            }
            *last_id = insert_message(conn, keep.then_some(*id).flatten(), values)?;
            outcome.messages += 1;
            Ok(())
        }
    }
}

fn session_exists(conn: &Connection, id: &str) -> Result<bool> {
    parent_exists(conn, &Cell::Stored(StoredValue::Text(id.to_owned())))
}

/// Whether a session with this id (any stored value) exists.
fn parent_exists(conn: &Connection, id: &Cell) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)")
        .and_then(|mut stmt| stmt.query_row([bind(id.as_ref())], |row| row.get(0)))
        .context("checking a session")
        .map_err(Into::into)
}

fn message_exists(conn: &Connection, id: i64) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM messages WHERE id = ?1)")
        .and_then(|mut stmt| stmt.query_row([id], |row| row.get(0)))
        .context("checking a message id")
        .map_err(Into::into)
}

/// Whether linking `id` under `parent` would close a parent cycle: `id` is
/// `parent` or one of its ancestors in the store.
fn closes_cycle(conn: &Connection, id: &str, parent: &Cell) -> Result<bool> {
    let mut seen: HashSet<String> = HashSet::new();
    let Some(start) = parent.as_text() else {
        return Ok(false);
    };
    let mut current = Some(start.to_owned());
    while let Some(node) = current {
        if node == id {
            return Ok(true);
        }
        if !seen.insert(node.clone()) {
            return Ok(false);
        }
        current = hermes_state_query::sessions::parent_of(conn, &node)?;
    }
    Ok(false)
}

fn title_holder(conn: &Connection, title: &str, id: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT id FROM sessions WHERE title = ?1 AND id <> ?2 LIMIT 1")
        .and_then(|mut stmt| {
            stmt.query_row([title, id], |row| row.get::<_, Option<String>>(0))
                .optional()
        })
        .map(Option::flatten)
        .context("checking a title")
        .map_err(Into::into)
}

/// `INSERT … ON CONFLICT(id) DO UPDATE` of every given column.
fn upsert_session(conn: &Connection, values: &[(String, Cell)]) -> Result<()> {
    let columns: Vec<String> = values.iter().map(|(c, _)| quote_identifier(c)).collect();
    let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("?{i}")).collect();
    let updates: Vec<String> = values
        .iter()
        .zip(&columns)
        .filter(|((column, _), _)| column != "id")
        .map(|(_, quoted)| format!("{quoted} = excluded.{quoted}"))
        .collect();
    let on_conflict = if updates.is_empty() {
        "DO NOTHING".to_owned()
    } else {
        format!("DO UPDATE SET {}", updates.join(", "))
    };
    let sql = format!(
        "INSERT INTO sessions ({}) VALUES ({}) ON CONFLICT(id) {on_conflict}",
        columns.join(", "),
        placeholders.join(", ")
    );
    conn.prepare_cached(&sql)
        .and_then(|mut stmt| {
            stmt.execute(params_from_iter(
                values.iter().map(|(_, v)| bind(v.as_ref())),
            ))
        })
        .context("importing a session")?;
    Ok(())
}

/// Inserts a message row (with `id` when given); returns its id.
fn insert_message(conn: &Connection, id: Option<i64>, values: &[(String, Cell)]) -> Result<i64> {
    let mut columns: Vec<String> = values.iter().map(|(c, _)| quote_identifier(c)).collect();
    let mut params: Vec<_> = values.iter().map(|(_, v)| bind(v.as_ref())).collect();
    if let Some(id) = id {
        columns.push("\"id\"".to_owned());
        params.push(id.into());
    }
    let placeholders: Vec<String> = (1..=params.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO messages ({}) VALUES ({})",
        columns.join(", "),
        placeholders.join(", ")
    );
    conn.prepare_cached(&sql)
        .and_then(|mut stmt| stmt.execute(params_from_iter(params)))
        .context("importing a message")?;
    Ok(conn.last_insert_rowid())
}
