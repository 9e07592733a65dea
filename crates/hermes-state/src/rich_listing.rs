//! Listing sessions for pickers and cleanups, and archiving them (`api.md`
//! §10, §11.3 filters, §11.4, §11.6). Reads are `hermes_state_query::rich_listing`;
//! the archiving writes go through the write path.

use hermes_state_query::prune::{self, PruneSelection};
use hermes_state_query::rich_listing::{self};

use crate::error::{Error, Result};
use crate::session_updates::set_lineage_flag_in;

/// The candidates of `selection` at `now`, after refusing a non-finite
/// `older_than_days` or float filter as [`crate::ErrorKind::InvalidInput`].
pub(crate) fn checked(selection: &PruneSelection, now: f64) -> Result<prune::PruneCandidates> {
    if let Some((name, value)) = selection.non_finite() {
        return Err(Error::InvalidInput(format!(
            "{name} must be finite, got {value}"
        )));
    }
    Ok(prune::PruneCandidates::of(selection, now))
}

/// Archives the sessions idle since before `idle_before` (the selection of
/// [`rich_listing::stale_session_ids`]) with their compression lineages,
/// inside the caller's transaction; returns how many sessions were selected.
/// The one idle-session rule of `archive_stale_sessions` and
/// `maybe_auto_archive`.
pub(crate) fn archive_stale(
    conn: &rusqlite::Connection,
    idle_before: f64,
    exclude_pinned: bool,
) -> Result<usize> {
    let ids = rich_listing::stale_session_ids(conn, idle_before, exclude_pinned)?;
    archive_lineages(conn, &ids)
}

/// Archives the compression lineage of each session; returns how many
/// sessions were given (the original's count, whatever changed).
pub(crate) fn archive_lineages(conn: &rusqlite::Connection, ids: &[String]) -> Result<usize> {
    for id in ids {
        set_lineage_flag_in(conn, "archiving a session", "archived", id, true)?;
    }
    Ok(ids.len())
}
