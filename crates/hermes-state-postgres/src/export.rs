//! What the facade's exports read (`api.md` §11.1–11.2, the JSONL format of
//! `docs/EXPORT-FORMAT.md`), from one snapshot, streamed.
//!
//! [`PgStore::with_export_snapshot`] opens one `REPEATABLE READ` read-only
//! transaction: every statement of an export sees the same store, however
//! long it runs and whoever writes meanwhile. Sessions come through a
//! server-side cursor (a portal, fetched [`SESSION_BATCH`] rows at a
//! time), and each session's messages as a row stream, so memory holds a
//! batch of session rows and one message, never the store. The snapshot is
//! the contract's [`ExportSource`]: the lines and shapes themselves are
//! written by the contract crate, from values in SQLite's storage classes
//! ([`StoredValue`]), with the same code as the SQLite export, so both
//! backends write the same bytes.

use std::ops::ControlFlow;

use hermes_state_core::export::{ExportSource, SessionExport};
use hermes_state_core::{Error, Result};
use hermes_state_types::stored::{StoredValue, StoredValueRef};
use hermes_state_types::{Message, SCHEMA_VERSION, Session};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::{Row, Transaction};

use crate::PgStore;
use crate::content;
use crate::error::{Context, PgError};
use crate::rich_listing::LAST_ACTIVE;
use crate::rows::{
    MESSAGE_COLUMNS, SESSION_COLUMNS, message_from_row, select_list, session_from_row,
};

/// Session rows fetched from the cursor at a time.
pub const SESSION_BATCH: i32 = 256;

/// The JSONL order ([`ExportSource::session_rows`]): the SQLite export's
/// query, in PostgreSQL's words.
const SESSIONS_IN_LINEAGE_ORDER: &str = "WITH RECURSIVE lineage(id, depth) AS (
    SELECT s.id, 0 FROM sessions s
    WHERE s.parent_session_id IS NULL
       OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id)
    UNION
    SELECT c.id, l.depth + 1 FROM sessions c JOIN lineage l ON c.parent_session_id = l.id
)
SELECT {columns} FROM sessions s
LEFT JOIN (SELECT id, MIN(depth) AS depth FROM lineage GROUP BY id) d ON d.id = s.id
WHERE ($1::text IS NULL OR s.source = $1)
  AND ($2::text[] IS NULL OR s.id = ANY($2))
ORDER BY d.depth IS NULL, d.depth, s.started_at, s.id";

/// `search_sessions(source, limit=100000)` of `api.md` §10.1: `export_all`'s order.
const SESSIONS_BY_LAST_ACTIVE: &str = "SELECT {columns}, {last_active} AS last_active
FROM sessions s
WHERE ($1::text IS NULL OR s.source = $1)
ORDER BY last_active DESC NULLS LAST, s.started_at DESC, s.id DESC
LIMIT 100000";

/// One read snapshot of a store, for an export.
pub struct ExportSnapshot<'a, 't> {
    tx: &'a mut Transaction<'t>,
}

impl PgStore {
    /// Runs `body` on one snapshot of the store (a read-only `REPEATABLE
    /// READ` transaction), ended when `body` returns. `E` is the caller's
    /// error type, so what `body` writes can fail with its own errors.
    pub fn with_export_snapshot<T, E: From<PgError>>(
        &self,
        body: impl FnOnce(&mut ExportSnapshot<'_, '_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let mut client = self.pool.get()?;
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .context("starting the export snapshot")?;
        let value = body(&mut ExportSnapshot { tx: &mut tx })?;
        tx.commit().context("ending the export snapshot")?;
        Ok(value)
    }
}

impl ExportSource for ExportSnapshot<'_, '_> {
    /// The SQLite schema version the data model matches (`schema_version`).
    fn schema_version(&mut self) -> Result<i64> {
        Ok(self
            .tx
            .query_one("SELECT MAX(version)::BIGINT FROM schema_version", &[])
            .context("reading the schema version")?
            .get::<_, Option<i64>>(0)
            .unwrap_or(SCHEMA_VERSION))
    }

    fn row_columns(&mut self) -> Result<(Vec<String>, Vec<String>)> {
        let names = |columns: &[&str]| columns.iter().map(|c| (*c).to_owned()).collect();
        Ok((names(&SESSION_COLUMNS), names(&MESSAGE_COLUMNS)))
    }

    /// Every column of [`SESSION_COLUMNS`] in SQLite's storage classes.
    fn session_rows(
        &mut self,
        source: Option<&str>,
        ids: Option<&[String]>,
        each: &mut dyn FnMut(&mut Self, &[StoredValueRef<'_>]) -> Result<()>,
    ) -> Result<()> {
        let sql =
            SESSIONS_IN_LINEAGE_ORDER.replace("{columns}", &select_list("s", &SESSION_COLUMNS));
        let ids = ids.map(<[String]>::to_vec);
        self.for_each_in_cursor(&sql, &[&source, &ids], |snapshot, row| {
            let row = stored_row(row, None);
            each(
                snapshot,
                &row.iter().map(StoredValue::as_ref).collect::<Vec<_>>(),
            )?;
            Ok(ControlFlow::Continue(()))
        })
    }

    fn sessions_by_last_active(
        &mut self,
        source: Option<&str>,
        each: &mut dyn FnMut(&mut Self, SessionExport) -> Result<ControlFlow<()>>,
    ) -> Result<()> {
        let sql = SESSIONS_BY_LAST_ACTIVE
            .replace("{columns}", &select_list("s", &SESSION_COLUMNS))
            .replace("{last_active}", LAST_ACTIVE);
        self.for_each_in_cursor(&sql, &[&source], |snapshot, row| {
            let last_active: Option<f64> = row.get("last_active");
            let export = SessionExport {
                session: session_from_row(row),
                last_active: Some(last_active.unwrap_or_default()),
                messages: Vec::new(),
            };
            each(snapshot, export)
        })
    }

    fn session(&mut self, session_id: &str) -> Result<Option<Session>> {
        let sql = format!(
            "SELECT {} FROM sessions s WHERE s.id = $1",
            select_list("s", &SESSION_COLUMNS)
        );
        Ok(self
            .tx
            .query_opt(&sql, &[&session_id])
            .context("reading a session to export")?
            .as_ref()
            .map(session_from_row))
    }

    /// Every column of [`MESSAGE_COLUMNS`] in SQLite's storage classes
    /// (`content` as SQLite holds it). A session id is always text here.
    fn message_rows(
        &mut self,
        session_id: StoredValueRef<'_>,
        each: &mut dyn FnMut(&[StoredValueRef<'_>]) -> Result<()>,
    ) -> Result<()> {
        let StoredValueRef::Text(session_id) = session_id else {
            return Err(Error::InvalidInput(
                "a session without a text id".to_owned(),
            ));
        };
        let session_id = String::from_utf8_lossy(session_id);
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.session_id = $1 ORDER BY m.id",
            select_list("m", &MESSAGE_COLUMNS)
        );
        let content_at = MESSAGE_COLUMNS.iter().position(|c| *c == "content");
        let mut rows = self
            .tx
            .query_raw(&sql, [&*session_id])
            .context("reading messages to export")?;
        while let Some(row) = rows.next().context("reading messages to export")? {
            let row = stored_row(&row, content_at);
            each(&row.iter().map(StoredValue::as_ref).collect::<Vec<_>>())?;
        }
        Ok(())
    }

    fn count_messages(&mut self, session_id: &str, include_inactive: bool) -> Result<u64> {
        let count: i64 = self
            .tx
            .query_one(
                "SELECT COUNT(*) FROM messages WHERE session_id = $1 AND ($2 OR active = 1)",
                &[&session_id, &include_inactive],
            )
            .context("counting messages to export")?
            .get(0);
        Ok(u64::try_from(count).unwrap_or_default())
    }

    fn messages(
        &mut self,
        session_id: &str,
        include_inactive: bool,
        each: &mut dyn FnMut(Message) -> ControlFlow<()>,
    ) -> Result<u64> {
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.session_id = $1 AND ($2 OR m.active = 1) ORDER BY m.id",
            select_list("m", &MESSAGE_COLUMNS)
        );
        let params: [&(dyn ToSql + Sync); 2] = [&session_id, &include_inactive];
        let mut rows = self
            .tx
            .query_raw(&sql, params)
            .context("reading messages to export")?;
        let mut handed = 0;
        while let Some(row) = rows.next().context("reading messages to export")? {
            handed += 1;
            if each(message_from_row(&row)).is_break() {
                break;
            }
        }
        Ok(handed)
    }
}

impl ExportSnapshot<'_, '_> {
    /// Runs `sql` as a server-side cursor and calls `each` with its rows,
    /// [`SESSION_BATCH`] fetched at a time; between rows the snapshot is
    /// free for other statements (the cursor is a named portal). `Break`
    /// stops the walk.
    fn for_each_in_cursor(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
        mut each: impl FnMut(&mut Self, &Row) -> Result<ControlFlow<()>>,
    ) -> Result<()> {
        let portal = self
            .tx
            .bind(sql, params)
            .context("opening the export cursor")?;
        loop {
            let batch = self
                .tx
                .query_portal(&portal, SESSION_BATCH)
                .context("reading sessions to export")?;
            for row in &batch {
                if each(self, row)?.is_break() {
                    return Ok(());
                }
            }
            if batch.len() < SESSION_BATCH as usize {
                return Ok(());
            }
        }
    }
}

/// A row's values in SQLite's storage classes, by the column types;
/// `content_at` is `messages.content`, decoded from its PostgreSQL form.
fn stored_row(row: &Row, content_at: Option<usize>) -> Vec<StoredValue> {
    row.columns()
        .iter()
        .enumerate()
        .map(|(index, column)| {
            if Some(index) == content_at {
                return content::from_pg(row.get(index));
            }
            match *column.type_() {
                Type::INT8 => row
                    .get::<_, Option<i64>>(index)
                    .map_or(StoredValue::Null, StoredValue::Integer),
                Type::INT4 => row
                    .get::<_, Option<i32>>(index)
                    .map_or(StoredValue::Null, |i| StoredValue::Integer(i.into())),
                Type::FLOAT8 => row
                    .get::<_, Option<f64>>(index)
                    .map_or(StoredValue::Null, StoredValue::Real),
                _ => row
                    .get::<_, Option<String>>(index)
                    .map_or(StoredValue::Null, StoredValue::Text),
            }
        })
        .collect()
}
