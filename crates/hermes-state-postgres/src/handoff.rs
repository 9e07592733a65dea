//! The handoff state machine (`api.md` §2.5), with the SQLite backend's
//! transitions: a request only starts from a settled state (NULL,
//! `completed`, `failed`), a claim only takes a `pending` request, so two
//! gateways never run the same handoff. Each call is one transaction under
//! the session's key (`crate::transaction`).

pub(crate) const REQUEST: &str = "UPDATE sessions SET handoff_state = 'pending', handoff_platform = $1, \
     handoff_error = NULL \
     WHERE id = $2 AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))";
pub(crate) const CLAIM: &str =
    "UPDATE sessions SET handoff_state = 'running' WHERE id = $1 AND handoff_state = 'pending'";
pub(crate) const COMPLETE: &str =
    "UPDATE sessions SET handoff_state = 'completed', handoff_error = NULL WHERE id = $1";
pub(crate) const FAIL: &str =
    "UPDATE sessions SET handoff_state = 'failed', handoff_error = $1 WHERE id = $2";
