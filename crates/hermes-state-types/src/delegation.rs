//! The argument of recording an async delegation, shared by both backends.

/// A new row of `async_delegations` (`schema-v23.md` §4.8), the argument of
/// `record_delegation` on either backend (the row read back is the query
/// crate's `Delegation`, whose fields say what each column means). Build it
/// with [`NewDelegation::new`] and set the optional fields directly.
///
/// It lives here, beside [`crate::NewSession`], because the SQLite facade
/// and the PostgreSQL backend both take it and neither depends on the other.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewDelegation {
    /// Primary key; must not be empty.
    pub delegation_id: String,
    /// The dispatching session.
    pub origin_session: String,
    /// The UI session id of the origin; `''` (the column default) when none.
    pub origin_ui_session_id: String,
    /// The parent agent session, if any.
    pub parent_session_id: Option<String>,
    /// Initial state (e.g. `queued` or `running`).
    pub state: String,
    /// An initial event, as JSON text.
    pub event_json: Option<String>,
    /// The task, as JSON text.
    pub task_json: Option<String>,
    /// The process running the delegation.
    pub owner_pid: Option<i64>,
    /// That process's start time.
    pub owner_started_at: Option<i64>,
}

impl NewDelegation {
    /// A delegation with its id, origin session and initial state; every other
    /// field empty.
    pub fn new(
        delegation_id: impl Into<String>,
        origin_session: impl Into<String>,
        state: impl Into<String>,
    ) -> NewDelegation {
        NewDelegation {
            delegation_id: delegation_id.into(),
            origin_session: origin_session.into(),
            state: state.into(),
            ..NewDelegation::default()
        }
    }
}
