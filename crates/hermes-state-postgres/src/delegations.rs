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

use hermes_state_core::coordination::{Delegation, DelegationFilter};
use hermes_state_types::NewDelegation;
use postgres::Row;
use postgres::types::ToSql;

use crate::error::{Context, PgError, Result};
use crate::{PgStore, WriteScope};

/// Every column of `async_delegations`, in v23 table order.
const DELEGATION_COLUMNS: &str = "delegation_id, origin_session, origin_ui_session_id, parent_session_id, state, dispatched_at, completed_at, updated_at, event_json, result_json, delivery_state, delivery_attempts, delivered_at, owner_pid, owner_started_at, task_json, delivery_claim, delivery_claimed_at";

const INSERT: &str = "INSERT INTO async_delegations (delegation_id, origin_session, origin_ui_session_id, parent_session_id, state, dispatched_at, updated_at, event_json, task_json, owner_pid, owner_started_at)
VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $10)";
const UPDATE_STATE: &str = "UPDATE async_delegations SET state = $2, event_json = COALESCE($3, event_json), updated_at = $4 WHERE delegation_id = $1";
const FINISH: &str = "UPDATE async_delegations SET state = $2, result_json = COALESCE($3, result_json), completed_at = $4, updated_at = $4 WHERE delegation_id = $1";

impl PgStore {
    /// Records a new async delegation: `dispatched_at = updated_at = now`;
    /// `delivery_state = 'pending'`, `delivery_attempts = 0`, the other
    /// delivery columns NULL.
    ///
    /// Errors: [`PgError::InvalidInput`] for an empty `delegation_id`; kind
    /// `Constraint` when the id is already recorded (the first row stays).
    pub fn record_delegation(&self, delegation: &NewDelegation) -> Result<()> {
        const WHAT: &str = "recording a delegation";
        if delegation.delegation_id.is_empty() {
            return Err(PgError::InvalidInput(
                "a delegation needs a non-empty delegation_id".to_owned(),
            ));
        }
        // One statement on the delegation's row: its row lock orders it.
        self.write_in(WHAT, &WriteScope::rows(), |tx| {
            let now = self.now();
            tx.execute(
                INSERT,
                &[
                    &delegation.delegation_id,
                    &delegation.origin_session,
                    &delegation.origin_ui_session_id,
                    &delegation.parent_session_id,
                    &delegation.state,
                    &now,
                    &delegation.event_json,
                    &delegation.task_json,
                    &delegation.owner_pid,
                    &delegation.owner_started_at,
                ],
            )
            .context(WHAT)?;
            Ok(())
        })
    }

    /// Sets a delegation's `state` and, when given, its `event_json`
    /// (`None` keeps the stored event); `updated_at = now`. Returns whether
    /// the delegation exists.
    pub fn update_delegation_state(
        &self,
        delegation_id: &str,
        state: &str,
        event_json: Option<&str>,
    ) -> Result<bool> {
        const WHAT: &str = "updating a delegation";
        // One statement on the delegation's row: its row lock orders it.
        self.write_in(WHAT, &WriteScope::rows(), |tx| {
            let now = self.now();
            let changed = tx
                .execute(UPDATE_STATE, &[&delegation_id, &state, &event_json, &now])
                .context(WHAT)?;
            Ok(changed > 0)
        })
    }

    /// Finishes a delegation: its final `state`, its `result_json` when
    /// given (`None` keeps the stored one), `completed_at = updated_at =
    /// now`; finishing again overwrites these, and the delivery columns are
    /// left alone. Returns whether the delegation exists.
    pub fn finish_delegation(
        &self,
        delegation_id: &str,
        state: &str,
        result_json: Option<&str>,
    ) -> Result<bool> {
        const WHAT: &str = "finishing a delegation";
        // One statement on the delegation's row: its row lock orders it.
        self.write_in(WHAT, &WriteScope::rows(), |tx| {
            let now = self.now();
            let changed = tx
                .execute(FINISH, &[&delegation_id, &state, &result_json, &now])
                .context(WHAT)?;
            Ok(changed > 0)
        })
    }

    /// One delegation, or `None` for an unknown id.
    pub fn get_delegation(&self, delegation_id: &str) -> Result<Option<Delegation>> {
        let sql =
            format!("SELECT {DELEGATION_COLUMNS} FROM async_delegations WHERE delegation_id = $1");
        self.read(|tx| {
            Ok(tx
                .query_opt(&sql, &[&delegation_id])
                .context("reading a delegation")?
                .map(|row| delegation_from_row(&row)))
        })
    }

    /// The delegations matching every given field of `filter` (all of them
    /// for the default filter), oldest dispatch first, ties by id.
    pub fn list_delegations(&self, filter: &DelegationFilter) -> Result<Vec<Delegation>> {
        let mut sql = format!("SELECT {DELEGATION_COLUMNS} FROM async_delegations WHERE TRUE");
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::new();
        for (column, value) in [
            ("state", &filter.state),
            ("delivery_state", &filter.delivery_state),
            ("origin_session", &filter.origin_session),
        ] {
            if let Some(value) = value {
                params.push(value);
                sql.push_str(&format!(" AND {column} = ${}", params.len()));
            }
        }
        sql.push_str(" ORDER BY dispatched_at, delegation_id COLLATE \"C\"");
        self.read(|tx| {
            Ok(tx
                .query(&sql, &params)
                .context("listing delegations")?
                .iter()
                .map(delegation_from_row)
                .collect())
        })
    }
}

/// A row selected with [`DELEGATION_COLUMNS`], by name.
fn delegation_from_row(row: &Row) -> Delegation {
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
