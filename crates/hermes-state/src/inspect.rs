//! What the file is, as plain data: its classification, the objects and
//! sizes the `schema` command shows, and what an upgrade would change (the
//! `migrate --dry-run` plan). Everything here reads; nothing is upgraded.

use hermes_state_query::FtsCapabilities;
use hermes_state_schema::{FileShape, FtsLayout, detect, fts, reconcile};
use hermes_state_sqlite::Context as _;
use hermes_state_types::SCHEMA_VERSION;
use rusqlite::Connection;
use serde::Serialize;

use crate::db::SessionDb;
use crate::error::Result;

/// One table of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableInfo {
    /// Its name.
    pub name: String,
    /// Its row count (`None` when it cannot be counted, e.g. an FTS table
    /// whose tokenizer this connection lacks).
    pub rows: Option<i64>,
    /// An FTS5 (virtual) table.
    #[serde(rename = "virtual")]
    pub is_virtual: bool,
    /// A shadow table of an FTS5 table.
    pub shadow: bool,
}

/// Which FTS indexes search may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FtsInfo {
    /// `messages_fts` is served.
    pub messages_fts: bool,
    /// `messages_fts_trigram` is served.
    pub messages_fts_trigram: bool,
    /// `messages_fts_cjk` is served.
    pub messages_fts_cjk: bool,
    /// The CJK index exists, maintained and complete (served when this
    /// connection has the tokenizer).
    pub cjk_healthy: bool,
}

/// The file's shape, objects and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaInfo {
    /// `schema_version` (first row); `None` for an empty file or table.
    pub schema_version: Option<i64>,
    /// The file has no schema objects at all.
    pub empty: bool,
    /// The schema version this library writes.
    pub library_schema_version: i64,
    /// `absent`, `external`, `legacy_inline` or `legacy_content_only`.
    pub fts_layout: &'static str,
    /// `state_meta.fts_storage_version`.
    pub fts_storage_version: Option<String>,
    /// Which FTS indexes are served.
    pub fts: FtsInfo,
    /// `PRAGMA journal_mode` as SQLite reports it.
    pub journal_mode: String,
    /// The linked SQLite.
    pub sqlite_version: &'static str,
    /// `PRAGMA page_size`.
    pub page_size: Option<i64>,
    /// `PRAGMA page_count`.
    pub page_count: Option<i64>,
    /// Every table, in creation order.
    pub tables: Vec<TableInfo>,
    /// Index names.
    pub indexes: Vec<String>,
    /// Trigger names.
    pub triggers: Vec<String>,
    /// View names.
    pub views: Vec<String>,
}

/// What bringing the file to the current schema would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MigrationPlan {
    /// The stored version now.
    pub from_version: Option<i64>,
    /// The version afterwards (never lower).
    pub to_version: i64,
    /// Nothing would change.
    pub up_to_date: bool,
    /// Tables the upgrade would create.
    pub missing_tables: Vec<String>,
    /// `(table, column)` pairs the reconciler would add.
    pub missing_columns: Vec<(String, String)>,
    /// The FTS layout now.
    pub fts_layout: &'static str,
    /// The FTS index would be (re)built in the v23 layout (missing, or the
    /// v1–v10 layout).
    pub fts_rebuild: bool,
    /// The v11–v22 layout is kept; the explicit storage optimisation converts it.
    pub fts_optimize_available: bool,
}

impl SessionDb {
    /// What the file is: empty (a new store: a 0-byte file, or a database
    /// without tables), or a store with its version and FTS layout. Refuses
    /// (as the opens do) what is not a store. Read as stored, so an empty
    /// file is told as such, not as a store missing its tables.
    pub fn store_shape(&self) -> Result<FileShape> {
        let path = self.path().to_owned();
        self.read_as_stored(|conn| Ok(detect::inspect(conn, &path)?))
    }

    /// The file's shape, objects and size, as the `schema` command shows them.
    pub fn schema_info(&self) -> Result<SchemaInfo> {
        let shape = self.store_shape()?;
        let store = match &shape {
            FileShape::Store(store) => Some(store.clone()),
            FileShape::Empty => None,
        };
        let describe = |conn: &Connection| {
            let caps = FtsCapabilities::detect(conn)?;
            Ok(SchemaInfo {
                schema_version: store.as_ref().and_then(|s| s.version),
                empty: store.is_none(),
                library_schema_version: SCHEMA_VERSION,
                fts_layout: store
                    .as_ref()
                    .map_or(FtsLayout::Absent, |s| s.fts_layout)
                    .name(),
                fts_storage_version: store.as_ref().and_then(|s| s.fts_storage_version.clone()),
                fts: FtsInfo {
                    messages_fts: caps.fts,
                    messages_fts_trigram: caps.trigram,
                    messages_fts_cjk: caps.cjk_serving,
                    cjk_healthy: fts::cjk_index_healthy(conn).unwrap_or(false),
                },
                journal_mode: pragma_text(conn, "journal_mode").unwrap_or_default(),
                sqlite_version: rusqlite::version(),
                page_size: pragma_text(conn, "page_size").and_then(|p| p.parse().ok()),
                page_count: pragma_text(conn, "page_count").and_then(|p| p.parse().ok()),
                tables: tables(conn)?,
                indexes: names_of(conn, "index")?,
                triggers: names_of(conn, "trigger")?,
                views: names_of(conn, "view")?,
            })
        };
        // An empty file has no table the compatibility views could stand for.
        if store.is_none() {
            self.read_as_stored(describe)
        } else {
            self.read(describe)
        }
    }

    /// What [`SessionDb::migrate`] would change, computed without writing;
    /// `None` for an empty file (the migration would create the store).
    /// A store too new to write is refused as `migrate` refuses it
    /// ([`crate::ErrorKind::SchemaTooNew`]).
    pub fn migration_plan(&self) -> Result<Option<MigrationPlan>> {
        let FileShape::Store(store) = self.store_shape()? else {
            return Ok(None);
        };
        detect::ensure_writable(&store, self.path())?;
        let (missing_tables, missing_columns) = self.read(|conn| {
            let mut tables = Vec::new();
            let mut columns = Vec::new();
            for wanted in reconcile::wanted_tables()? {
                let live = reconcile::live_columns(conn, &wanted.name)?;
                if live.is_empty() {
                    tables.push(wanted.name.clone());
                    continue;
                }
                for column in &wanted.columns {
                    if !live.iter().any(|c| c.name == column.name) {
                        columns.push((wanted.name.clone(), column.name.clone()));
                    }
                }
            }
            Ok((tables, columns))
        })?;
        let to_version = store
            .version
            .map_or(SCHEMA_VERSION, |v| v.max(SCHEMA_VERSION));
        // The upgrade builds a missing index and replaces the v1–v10 layout
        // with the v23 one; it keeps the v11–v22 (inline) layout, which only
        // the explicit storage optimisation converts. It never creates the
        // optional CJK index in an existing file.
        let fts_rebuild = matches!(
            store.fts_layout,
            FtsLayout::Absent | FtsLayout::LegacyContentOnly
        );
        let up_to_date = store.version == Some(to_version)
            && missing_tables.is_empty()
            && missing_columns.is_empty()
            && !fts_rebuild;
        Ok(Some(MigrationPlan {
            from_version: store.version,
            to_version,
            up_to_date,
            missing_tables,
            missing_columns,
            fts_layout: store.fts_layout.name(),
            fts_rebuild,
            fts_optimize_available: store.fts_layout == FtsLayout::LegacyInline,
        }))
    }

    /// Whether this handle's connection has the `cjk_unicode61` tokenizer
    /// (built in; absent when `HERMES_CJK_FTS` switches it off).
    pub fn has_cjk_tokenizer(&self) -> Result<bool> {
        self.read(|conn| Ok(hermes_state_sqlite::connection::has_cjk_tokenizer(conn)))
    }
}

fn tables(conn: &Connection) -> Result<Vec<TableInfo>> {
    let mut stmt = conn
        .prepare("SELECT name, COALESCE(sql, '') FROM main.sqlite_master WHERE type = 'table' ORDER BY rowid")
        .context("reading the schema")?;
    let rows: Vec<(String, String)> = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .and_then(Iterator::collect)
        .context("reading the schema")?;
    // tidy: DDL text compared, never run
    let is_virtual = |sql: &str| sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL TABLE");
    let virtual_names: Vec<&str> = rows
        .iter()
        .filter(|(_, sql)| is_virtual(sql))
        .map(|(name, _)| name.as_str())
        .collect();
    Ok(rows
        .iter()
        .map(|(name, sql)| {
            let virtual_table = is_virtual(sql);
            let shadow = !virtual_table
                && virtual_names.iter().any(|v| {
                    name.strip_prefix(v)
                        .is_some_and(|rest| rest.starts_with('_'))
                });
            TableInfo {
                name: name.clone(),
                rows: conn
                    .query_row(
                        &format!(
                            "SELECT count(*) FROM main.{}",
                            reconcile::quote_identifier(name)
                        ),
                        [],
                        |row| row.get(0),
                    )
                    .ok(),
                is_virtual: virtual_table,
                shadow,
            }
        })
        .collect())
}

fn names_of(conn: &Connection, kind: &str) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare("SELECT name FROM main.sqlite_master WHERE type = ?1 AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
        .context("reading the schema")?;
    Ok(stmt
        .query_map([kind], |row| row.get(0))
        .and_then(Iterator::collect)
        .context("reading the schema")?)
}

/// A pragma's value as text (reading pragmas only: no assignment here).
fn pragma_text(conn: &Connection, pragma: &str) -> Option<String> {
    use rusqlite::types::Value;
    conn.query_row(&format!("PRAGMA {pragma}"), [], |row| {
        row.get::<_, Value>(0)
    })
    .ok()
    .map(|value| match value {
        Value::Integer(i) => i.to_string(),
        Value::Text(t) => t,
        other => format!("{other:?}"),
    })
}
