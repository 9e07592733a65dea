//! The conversion's first step: the legacy FTS layout demoted to plain
//! tables awaiting teardown, and the empty v23 objects created with a
//! backfill of everything claimed, in one transaction.

use rusqlite::Connection;

use super::OPTIMIZE_AVAILABLE_KEY;
use super::gate::{FtsIndex, claim_keys};
use super::meta::{delete_meta, meta};
use super::trash::{free_trash_name, has_trash, table_names};
use crate::ddl;
use crate::detect::{self, FtsLayout};
use crate::error::SchemaError;
use crate::fts::REBUILD_HIGH_WATER_KEY;
use crate::reconcile::quote_identifier;
use hermes_state_sqlite::Context as SqliteContext;

/// The `sqlite_master` rows of the legacy virtual tables (after `DELETE` or
/// `SELECT 1`).
const LEGACY_VTABLE_ROWS: &str = "FROM sqlite_master WHERE type = 'table' AND name IN ('messages_fts', 'messages_fts_trigram') AND sql LIKE 'CREATE VIRTUAL TABLE%'";

/// The shadow tables left by the legacy virtual tables. The underscores are
/// escaped (the spec's pattern leaves them as wildcards), and the CJK
/// family is excluded: it is an independent v23 index, and renaming its
/// virtual table would drag its shadow tables along.
const SHADOW_TABLES: &str = "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'messages\\_fts\\_%' ESCAPE '\\' AND name NOT LIKE 'messages\\_fts\\_cjk%' ESCAPE '\\' ORDER BY name";

/// Demotes a legacy (inline, or content-only) FTS layout: drops the six
/// FTS triggers and the trigram view; deletes the `sqlite_master` rows of
/// the `messages_fts` / `messages_fts_trigram` virtual tables under
/// `PRAGMA writable_schema=ON` (then `RESET`), so that no FTS5 code runs
/// over their possibly huge shadow tables; renames those shadow tables
/// to `fts_v22_trash_<name>` (plain tables now, emptied later in batches
/// by [`super::in_transaction::teardown_trash`]); creates the empty v23
/// objects; claims the backfill (`H = MAX(messages.id)`, `P = 0`) and
/// deletes `fts_optimize_available`. All in the caller's transaction, so a
/// crash leaves either the legacy layout or the claimed v23 one.
///
/// Returns `H`, or `None` (nothing done) when the layout is not legacy.
pub fn demote_legacy(conn: &Connection) -> Result<Option<i64>, SchemaError> {
    if !detect::fts_layout(conn)?.is_legacy() {
        return Ok(None);
    }
    for name in ddl::FTS_TRIGGER_NAMES {
        conn.execute_batch(&format!("DROP TRIGGER IF EXISTS {name}"))
            .context("dropping a legacy FTS trigger")?;
    }
    conn.execute_batch("DROP VIEW IF EXISTS messages_fts_trigram_src")
        .context("dropping the trigram view")?;
    let virtual_rows: bool = conn
        .query_row(
            &format!("SELECT EXISTS(SELECT 1 {LEGACY_VTABLE_ROWS})"),
            [],
            |r| r.get(0),
        )
        .context("reading the schema")?;
    if virtual_rows {
        conn.execute_batch("PRAGMA writable_schema=ON")
            .context("enabling writable_schema")?;
        let deleted = conn.execute(&format!("DELETE {LEGACY_VTABLE_ROWS}"), []);
        // Always leave writable_schema, and reload the schema, whatever happened.
        let reset = conn.execute_batch("PRAGMA writable_schema=RESET");
        deleted.context("removing the legacy FTS tables from the schema")?;
        reset.context("resetting writable_schema")?;
        for name in table_names(conn, SHADOW_TABLES)? {
            let target = free_trash_name(conn, &name)?;
            conn.execute_batch(&format!(
                "ALTER TABLE {} RENAME TO {}",
                quote_identifier(&name),
                quote_identifier(&target)
            ))
            .context("renaming a legacy FTS shadow table")?;
        }
    }
    create_v23_objects(conn)?;
    let high_water = claim_keys(conn, FtsIndex::Base)?;
    delete_meta(conn, &[OPTIMIZE_AVAILABLE_KEY])?;
    Ok(Some(high_water))
}

/// Outcome of the conversion's first step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    /// A legacy layout was demoted; the backfill's `H`.
    Demoted(i64),
    /// The base index was missing mid-conversion and recreated empty; `H`.
    Recreated(i64),
    /// Neither: the conversion continues where it was.
    Nothing,
}

/// The conversion's first step: demote a legacy layout, or, when the base
/// index is missing while the conversion is unfinished (a pending key or
/// trash tables), recreate it empty and claim a backfill of everything.
pub(super) fn claim(conn: &Connection) -> Result<Claim, SchemaError> {
    if let Some(high_water) = demote_legacy(conn)? {
        return Ok(Claim::Demoted(high_water));
    }
    if detect::fts_layout(conn)? == FtsLayout::Absent
        && (meta(conn, REBUILD_HIGH_WATER_KEY)?.is_some() || has_trash(conn)?)
    {
        create_v23_objects(conn)?;
        return Ok(Claim::Recreated(claim_keys(conn, FtsIndex::Base)?));
    }
    Ok(Claim::Nothing)
}

fn create_v23_objects(conn: &Connection) -> Result<(), SchemaError> {
    for statement in ddl::FTS_BASE.iter().chain(ddl::FTS_TRIGRAM.iter()) {
        conn.execute_batch(statement)
            .context("creating the v23 FTS objects")?;
    }
    Ok(())
}
