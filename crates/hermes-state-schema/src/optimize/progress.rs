//! What the conversion and the background rebuild report to their callers
//! between transactions.

use super::backfill::BackfillStep;
use super::gate::FtsIndex;
use super::trash::TeardownStep;

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
