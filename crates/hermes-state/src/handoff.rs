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

/// The row type of [`SessionDb::get_handoff_state`](hermes_state_core::store::Sessions::get_handoff_state), re-exported by the crate.
pub use hermes_state_query::session_updates::HandoffState;

/// The longest handoff error stored, in characters.
pub use hermes_state_query::session_updates::HANDOFF_ERROR_MAX_CHARS;

pub(crate) const REQUEST: &str =
    "UPDATE sessions SET handoff_state = 'pending', handoff_platform = ?1, handoff_error = NULL
WHERE id = ?2 AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))";
pub(crate) const CLAIM: &str =
    "UPDATE sessions SET handoff_state = 'running' WHERE id = ?1 AND handoff_state = 'pending'";
pub(crate) const COMPLETE: &str =
    "UPDATE sessions SET handoff_state = 'completed', handoff_error = NULL WHERE id = ?1";
pub(crate) const FAIL: &str =
    "UPDATE sessions SET handoff_state = 'failed', handoff_error = ?1 WHERE id = ?2";
