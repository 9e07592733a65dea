//! Telling what a file is before anything is written to it.
//!
//! Classification only reads. It decides whether the file is new, a store this
//! library may write, a store too new to write, or something else entirely (a
//! foreign SQLite file, random bytes) that must be left byte-for-byte untouched.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use crate::error::SchemaError;
use hermes_state_sqlite::Context as SqliteContext;

/// The newest stored `schema_version` this library writes to. Versions 24 and
/// 25 were verified (`migrations.md` §5) to be "v23 plus extras" that v23 code
/// writes safely and that v24/v25 code reads back; anything newer is unverified.
pub const NEWEST_WRITABLE_VERSION: i64 = 25;

/// The newest FTS storage layout this library understands (`state_meta.fts_storage_version`).
pub const NEWEST_FTS_STORAGE_VERSION: i64 = hermes_state_types::FTS_STORAGE_VERSION;

/// Which generation of full-text objects a file carries (`migrations.md` §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FtsLayout {
    /// No `messages_fts` table.
    Absent,
    /// The v23 external-content layout over `content, tool_name, tool_calls`.
    External,
    /// The v11–v22 inline layout (its own copy of the concatenated text).
    LegacyInline,
    /// The v1–v10 external-content layout indexing `content` only.
    LegacyContentOnly,
}

impl FtsLayout {
    /// Its name in reports: `absent`, `external`, `legacy_inline`,
    /// `legacy_content_only`.
    pub fn name(self) -> &'static str {
        match self {
            FtsLayout::Absent => "absent",
            FtsLayout::External => "external",
            FtsLayout::LegacyInline => "legacy_inline",
            FtsLayout::LegacyContentOnly => "legacy_content_only",
        }
    }

    /// Whether the open treats this layout as "legacy" (`schema-v23.md` §6.7):
    /// the stored SQL of `messages_fts` does not mention `tool_name`.
    pub fn is_legacy(self) -> bool {
        matches!(self, FtsLayout::LegacyInline | FtsLayout::LegacyContentOnly)
    }
}

/// What an existing store looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreShape {
    /// The stored `schema_version` (first row), `None` when the table is empty.
    pub version: Option<i64>,
    /// `state_meta.fts_storage_version`, as text.
    pub fts_storage_version: Option<String>,
    /// The FTS generation found.
    pub fts_layout: FtsLayout,
}

/// What a file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileShape {
    /// No schema objects at all (a missing or zero-length file is a new database, as in SQLite).
    Empty,
    /// A store written by the original or by this library.
    Store(StoreShape),
}

/// Reads the file's schema and classifies it; refuses foreign SQLite files.
///
/// Errors: [`SchemaError::ForeignDatabase`] for a SQLite file with tables but
/// no `schema_version`; SQLite's `NOTADB` / `CORRUPT` errors for files that are
/// not databases or are damaged.
pub fn inspect(conn: &Connection, path: &Path) -> Result<FileShape, SchemaError> {
    let names = object_names(conn)?;
    if names.is_empty() {
        refuse_a_pageless_file(conn, path)?;
        return Ok(FileShape::Empty);
    }
    if !names
        .iter()
        .any(|(kind, name)| kind == "table" && name == "schema_version")
    {
        return Err(SchemaError::ForeignDatabase {
            path: path.to_owned(),
        });
    }
    // Read as stored: a damaged row (NULL, text, a blob) is a damaged
    // store, not a failed conversion of kind `Other`.
    let stored: Option<rusqlite::types::Value> = conn
        .query_row("SELECT version FROM schema_version LIMIT 1", [], |row| {
            row.get(0)
        })
        .optional()
        .context("reading schema_version")?;
    let version = match stored {
        None => None,
        Some(rusqlite::types::Value::Integer(version)) => Some(version),
        Some(other) => {
            return Err(SchemaError::Corrupt {
                path: path.to_owned(),
                what: format!("schema_version holds {other:?}, not a version number"),
            });
        }
    };
    let has_meta = names
        .iter()
        .any(|(kind, name)| kind == "table" && name == "state_meta");
    let fts_storage_version = if has_meta {
        conn.query_row(
            "SELECT value FROM state_meta WHERE key = 'fts_storage_version'",
            [],
            |row| row.get::<_, Option<String>>(0),
        )
        .optional()
        .context("reading fts_storage_version")?
        .flatten()
    } else {
        None
    };
    Ok(FileShape::Store(StoreShape {
        version,
        fts_storage_version,
        fts_layout: fts_layout(conn)?,
    }))
}

/// Refuses a file that has bytes but no page for SQLite.
///
/// SQLite reads a 1-byte file as a database of zero pages, with no schema,
/// exactly like a new empty file, and its first write replaces the byte with
/// a whole database. Such a file was never written by SQLite (its smallest
/// database is one page): it is a damaged or foreign file, and is refused
/// untouched. A zero-length or missing file is a new store, and a real empty
/// database (one page, no objects) is too. Found by truncating a store
/// (`hostile::truncations_at_and_between_page_boundaries_*` of the facade).
fn refuse_a_pageless_file(conn: &Connection, path: &Path) -> Result<(), SchemaError> {
    let pages: i64 = conn
        .query_row("PRAGMA main.page_count", [], |row| row.get(0))
        .context("counting the pages")?;
    if pages > 0 {
        return Ok(());
    }
    // Only the length, through `stat`: the file is not opened here.
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() > 0 => Err(SchemaError::NotADatabase {
            path: path.to_owned(),
            why: format!("{} bytes that hold no database page", meta.len()),
        }),
        _ => Ok(()),
    }
}

/// Refuses to write a store newer than this library understands.
///
/// The number in `schema_version` is never lowered by this library; this check
/// keeps it from writing at all into files whose newer shape it cannot keep
/// consistent (versions above [`NEWEST_WRITABLE_VERSION`], FTS layouts above
/// [`NEWEST_FTS_STORAGE_VERSION`]). Such files can still be opened read-only.
pub fn ensure_writable(shape: &StoreShape, path: &Path) -> Result<(), SchemaError> {
    if let Some(version) = shape.version.filter(|v| *v > NEWEST_WRITABLE_VERSION) {
        return Err(SchemaError::SchemaTooNew {
            path: path.to_owned(),
            what: format!("schema_version {version}"),
            supported: hermes_state_types::SCHEMA_VERSION,
        });
    }
    let fts_version = shape
        .fts_storage_version
        .as_deref()
        .and_then(|v| v.trim().parse::<i64>().ok());
    if let Some(fts_version) = fts_version.filter(|v| *v > NEWEST_FTS_STORAGE_VERSION) {
        return Err(SchemaError::SchemaTooNew {
            path: path.to_owned(),
            what: format!("fts_storage_version {fts_version}"),
            supported: hermes_state_types::SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// `(type, name)` of every schema object, in rowid order.
pub fn object_names(conn: &Connection) -> Result<Vec<(String, String)>, SchemaError> {
    let mut stmt = conn
        .prepare("SELECT type, name FROM sqlite_master ORDER BY rowid")
        .context("reading the schema")?;
    let rows = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .context("reading the schema")?;
    rows.collect::<Result<_, _>>()
        .context("reading the schema")
        .map_err(Into::into)
}

/// Whether a schema object of this type and name exists.
pub fn object_exists(conn: &Connection, kind: &str, name: &str) -> Result<bool, SchemaError> {
    Ok(hermes_state_sqlite::catalog::object_exists(
        conn, kind, name,
    )?)
}

/// The stored SQL of a schema object, if it exists.
pub fn object_sql(conn: &Connection, name: &str) -> Result<Option<String>, SchemaError> {
    conn.query_row(
        "SELECT sql FROM sqlite_master WHERE name = ?1",
        [name],
        |row| row.get(0),
    )
    .optional()
    .context("reading the schema")
    .map(Option::flatten)
    .map_err(Into::into)
}

/// Which FTS generation the file carries.
pub fn fts_layout(conn: &Connection) -> Result<FtsLayout, SchemaError> {
    let Some(sql) = object_sql(conn, "messages_fts")? else {
        return Ok(FtsLayout::Absent);
    };
    if sql.contains("tool_name") {
        return Ok(FtsLayout::External);
    }
    if object_exists(conn, "table", "messages_fts_content")? {
        Ok(FtsLayout::LegacyInline)
    } else {
        Ok(FtsLayout::LegacyContentOnly)
    }
}
