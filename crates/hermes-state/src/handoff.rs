//! The handoff state machine (`api.md` §2.5): a session is handed from one
//! platform to another (a CLI conversation continued on Telegram) through
//! its `handoff_state` column:
//!
//! ```text
//! NULL / completed / failed --request--> pending --claim--> running
//! running --complete--> completed        any --fail--> failed
//! ```
//!
//! A request only starts from a settled state, and a claim only takes a
//! pending request, so two gateways never run the same handoff.

use hermes_state_query::session_updates as query;
/// The row type of [`SessionDb::get_handoff_state`], re-exported by the crate.
pub use hermes_state_query::session_updates::HandoffState;
use hermes_state_types::Session;

use crate::db::SessionDb;
use crate::error::{Result, WriteContext};

/// The longest handoff error stored, in characters.
pub use hermes_state_query::session_updates::HANDOFF_ERROR_MAX_CHARS;

const REQUEST: &str =
    "UPDATE sessions SET handoff_state = 'pending', handoff_platform = ?1, handoff_error = NULL
WHERE id = ?2 AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))";
const CLAIM: &str =
    "UPDATE sessions SET handoff_state = 'running' WHERE id = ?1 AND handoff_state = 'pending'";
const COMPLETE: &str =
    "UPDATE sessions SET handoff_state = 'completed', handoff_error = NULL WHERE id = ?1";
const FAIL: &str = "UPDATE sessions SET handoff_state = 'failed', handoff_error = ?1 WHERE id = ?2";

impl SessionDb {
    /// Requests a handoff of the session to `platform` (`api.md` §2.5): when
    /// no handoff is in flight (state NULL, `completed` or `failed`) the state
    /// becomes `pending`, the platform is stored and the last error cleared.
    /// Returns whether it did; `false` for an unknown session or a handoff
    /// already `pending` or `running`.
    pub fn request_handoff(&self, session_id: &str, platform: &str) -> Result<bool> {
        self.write("requesting a handoff", |conn| {
            let changed = conn
                .execute(REQUEST, [platform, session_id])
                .context("requesting a handoff")?;
            Ok(changed > 0)
        })
    }

    /// Claims a pending handoff (`pending` → `running`) (`api.md` §2.5);
    /// returns whether this caller got it.
    pub fn claim_handoff(&self, session_id: &str) -> Result<bool> {
        self.write("claiming a handoff", |conn| {
            let changed = conn
                .execute(CLAIM, [session_id])
                .context("claiming a handoff")?;
            Ok(changed > 0)
        })
    }

    /// Marks the session's handoff `completed` and clears its error (`api.md`
    /// §2.5), whatever its state was.
    pub fn complete_handoff(&self, session_id: &str) -> Result<()> {
        self.update_one("completing a handoff", COMPLETE, [session_id])
    }

    /// Marks the session's handoff `failed` with the first 500 characters of
    /// `error` (`api.md` §2.5), whatever its state was.
    pub fn fail_handoff(&self, session_id: &str, error: &str) -> Result<()> {
        let error = query::handoff_error_text(error);
        self.update_one("failing a handoff", FAIL, [error, session_id])
    }

    /// The session's handoff state, platform and error (`api.md` §2.5);
    /// `None` for an unknown session.
    pub fn get_handoff_state(&self, session_id: &str) -> Result<Option<HandoffState>> {
        self.read(|conn| Ok(query::handoff_state(conn, session_id)?))
    }

    /// The sessions with a `pending` handoff, oldest start first (`api.md` §2.5).
    pub fn list_pending_handoffs(&self) -> Result<Vec<Session>> {
        self.read(|conn| Ok(query::pending_handoffs(conn)?))
    }
}
