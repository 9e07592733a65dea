//! The repair of what `SessionDb::doctor` finds: it rebuilds derived data —
//! the FTS indexes, the session counters — and cuts links that cannot be
//! right (parents that do not exist, lineage cycles, duplicate titles); it
//! never modifies a message row.

use hermes_state_query::health::{
    CounterMismatch, DanglingParent, DoctorReport, counter_mismatches, dangling_parents,
    duplicate_titles, lineage_cycles, missing_fts_objects,
};
use hermes_state_schema::optimize::{self, FtsIndex};
use hermes_state_schema::{FtsLayout, connection, ddl, detect, fts};
use rusqlite::Connection;

use crate::db::{FTS_TABLES, SessionDb};
use crate::error::{Result, WriteContext};

/// Which way the repair rebuilt the FTS indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FtsRebuild {
    /// FTS5 `'rebuild'` in one transaction.
    OneShot,
    /// The gated chunked rebuild (`hermes_state_schema::optimize`).
    Background,
}

/// How [`SessionDb::repair_with`] works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairOptions {
    /// Above this many messages the FTS indexes are rebuilt in chunks that
    /// hold the write lock briefly, instead of in one transaction.
    pub background_rebuild_above: i64,
    /// Between chunks, sleep `optimize::pause_after(chunk)` so other
    /// processes' writes get through.
    pub pause_between_chunks: bool,
}

impl Default for RepairOptions {
    fn default() -> Self {
        RepairOptions {
            background_rebuild_above: 100_000,
            pause_between_chunks: true,
        }
    }
}

/// A parent link the repair cut to break a cycle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BrokenLink {
    /// The session whose `parent_session_id` was set to NULL.
    pub session_id: String,
    /// The parent it named.
    pub former_parent: String,
}

/// A title the repair cleared.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClearedTitle {
    /// The session that lost it.
    pub session_id: String,
    /// The title (kept by a newer holder).
    pub title: String,
}

/// What [`SessionDb::repair`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RepairReport {
    /// The FTS tables rebuilt.
    pub fts_rebuilt: Vec<String>,
    /// How.
    pub fts_mode: FtsRebuild,
    /// Counters set to the real values (as found before the repair).
    pub counters_fixed: Vec<CounterMismatch>,
    /// Dangling parent links set to NULL.
    pub parents_cleared: Vec<DanglingParent>,
    /// Parent links cut to break cycles.
    pub cycles_broken: Vec<BrokenLink>,
    /// Titles cleared so that each is held once.
    pub titles_cleared: Vec<ClearedTitle>,
    /// The unique title index was recreated.
    pub title_index_restored: bool,
    /// The doctor's report after the repair.
    pub after: DoctorReport,
}

impl SessionDb {
    /// [`SessionDb::repair_with`] with the default options.
    pub fn repair(&self) -> Result<RepairReport> {
        self.repair_with(&RepairOptions::default())
    }

    /// Repairs what [`SessionDb::doctor`] can repair, then checks again:
    /// sets dangling parents to NULL, cuts each lineage cycle at its oldest
    /// session, clears duplicate titles except for the most recently inserted
    /// holder (as the open does) and recreates the unique title index, sets
    /// the counters to the real values, recreates missing FTS objects and
    /// rebuilds every FTS index (in chunks on large stores). Message rows are
    /// never modified; `PRAGMA integrity_check` failures and messages of
    /// missing sessions are left for a human (see [`RepairReport::after`]).
    pub fn repair_with(&self, options: &RepairOptions) -> Result<RepairReport> {
        let (parents_cleared, cycles_broken, titles_cleared, title_index_restored, counters_fixed) =
            self.write("repairing sessions", |conn| {
                let dangling = dangling_parents(conn)?;
                for d in &dangling {
                    clear_parent(conn, &d.session_id)?;
                }
                let mut broken = Vec::new();
                for cycle in lineage_cycles(conn)? {
                    let former_parent = hermes_state_query::sessions::parent_of(conn, &cycle.closing)?.unwrap_or_default();
                    clear_parent(conn, &cycle.closing)?;
                    broken.push(BrokenLink {
                        session_id: cycle.closing,
                        former_parent,
                    });
                }
                let mut cleared = Vec::new();
                for dup in duplicate_titles(conn)? {
                    let keep = dup.holders.len() - 1;
                    cleared.extend(dup.holders[..keep].iter().map(|id| ClearedTitle {
                        session_id: id.clone(),
                        title: dup.title.clone(),
                    }));
                }
                conn.execute_batch(ddl::CLEAR_DUPLICATE_TITLES)
                    .context("clearing duplicate titles")?;
                let restored = optimize::in_transaction::restore_title_index(conn)?;
                let counters = counter_mismatches(conn)?;
                for c in &counters {
                    conn.execute(
                        "UPDATE sessions SET message_count = ?1, tool_call_count = ?2 WHERE id = ?3",
                        rusqlite::params![c.real_message_count, c.real_tool_call_count, c.session_id],
                    )
                    .context("fixing session counters")?;
                }
                Ok((dangling, broken, cleared, restored, counters))
            })?;
        let (fts_rebuilt, fts_mode) = self.rebuild_all_fts(options)?;
        Ok(RepairReport {
            fts_rebuilt,
            fts_mode,
            counters_fixed,
            parents_cleared,
            cycles_broken,
            titles_cleared,
            title_index_restored,
            after: self.doctor()?,
        })
    }

    /// Recreates missing FTS objects, then rebuilds every index this handle
    /// can tokenize, in one transaction or in gated chunks.
    fn rebuild_all_fts(&self, options: &RepairOptions) -> Result<(Vec<String>, FtsRebuild)> {
        let (tokenizer, messages, layout) = self.read(|conn| {
            let messages: i64 = conn
                .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
                .context("counting messages")?;
            Ok((
                connection::has_cjk_tokenizer(conn),
                messages,
                detect::fts_layout(conn)?,
            ))
        })?;
        let background =
            messages > options.background_rebuild_above && layout == FtsLayout::External;
        let rebuilt = self.write("rebuilding the FTS indexes", |conn| {
            if !missing_fts_objects(conn)?.is_empty() {
                fts::set_up(conn, fts::count_fts_triggers(conn)?, tokenizer, false)?;
            }
            if background {
                optimize::in_transaction::begin_rebuild(
                    conn,
                    tokenizer && fts::cjk_index_live(conn)?,
                )?;
            } else {
                for table in ["messages_fts", "messages_fts_trigram"] {
                    if detect::object_exists(conn, "table", table)? {
                        fts::rebuild(conn, table)?;
                    }
                }
                conn.execute(
                    "DELETE FROM state_meta WHERE key IN (?1, ?2)",
                    [fts::REBUILD_HIGH_WATER_KEY, fts::REBUILD_PROGRESS_KEY],
                )
                .context("clearing the rebuild markers")?;
                // Only a live CJK index is rebuilt: a stale one keeps its
                // triggers dropped (other writers may lack the tokenizer)
                // until the explicit CJK rebuild.
                if tokenizer && fts::cjk_index_live(conn)? {
                    fts::reset_cjk_index(conn)?;
                }
            }
            let mut tables = Vec::new();
            for table in FTS_TABLES {
                let usable = table != "messages_fts_cjk" || tokenizer;
                if usable && detect::object_exists(conn, "table", table)? {
                    tables.push(table.to_owned());
                }
            }
            Ok(tables)
        })?;
        if !background {
            return Ok((rebuilt, FtsRebuild::OneShot));
        }
        let families: &[FtsIndex] = if tokenizer {
            &[FtsIndex::Base, FtsIndex::Cjk]
        } else {
            &[FtsIndex::Base]
        };
        for &index in families {
            loop {
                let step = self.write("backfilling an FTS index", |conn| {
                    Ok(optimize::in_transaction::backfill_chunk(
                        conn,
                        index,
                        optimize::CHUNK_IDS,
                    )?)
                })?;
                if step.done {
                    break;
                }
                if options.pause_between_chunks {
                    std::thread::sleep(optimize::pause_after(step.elapsed));
                }
            }
        }
        Ok((rebuilt, FtsRebuild::Background))
    }
}

fn clear_parent(conn: &Connection, session_id: &str) -> Result<()> {
    conn.execute(
        "UPDATE sessions SET parent_session_id = NULL WHERE id = ?1",
        [session_id],
    )
    .context("clearing a parent link")?;
    Ok(())
}
