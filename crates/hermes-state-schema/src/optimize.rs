//! FTS storage maintenance that never holds the write lock for long: the
//! explicit legacy → v23 conversion (`migrations.md` §3.3, the CLI's
//! `optimize-storage`) and the gated background rebuild it is built on
//! (`schema-v23.md` §6.2).
//!
//! # The gate
//!
//! Every v23 FTS trigger only touches a message whose id is *in* the index:
//! `id > H` or `id <= P`, where `H = fts_rebuild_high_water` and
//! `P = fts_rebuild_progress` (`fts_cjk_rebuild_*` for the CJK index). A
//! pending rebuild empties the index, sets `H = MAX(messages.id)` and `P = 0`
//! in one transaction; from then on the triggers index new rows (`id > H`)
//! and the backfill raises `P` chunk by chunk, inserting the rows of
//! `(P, P + 500]` and the new `P` in the same transaction. A row is therefore
//! indexed exactly once, a delete or update of a not-yet-backfilled row never
//! sends FTS5 a `'delete'` for text it does not hold, and a process killed at
//! any point leaves a state the next run continues from. When `P` reaches `H`
//! both keys are deleted and the triggers act on every row again.
//!
//! # Transactions
//!
//! Every step of the module-level functions is its own short
//! `BEGIN IMMEDIATE` transaction, retried on lock errors like every write
//! (`hermes_state_sqlite::transaction::immediate_with_retries`), so writers of other processes interleave between
//! chunks. Callers that already own a write transaction (the facade's write
//! path) use the same steps from [`in_transaction`].
//!
//! Pausing between chunks is the caller's business: a background thread
//! should sleep [`pause_after`] the chunk's duration (the original's
//! `max(0.2 s, 4 × chunk)`); a CLI showing progress may go faster. The
//! progress callbacks of [`optimize_fts_storage`] and
//! [`rebuild_in_background`] run between transactions, so sleeping in them
//! lets other writers in.
//!
//! # One-shot `'rebuild'` or background rebuild?
//!
//! FTS5's `'rebuild'` ([`crate::fts::rebuild`]) re-indexes everything in one
//! transaction: simplest, and search stays complete throughout, but it holds
//! the write lock for the whole pass (seconds to minutes on a large store),
//! so other processes' writes give up after their retries. Use it for small
//! stores and when nothing else is running. [`rebuild_in_background`] holds
//! the lock for one chunk at a time and is resumable, at the price of search
//! results that miss the not-yet-backfilled range (the search supplement of
//! `api.md` §8.7 covers it with a LIKE scan) until it finishes. Use it on a
//! large store that live processes keep writing to.

use std::time::{Duration, Instant};

use rusqlite::{Connection, MAIN_DB, OptionalExtension};

use crate::ddl;
use crate::detect::{self, FtsLayout};
use crate::error::SchemaError;
use crate::fts::{
    CJK_HIGH_WATER_KEY, CJK_PROGRESS_KEY, CJK_STALE_KEY, REBUILD_HIGH_WATER_KEY,
    REBUILD_PROGRESS_KEY,
};
use crate::reconcile::quote_identifier;
use hermes_state_sqlite::Context as SqliteContext;
use hermes_state_sqlite::connection::has_cjk_tokenizer;
use hermes_state_sqlite::transaction;

/// Ids per backfill transaction (the original's chunk).
pub const CHUNK_IDS: i64 = 500;
/// Rows deleted per teardown transaction.
pub const TEARDOWN_BATCH: i64 = 500;
/// Prefix of the demoted legacy shadow tables awaiting teardown.
pub const TRASH_PREFIX: &str = "fts_v22_trash_";
/// Meta keys of the conversion (`schema-v23.md` §8), defined in the SQLite base.
pub use hermes_state_sqlite::names::{
    FTS_OPTIMIZE_AVAILABLE_KEY as OPTIMIZE_AVAILABLE_KEY,
    FTS_STORAGE_VERSION_KEY as STORAGE_VERSION_KEY,
};
/// Shortest pause between chunks of a background backfill.
pub const MIN_PAUSE: Duration = Duration::from_millis(200);
/// Half-width of the id window re-checked when a backfill finishes.
const BOUNDARY_WINDOW: i64 = 1000;

/// The original's pause after a chunk: `max(0.2 s, 4 × chunk duration)`, so a
/// background backfill holds the write lock at most a fifth of the time.
pub fn pause_after(chunk: Duration) -> Duration {
    (chunk * 4).max(MIN_PAUSE)
}

/// Which gated index family a step works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FtsIndex {
    /// `messages_fts` and `messages_fts_trigram` (gate `fts_rebuild_*`).
    Base,
    /// `messages_fts_cjk` (gate `fts_cjk_rebuild_*`).
    Cjk,
}

impl FtsIndex {
    fn keys(self) -> (&'static str, &'static str) {
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
}

/// What one backfill transaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackfillStep {
    /// The index family.
    pub index: FtsIndex,
    /// `false` when no rebuild of this family was pending: nothing was done.
    pub was_pending: bool,
    /// Progress `P` after the step (the largest id backfilled).
    pub progress: i64,
    /// High-water mark `H` (the largest id the backfill must cover).
    pub high_water: i64,
    /// Rows inserted into the family's first table by this step.
    pub rows_indexed: usize,
    /// The backfill is finished (or was not pending): both keys are gone.
    pub done: bool,
    /// How long the transaction took (for [`pause_after`]).
    pub elapsed: Duration,
}

/// What one teardown transaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeardownStep {
    /// The trash table worked on; `None` when none was left.
    pub table: Option<String>,
    /// Rows deleted from it.
    pub rows_deleted: usize,
    /// The table was empty and has been dropped.
    pub dropped: bool,
    /// No `fts_v22_trash_*` table remains.
    pub done: bool,
}

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
    /// legacy one (run [`optimize_fts_storage`]).
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

/// A step reported to the progress callback, between transactions.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptimizeProgress {
    /// The legacy FTS objects were demoted and the v23 ones created, empty.
    Demoted {
        /// The high-water mark of the backfill that follows.
        high_water: i64,
    },
    /// An index was emptied (or created) and a gated backfill claimed.
    RebuildStarted {
        /// The family.
        index: FtsIndex,
        /// Its high-water mark (0 when nothing needs backfilling).
        high_water: i64,
    },
    /// One backfill chunk was committed.
    Backfilled(BackfillStep),
    /// One teardown batch was committed.
    TornDown(TeardownStep),
    /// `VACUUM` ran (`ok = false`: it failed, which is not fatal).
    Vacuumed {
        /// Whether it succeeded.
        ok: bool,
    },
    /// The final bookkeeping ran.
    Settled {
        /// Whether `fts_storage_version = '1'` was stamped.
        stamped: bool,
    },
}

/// What [`optimize_fts_storage`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptimizeReport {
    /// Set when nothing ran, with the reason.
    pub refused: Option<Refusal>,
    /// The legacy layout was demoted by this run.
    pub demoted: bool,
    /// Base/trigram backfill chunks committed by this run.
    pub base_chunks: u32,
    /// The CJK index was reset (recreated empty, then backfilled) by this run.
    pub cjk_reset: bool,
    /// CJK backfill chunks committed by this run.
    pub cjk_chunks: u32,
    /// Trash tables dropped by this run.
    pub trash_dropped: Vec<String>,
    /// `None`: not requested; `Some(false)`: `VACUUM` failed (not fatal).
    pub vacuumed: Option<bool>,
    /// `fts_storage_version` was stamped and `schema_version` raised to 23.
    pub settled: bool,
}

impl OptimizeReport {
    /// The run was not refused (the original's `"ok"`).
    pub fn ok(&self) -> bool {
        self.refused.is_none()
    }
}

/// What [`rebuild_in_background`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RebuildReport {
    /// Set when nothing ran, with the reason.
    pub refused: Option<Refusal>,
    /// A new rebuild was started; `false`: a pending one was resumed.
    pub started: bool,
    /// Base/trigram backfill chunks committed.
    pub base_chunks: u32,
    /// CJK backfill chunks committed.
    pub cjk_chunks: u32,
    /// The CJK index exists but this connection cannot tokenize it, so it was left alone.
    pub cjk_skipped: bool,
}

/// Whether [`optimize_fts_storage`] has work (`migrations.md` §3.3 "work
/// available"): the connection can write, FTS5 is present, the FTS storage is
/// not newer than ours, and the layout is legacy, or a base backfill is
/// pending, or (this connection having the CJK tokenizer) a CJK backfill or a
/// stale CJK index is pending, or a `fts_v22_trash_*` table remains.
pub fn optimize_available(conn: &Connection) -> Result<bool, SchemaError> {
    if refusal(conn)?.is_some() {
        return Ok(false);
    }
    if detect::fts_layout(conn)?.is_legacy()
        || meta(conn, REBUILD_HIGH_WATER_KEY)?.is_some()
        || has_trash(conn)?
    {
        return Ok(true);
    }
    Ok(has_cjk_tokenizer(conn)
        && (meta(conn, CJK_HIGH_WATER_KEY)?.is_some() || meta(conn, CJK_STALE_KEY)?.is_some()))
}

/// Demotes a legacy FTS layout in one transaction; returns the high-water
/// mark of the backfill it claimed, `None` when the layout is not legacy.
/// See [`in_transaction::demote_legacy`].
pub fn demote_legacy(conn: &Connection) -> Result<Option<i64>, SchemaError> {
    immediate(
        conn,
        "demoting the legacy FTS layout",
        in_transaction::demote_legacy,
    )
}

/// Backfills one chunk of the pending base/trigram rebuild in one transaction
/// (`chunk` ids, [`CHUNK_IDS`] in the original). See [`in_transaction::backfill_chunk`].
pub fn backfill_chunk(conn: &Connection, chunk: i64) -> Result<BackfillStep, SchemaError> {
    immediate(conn, "backfilling the FTS index", |conn| {
        in_transaction::backfill_chunk(conn, FtsIndex::Base, chunk)
    })
}

/// [`backfill_chunk`] for the CJK index (needs the tokenizer on `conn`).
pub fn cjk_backfill_chunk(conn: &Connection, chunk: i64) -> Result<BackfillStep, SchemaError> {
    immediate(conn, "backfilling the CJK index", |conn| {
        in_transaction::backfill_chunk(conn, FtsIndex::Cjk, chunk)
    })
}

/// Deletes up to `batch` rows of one trash table (dropping it once empty) in
/// one transaction; call until [`TeardownStep::done`].
pub fn teardown_trash(conn: &Connection, batch: i64) -> Result<TeardownStep, SchemaError> {
    immediate(conn, "tearing down legacy FTS tables", |conn| {
        in_transaction::teardown_trash(conn, batch)
    })
}

/// Final bookkeeping, in one transaction; `false` (nothing written) while the
/// conversion is unfinished. See [`in_transaction::settle`].
pub fn settle(conn: &Connection) -> Result<bool, SchemaError> {
    immediate(conn, "settling the FTS storage", in_transaction::settle)
}

/// Empties the v23 indexes and claims a gated backfill of everything, in one
/// transaction; `None` when the layout is not v23. See
/// [`in_transaction::begin_rebuild`].
pub fn begin_background_rebuild(conn: &Connection) -> Result<Option<i64>, SchemaError> {
    // A stale CJK index stays as it is: resetting it would recreate its
    // triggers under writers that may lack the tokenizer.
    let tokenizer = has_cjk_tokenizer(conn) && crate::fts::cjk_index_live(conn)?;
    immediate(conn, "starting a background FTS rebuild", |conn| {
        in_transaction::begin_rebuild(conn, tokenizer)
    })
}

/// Rebuilds the FTS indexes of a v23-layout file without holding the write
/// lock for long (see the module documentation for when to prefer it over a
/// one-shot `'rebuild'`): resumes a pending gated rebuild if there is one,
/// otherwise starts one ([`begin_background_rebuild`]), then backfills chunk
/// by chunk, the base/trigram family first, then the CJK index when `conn`
/// has its tokenizer. Killed at any point, a re-run continues.
pub fn rebuild_in_background(
    conn: &Connection,
    mut progress: impl FnMut(OptimizeProgress),
) -> Result<RebuildReport, SchemaError> {
    let mut report = RebuildReport {
        refused: refusal(conn)?.or(match detect::fts_layout(conn)? {
            FtsLayout::External => None,
            FtsLayout::Absent => Some(Refusal::NoFtsIndex),
            _ => Some(Refusal::LegacyLayout),
        }),
        ..RebuildReport::default()
    };
    if report.refused.is_some() {
        return Ok(report);
    }
    let tokenizer = has_cjk_tokenizer(conn);
    let pending = meta(conn, REBUILD_HIGH_WATER_KEY)?.is_some()
        || (tokenizer && meta(conn, CJK_HIGH_WATER_KEY)?.is_some());
    if !pending && let Some(high_water) = begin_background_rebuild(conn)? {
        report.started = true;
        progress(OptimizeProgress::RebuildStarted {
            index: FtsIndex::Base,
            high_water,
        });
    }
    report.base_chunks = backfill_all(conn, FtsIndex::Base, &mut progress)?;
    if tokenizer {
        report.cjk_chunks = backfill_all(conn, FtsIndex::Cjk, &mut progress)?;
    } else {
        report.cjk_skipped = detect::object_exists(conn, "table", "messages_fts_cjk")?;
    }
    Ok(report)
}

/// The explicit legacy → v23 FTS conversion (`migrations.md` §3.3), resumable
/// from any interruption: demote the legacy layout (or re-claim a backfill
/// whose index went missing), backfill the base/trigram indexes, reset a
/// stale or missing CJK index and backfill it (when `conn` has the
/// tokenizer), tear down the `fts_v22_trash_*` tables, `VACUUM` if asked
/// (a failure is reported, not fatal), and settle.
///
/// Never started automatically. Each step is its own short transaction;
/// `progress` is called after each one.
pub fn optimize_fts_storage(
    conn: &Connection,
    vacuum: bool,
    mut progress: impl FnMut(OptimizeProgress),
) -> Result<OptimizeReport, SchemaError> {
    let mut report = OptimizeReport {
        refused: refusal(conn)?,
        ..OptimizeReport::default()
    };
    if report.refused.is_some() {
        return Ok(report);
    }
    match immediate(
        conn,
        "demoting the legacy FTS layout",
        in_transaction::claim,
    )? {
        Claim::Demoted(high_water) => {
            report.demoted = true;
            progress(OptimizeProgress::Demoted { high_water });
        }
        Claim::Recreated(high_water) => progress(OptimizeProgress::RebuildStarted {
            index: FtsIndex::Base,
            high_water,
        }),
        Claim::Nothing => {}
    }
    report.base_chunks = backfill_all(conn, FtsIndex::Base, &mut progress)?;
    if has_cjk_tokenizer(conn) && detect::fts_layout(conn)? == FtsLayout::External {
        if cjk_needs_reset(conn)? {
            let high_water = immediate(conn, "resetting the CJK index", in_transaction::reset_cjk)?;
            report.cjk_reset = true;
            progress(OptimizeProgress::RebuildStarted {
                index: FtsIndex::Cjk,
                high_water: high_water.unwrap_or(0),
            });
        }
        report.cjk_chunks = backfill_all(conn, FtsIndex::Cjk, &mut progress)?;
    }
    loop {
        let step = teardown_trash(conn, TEARDOWN_BATCH)?;
        let done = step.done;
        if let (true, Some(table)) = (step.dropped, &step.table) {
            report.trash_dropped.push(table.clone());
        }
        if step.table.is_some() {
            progress(OptimizeProgress::TornDown(step));
        }
        if done {
            break;
        }
    }
    if vacuum {
        let ok = conn.execute_batch("VACUUM").is_ok();
        report.vacuumed = Some(ok);
        progress(OptimizeProgress::Vacuumed { ok });
    }
    report.settled = settle(conn)?;
    progress(OptimizeProgress::Settled {
        stamped: report.settled,
    });
    Ok(report)
}

/// The steps of this module for a caller that already holds a write
/// transaction (`BEGIN IMMEDIATE`); none of them begins or commits one.
pub mod in_transaction {
    use super::*;

    /// Demotes a legacy (inline, or content-only) FTS layout: drops the six
    /// FTS triggers and the trigram view; deletes the `sqlite_master` rows of
    /// the `messages_fts` / `messages_fts_trigram` virtual tables under
    /// `PRAGMA writable_schema=ON` (then `RESET`), so that no FTS5 code runs
    /// over their possibly huge shadow tables; renames those shadow tables
    /// to `fts_v22_trash_<name>` (plain tables now, emptied later in batches
    /// by [`teardown_trash`]); creates the empty v23 objects; claims the
    /// backfill (`H = MAX(messages.id)`, `P = 0`) and deletes
    /// `fts_optimize_available`. All in the caller's transaction, so a crash
    /// leaves either the legacy layout or the claimed v23 one.
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
            for name in names(conn, SHADOW_TABLES)? {
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

    /// Backfills one chunk: reads `P` and `H` here, inserts the rows of
    /// `(P, min(P + chunk, H)]` missing from each table of the family
    /// (trigram and CJK: non-`tool` rows only), and stores the new `P`. When
    /// `P` reaches `H`, re-inserts any row of `(H − 1000, H + 1000]` missing
    /// from a table's `_docsize` and deletes both keys.
    ///
    /// A row already in `_docsize` is never inserted again, so a full
    /// `'rebuild'` run behind the backfill's back cannot make it index a row
    /// twice. An `H` without `P` means the index state is unknown: the family
    /// is emptied and the backfill restarted from 0.
    pub fn backfill_chunk(
        conn: &Connection,
        index: FtsIndex,
        chunk: i64,
    ) -> Result<BackfillStep, SchemaError> {
        let started = Instant::now();
        let (high_key, progress_key) = index.keys();
        let mut step = BackfillStep {
            index,
            was_pending: false,
            progress: 0,
            high_water: 0,
            rows_indexed: 0,
            done: true,
            elapsed: Duration::ZERO,
        };
        let Some(mut high_water) = meta(conn, high_key)? else {
            return Ok(step);
        };
        let tables = existing_tables(conn, index)?;
        if index == FtsIndex::Base && detect::fts_layout(conn)? != FtsLayout::External {
            // Nothing this step can fill; the conversion's claim step handles it.
            return Ok(step);
        }
        step.was_pending = true;
        let mut progress = match meta(conn, progress_key)? {
            Some(progress) => progress,
            None => {
                high_water = restart(conn, index)?.unwrap_or(0);
                0
            }
        };
        if progress < high_water {
            let upper = progress.saturating_add(chunk.max(1)).min(high_water);
            for (position, (table, skip_tool)) in tables.iter().enumerate() {
                let inserted = insert_missing(conn, table, *skip_tool, progress, upper)?;
                if position == 0 {
                    step.rows_indexed = inserted;
                }
            }
            set_meta(conn, progress_key, upper)?;
            progress = upper;
        }
        step.done = progress >= high_water;
        if step.done {
            let (low, high) = (
                high_water.saturating_sub(BOUNDARY_WINDOW),
                high_water.saturating_add(BOUNDARY_WINDOW),
            );
            for (table, skip_tool) in &tables {
                insert_missing(conn, table, *skip_tool, low, high)?;
            }
            delete_meta(conn, &[high_key, progress_key])?;
        }
        step.progress = progress;
        step.high_water = high_water;
        step.elapsed = started.elapsed();
        Ok(step)
    }

    /// Empties the base and trigram indexes (`'delete-all'`) and claims a
    /// gated backfill of every row; with `cjk_tokenizer`, also resets an
    /// existing CJK index the same way ([`reset_cjk`]). Returns `H`, or
    /// `None` (nothing done) when the layout is not v23.
    pub fn begin_rebuild(
        conn: &Connection,
        cjk_tokenizer: bool,
    ) -> Result<Option<i64>, SchemaError> {
        if detect::fts_layout(conn)? != FtsLayout::External {
            return Ok(None);
        }
        for (table, _) in existing_tables(conn, FtsIndex::Base)? {
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

    /// Deletes up to `batch` rows (by rowid, or by primary key for `WITHOUT
    /// ROWID` tables) of the first `fts_v22_trash_*` table, and drops it
    /// once it is empty.
    pub fn teardown_trash(conn: &Connection, batch: i64) -> Result<TeardownStep, SchemaError> {
        let tables = names(conn, TRASH_TABLES)?;
        let Some(table) = tables.first().cloned() else {
            return Ok(TeardownStep {
                table: None,
                rows_deleted: 0,
                dropped: false,
                done: true,
            });
        };
        let batch = batch.max(1);
        let quoted = quote_identifier(&table);
        let without_rowid: bool = conn
            .query_row(
                "SELECT COALESCE((SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1), 0)",
                [&table],
                |r| r.get(0),
            )
            .context("reading a trash table")?;
        let columns = if without_rowid {
            let mut stmt = conn
                .prepare("SELECT name FROM pragma_table_info(?1, 'main') WHERE pk > 0 ORDER BY pk")
                .context("reading a trash table")?;
            let columns = stmt
                .query_map([&table], |r| r.get::<_, String>(0))
                .context("reading a trash table")?
                .map(|name| name.map(|n| quote_identifier(&n)))
                .collect::<Result<Vec<_>, _>>()
                .context("reading a trash table")?;
            columns.join(", ")
        } else {
            "rowid".to_owned()
        };
        let rows_deleted = conn
            .execute(
                &format!(
                    "DELETE FROM {quoted} WHERE ({columns}) IN (SELECT {columns} FROM {quoted} LIMIT ?1)"
                ),
                [batch],
            )
            .context("emptying a trash table")?;
        let dropped = (rows_deleted as i64) < batch;
        if dropped {
            conn.execute_batch(&format!("DROP TABLE {quoted}"))
                .context("dropping a trash table")?;
        }
        Ok(TeardownStep {
            table: Some(table),
            rows_deleted,
            dropped,
            done: dropped && tables.len() == 1,
        })
    }

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

    /// Creates the unique title index (`ddl::TITLE_UNIQUE_INDEX`) if it is
    /// missing; returns whether it was created. The schema half of the
    /// doctor's title repair: fails with a constraint error while duplicate
    /// titles remain.
    pub fn restore_title_index(conn: &Connection) -> Result<bool, SchemaError> {
        if detect::object_exists(conn, "index", "idx_sessions_title_unique")? {
            return Ok(false);
        }
        conn.execute_batch(ddl::TITLE_UNIQUE_INDEX)
            .context("creating the unique title index")?;
        Ok(true)
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

    /// Empties a family and claims a fresh backfill; returns the new `H`.
    fn restart(conn: &Connection, index: FtsIndex) -> Result<Option<i64>, SchemaError> {
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
}

/// Outcome of the conversion's first step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    Demoted(i64),
    Recreated(i64),
    Nothing,
}

/// The `sqlite_master` rows of the legacy virtual tables (after `DELETE` or
/// `SELECT 1`).
const LEGACY_VTABLE_ROWS: &str = "FROM sqlite_master WHERE type = 'table' AND name IN ('messages_fts', 'messages_fts_trigram') AND sql LIKE 'CREATE VIRTUAL TABLE%'";

/// The shadow tables left by the legacy virtual tables. The underscores are
/// escaped (the spec's pattern leaves them as wildcards), and the CJK
/// family is excluded: it is an independent v23 index, and renaming its
/// virtual table would drag its shadow tables along.
const SHADOW_TABLES: &str = "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'messages\\_fts\\_%' ESCAPE '\\' AND name NOT LIKE 'messages\\_fts\\_cjk%' ESCAPE '\\' ORDER BY name";

const TRASH_TABLES: &str = "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'fts\\_v22\\_trash\\_%' ESCAPE '\\' ORDER BY name";

/// Runs `op` in its own `BEGIN IMMEDIATE` transaction, with the write-retry
/// policy; a failure names the step (`what`).
fn immediate<T>(
    conn: &Connection,
    what: &str,
    op: impl FnMut(&Connection) -> Result<T, SchemaError>,
) -> Result<T, SchemaError> {
    transaction::immediate_with_retries(conn, op, SchemaError::kind).map_err(|error| match error {
        SchemaError::Sqlite(inner) => {
            SchemaError::sqlite(format!("{what}: {}", inner.context), inner.source)
        }
        other => other,
    })
}

fn backfill_all(
    conn: &Connection,
    index: FtsIndex,
    progress: &mut impl FnMut(OptimizeProgress),
) -> Result<u32, SchemaError> {
    let mut chunks = 0;
    loop {
        let step = immediate(conn, "backfilling an FTS index", |conn| {
            in_transaction::backfill_chunk(conn, index, CHUNK_IDS)
        })?;
        if step.was_pending {
            chunks += 1;
            progress(OptimizeProgress::Backfilled(step));
        }
        if step.done {
            return Ok(chunks);
        }
    }
}

/// Why nothing may run on this connection, if anything.
fn refusal(conn: &Connection) -> Result<Option<Refusal>, SchemaError> {
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

fn storage_too_new(conn: &Connection) -> Result<bool, SchemaError> {
    Ok(meta_text(conn, STORAGE_VERSION_KEY)?
        .and_then(|v| v.trim().parse::<i64>().ok())
        .is_some_and(|v| v > detect::NEWEST_FTS_STORAGE_VERSION))
}

/// Whether the CJK index must be recreated before it can be backfilled:
/// marked stale, or any of its objects missing.
fn cjk_needs_reset(conn: &Connection) -> Result<bool, SchemaError> {
    if meta(conn, CJK_STALE_KEY)?.is_some()
        || !detect::object_exists(conn, "table", "messages_fts_cjk")?
        || !detect::object_exists(conn, "view", "messages_fts_cjk_src")?
    {
        return Ok(true);
    }
    for name in ddl::CJK_TRIGGER_NAMES {
        if !detect::object_exists(conn, "trigger", name)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn create_v23_objects(conn: &Connection) -> Result<(), SchemaError> {
    for statement in ddl::FTS_BASE.iter().chain(ddl::FTS_TRIGRAM.iter()) {
        conn.execute_batch(statement)
            .context("creating the v23 FTS objects")?;
    }
    Ok(())
}

/// Sets `H = MAX(messages.id)` (0 when empty) and `P = 0`; returns `H`.
fn claim_keys(conn: &Connection, index: FtsIndex) -> Result<i64, SchemaError> {
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

/// Inserts the rows of `(low, high]` that the table does not hold yet; returns how many.
fn insert_missing(
    conn: &Connection,
    table: &str,
    skip_tool: bool,
    low: i64,
    high: i64,
) -> Result<usize, SchemaError> {
    let roles = if skip_tool {
        " AND m.role <> 'tool'"
    } else {
        ""
    };
    let sql = format!(
        "INSERT INTO {table}(rowid, content, tool_name, tool_calls)
         SELECT m.id, m.content, m.tool_name, m.tool_calls FROM messages m
         WHERE m.id > ?1 AND m.id <= ?2{roles}
           AND NOT EXISTS (SELECT 1 FROM {table}_docsize d WHERE d.id = m.id)"
    );
    conn.prepare_cached(&sql)
        .and_then(|mut stmt| stmt.execute([low, high]))
        .context(&format!("backfilling {table}"))
        .map_err(Into::into)
}

fn existing_tables(
    conn: &Connection,
    index: FtsIndex,
) -> Result<Vec<(&'static str, bool)>, SchemaError> {
    let mut found = Vec::new();
    for &(table, skip_tool) in index.tables() {
        if detect::object_exists(conn, "table", table)? {
            found.push((table, skip_tool));
        }
    }
    Ok(found)
}

fn has_trash(conn: &Connection) -> Result<bool, SchemaError> {
    Ok(!names(conn, TRASH_TABLES)?.is_empty())
}

fn names(conn: &Connection, sql: &str) -> Result<Vec<String>, SchemaError> {
    let mut stmt = conn.prepare(sql).context("reading the schema")?;
    let rows = stmt
        .query_map([], |r| r.get(0))
        .context("reading the schema")?;
    rows.collect::<Result<_, _>>()
        .context("reading the schema")
        .map_err(Into::into)
}

/// `fts_v22_trash_<name>`, or with a numeric suffix if a leftover of an
/// earlier conversion already holds that name.
fn free_trash_name(conn: &Connection, name: &str) -> Result<String, SchemaError> {
    let base = format!("{TRASH_PREFIX}{name}");
    let mut candidate = base.clone();
    let mut n = 1;
    while conn
        .query_row(
            "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = ?1)",
            [&candidate],
            |r| r.get::<_, bool>(0),
        )
        .context("reading the schema")?
    {
        n += 1;
        candidate = format!("{base}_{n}");
    }
    Ok(candidate)
}

fn meta_text(conn: &Connection, key: &str) -> Result<Option<String>, SchemaError> {
    if !detect::object_exists(conn, "table", "state_meta")? {
        return Ok(None);
    }
    conn.query_row("SELECT value FROM state_meta WHERE key = ?1", [key], |r| {
        r.get::<_, Option<String>>(0)
    })
    .optional()
    .context("reading state_meta")
    .map(Option::flatten)
    .map_err(Into::into)
}

/// A meta value as the gate reads it (`CAST(value AS INTEGER)`): present keys
/// with unparsable text count as 0.
fn meta(conn: &Connection, key: &str) -> Result<Option<i64>, SchemaError> {
    if !detect::object_exists(conn, "table", "state_meta")? {
        return Ok(None);
    }
    conn.query_row(
        "SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = ?1",
        [key],
        |r| r.get::<_, Option<i64>>(0),
    )
    .optional()
    .context("reading state_meta")
    .map(|v| v.map(Option::unwrap_or_default))
    .map_err(Into::into)
}

fn set_meta(conn: &Connection, key: &str, value: i64) -> Result<(), SchemaError> {
    conn.execute(ddl::UPSERT_META, [key, &value.to_string()])
        .context("writing state_meta")?;
    Ok(())
}

fn delete_meta(conn: &Connection, keys: &[&str]) -> Result<(), SchemaError> {
    for key in keys {
        conn.execute("DELETE FROM state_meta WHERE key = ?1", [key])
            .context("writing state_meta")?;
    }
    Ok(())
}
