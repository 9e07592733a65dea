//! The original's `export_all` shape, one session at a time.
//!
//! [`SessionDb::export_all`] returns every session with its messages in one
//! `Vec`, as the original does; a caller that writes the sessions out (the
//! CLI's default `export`) needs only one at a time. This walk reads the same
//! sessions, in the same order, from the same single read transaction, and
//! hands each to the caller before reading the next: memory is bounded by the
//! largest session, not by the store.

use std::ops::ControlFlow;

use hermes_state_query::MessagePage;

use super::{SessionExport, in_read_transaction, sessions_by_last_active};
use crate::db::SessionDb;
use crate::error::Result;

impl SessionDb {
    /// Calls `each` with what [`SessionDb::export_all`] would return, one
    /// session at a time, in the same order and from one read snapshot.
    ///
    /// `each` returning [`ControlFlow::Break`] stops the walk (e.g. when the
    /// output failed). Returns the number of sessions handed to `each`.
    pub fn export_all_each(
        &self,
        source: Option<&str>,
        mut each: impl FnMut(SessionExport) -> ControlFlow<()>,
    ) -> Result<u64> {
        let source = source.filter(|s| !s.is_empty());
        self.read(|conn| {
            in_read_transaction(conn, |conn| {
                let mut handed = 0;
                for (session, last_active) in sessions_by_last_active(conn, source)? {
                    let messages = hermes_state_query::get_messages(
                        conn,
                        &session.id,
                        MessagePage::default(),
                    )?;
                    handed += 1;
                    let export = SessionExport {
                        session,
                        last_active: Some(last_active),
                        messages,
                    };
                    if each(export).is_break() {
                        break;
                    }
                }
                Ok(handed)
            })
        })
    }
}
