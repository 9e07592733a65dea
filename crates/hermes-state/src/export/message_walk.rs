//! One session's messages, one at a time: what a writer of a single
//! conversation (the CLI's Markdown export) needs without holding the
//! session in memory.

use std::ops::ControlFlow;

use hermes_state_types::Message;

use super::in_read_transaction;
use crate::db::SessionDb;
use crate::error::Result;

impl SessionDb {
    /// Calls `count` with the number of messages of the session
    /// [`SessionDb::get_messages_page`] would return (all pages; inactive ones
    /// with `include_inactive`), then `each` with those messages in id order,
    /// one at a time, all from one read snapshot: the count and the messages
    /// agree, and memory holds one message at a time. `count` or `each`
    /// returning [`ControlFlow::Break`] stops the walk. Returns the number of
    /// messages handed to `each`. An unknown session has no messages.
    pub fn walk_messages(
        &self,
        session_id: &str,
        include_inactive: bool,
        count: impl FnOnce(u64) -> ControlFlow<()>,
        each: impl FnMut(Message) -> ControlFlow<()>,
    ) -> Result<u64> {
        self.read(|conn| {
            in_read_transaction(conn, |conn| {
                let total = hermes_state_query::messages::count_session_messages(
                    conn,
                    session_id,
                    include_inactive,
                )?;
                if count(total).is_break() {
                    return Ok(0);
                }
                Ok(hermes_state_query::messages::for_each_message(
                    conn,
                    session_id,
                    include_inactive,
                    each,
                )?)
            })
        })
    }
}
