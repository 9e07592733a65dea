//! The gated backfill step both the conversion and the background rebuild
//! run, chunk after chunk, and the pause a background caller keeps between
//! chunks.

use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::gate::{self, FtsIndex};
use super::meta::{delete_meta, meta, set_meta};
use super::own_transaction::in_own_transaction;
use super::progress::OptimizeProgress;
use crate::detect::{self, FtsLayout};
use crate::error::SchemaError;
use hermes_state_sqlite::Context as SqliteContext;

/// Ids per backfill transaction (the original's chunk).
pub const CHUNK_IDS: i64 = 500;
/// Shortest pause between chunks of a background backfill.
pub const MIN_PAUSE: Duration = Duration::from_millis(200);
/// Half-width of the id window re-checked when a backfill finishes.
const BOUNDARY_WINDOW: i64 = 1000;

/// The original's pause after a chunk: `max(0.2 s, 4 × chunk duration)`, so a
/// background backfill holds the write lock at most a fifth of the time.
pub fn pause_after(chunk: Duration) -> Duration {
    (chunk * 4).max(MIN_PAUSE)
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
    let tables = index.existing_tables(conn)?;
    if index == FtsIndex::Base && detect::fts_layout(conn)? != FtsLayout::External {
        // Nothing this step can fill; the conversion's claim step handles it.
        return Ok(step);
    }
    step.was_pending = true;
    let mut progress = match meta(conn, progress_key)? {
        Some(progress) => progress,
        None => {
            high_water = gate::restart(conn, index)?.unwrap_or(0);
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

/// Backfills a family to the end, one [`CHUNK_IDS`] chunk per transaction,
/// reporting every chunk that did work; returns how many did.
pub(super) fn backfill_to_the_end(
    conn: &Connection,
    index: FtsIndex,
    progress: &mut impl FnMut(OptimizeProgress),
) -> Result<u32, SchemaError> {
    let mut chunks = 0;
    loop {
        let step = in_own_transaction(conn, "backfilling an FTS index", |conn| {
            backfill_chunk(conn, index, CHUNK_IDS)
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
