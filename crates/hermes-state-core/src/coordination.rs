//! The coordination tables (`api.md` §12): a compression lock, an async
//! delegation and a delegation filter, as every backend gives and takes
//! them.

use serde::Serialize;

/// A session's compression lock as stored, expired or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompressionLock {
    /// Who holds it (free text; structured holders carry a `pid=<n>` field).
    pub holder: String,
    /// `expires_at < now` (a NULL expiry counts as not expired).
    pub expired: bool,
}

/// One row of `async_delegations` (`schema-v23.md` §4.8).
///
/// **Beyond the original:** the v23 Python store only creates this table;
/// rows are written by Hermes' delegation subsystem (background subagent
/// runs whose results are delivered back to the conversation that started
/// them), on its own connections. This port offers a small typed API over
/// the exact v23 columns (the facade's `SessionDb` records, updates,
/// finishes and lists them) so Rust callers can work on delegations in the
/// same file. Delegations reference sessions by id only (no foreign key):
/// deleting or pruning sessions never touches them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delegation {
    /// Primary key, chosen by the dispatcher.
    pub delegation_id: String,
    /// The session that dispatched the delegation (the one to report back to).
    pub origin_session: String,
    /// The UI (desktop/web) session id of the origin, `''` when none.
    pub origin_ui_session_id: String,
    /// The parent agent session the delegated child runs under, if any.
    pub parent_session_id: Option<String>,
    /// Lifecycle state as the subsystem names it (e.g. `queued`, `running`,
    /// `completed`, `error`).
    pub state: String,
    /// When it was dispatched (Unix seconds).
    pub dispatched_at: f64,
    /// When it finished; `None` while running.
    pub completed_at: Option<f64>,
    /// Last change of the row (Unix seconds).
    pub updated_at: f64,
    /// The latest progress or completion event, as JSON text.
    pub event_json: Option<String>,
    /// The final result, as JSON text.
    pub result_json: Option<String>,
    /// Delivery of the result to the origin session: `pending` (default),
    /// `delivered`, or another state of the delivery side.
    pub delivery_state: String,
    /// How many deliveries were attempted.
    pub delivery_attempts: i64,
    /// When the result was delivered.
    pub delivered_at: Option<f64>,
    /// The process running the delegation, to detect orphans.
    pub owner_pid: Option<i64>,
    /// That process's start time, to tell a reused pid apart.
    pub owner_started_at: Option<i64>,
    /// The task (goal, context, toolsets, …), as JSON text.
    pub task_json: Option<String>,
    /// The id of the worker that claimed the delivery, while it delivers.
    pub delivery_claim: Option<String>,
    /// When that claim was taken.
    pub delivery_claimed_at: Option<f64>,
}

/// Which delegations `list_delegations` returns: every field that is set
/// must match exactly; the default filter matches all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DelegationFilter {
    /// Only this `state`.
    pub state: Option<String>,
    /// Only this `delivery_state`.
    pub delivery_state: Option<String>,
    /// Only delegations dispatched by this session.
    pub origin_session: Option<String>,
}
