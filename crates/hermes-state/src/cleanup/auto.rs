//! The automatic maintenance runs (`api.md` §11.4): at most once per
//! interval, remembered in `state_meta`, never failing the caller.

use hermes_state_types::pyvalue::float_from_text;

pub use hermes_state_core::cleanup::{
    AutoArchiveOptions, AutoArchiveReport, AutoPruneOptions, AutoPruneReport,
};

use crate::db::SessionDb;
use crate::error::{Error, Result};
use hermes_state_core::store::Coordination;

/// `state_meta` key of the last automatic prune (`schema-v23.md` §8).
pub(crate) const LAST_AUTO_PRUNE: &str = "last_auto_prune";
/// `state_meta` key of the last automatic archive run.
pub(crate) const LAST_AUTO_ARCHIVE: &str = "last_auto_archive";

impl SessionDb {
    /// Whether the `state_meta` time stamp `key` says the last run is less
    /// than `interval_hours` old by the handle's clock, as the original
    /// reads it: a non-empty value that Python's `float()` parses, compared
    /// with IEEE arithmetic (an infinite stamp is always recent, a NaN one
    /// or a NaN interval never). A run that is due on a read-only handle is
    /// [`Error::ReadOnly`].
    pub(crate) fn ran_recently(&self, key: &str, interval_hours: f64) -> Result<bool> {
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
