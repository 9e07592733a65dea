//! The declarative column reconciler (`migrations.md` §3.1).
//!
//! The schema script is the declaration: whatever columns its tables have are
//! the wanted columns. On every writable open, each live table is compared with
//! it **by column name only**, and missing columns are appended with
//! `ALTER TABLE … ADD COLUMN`. Nothing is ever dropped, retyped or reordered, so
//! files written by older, newer or off-main builds keep everything they hold.
//!
//! Racing processes are harmless: a column another process added first makes
//! the `ALTER` fail with "duplicate column", which is skipped. In this library
//! the reconciler also runs inside the open's write transaction, so two
//! processes never interleave here at all.

use std::sync::OnceLock;

use rusqlite::Connection;

use crate::ddl;
use crate::error::SchemaError;
use hermes_state_sqlite::Context as SqliteContext;

/// One wanted column: its name and the definition an `ADD COLUMN` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantedColumn {
    /// Column name.
    pub name: String,
    /// Declared type, then `NOT NULL` (unless a primary-key member), then `DEFAULT x`.
    pub definition: String,
}

/// The wanted columns of one table, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantedTable {
    /// Table name.
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<WantedColumn>,
}

/// A column the reconciler added.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AddedColumn {
    /// Table name.
    pub table: String,
    /// Column name.
    pub column: String,
}

/// The wanted columns of every table of the main schema script, computed once
/// per process by running the script in a private in-memory database, exactly
/// as the original derives them.
pub fn wanted_tables() -> Result<&'static [WantedTable], SchemaError> {
    static WANTED: OnceLock<Vec<WantedTable>> = OnceLock::new();
    if let Some(wanted) = WANTED.get() {
        return Ok(wanted);
    }
    let computed = compute_wanted_tables()?;
    Ok(WANTED.get_or_init(|| computed))
}

fn compute_wanted_tables() -> Result<Vec<WantedTable>, SchemaError> {
    let scratch = Connection::open_in_memory().context("opening a scratch database")?;
    for (_, create) in ddl::TABLES {
        scratch
            .execute_batch(create)
            .context("running the schema script in memory")?;
    }
    ddl::TABLES
        .iter()
        .map(|(table, _)| {
            let columns = live_columns(&scratch, table)?
                .into_iter()
                .map(|info| WantedColumn {
                    definition: info.definition(),
                    name: info.name,
                })
                .collect();
            Ok(WantedTable {
                name: (*table).to_owned(),
                columns,
            })
        })
        .collect()
}

/// One row of `PRAGMA table_info`.
#[derive(Debug, Clone)]
pub struct ColumnInfo {
    /// Column name.
    pub name: String,
    /// Declared type (may be empty).
    pub declared_type: String,
    /// Whether NOT NULL is declared.
    pub not_null: bool,
    /// SQLite's stored default text, verbatim.
    pub default: Option<String>,
    /// Position in the primary key (0 = not a member).
    pub pk: i64,
}

impl ColumnInfo {
    fn definition(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !self.declared_type.is_empty() {
            parts.push(self.declared_type.clone());
        }
        if self.not_null && self.pk == 0 {
            parts.push("NOT NULL".to_owned());
        }
        if let Some(default) = &self.default {
            parts.push(format!("DEFAULT {default}"));
        }
        parts.join(" ")
    }
}

/// The live columns of a table (`PRAGMA table_info`), empty when it does not exist.
pub fn live_columns(conn: &Connection, table: &str) -> Result<Vec<ColumnInfo>, SchemaError> {
    let mut stmt = conn
        .prepare("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1, 'main') ORDER BY cid")
        .context("reading table columns")?;
    let rows = stmt
        .query_map([table], |row| {
            Ok(ColumnInfo {
                name: row.get(0)?,
                declared_type: row.get(1)?,
                not_null: row.get::<_, i64>(2)? != 0,
                default: row.get(3)?,
                pk: row.get(4)?,
            })
        })
        .context("reading table columns")?;
    rows.collect::<Result<_, _>>()
        .context("reading table columns")
        .map_err(Into::into)
}

/// Appends every wanted column missing from the live tables; returns what was added.
///
/// A table that does not exist is skipped (the main script creates it whole).
/// An `ALTER` that SQLite refuses for a reason other than a lock is skipped as
/// the original does (e.g. a NOT NULL column without default on a non-empty
/// table); a lock error is returned so the caller can retry the whole open.
pub fn reconcile_columns(conn: &Connection) -> Result<Vec<AddedColumn>, SchemaError> {
    let mut added = Vec::new();
    for table in wanted_tables()? {
        let live = live_columns(conn, &table.name)?;
        if live.is_empty() {
            continue;
        }
        for column in &table.columns {
            if live.iter().any(|c| c.name == column.name) {
                continue;
            }
            let sql = format!(
                "ALTER TABLE {} ADD COLUMN {} {}",
                quote_identifier(&table.name),
                quote_identifier(&column.name),
                column.definition
            );
            match conn.execute_batch(sql.trim_end()) {
                Ok(()) => added.push(AddedColumn {
                    table: table.name.clone(),
                    column: column.name.clone(),
                }),
                Err(error)
                    if hermes_state_sqlite::sqlite_error_kind(&error)
                        == hermes_state_types::ErrorKind::Busy =>
                {
                    return Err(SchemaError::sqlite(
                        format!("adding {}.{}", table.name, column.name),
                        error,
                    ));
                }
                Err(_) => {}
            }
        }
    }
    Ok(added)
}

/// Quotes an SQL identifier with double quotes, doubling any inside.
pub fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
