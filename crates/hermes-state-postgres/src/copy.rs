//! Copying a whole store in, verified: what `migrate-to` uses.
//!
//! The target must be empty. Everything happens in one write transaction:
//! sessions are inserted without their parent links, then the links are set
//! (so any lineage order, even a cycle a damaged file holds, loads, and a
//! link to a missing session fails naming it); then messages with their
//! ids, usage rows, `state_meta` (without the SQLite-only `fts_*` keys),
//! gateway routes, and the opt-in Telegram topic tables where the source
//! has them (created on the target first); the message id sequence is moved
//! past the highest id;
//! then every row and column is read back and compared with a second pass
//! over the source. Only a complete match commits. `compression_locks`
//! (short-lived leases) and `async_delegations` (whose writer uses the
//! SQLite file directly) are not copied.

use hermes_state_core::affinity::real_as_text;
use hermes_state_types::stored::StoredValue;
use postgres::Transaction;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;

use crate::PgStore;
use crate::content;
use crate::error::{Context, PgError, Result};

/// The tables copied, in order, each with the key its rows are compared by.
pub const COPIED_TABLES: [(&str, &str); 5] = [
    ("sessions", "id"),
    ("messages", "id"),
    (
        "session_model_usage",
        "session_id, model, billing_provider, billing_base_url, billing_mode, task",
    ),
    ("state_meta", "key"),
    ("gateway_routing", "scope, session_key"),
];

/// The opt-in tables (`api.md` §12.4), copied with their rows when the
/// source has them (the target gets them created), each with its key.
pub const OPTIONAL_TABLES: [(&str, &str); 2] = [
    ("telegram_dm_topic_mode", "chat_id"),
    ("telegram_dm_topic_bindings", "chat_id, thread_id"),
];

/// Rows of the store being copied, in SQLite's storage classes.
pub trait RowSource {
    /// Whether the source has `table` (for [`OPTIONAL_TABLES`]).
    fn has_table(&mut self, table: &str) -> Result<bool>;

    /// Calls `sink` with every row of `table`, `columns` in that order,
    /// ordered by `key` (byte order for text, as SQLite's BINARY). Rows the
    /// copy leaves out (`state_meta`'s `fts_*` keys) are skipped here too.
    fn each_row(
        &mut self,
        table: &str,
        columns: &[String],
        key: &str,
        sink: &mut dyn FnMut(Vec<StoredValue>) -> Result<()>,
    ) -> Result<()>;
}

/// What a copy wrote, per table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// `(table, rows)` in copy order.
    pub rows: Vec<(String, u64)>,
}

/// A column of the target and how its values are held.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub(crate) name: String,
    pub(crate) kind: ColumnKind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ColumnKind {
    Integer,
    Real,
    Text,
    /// `messages.content`: any storage class, through the content codec.
    Content,
}

impl PgStore {
    /// Copies a whole store from `source` into this (empty) store and
    /// verifies every row and column before committing.
    ///
    /// Errors: [`PgError::NotEmpty`] when the target holds any row;
    /// [`PgError::InvalidInput`] naming the row for a value PostgreSQL cannot
    /// hold (a NUL in text, text in a number column) or a parent link to a
    /// missing session; [`PgError::Mismatch`] when the read-back differs.
    /// Nothing is left behind on error.
    pub fn copy_from(&self, source: &mut dyn RowSource) -> Result<CopyReport> {
        let report = self.copy_in(source)?;
        let mut client = self.pool.get()?;
        // Fresh statistics, so the planner does not take the bulk-loaded
        // tables for empty ones (autovacuum would get there later).
        client
            .batch_execute(
                "ANALYZE sessions, messages, session_model_usage, state_meta, gateway_routing",
            )
            .context("analysing the copied tables")?;
        // The copied rows wait in the GIN indexes' pending lists (`fastupdate`)
        // until autovacuum merges them, and every search reads those lists
        // whole: right after a 10k move a one-hit word took 1.9 ms to find
        // instead of 0.05 ms. Merge them now; an index this role does not
        // own (which it may not clean) is left to autovacuum.
        client
            .batch_execute(
                "SELECT gin_clean_pending_list(i.indexrelid::regclass) \
                 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
                 JOIN pg_am a ON a.oid = c.relam \
                 WHERE i.indrelid = 'messages'::regclass AND a.amname = 'gin' \
                   AND pg_has_role(c.relowner, 'USAGE')",
            )
            .context("merging the copied rows into the search indexes")?;
        Ok(report)
    }

    fn copy_in(&self, source: &mut dyn RowSource) -> Result<CopyReport> {
        let schema = self.url().schema().to_owned();
        // The source is read inside the closure; a retry would read it again.
        let mut source = Some(source);
        self.write("copying a store", |tx| {
            let source = source.take().ok_or_else(|| {
                PgError::Migration("the copy cannot be retried; run it again".into())
            })?;
            ensure_empty(tx)?;
            let mut report = CopyReport::default();
            let mut tables = COPIED_TABLES.to_vec();
            for (table, key) in OPTIONAL_TABLES {
                if source.has_table(table)? {
                    tables.push((table, key));
                }
            }
            if tables.len() > COPIED_TABLES.len() {
                crate::telegram_topics::create_topic_tables(tx)?;
            }
            for &(table, key) in &tables {
                let columns = columns(tx, &schema, table)?;
                let count = insert_table(tx, source, table, key, &columns)?;
                report.rows.push((table.to_owned(), count));
            }
            tx.execute(
                "SELECT setval(pg_get_serial_sequence('messages', 'id'), \
                 COALESCE((SELECT max(id) FROM messages), 0) + 1, false)",
                &[],
            )
            .context("moving the message id sequence")?;
            for &(table, key) in &tables {
                let columns = columns(tx, &schema, table)?;
                verify_table(tx, source, table, key, &columns)?;
            }
            Ok(report)
        })
    }
}

fn ensure_empty(tx: &mut Transaction<'_>) -> Result<()> {
    for table in [
        "sessions",
        "messages",
        "session_model_usage",
        "state_meta",
        "gateway_routing",
    ] {
        let any = tx
            .query_opt(&format!("SELECT 1 FROM {table} LIMIT 1"), &[])
            .context("checking that the target is empty")?;
        if any.is_some() {
            return Err(PgError::NotEmpty(format!(
                "the target store is not empty (table {table} has rows); copy into a new schema"
            )));
        }
    }
    Ok(())
}

pub(crate) fn columns(tx: &mut Transaction<'_>, schema: &str, table: &str) -> Result<Vec<Column>> {
    let rows = tx
        .query(
            "SELECT column_name::TEXT, data_type::TEXT FROM information_schema.columns \
             WHERE table_schema = $1 AND table_name = $2 AND is_generated = 'NEVER' \
             ORDER BY ordinal_position",
            &[&schema, &table],
        )
        .context("reading the target's columns")?;
    Ok(rows
        .iter()
        .map(|row| {
            let name: String = row.get(0);
            let data_type: String = row.get(1);
            let kind = match data_type.as_str() {
                _ if table == "messages" && name == "content" => ColumnKind::Content,
                "bigint" | "integer" | "smallint" => ColumnKind::Integer,
                "double precision" | "real" | "numeric" => ColumnKind::Real,
                _ => ColumnKind::Text,
            };
            Column { name, kind }
        })
        .collect())
}

/// A source value as the parameter for a column of this kind.
pub(crate) fn param(
    value: &StoredValue,
    column: &Column,
    what: &dyn Fn() -> String,
) -> Result<Box<dyn ToSql + Sync>> {
    let refuse =
        |why: &str| PgError::InvalidInput(format!("{}, column {}: {why}", what(), column.name));
    Ok(match (column.kind, value) {
        (_, StoredValue::Null) if column.kind != ColumnKind::Content => match column.kind {
            ColumnKind::Integer => Box::new(None::<i64>),
            ColumnKind::Real => Box::new(None::<f64>),
            _ => Box::new(None::<String>),
        },
        (ColumnKind::Content, value) => Box::new(content::to_pg(value, &what())?),
        (ColumnKind::Integer, StoredValue::Integer(i)) => Box::new(Some(*i)),
        (ColumnKind::Integer, StoredValue::Real(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => {
            Box::new(Some(*f as i64))
        }
        (ColumnKind::Integer, _) => return Err(refuse("not an integer")),
        (ColumnKind::Real, StoredValue::Real(f)) => Box::new(Some(*f)),
        (ColumnKind::Real, StoredValue::Integer(i)) => Box::new(Some(*i as f64)),
        (ColumnKind::Real, _) => return Err(refuse("not a number")),
        (ColumnKind::Text, StoredValue::Text(text)) => {
            if text.contains('\0') {
                return Err(refuse("PostgreSQL text cannot hold a NUL character"));
            }
            Box::new(Some(text.clone()))
        }
        (ColumnKind::Text, StoredValue::Integer(i)) => Box::new(Some(i.to_string())),
        (ColumnKind::Text, StoredValue::Real(f)) => Box::new(real_as_text(*f)),
        (ColumnKind::Text, StoredValue::Blob(_)) => return Err(refuse("a BLOB in a text column")),
        (ColumnKind::Text, StoredValue::Null) => Box::new(None::<String>),
    })
}

/// The value as the target holds it after [`param`], in SQLite's classes.
fn expected(value: StoredValue, kind: ColumnKind) -> StoredValue {
    match (kind, value) {
        (ColumnKind::Integer, StoredValue::Real(f)) => StoredValue::Integer(f as i64),
        (ColumnKind::Real, StoredValue::Integer(i)) => StoredValue::Real(i as f64),
        (ColumnKind::Text, StoredValue::Integer(i)) => StoredValue::Text(i.to_string()),
        // As `param` wrote it (an error there stopped the copy before this).
        (ColumnKind::Text, StoredValue::Real(f)) => {
            real_as_text(f).map_or(StoredValue::Null, StoredValue::Text)
        }
        (_, value) => value,
    }
}

fn insert_table(
    tx: &mut Transaction<'_>,
    source: &mut dyn RowSource,
    table: &str,
    key: &str,
    columns: &[Column],
) -> Result<u64> {
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    let parent_at = (table == "sessions")
        .then(|| names.iter().position(|n| n == "parent_session_id"))
        .flatten();
    let placeholders: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
    let insert = tx
        .prepare(&format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            names.join(", "),
            placeholders.join(", ")
        ))
        .context("preparing the copy")?;
    let mut links = Vec::new();
    let mut count = 0u64;
    source.each_row(table, &names, key, &mut |mut row| {
        let described = describe_key(&row);
        let what = || format!("{table} row {described}");
        if let Some(at) = parent_at {
            let parent = std::mem::replace(&mut row[at], StoredValue::Null);
            if let StoredValue::Text(parent) = parent {
                let StoredValue::Text(id) = &row[0] else {
                    return Err(PgError::InvalidInput(format!(
                        "{}: the id is not text",
                        what()
                    )));
                };
                links.push((id.clone(), parent));
            }
        }
        let params = row
            .iter()
            .zip(columns)
            .map(|(value, column)| param(value, column, &what))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        tx.execute(&insert, &refs)
            .context(&format!("copying {}", what()))?;
        count += 1;
        Ok(())
    })?;
    for (id, parent) in links {
        tx.execute(
            "UPDATE sessions SET parent_session_id = $2 WHERE id = $1",
            &[&id, &parent],
        )
        .map_err(|error| {
            if error.code() == Some(&postgres::error::SqlState::FOREIGN_KEY_VIOLATION) {
                PgError::InvalidInput(format!(
                    "session {id:?} names a parent that does not exist ({parent:?}); \
                     run `hermes-state doctor --repair` on the source first (it clears \
                     parents that do not exist)"
                ))
            } else {
                PgError::postgres("linking sessions to their parents", error)
            }
        })?;
    }
    Ok(count)
}

fn verify_table(
    tx: &mut Transaction<'_>,
    source: &mut dyn RowSource,
    table: &str,
    key: &str,
    columns: &[Column],
) -> Result<()> {
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    let order: Vec<String> = key
        .split(", ")
        .map(|k| format!("{k} COLLATE \"C\""))
        .collect();
    let order = if table == "messages" {
        "id".to_owned()
    } else {
        order.join(", ")
    };
    // Streamed: a large store is compared row by row, never held whole.
    let mut target = tx
        .query_raw(
            &format!("SELECT {} FROM {table} ORDER BY {order}", names.join(", ")),
            std::iter::empty::<i64>(),
        )
        .context("reading the copy back")?;
    let mut checked = 0u64;
    source.each_row(table, &names, key, &mut |row| {
        let Some(copied) = target.next().context("reading the copy back")? else {
            return Err(PgError::Mismatch(format!(
                "{table}: the copy has fewer rows"
            )));
        };
        for (index, (value, column)) in row.into_iter().zip(columns).enumerate() {
            let want = expected(value, column.kind);
            let got = cell(&copied, index, column.kind);
            let same = match (&want, &got) {
                (StoredValue::Real(a), StoredValue::Real(b)) => {
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
                }
                _ => want == got,
            };
            if !same {
                return Err(PgError::Mismatch(format!(
                    "{table} row {checked}, column {}: source {want:?}, copy {got:?}",
                    column.name
                )));
            }
        }
        checked += 1;
        Ok(())
    })?;
    if target.next().context("reading the copy back")?.is_some() {
        return Err(PgError::Mismatch(format!(
            "{table}: the copy has more rows"
        )));
    }
    Ok(())
}

/// One value of a target row, in SQLite's storage classes.
fn cell(row: &postgres::Row, index: usize, kind: ColumnKind) -> StoredValue {
    match kind {
        ColumnKind::Integer => row
            .get::<_, Option<i64>>(index)
            .map_or(StoredValue::Null, StoredValue::Integer),
        ColumnKind::Real => row
            .get::<_, Option<f64>>(index)
            .map_or(StoredValue::Null, StoredValue::Real),
        ColumnKind::Text => row
            .get::<_, Option<String>>(index)
            .map_or(StoredValue::Null, StoredValue::Text),
        ColumnKind::Content => content::from_pg(row.get(index)),
    }
}

fn describe_key(row: &[StoredValue]) -> String {
    match row.first() {
        Some(StoredValue::Text(text)) => format!("{text:?}"),
        Some(StoredValue::Integer(i)) => i.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

impl PgStore {
    /// Runs `body` with every row of this store as a [`RowSource`], all read
    /// in one snapshot (a read-only `REPEATABLE READ` transaction): what a
    /// copy out (to a SQLite file) reads, twice (load, then verify).
    pub fn with_snapshot<T>(
        &self,
        body: impl FnOnce(&mut dyn RowSource) -> Result<T>,
    ) -> Result<T> {
        let mut client = self.pool.get()?;
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .context("starting a snapshot")?;
        let schema = self.url().schema().to_owned();
        let value = body(&mut PgRows {
            tx: &mut tx,
            schema,
        })?;
        tx.commit().context("ending the snapshot")?;
        Ok(value)
    }
}

/// The rows of this store, read in one transaction, in SQLite's classes.
struct PgRows<'a, 't> {
    tx: &'a mut Transaction<'t>,
    schema: String,
}

impl RowSource for PgRows<'_, '_> {
    fn has_table(&mut self, table: &str) -> Result<bool> {
        Ok(self
            .tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM information_schema.tables \
                 WHERE table_schema = $1 AND table_name = $2)",
                &[&self.schema, &table],
            )
            .context("looking for a table")?
            .get(0))
    }

    fn each_row(
        &mut self,
        table: &str,
        names: &[String],
        key: &str,
        sink: &mut dyn FnMut(Vec<StoredValue>) -> Result<()>,
    ) -> Result<()> {
        let all = columns(self.tx, &self.schema, table)?;
        let picked = names
            .iter()
            .map(|name| {
                all.iter()
                    .find(|c| &c.name == name)
                    .cloned()
                    .ok_or_else(|| {
                        PgError::Mismatch(format!("{table}: the store has no column {name}"))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        let order: Vec<String> = key
            .split(", ")
            .map(|k| format!("{k} COLLATE \"C\""))
            .collect();
        let order = if table == "messages" {
            "id".to_owned()
        } else {
            order.join(", ")
        };
        // Streamed: the rows are handed on as they arrive.
        let mut rows = self
            .tx
            .query_raw(
                &format!("SELECT {} FROM {table} ORDER BY {order}", names.join(", ")),
                std::iter::empty::<i64>(),
            )
            .context(&format!("reading {table}"))?;
        while let Some(row) = rows.next().context(&format!("reading {table}"))? {
            let values = picked
                .iter()
                .enumerate()
                .map(|(index, column)| cell(&row, index, column.kind))
                .collect();
            sink(values)?;
        }
        Ok(())
    }
}
