//! The conversion's last step: stamping the v23 storage once nothing of the
//! legacy layout is left.

use rusqlite::Connection;

use super::meta::{delete_meta, meta};
use super::refusal::storage_too_new;
use super::trash::has_trash;
use super::{OPTIMIZE_AVAILABLE_KEY, STORAGE_VERSION_KEY};
use crate::ddl;
use crate::detect;
use crate::error::SchemaError;
use crate::fts::{REBUILD_HIGH_WATER_KEY, REBUILD_PROGRESS_KEY};
use hermes_state_sqlite::Context as SqliteContext;

/// Final bookkeeping (`migrations.md` §3.3 "Settle"): upserts
/// `fts_storage_version = '1'`, deletes `fts_optimize_available` (and a
/// stray progress key), and raises `schema_version` to 23 where it is
/// lower. Refuses — returns `false`, writing nothing — while the layout is
/// legacy, a base backfill is pending, a trash table remains, or the
/// stored FTS storage version is newer than ours.
pub fn settle(conn: &Connection) -> Result<bool, SchemaError> {
    if detect::fts_layout(conn)?.is_legacy()
        || meta(conn, REBUILD_HIGH_WATER_KEY)?.is_some()
        || has_trash(conn)?
        || storage_too_new(conn)?
    {
        return Ok(false);
    }
    conn.execute(ddl::UPSERT_META, [STORAGE_VERSION_KEY, "1"])
        .context("stamping fts_storage_version")?;
    delete_meta(conn, &[OPTIMIZE_AVAILABLE_KEY, REBUILD_PROGRESS_KEY])?;
    conn.execute(
        "UPDATE schema_version SET version = ?1 WHERE version < ?1",
        [hermes_state_types::SCHEMA_VERSION],
    )
    .context("raising the schema version")?;
    Ok(true)
}
