//! The automatic maintenance runs (`api.md` §11.4): at most once per
//! interval, remembered in `state_meta`, never failing the caller.

use hermes_state_query::rich_listing::idle_cutoff;
use hermes_state_types::pyjson;
use hermes_state_types::pyvalue::float_from_text;

pub use hermes_state_core::cleanup::{
    AutoArchiveOptions, AutoArchiveReport, AutoPruneOptions, AutoPruneReport,
};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};
use crate::maintenance::PruneOptions;
use crate::rich_listing::archive_stale;

/// `state_meta` key of the last automatic prune (`schema-v23.md` §8).
const LAST_AUTO_PRUNE: &str = "last_auto_prune";
/// `state_meta` key of the last automatic archive run.
const LAST_AUTO_ARCHIVE: &str = "last_auto_archive";

impl SessionDb {
    /// Prunes old ended sessions and gives the space back, at most once per
    /// `min_interval_hours` (`api.md` §11.4).
    ///
    /// Skipped when `state_meta.last_auto_prune` is a number less than the
    /// interval old (an unparsable value counts as "never ran"). Otherwise
    /// prunes as [`SessionDb::prune_sessions`] with `retention_days`, runs
    /// [`SessionDb::vacuum`] only if something was pruned (and `vacuum` is
    /// set), then stores the handle's clock time as `last_auto_prune`
    /// (shortest round-trip float text). Never fails: an error (a read-only
    /// handle included) is reported in `error` and `error_kind`, and the time
    /// is then not stored.
    pub fn maybe_auto_prune_and_vacuum(&self, options: &AutoPruneOptions) -> AutoPruneReport {
        let mut report = AutoPruneReport::default();
        let mut run = || -> Result<()> {
            if self.ran_recently(LAST_AUTO_PRUNE, options.min_interval_hours)? {
                report.skipped = true;
                return Ok(());
            }
            report.pruned = self
                .prune_sessions(&PruneOptions {
                    older_than_days: Some(options.retention_days),
                    sessions_dir: options.sessions_dir.clone(),
                    ..PruneOptions::default()
                })?
                .count;
            if report.pruned > 0 && options.vacuum {
                self.vacuum()?;
                report.vacuumed = true;
            }
            self.set_meta(LAST_AUTO_PRUNE, &pyjson::float_repr(self.now()))
        };
        if let Err(error) = run() {
            report.error_kind = Some(error.kind());
            report.error = Some(error.to_string());
        }
        report
    }

    /// Archives sessions idle for `idle_days`, at most once per
    /// `min_interval_hours` (`api.md` §11.4), the pattern of
    /// [`SessionDb::maybe_auto_prune_and_vacuum`] with `last_auto_archive`.
    ///
    /// Archives as [`SessionDb::archive_stale_sessions`] (the same rule and
    /// count: candidates idle by the handle's clock, not archived, not ended
    /// by `compression`, unpinned with `exclude_pinned`; each with its
    /// compression lineage); the archive and the new `last_auto_archive` are
    /// written in one transaction, also when nothing was archived. Never
    /// fails: an error is reported in `error` and `error_kind`.
    pub fn maybe_auto_archive(&self, options: &AutoArchiveOptions) -> AutoArchiveReport {
        let mut report = AutoArchiveReport::default();
        let mut run = || -> Result<()> {
            if self.ran_recently(LAST_AUTO_ARCHIVE, options.min_interval_hours)? {
                report.skipped = true;
                return Ok(());
            }
            let now = self.now();
            let idle_before = idle_cutoff(now, options.idle_days);
            let stamp = pyjson::float_repr(now);
            report.archived = self.write("archiving stale sessions", |conn| {
                let archived = match idle_before {
                    Some(before) => archive_stale(conn, before, options.exclude_pinned)?,
                    None => 0,
                };
                conn.execute(
                    hermes_state_schema::ddl::UPSERT_META,
                    [LAST_AUTO_ARCHIVE, stamp.as_str()],
                )
                .context("writing state_meta")?;
                Ok(archived)
            })?;
            Ok(())
        };
        if let Err(error) = run() {
            report.error_kind = Some(error.kind());
            report.error = Some(error.to_string());
        }
        report
    }

    /// Whether the `state_meta` time stamp `key` says the last run is less
    /// than `interval_hours` old by the handle's clock, as the original
    /// reads it: a non-empty value that Python's `float()` parses, compared
    /// with IEEE arithmetic (an infinite stamp is always recent, a NaN one
    /// or a NaN interval never). A run that is due on a read-only handle is
    /// [`Error::ReadOnly`].
    fn ran_recently(&self, key: &str, interval_hours: f64) -> Result<bool> {
        let last = self
            .get_meta(key)?
            .filter(|text| !text.is_empty())
            .and_then(|text| float_from_text(&text));
        if last.is_some_and(|last| self.now() - last < interval_hours * 3600.0) {
            return Ok(true);
        }
        if self.is_read_only() {
            return Err(Error::ReadOnly(format!("automatic maintenance ({key})")));
        }
        Ok(false)
    }
}
