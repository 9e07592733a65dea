//! Search by conversation on PostgreSQL: this backend's `search_messages`
//! pages collapsed by compression lineage with the contract crate's grouping
//! ([`group_conversations`]), so both backends group, count, span, page and
//! title alike. Everything runs in one read transaction.
//!
//! A step up a chain is taken as SQLite's reads take it: the parent ended
//! with `compression` and the session is not a `tool` session; its branch
//! and delegate markers live in `model_config` JSON text that may not be
//! valid JSON, so they are tested by the contract crate's [`has_marker`] on
//! the row SQL returns, as in `lookups`.

use hermes_state_core::conversation_search::ConversationSource;
use hermes_state_core::lookups::has_marker;
use hermes_state_core::search::{SearchHit, SearchOptions};
use postgres::Transaction;

use crate::error::{Context, PgError, Result};
use crate::lookups::compression_tip;
use crate::search::search_in;

/// The parent of `$1` when it ended with `compression` and `$1` is not a
/// `tool` session, with `$1`'s `model_config` for the marker test.
const CONTINUED_FROM: &str = "SELECT p.id, c.model_config FROM sessions c
JOIN sessions p ON p.id = c.parent_session_id
WHERE c.id = $1 AND p.end_reason = 'compression' AND COALESCE(c.source, '') <> 'tool'";

/// The store, inside one read transaction, as a [`ConversationSource`].
pub(crate) struct PgSource<'a, 'b> {
    pub(crate) tx: &'a mut Transaction<'b>,
}

impl ConversationSource for PgSource<'_, '_> {
    type Error = PgError;

    fn search_page(&mut self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
        search_in(self.tx, query, options)
    }

    fn continued_from(&mut self, session_id: &str) -> Result<Option<String>> {
        let row = self
            .tx
            .query_opt(CONTINUED_FROM, &[&session_id])
            .context("walking a compression chain")?;
        Ok(row.and_then(|row| {
            let model_config: Option<&str> = row.get(1);
            (!has_marker(model_config, "_branched_from")
                && !has_marker(model_config, "_delegate_from"))
            .then(|| row.get(0))
        }))
    }

    fn compression_tip(&mut self, session_id: &str) -> Result<String> {
        compression_tip(self.tx, session_id)
    }

    fn session_title(&mut self, session_id: &str) -> Result<Option<String>> {
        Ok(self
            .tx
            .query_opt("SELECT title FROM sessions WHERE id = $1", &[&session_id])
            .context("reading a title")?
            .and_then(|row| row.get(0)))
    }
}
