//! Async delegations (`schema-v23.md` §4.8; `api.md` §12.3) on PostgreSQL,
//! with the SQLite backend's rules: recording one (`dispatched_at =
//! updated_at = now`, the delivery columns left to their defaults), moving
//! its state, finishing it, reading one and listing them.
//!
//! Like SQLite's, the table references no session: deleting or pruning
//! sessions never touches a delegation. Ties on `dispatched_at` are
//! ordered by id in byte order (`COLLATE "C"`), as SQLite's `BINARY`
//! orders them; the v23 data model declares `delegation_id` without a
//! collation, so the order says it.

use hermes_state_core::coordination::Delegation;
use postgres::Row;

/// Every column of `async_delegations`, in v23 table order.
pub(crate) const DELEGATION_COLUMNS: &str = "delegation_id, origin_session, origin_ui_session_id, parent_session_id, state, dispatched_at, completed_at, updated_at, event_json, result_json, delivery_state, delivery_attempts, delivered_at, owner_pid, owner_started_at, task_json, delivery_claim, delivery_claimed_at";

pub(crate) const INSERT: &str = "INSERT INTO async_delegations (delegation_id, origin_session, origin_ui_session_id, parent_session_id, state, dispatched_at, updated_at, event_json, task_json, owner_pid, owner_started_at)
VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $10)";
pub(crate) const UPDATE_STATE: &str = "UPDATE async_delegations SET state = $2, event_json = COALESCE($3, event_json), updated_at = $4 WHERE delegation_id = $1";
pub(crate) const FINISH: &str = "UPDATE async_delegations SET state = $2, result_json = COALESCE($3, result_json), completed_at = $4, updated_at = $4 WHERE delegation_id = $1";

/// A row selected with [`DELEGATION_COLUMNS`], by name.
pub(crate) fn delegation_from_row(row: &Row) -> Delegation {
    Delegation {
        delegation_id: row.get("delegation_id"),
        origin_session: row.get("origin_session"),
        origin_ui_session_id: row.get("origin_ui_session_id"),
        parent_session_id: row.get("parent_session_id"),
        state: row.get("state"),
        dispatched_at: row.get("dispatched_at"),
        completed_at: row.get("completed_at"),
        updated_at: row.get("updated_at"),
        event_json: row.get("event_json"),
        result_json: row.get("result_json"),
        delivery_state: row.get("delivery_state"),
        delivery_attempts: row.get("delivery_attempts"),
        delivered_at: row.get("delivered_at"),
        owner_pid: row.get("owner_pid"),
        owner_started_at: row.get("owner_started_at"),
        task_json: row.get("task_json"),
        delivery_claim: row.get("delivery_claim"),
        delivery_claimed_at: row.get("delivery_claimed_at"),
    }
}
