//! FTS maintenance on the facade: the legacy → v23 storage conversion and
//! the chunked background rebuild of `hermes_state_schema::optimize`.

use hermes_state_schema::optimize::{self, OptimizeProgress, OptimizeReport, RebuildReport};
use hermes_state_schema::{FtsLayout, connection, detect, fts};

use crate::db::SessionDb;
use crate::error::{Error, Result};

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

impl SessionDb {
    /// Creates (or re-creates) the optional CJK index and fills it, in one
    /// write transaction: the explicit opt-in of `schema-v23.md` §6.6.
    ///
    /// **Every other process that writes this file needs the
    /// `cjk_unicode61` tokenizer afterwards**: the index's triggers fire on
    /// every message insert, and a Hermes without the tokenizer library would
    /// fail there until its next open marks the index stale and drops them
    /// (it does so by itself; the index is then no longer served here until
    /// rebuilt again). Nothing else in this library creates the index on an
    /// existing file.
    ///
    /// Refused ([`crate::ErrorKind::InvalidInput`]) when the tokenizer is
    /// switched off (`HERMES_CJK_FTS`), on a legacy FTS layout (run
    /// [`SessionDb::optimize_fts_storage`]) and on files stamped above 23,
    /// whose newer releases own their CJK shape (`newer-versions.md` §5.5).
    pub fn rebuild_cjk_index(&self) -> Result<()> {
        self.write("rebuilding the CJK index", |conn| {
            if !connection::has_cjk_tokenizer(conn) {
                return Err(Error::InvalidInput(format!(
                    "the cjk_unicode61 tokenizer is switched off ({}); cannot build the CJK index",
                    connection::CJK_SWITCH_ENV
                )));
            }
            if detect::fts_layout(conn)? != FtsLayout::External {
                return Err(Error::InvalidInput(
                    "the FTS layout is not the v23 one; optimise the FTS storage first".to_owned(),
                ));
            }
            let version: Option<i64> = conn
                .query_row("SELECT version FROM schema_version LIMIT 1", [], |r| {
                    r.get(0)
                })
                .map_err(|e| crate::error::sqlite("reading schema_version", e))?;
            if version.is_some_and(|v| v > hermes_state_types::SCHEMA_VERSION) {
                return Err(Error::InvalidInput(format!(
                    "schema_version {} is newer than 23: its CJK index belongs to the newer release",
                    version.unwrap_or_default()
                )));
            }
            Ok(fts::reset_cjk_index(conn)?)
        })
    }
}
