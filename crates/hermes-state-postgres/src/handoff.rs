//! The handoff state machine (`api.md` §2.5), with the SQLite backend's
//! transitions: a request only starts from a settled state (NULL,
//! `completed`, `failed`), a claim only takes a `pending` request, so two
//! gateways never run the same handoff. Each call is one transaction under
//! the session's key (`crate::transaction`).

use hermes_state_core::session_updates::{HandoffState, handoff_error_text};
use hermes_state_types::Session;

use crate::error::{Context, Result};
use crate::rows::{SESSION_COLUMNS, select_list, session_from_row};
use crate::{PgStore, WriteScope};

const REQUEST: &str = "UPDATE sessions SET handoff_state = 'pending', handoff_platform = $1, \
     handoff_error = NULL \
     WHERE id = $2 AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))";
const CLAIM: &str =
    "UPDATE sessions SET handoff_state = 'running' WHERE id = $1 AND handoff_state = 'pending'";
const COMPLETE: &str =
    "UPDATE sessions SET handoff_state = 'completed', handoff_error = NULL WHERE id = $1";
const FAIL: &str = "UPDATE sessions SET handoff_state = 'failed', handoff_error = $1 WHERE id = $2";

impl PgStore {
    /// Requests a handoff of the session to `platform` (`api.md` §2.5);
    /// returns whether it did: `false` for an unknown session or a handoff
    /// already `pending` or `running`.
    pub fn request_handoff(&self, session_id: &str, platform: &str) -> Result<bool> {
        self.write_in(
            "requesting a handoff",
            &WriteScope::session(session_id),
            |tx| {
                Ok(tx
                    .execute(REQUEST, &[&platform, &session_id])
                    .context("requesting a handoff")?
                    > 0)
            },
        )
    }

    /// Claims a pending handoff (`pending` → `running`) (`api.md` §2.5);
    /// returns whether this caller got it.
    pub fn claim_handoff(&self, session_id: &str) -> Result<bool> {
        self.write_in(
            "claiming a handoff",
            &WriteScope::session(session_id),
            |tx| {
                Ok(tx
                    .execute(CLAIM, &[&session_id])
                    .context("claiming a handoff")?
                    > 0)
            },
        )
    }

    /// Marks the session's handoff `completed` and clears its error
    /// (`api.md` §2.5), whatever its state was.
    pub fn complete_handoff(&self, session_id: &str) -> Result<()> {
        self.write_in(
            "completing a handoff",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(COMPLETE, &[&session_id])
                    .context("completing a handoff")?;
                Ok(())
            },
        )
    }

    /// Marks the session's handoff `failed` with the first 500 characters
    /// of `error` (`api.md` §2.5), whatever its state was.
    pub fn fail_handoff(&self, session_id: &str, error: &str) -> Result<()> {
        let error = handoff_error_text(error);
        self.write_in(
            "failing a handoff",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(FAIL, &[&error, &session_id])
                    .context("failing a handoff")?;
                Ok(())
            },
        )
    }

    /// The session's handoff state, platform and error (`api.md` §2.5);
    /// `None` for an unknown session.
    pub fn get_handoff_state(&self, session_id: &str) -> Result<Option<HandoffState>> {
        self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT handoff_state, handoff_platform, handoff_error FROM sessions \
                     WHERE id = $1",
                    &[&session_id],
                )
                .context("reading a handoff state")?
                .map(|row| HandoffState {
                    state: row.get(0),
                    platform: row.get(1),
                    error: row.get(2),
                }))
        })
    }

    /// The sessions with a `pending` handoff, oldest start first (`api.md`
    /// §2.5; equal starts by id).
    pub fn list_pending_handoffs(&self) -> Result<Vec<Session>> {
        let sql = format!(
            "SELECT {} FROM sessions s WHERE s.handoff_state = 'pending' \
             ORDER BY s.started_at, s.id",
            select_list("s", &SESSION_COLUMNS)
        );
        self.read(|tx| {
            Ok(tx
                .query(&sql, &[])
                .context("listing pending handoffs")?
                .iter()
                .map(session_from_row)
                .collect())
        })
    }
}
