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
//! Every step is written once, over a connection that is already inside a
//! write transaction; [`in_transaction`] lists them for callers that own one
//! (the facade's write path). The module-level functions of the same names
//! run each step in its own short `BEGIN IMMEDIATE` transaction, retried on
//! lock errors like every write
//! (`hermes_state_sqlite::transaction::immediate_with_retries`), so writers
//! of other processes interleave between chunks.
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
//!
//! # Layout
//!
//! - `gate`: the index families and claiming a gated backfill (emptying a
//!   family, setting `H` and `P`).
//! - `backfill`: the chunked backfill step both drivers share, and its pacing.
//! - `demote`, `trash`, `settle`: the conversion's own steps.
//! - `conversion`: the legacy → v23 driver; `rebuild`: the background
//!   rebuild driver.
//! - `refusal`, `progress`: why a run does nothing, and what it reports.
//! - `meta`: the `state_meta` keys as the gate reads and writes them.
//! - `own_transaction`: the one helper that runs a step in its own
//!   transaction, and the single-transaction entry points built on it.

mod backfill;
mod conversion;
mod demote;
mod gate;
mod meta;
mod own_transaction;
mod progress;
mod rebuild;
mod refusal;
mod settle;
mod trash;

pub use backfill::{BackfillStep, CHUNK_IDS, MIN_PAUSE, pause_after};
pub use conversion::{OptimizeReport, optimize_available, optimize_fts_storage, work_available};
pub use gate::FtsIndex;
/// Meta keys of the conversion (`schema-v23.md` §8), defined in the SQLite base.
pub use hermes_state_sqlite::names::{
    FTS_OPTIMIZE_AVAILABLE_KEY as OPTIMIZE_AVAILABLE_KEY,
    FTS_STORAGE_VERSION_KEY as STORAGE_VERSION_KEY,
};
pub use own_transaction::{
    backfill_chunk, begin_background_rebuild, cjk_backfill_chunk, demote_legacy, settle,
    teardown_trash,
};
pub use progress::OptimizeProgress;
pub use rebuild::{RebuildReport, rebuild_in_background};
pub use refusal::Refusal;
pub use trash::{TEARDOWN_BATCH, TRASH_PREFIX, TeardownStep};

/// The steps of this module for a caller that already holds a write
/// transaction (`BEGIN IMMEDIATE`); none of them begins or commits one.
pub mod in_transaction {
    pub use super::backfill::backfill_chunk;
    pub use super::demote::demote_legacy;
    pub use super::gate::{begin_rebuild, reset_cjk};
    pub use super::settle::settle;
    pub use super::trash::teardown_trash;
    /// The unique title index is no FTS matter; it lives in
    /// [`crate::title_index`] and is re-exported here under its old path.
    pub use crate::title_index::restore_title_index;
}
