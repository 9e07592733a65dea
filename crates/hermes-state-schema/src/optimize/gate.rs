//! Claiming a gated backfill: which tables and keys make up an index family,
//! and the steps that empty a family and set `H = MAX(messages.id)`, `P = 0`
//! in the same transaction (see "The gate" in the module documentation).

use rusqlite::Connection;

use super::meta::{delete_meta, set_meta};
use crate::detect::{self, FtsLayout};
use crate::error::SchemaError;
use crate::fts::{
    CJK_HIGH_WATER_KEY, CJK_PROGRESS_KEY, CJK_STALE_KEY, REBUILD_HIGH_WATER_KEY,
    REBUILD_PROGRESS_KEY,
};
use hermes_state_sqlite::Context as SqliteContext;

/// Which gated index family a step works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FtsIndex {
    /// `messages_fts` and `messages_fts_trigram` (gate `fts_rebuild_*`).
    Base,
    /// `messages_fts_cjk` (gate `fts_cjk_rebuild_*`).
    Cjk,
}

impl FtsIndex {
    /// `(H key, P key)` of the family's gate.
    pub(super) fn keys(self) -> (&'static str, &'static str) {
        match self {
            FtsIndex::Base => (REBUILD_HIGH_WATER_KEY, REBUILD_PROGRESS_KEY),
            FtsIndex::Cjk => (CJK_HIGH_WATER_KEY, CJK_PROGRESS_KEY),
        }
    }

    /// `(table, skips tool rows)` of the family.
    fn tables(self) -> &'static [(&'static str, bool)] {
        match self {
            FtsIndex::Base => &[("messages_fts", false), ("messages_fts_trigram", true)],
            FtsIndex::Cjk => &[("messages_fts_cjk", true)],
        }
    }

    /// The family's tables present in the file, in the order of
    /// [`FtsIndex::tables`] (the first one's count is the step's report).
    pub(super) fn existing_tables(
        self,
        conn: &Connection,
    ) -> Result<Vec<(&'static str, bool)>, SchemaError> {
        let mut found = Vec::new();
        for &(table, skip_tool) in self.tables() {
            if detect::object_exists(conn, "table", table)? {
                found.push((table, skip_tool));
            }
        }
        Ok(found)
    }
}

/// Sets `H = MAX(messages.id)` (0 when empty) and `P = 0`; returns `H`.
pub(super) fn claim_keys(conn: &Connection, index: FtsIndex) -> Result<i64, SchemaError> {
    let (high_key, progress_key) = index.keys();
    let high_water: i64 = conn
        .query_row("SELECT COALESCE(MAX(id), 0) FROM messages", [], |r| {
            r.get(0)
        })
        .context("reading messages")?;
    set_meta(conn, high_key, high_water)?;
    set_meta(conn, progress_key, 0)?;
    Ok(high_water)
}

/// Empties the base and trigram indexes (`'delete-all'`) and claims a
/// gated backfill of every row; with `cjk_tokenizer`, also resets an
/// existing CJK index the same way ([`reset_cjk`]). Returns `H`, or
/// `None` (nothing done) when the layout is not v23.
pub fn begin_rebuild(conn: &Connection, cjk_tokenizer: bool) -> Result<Option<i64>, SchemaError> {
    if detect::fts_layout(conn)? != FtsLayout::External {
        return Ok(None);
    }
    for (table, _) in FtsIndex::Base.existing_tables(conn)? {
        conn.execute_batch(&format!(
            "INSERT INTO {table}({table}) VALUES('delete-all')"
        ))
        .context("emptying an FTS index")?;
    }
    let high_water = claim_keys(conn, FtsIndex::Base)?;
    if cjk_tokenizer && detect::object_exists(conn, "table", "messages_fts_cjk")? {
        reset_cjk(conn)?;
    }
    Ok(Some(high_water))
}

/// Recreates the CJK index empty, with a gated backfill claimed
/// (`schema-v23.md` §6.6): drops its triggers, table, view and the three
/// CJK keys; creates view and table; if `messages` has a non-`tool` row,
/// sets `fts_cjk_rebuild_high_water = MAX(messages.id)` and progress 0;
/// creates the triggers. Needs the tokenizer. Returns `H` if claimed.
pub fn reset_cjk(conn: &Connection) -> Result<Option<i64>, SchemaError> {
    crate::fts::drop_cjk_index(conn)?;
    delete_meta(conn, &[CJK_STALE_KEY, CJK_HIGH_WATER_KEY, CJK_PROGRESS_KEY])?;
    let statements = crate::fts::cjk_ddl();
    let (objects, triggers) = statements.split_at(2);
    for statement in objects {
        conn.execute_batch(statement)
            .context("creating the CJK index")?;
    }
    let has_rows: bool = conn
        .query_row(
            "SELECT EXISTS(SELECT 1 FROM messages WHERE role <> 'tool')",
            [],
            |r| r.get(0),
        )
        .context("reading messages")?;
    let high_water = if has_rows {
        Some(claim_keys(conn, FtsIndex::Cjk)?)
    } else {
        None
    };
    for statement in triggers {
        conn.execute_batch(statement)
            .context("creating the CJK triggers")?;
    }
    Ok(high_water)
}

/// Empties a family and claims a fresh backfill; returns the new `H`. For a
/// gate whose state is unknown (an `H` without its `P`).
pub(super) fn restart(conn: &Connection, index: FtsIndex) -> Result<Option<i64>, SchemaError> {
    match index {
        FtsIndex::Base => begin_rebuild(conn, false),
        FtsIndex::Cjk if detect::object_exists(conn, "table", "messages_fts_cjk")? => {
            reset_cjk(conn)
        }
        FtsIndex::Cjk => {
            delete_meta(conn, &[CJK_HIGH_WATER_KEY, CJK_PROGRESS_KEY])?;
            Ok(None)
        }
    }
}
