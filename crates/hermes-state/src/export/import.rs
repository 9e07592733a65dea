//! The JSONL import's writer on SQLite: the rows the contract's reader
//! (`hermes_state_core::export::import_jsonl`) checked, written through the
//! write path in short transactions, by the contract's rules
//! (`write_rows`) over this module's statements.

use hermes_state_core::export::{
    BatchLimits, Cell, ImportCursor, ImportOptions, ImportOutcome, ImportRow, ImportSink,
    ImportWriter, TargetColumns, write_rows,
};
use hermes_state_schema::reconcile::quote_identifier;
use hermes_state_types::stored::StoredValueRef;
use rusqlite::{Connection, ToSql, params_from_iter};

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

/// An import into a SQLite store, one batch per write transaction.
pub(super) struct SqliteSink<'a> {
    db: &'a SessionDb,
    /// The cursor after the last committed batch.
    cursor: ImportCursor,
    /// A session created by this import whose messages are partly committed.
    partial: Option<String>,
}

impl<'a> SqliteSink<'a> {
    pub(super) fn new(db: &'a SessionDb) -> Self {
        SqliteSink {
            db,
            cursor: ImportCursor::Idle,
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
            let names = |table: &str| -> Result<_> {
                let columns = hermes_state_schema::reconcile::live_columns(conn, table)?;
                Ok(columns.into_iter().map(|c| c.name).collect())
            };
            Ok(TargetColumns {
                sessions: names("sessions")?,
                messages: names("messages")?,
            })
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
            let outcome = write_rows(
                &mut Writer(conn),
                rows,
                options.overwrite_existing,
                &mut cursor,
            )?;
            Ok((cursor, outcome))
        })?;
        self.partial = match &cursor {
            ImportCursor::Writing {
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

/// One import transaction on the write path's connection.
struct Writer<'c>(&'c Connection);

impl Writer<'_> {
    /// Inserts a message row (with `id` when given); returns its id.
    fn insert(&mut self, id: Option<i64>, values: &[(String, Cell)]) -> Result<i64> {
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
        self.0
            .prepare_cached(&sql)
            .and_then(|mut stmt| stmt.execute(params_from_iter(params)))
            .context("importing a message")?;
        Ok(self.0.last_insert_rowid())
    }

    /// Whether `sql` (one parameter per value) finds a row.
    fn exists(&self, sql: &str, values: &[&dyn ToSql], what: &str) -> Result<bool> {
        Ok(self
            .0
            .prepare_cached(sql)
            .and_then(|mut stmt| stmt.exists(values))
            .context(what)?)
    }
}

impl ImportWriter for Writer<'_> {
    type Error = Error;

    fn session_exists(&mut self, id: StoredValueRef<'_>) -> Result<bool> {
        let sql = "SELECT 1 FROM sessions WHERE id = ?1";
        self.exists(sql, &[&bind(id)], "checking a session")
    }

    fn parent_of(&mut self, id: &str) -> Result<Option<String>> {
        Ok(hermes_state_query::sessions::parent_of(self.0, id)?)
    }

    fn title_taken(&mut self, title: &str, id: &str) -> Result<bool> {
        let sql = "SELECT 1 FROM sessions WHERE title = ?1 AND id <> ?2";
        self.exists(sql, &[&title, &id], "checking a title")
    }

    fn delete_messages(&mut self, session_id: &str) -> Result<()> {
        self.0
            .execute("DELETE FROM messages WHERE session_id = ?1", [session_id])
            .context("replacing a session's messages")?;
        Ok(())
    }

    /// `INSERT … ON CONFLICT(id) DO UPDATE` of every given column.
    fn upsert_session(&mut self, _line: u64, values: &[(String, Cell)]) -> Result<()> {
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
        self.0
            .prepare_cached(&sql)
            .and_then(|mut stmt| {
                stmt.execute(params_from_iter(
                    values.iter().map(|(_, v)| bind(v.as_ref())),
                ))
            })
            .context("importing a session")?;
        Ok(())
    }

    fn insert_message_as(
        &mut self,
        _line: u64,
        id: i64,
        values: &[(String, Cell)],
    ) -> Result<bool> {
        let taken = self.exists(
            "SELECT 1 FROM messages WHERE id = ?1",
            &[&id],
            "checking a message id",
        )?;
        if !taken {
            self.insert(Some(id), values)?;
        }
        Ok(!taken)
    }

    fn insert_message(&mut self, _line: u64, values: &[(String, Cell)]) -> Result<i64> {
        self.insert(None, values)
    }
}
