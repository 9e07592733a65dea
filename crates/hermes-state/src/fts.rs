//! FTS maintenance on the facade: the legacy → v23 storage conversion and
//! the chunked background rebuild of `hermes_state_schema::optimize`.

use hermes_state_schema::optimize::{self, OptimizeProgress, OptimizeReport, RebuildReport};

use crate::db::SessionDb;
use crate::error::Result;

impl SessionDb {
    /// Converts a legacy inline FTS layout (files upgraded from v11–v22) to
    /// the v23 external-content layout, resumably (`migrations.md` §3.3):
    /// demote, backfill in chunks of 500 ids (one short transaction each, so
    /// other writers interleave), tear down the old tables, optionally VACUUM,
    /// settle. A run killed at any point is continued by the next one.
    /// `progress` sees every step.
    pub fn optimize_fts_storage(
        &self,
        vacuum: bool,
        progress: impl FnMut(OptimizeProgress),
    ) -> Result<OptimizeReport> {
        self.with_writable_connection("optimizing FTS storage", |conn| {
            Ok(optimize::optimize_fts_storage(conn, vacuum, progress)?)
        })
    }

    /// Rebuilds the FTS indexes of a v23-layout store in chunks, without
    /// holding the write lock for the whole rebuild; resumable.
    pub fn rebuild_fts_in_background(
        &self,
        progress: impl FnMut(OptimizeProgress),
    ) -> Result<RebuildReport> {
        self.with_writable_connection("rebuilding FTS indexes", |conn| {
            Ok(optimize::rebuild_in_background(conn, progress)?)
        })
    }
}
