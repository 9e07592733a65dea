//! Message pages, the conversation view (`api.md` §5.1, §5.2) and clearing
//! a session's messages (§11.5). The conversation is built by the query
//! crate's pure `build_conversation`, shared with the SQLite backend.

use hermes_state_core::conversation::build_conversation;
use hermes_state_core::conversation_repair::RepairError;
use hermes_state_core::messages::MessagePage;
use hermes_state_core::messages::{
    ResumeConversations, ancestor_display_prefix, resume_conversations,
};
use hermes_state_types::{ConversationMessage, Message};

use crate::error::{Context, PgError, Result};
use crate::lineage::root_to_tip;
use crate::rows::{MESSAGE_COLUMNS, message_from_row, select_list};
use crate::{PgStore, WriteScope};

impl PgStore {
    /// The messages of a session in insertion (id) order, the inactive ones
    /// too with `include_inactive`, paged by `limit` and `offset` with
    /// SQLite's meaning of negative values (no limit; no rows skipped),
    /// which PostgreSQL refuses as such.
    pub fn get_messages_page(&self, session_id: &str, page: MessagePage) -> Result<Vec<Message>> {
        let active = if page.include_inactive {
            ""
        } else {
            " AND m.active = 1"
        };
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.session_id = $1{active} \
             ORDER BY m.id LIMIT $2 OFFSET $3",
            select_list("m", &MESSAGE_COLUMNS)
        );
        let limit = page.limit.filter(|limit| *limit >= 0);
        let offset = page.offset.max(0);
        self.read(|tx| {
            Ok(tx
                .query(&sql, &[&session_id, &limit, &offset])
                .context("reading messages")?
                .iter()
                .map(message_from_row)
                .collect())
        })
    }

    /// The OpenAI-style conversation of a session (`api.md` §5.2); with
    /// `include_ancestors` its lineage's earlier messages come first.
    /// Rewound messages are left out.
    pub fn get_messages_as_conversation(
        &self,
        session_id: &str,
        include_ancestors: bool,
    ) -> Result<Vec<ConversationMessage>> {
        self.get_messages_as_conversation_with(session_id, include_ancestors, false)
    }

    /// [`PgStore::get_messages_as_conversation`], optionally with the
    /// inactive (rewound or compacted) messages too.
    pub fn get_messages_as_conversation_with(
        &self,
        session_id: &str,
        include_ancestors: bool,
        include_inactive: bool,
    ) -> Result<Vec<ConversationMessage>> {
        let active = if include_inactive {
            ""
        } else {
            " AND m.active = 1"
        };
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.session_id = ANY($1){active} ORDER BY m.id",
            select_list("m", &MESSAGE_COLUMNS)
        );
        let rows = self.read(|tx| {
            let sessions = if include_ancestors {
                root_to_tip(tx, session_id)?
            } else {
                vec![session_id.to_owned()]
            };
            Ok(tx
                .query(&sql, &[&sessions])
                .context("reading the conversation")?
                .iter()
                .map(message_from_row)
                .collect::<Vec<_>>())
        })?;
        Ok(build_conversation(&rows, include_ancestors))
    }

    /// The two histories of a resume (the original's
    /// `get_resume_conversations`), from one read of the lineage's active
    /// messages, built by the contract crate's rule as on SQLite.
    pub fn get_resume_conversations(&self, session_id: &str) -> Result<ResumeConversations> {
        let (_, rows) = self.lineage_messages(session_id)?;
        resume_conversations(&rows, session_id).map_err(repair_error)
    }

    /// The display history's messages of the session's ancestors (the
    /// original's `get_ancestor_display_prefix`); `[]` without ancestors.
    pub fn get_ancestor_display_prefix(
        &self,
        session_id: &str,
    ) -> Result<Vec<ConversationMessage>> {
        let (sessions, rows) = self.lineage_messages(session_id)?;
        if sessions <= 1 {
            return Ok(Vec::new());
        }
        Ok(ancestor_display_prefix(&rows, session_id))
    }

    /// How many sessions the lineage (root to `session_id`) has, and their
    /// active messages in id order, in one read.
    fn lineage_messages(&self, session_id: &str) -> Result<(usize, Vec<Message>)> {
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

    /// Whether the session has inactive (rewound or compacted) messages
    /// (`api.md` §5.3); `false` for an unknown session.
    pub fn has_archived_messages(&self, session_id: &str) -> Result<bool> {
        self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT 1 FROM messages WHERE session_id = $1 AND active = 0 LIMIT 1",
                    &[&session_id],
                )
                .context("probing messages")?
                .is_some())
        })
    }

    /// Deletes every message of a session (inactive ones too) and zeroes its
    /// message and tool-call counters; token counters, title and times stay.
    /// Unknown ids are ignored.
    pub fn clear_messages(&self, session_id: &str) -> Result<()> {
        self.write_in(
            "clearing messages",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute("DELETE FROM messages WHERE session_id = $1", &[&session_id])
                    .context("clearing messages")?;
                tx.execute(
                    "UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = $1",
                    &[&session_id],
                )
                .context("clearing messages")?;
                Ok(())
            },
        )
    }
}

/// The conversation repair's failure as this crate's error (the original's
/// `TypeError`).
fn repair_error(error: RepairError) -> PgError {
    PgError::TypeError(error.0)
}
