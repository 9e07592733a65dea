//! Make an older or newer `state.db` readable by the v23 queries without
//! touching it.
//!
//! Every query of this crate is written against the v23 shape
//! (`schema-v23.md` §4). Files written by versions 1–22 lack columns
//! (`messages.active`, `sessions.title`, …) and whole tables
//! (`state_meta` before v7/v8, `session_model_usage` before v20); files of
//! 24–30 carry extra columns in other positions. A reader must not migrate
//! them: the library and the CLI read every file through a `mode=ro`
//! connection, and a running Hermes agent may hold it open.
//!
//! [`adapt`] therefore shims the gaps in the connection's **temp schema**:
//! for each table the queries read whose v23 columns are not all present it
//! creates `CREATE TEMP VIEW <table> AS SELECT <existing columns>,
//! <v23 default> AS <missing column>, … FROM main.<table>`; for a missing
//! table a view with the v23 columns and no rows (`… WHERE 0`). SQLite looks
//! an unqualified name up in `temp` before `main`, so the unchanged v23 queries
//! see the view. Why TEMP views:
//!
//! * nothing reaches the file: the temp schema lives in the connection
//!   (memory or a private temp file), so it works on `mode=ro` connections and
//!   the main file's bytes, journal mode and sidecars stay as they were;
//! * the architecture invariant "only `hermes-state-schema` issues DDL on the
//!   database" still holds, because the database file gets no DDL at all;
//! * columns that exist keep their real values and their on-disk order
//!   (`SELECT *` of the view lists the existing columns first, then the
//!   defaults); extra columns of newer files are passed through and ignored by
//!   the name-based row mapping.
//!
//! The defaults are SQLite's stored defaults of the v23 DDL (`active` → 1,
//! `compacted` → 0, counters → 0, the rest NULL), which is what the original's
//! column reconciler would have given the old rows; the table of them is
//! the contract crate's (`hermes_state_core::compat`).
//!
//! FTS shapes are not shimmed here: `search` recognises them from
//! `sqlite_master` (see `search::FtsObjects`).
//!
//! A file whose schema changes while the connection is open (another process
//! upgrades it) changes the `PRAGMA schema_version` cookie; [`adapt`] records
//! the cookie it adapted for (in a temp view named [`MARKER`]) and, when it
//! differs, drops its views and adapts again.

pub use hermes_state_core::compat::{
    MESSAGES, SESSION_MODEL_USAGE, SESSIONS, STATE_META, V23Column, column_names,
};
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::error::{QueryContext, QueryError};

/// Name of the temp view that records what [`adapt`] created and for which
/// schema cookie.
pub const MARKER: &str = "hermes_state_compat";

/// The tables this crate's queries read, with their v23 columns.
pub const READ_TABLES: &[(&str, &[V23Column])] = &[
    ("sessions", SESSIONS),
    ("messages", MESSAGES),
    ("session_model_usage", SESSION_MODEL_USAGE),
    ("state_meta", STATE_META),
];

/// What [`adapt`] shimmed for one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableShim {
    /// The table.
    pub table: &'static str,
    /// The file has no such table: the view is empty.
    pub absent: bool,
    /// v23 columns the file lacks, read as their defaults (all of them when
    /// `absent`).
    pub missing_columns: Vec<&'static str>,
}

/// What [`adapt`] did to make a file readable by the v23 queries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Adaptation {
    /// `PRAGMA schema_version` the shims were made for.
    pub schema_cookie: i64,
    /// The number in `schema_version` (first row), `None` without table or row.
    pub schema_version: Option<i64>,
    /// One entry per shimmed table, in [`READ_TABLES`] order; empty when the
    /// file has every v23 column (then nothing was created).
    pub shims: Vec<TableShim>,
}

impl Adaptation {
    /// Whether nothing had to be shimmed.
    pub fn is_exact(&self) -> bool {
        self.shims.is_empty()
    }

    /// The shim of `table`, if any.
    pub fn shim(&self, table: &str) -> Option<&TableShim> {
        self.shims.iter().find(|s| s.table == table)
    }

    /// Whether the file lacks this v23 column (or its whole table).
    pub fn lacks(&self, table: &str, column: &str) -> bool {
        self.shim(table)
            .is_some_and(|s| s.missing_columns.contains(&column))
    }

    /// Questions this file cannot truly answer, as sentences for a user
    /// ("this file is v7; `hermes-state migrate` adds …"). Defaults that are
    /// true for old files (every message active, nothing compacted) are not
    /// listed; only gaps where the default hides information the version
    /// never recorded.
    pub fn limitations(&self) -> Vec<String> {
        let version = self
            .schema_version
            .map_or_else(|| "of unknown version".to_owned(), |v| format!("v{v}"));
        let mut notes = Vec::new();
        if self.shim("session_model_usage").is_some_and(|s| s.absent) {
            notes.push(format!(
                "this file is {version}: it has no per-model usage table, so usage by model and task is empty; run `hermes-state migrate` to seed it from the sessions"
            ));
        }
        if self.lacks("sessions", "title") {
            notes.push(format!(
                "this file is {version}: sessions have no titles; run `hermes-state migrate` to add them"
            ));
        }
        let cost_gap = [
            "estimated_cost_usd",
            "cache_read_tokens",
            "billing_provider",
        ]
        .iter()
        .any(|c| self.lacks("sessions", c));
        if cost_gap {
            notes.push(format!(
                "this file is {version}: it records no cache tokens, billing route or costs; statistics show them as 0 or empty"
            ));
        }
        notes
    }
}

/// Tables every version of the store has (v1 included): their absence means a
/// damaged file, reported as such rather than shimmed into empty answers.
const REQUIRED_TABLES: [&str; 2] = ["sessions", "messages"];

/// Makes the connection's unqualified table names resolve to the v23 shape
/// (see the module doc). Cheap and a no-op when called again while the
/// schema cookie is unchanged; re-adapts after a schema change by another
/// connection. Never writes to the database file.
pub fn adapt(conn: &Connection) -> Result<Adaptation, QueryError> {
    let cookie = schema_cookie(conn)?;
    if let Some((recorded_cookie, recorded)) = recorded(conn)? {
        if recorded_cookie == cookie {
            return Ok(Adaptation {
                schema_cookie: cookie,
                schema_version: schema_version(conn)?,
                shims: recorded,
            });
        }
        drop_shims(conn, &recorded)?;
    }
    let mut shims = Vec::new();
    for (table, columns) in READ_TABLES {
        let existing = main_columns(conn, table)?;
        if existing.is_empty() && REQUIRED_TABLES.contains(table) {
            return Err(QueryError::MissingTable { table });
        }
        if existing.is_empty() {
            create_view(conn, table, &empty_view(columns))?;
            shims.push(TableShim {
                table,
                absent: true,
                missing_columns: columns.iter().map(|c| c.name).collect(),
            });
            continue;
        }
        let missing: Vec<&V23Column> = columns
            .iter()
            .filter(|c| !existing.iter().any(|e| e.eq_ignore_ascii_case(c.name)))
            .collect();
        if missing.is_empty() {
            continue;
        }
        create_view(conn, table, &padded_view(table, &existing, &missing))?;
        shims.push(TableShim {
            table,
            absent: false,
            missing_columns: missing.iter().map(|c| c.name).collect(),
        });
    }
    if !shims.is_empty() {
        record(conn, cookie, &shims)?;
    }
    Ok(Adaptation {
        schema_cookie: cookie,
        schema_version: schema_version(conn)?,
        shims,
    })
}

/// The main database's schema cookie, which every schema change by any
/// connection bumps (temp objects do not).
pub fn schema_cookie(conn: &Connection) -> Result<i64, QueryError> {
    // Cached: read before every search and every pooled read.
    conn.prepare_cached("PRAGMA main.schema_version")
        .and_then(|mut stmt| stmt.query_row([], |row| row.get(0)))
        .context("reading the schema cookie")
        .map_err(Into::into)
}

/// `SELECT version FROM schema_version LIMIT 1` of the main database, `None`
/// when the table or its row is missing.
pub(crate) fn schema_version(conn: &Connection) -> Result<Option<i64>, QueryError> {
    if main_columns(conn, "schema_version")?.is_empty() {
        return Ok(None);
    }
    conn.query_row("SELECT version FROM main.schema_version LIMIT 1", [], |r| {
        r.get::<_, Option<i64>>(0)
    })
    .optional()
    .context("reading schema_version")
    .map(Option::flatten)
    .map_err(Into::into)
}

/// Column names of a main-schema table, in on-disk order; empty when the
/// table does not exist.
fn main_columns(conn: &Connection, table: &str) -> Result<Vec<String>, QueryError> {
    let what = format!("reading the columns of {table}");
    let mut stmt = conn
        .prepare("SELECT name FROM pragma_table_info(?1, 'main')")
        .context(&what)?;
    let names = stmt
        .query_map([table], |row| row.get::<_, String>(0))
        .context(&what)?;
    names
        .collect::<Result<_, _>>()
        .context(&what)
        .map_err(Into::into)
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn padded_view(table: &str, existing: &[String], missing: &[&V23Column]) -> String {
    let columns: Vec<String> = existing
        .iter()
        .map(|c| quote(c))
        .chain(
            missing
                .iter()
                .map(|c| format!("{} AS {}", c.default, quote(c.name))),
        )
        .collect();
    format!("SELECT {} FROM main.{}", columns.join(", "), quote(table))
}

fn empty_view(columns: &[V23Column]) -> String {
    let columns: Vec<String> = columns
        .iter()
        .map(|c| format!("{} AS {}", c.default, quote(c.name)))
        .collect();
    format!("SELECT {} WHERE 0", columns.join(", "))
}

fn create_view(conn: &Connection, name: &str, select: &str) -> Result<(), QueryError> {
    conn.execute_batch(&format!("CREATE TEMP VIEW {} AS {select}", quote(name)))
        .context(&format!("creating the temp view {name}"))
        .map_err(Into::into)
}

/// Stores the cookie and the shims as the rows of the temp marker view:
/// `(schema_cookie, tbl, absent, missing)` with `missing` comma-separated.
fn record(conn: &Connection, cookie: i64, shims: &[TableShim]) -> Result<(), QueryError> {
    let rows: Vec<String> = shims
        .iter()
        .map(|s| {
            format!(
                "({cookie}, '{}', {}, '{}')",
                s.table,
                i32::from(s.absent),
                s.missing_columns.join(",")
            )
        })
        .collect();
    conn.execute_batch(&format!(
        "CREATE TEMP VIEW {MARKER}(schema_cookie, tbl, absent, missing) AS VALUES {}",
        rows.join(", ")
    ))
    .context("recording the compatibility views")
    .map_err(Into::into)
}

/// The cookie and shims recorded by an earlier [`adapt`] on this connection.
fn recorded(conn: &Connection) -> Result<Option<(i64, Vec<TableShim>)>, QueryError> {
    let exists: bool = conn
        .query_row(
            "SELECT EXISTS(SELECT 1 FROM sqlite_temp_master WHERE type = 'view' AND name = ?1)",
            [MARKER],
            |r| r.get(0),
        )
        .context("looking for compatibility views")?;
    if !exists {
        return Ok(None);
    }
    let mut stmt = conn
        .prepare(&format!(
            "SELECT schema_cookie, tbl, absent, missing FROM temp.{MARKER}"
        ))
        .context("reading the compatibility record")?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .context("reading the compatibility record")?
        .collect::<Result<Vec<_>, _>>()
        .context("reading the compatibility record")?;
    let mut cookie = -1;
    let mut shims = Vec::new();
    for (row_cookie, table, absent, missing) in rows {
        cookie = row_cookie;
        let Some((name, columns)) = READ_TABLES.iter().find(|(t, _)| *t == table) else {
            continue;
        };
        let missing_columns = columns
            .iter()
            .map(|c| c.name)
            .filter(|c| missing.split(',').any(|m| m == *c))
            .collect();
        shims.push(TableShim {
            table: name,
            absent,
            missing_columns,
        });
    }
    Ok(Some((cookie, shims)))
}

fn drop_shims(conn: &Connection, shims: &[TableShim]) -> Result<(), QueryError> {
    let mut sql = format!("DROP VIEW IF EXISTS temp.{MARKER};");
    for shim in shims {
        sql.push_str(&format!("DROP VIEW IF EXISTS temp.{};", quote(shim.table)));
    }
    conn.execute_batch(&sql)
        .context("dropping outdated compatibility views")
        .map_err(Into::into)
}
