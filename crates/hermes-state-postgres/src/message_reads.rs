//! Message pages, the conversation view (`api.md` §5.1, §5.2) and clearing
//! a session's messages (§11.5). The conversation is built by the query
//! crate's pure `build_conversation`, shared with the SQLite backend.

use hermes_state_core::conversation_repair::RepairError;
use hermes_state_types::Message;

use crate::PgStore;
use crate::error::{Context, PgError, Result};
use crate::lineage::root_to_tip;
use crate::rows::{MESSAGE_COLUMNS, message_from_row, select_list};

impl PgStore {
    /// How many sessions the lineage (root to `session_id`) has, and their
    /// active messages in id order, in one read.
    pub(crate) fn lineage_messages(&self, session_id: &str) -> Result<(usize, Vec<Message>)> {
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.session_id = ANY($1) AND m.active = 1 ORDER BY m.id",
            select_list("m", &MESSAGE_COLUMNS)
        );
        self.read(|tx| {
            let sessions = root_to_tip(tx, session_id)?;
            let rows = tx
                .query(&sql, &[&sessions])
                .context("reading the conversation")?
                .iter()
                .map(message_from_row)
                .collect();
            Ok((sessions.len(), rows))
        })
    }
}

/// The conversation repair's failure as this crate's error (the original's
/// `TypeError`).
pub(crate) fn repair_error(error: RepairError) -> PgError {
    PgError::TypeError(error.0)
}
