//! Why a maintenance run does nothing at all: checked once, before its first
//! transaction, so a refused run writes nothing.

use rusqlite::{Connection, MAIN_DB};

use super::STORAGE_VERSION_KEY;
use super::meta::meta_text;
use crate::detect;
use crate::error::SchemaError;
use hermes_state_sqlite::Context as SqliteContext;

/// Why a maintenance run did nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The connection cannot write the file (`"read_only"`).
    ReadOnly,
    /// SQLite lacks FTS5 (`"fts5_unavailable"`).
    Fts5Unavailable,
    /// `fts_storage_version` is newer than this library's layout: its FTS
    /// objects are not ours to rebuild.
    NewerFtsStorage,
    /// The background rebuild needs the v23 layout; the file still has the
    /// legacy one (run [`super::optimize_fts_storage`]).
    LegacyLayout,
    /// The file has no FTS index to rebuild.
    NoFtsIndex,
}

impl Refusal {
    /// The original's `reason` text, where it has one.
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::ReadOnly => "read_only",
            Refusal::Fts5Unavailable => "fts5_unavailable",
            Refusal::NewerFtsStorage => "fts_storage_too_new",
            Refusal::LegacyLayout => "legacy_layout",
            Refusal::NoFtsIndex => "no_fts_index",
        }
    }
}

/// Why nothing may run on this connection, if anything: it is read-only,
/// SQLite lacks FTS5, or the FTS storage is newer than ours.
pub(super) fn refusal(conn: &Connection) -> Result<Option<Refusal>, SchemaError> {
    if conn
        .is_readonly(MAIN_DB)
        .context("checking the connection")?
    {
        return Ok(Some(Refusal::ReadOnly));
    }
    let fts5 = conn
        .execute_batch(
            "CREATE VIRTUAL TABLE temp._hermes_fts5_probe USING fts5(x); DROP TABLE temp._hermes_fts5_probe;",
        )
        .is_ok();
    if !fts5 {
        return Ok(Some(Refusal::Fts5Unavailable));
    }
    if storage_too_new(conn)? {
        return Ok(Some(Refusal::NewerFtsStorage));
    }
    Ok(None)
}

/// Whether `fts_storage_version` names a layout newer than this library's.
pub(super) fn storage_too_new(conn: &Connection) -> Result<bool, SchemaError> {
    Ok(meta_text(conn, STORAGE_VERSION_KEY)?
        .and_then(|v| v.trim().parse::<i64>().ok())
        .is_some_and(|v| v > detect::NEWEST_FTS_STORAGE_VERSION))
}
