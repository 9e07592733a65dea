//! A store moved elsewhere by `migrate-to` (a file or a PostgreSQL store
//! whose `superseded_by` names the new one): noted on every read, and
//! refused to writes unless `--write-moved`.

use hermes_state::prelude::*;
use hermes_state::{SessionStore, StoreLocation};

use super::Context;
use crate::error::{CliError, CliResult};

impl Context {
    /// Says so when the store was moved elsewhere (`migrate-to`, from a
    /// file or from PostgreSQL): what it holds is the state at the move, and
    /// the agent writes there.
    pub(super) fn note_moved(&self, store: &dyn SessionStore) {
        let Ok(Some(target)) = store.get_meta(hermes_state::SUPERSEDED_BY) else {
            return;
        };
        // Shown as parsed and redacted: an older release wrote some URLs
        // into the marker with their password.
        let target = StoreLocation::redact_text(&target);
        let holder = if store.as_sqlite().is_some() {
            "this file"
        } else {
            "this PostgreSQL store"
        };
        let when = store
            .get_meta(hermes_state::SUPERSEDED_AT)
            .ok()
            .flatten()
            .and_then(|at| at.parse::<f64>().ok())
            .map(|at| format!(" on {}", crate::output::datetime(at)))
            .unwrap_or_default();
        self.out.note(format!(
            "note: this store was moved to {target}{when}; {holder} holds it as it was then"
        ));
    }

    /// Refuses a writing command on a store that was moved elsewhere,
    /// before anything is written (no upgrade either): its writes belong to
    /// the store it moved to, and writing here would make two copies that
    /// drift apart. `--write-moved` writes all the same, with the note.
    pub(crate) fn refuse_moved(&self, store: &dyn SessionStore) -> CliResult {
        let moved = store
            .get_meta(hermes_state::SUPERSEDED_BY)
            .map_err(|e| self.fail(&e))?;
        let Some(target) = moved else {
            return Ok(());
        };
        if self.write_moved {
            self.note_moved(store);
            return Ok(());
        }
        let target = StoreLocation::redact_text(&target);
        Err(CliError::usage(format!(
            "`{}` writes, but this store was moved to {target}; writing here would make the two copies drift apart",
            self.command
        ))
        .hint(format!(
            "write to the new store (--database-url {target}), or pass --write-moved to write to this copy anyway"
        )))
    }
}
