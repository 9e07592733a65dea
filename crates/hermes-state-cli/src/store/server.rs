//! A PostgreSQL store, opened with the file's rules: reading commands
//! read-only; writing ones after a read-only open has found the store and
//! checked that it was not moved; a new store made only by a command that
//! makes one, and told as a new file is.

use hermes_state::{PostgresUrl, SessionStore, StoreLocation, open_store};

use super::{Access, Context};
use crate::error::CliResult;

impl Context {
    /// Opens the PostgreSQL store for `access`: a schema that holds no
    /// store is an error ("holds no hermes-state store") unless the command
    /// makes one, and the writable open (which may upgrade the schema)
    /// comes after the read-only checks.
    pub(super) fn open_server(
        &self,
        url: &PostgresUrl,
        access: Access,
    ) -> CliResult<Box<dyn SessionStore>> {
        self.refuse_read_only(access)?;
        let location = StoreLocation::Postgres(url.clone());
        let fail = |e: hermes_state::Error| self.fail(&e);
        if access == Access::Read {
            let reader = open_store(&location, true).map_err(fail)?;
            self.note_moved(reader.as_ref());
            return Ok(reader);
        }
        let probe = open_store(&location, true);
        let creates = matches!(&probe, Err(e) if holds_no_store(e));
        match probe {
            Ok(reader) => self.refuse_moved(reader.as_ref())?,
            Err(e) if access == Access::Write => return Err(fail(e)),
            // The writable open makes the store, upgrades an older one, or
            // says why it cannot.
            Err(_) => {}
        }
        let store = open_store(&location, false).map_err(fail)?;
        if creates {
            self.out
                .note(format!("created a new store at {}", self.path.display()));
        }
        Ok(store)
    }
}

/// Whether a read-only open of a PostgreSQL store failed because its
/// schema holds no store at all (the writable open creates one), rather
/// than an older one (which it upgrades) or for another reason. The
/// backend says so in words only.
fn holds_no_store(error: &hermes_state::Error) -> bool {
    error.kind() == hermes_state::ErrorKind::NotFound
        && error.to_string().contains("holds no hermes-state store")
}
