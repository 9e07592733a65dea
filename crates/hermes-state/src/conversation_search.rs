//! Search by conversation on the facade.

use hermes_state_query::conversation_search::{self, ConversationHit, ConversationScope};
use hermes_state_query::search::{FtsCapabilities, SearchOptions};

use crate::db::SessionDb;
use crate::error::Result;

impl SessionDb {
    /// Searches the messages like [`SessionDb::search_messages`] (same
    /// query syntax, filters and sort) and collapses the hits by
    /// conversation — a session and its compression continuations
    /// (`api.md` §9.2) — so a long conversation split into segments shows
    /// once, with its best hit, its title, its number of hits and their time
    /// span. Branch children and delegates are conversations of their own.
    /// `options.limit` and `options.offset` count conversations.
    ///
    /// Hits are read page by page until the conversations asked for are
    /// filled and at least
    /// [`MAX_HITS_READ`](hermes_state_query::conversation_search::MAX_HITS_READ)
    /// hits were read, or no hit is left; below that many hits, counts and
    /// spans are exact. Errors as [`SessionDb::search_messages`].
    pub fn search_conversations(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<ConversationHit>> {
        self.read(|conn| {
            let caps = FtsCapabilities::from_objects(conn, &self.fts_objects(conn)?)?;
            Ok(conversation_search::search_conversations(
                conn, query, options, caps,
            )?)
        })
    }

    /// [`SessionDb::search_conversations`] over the hits `scope` takes: only
    /// some sessions (a lineage, one segment) and a time window (`since`
    /// inclusive, `until` exclusive). Hits out of scope count nowhere — not
    /// in `hits`, `session_ids` nor the time span — and `options.limit` and
    /// `options.offset` count the conversations left. Errors as
    /// [`SessionDb::search_messages`].
    pub fn search_conversations_in(
        &self,
        query: &str,
        options: &SearchOptions,
        scope: &ConversationScope,
    ) -> Result<Vec<ConversationHit>> {
        self.read(|conn| {
            let caps = FtsCapabilities::from_objects(conn, &self.fts_objects(conn)?)?;
            Ok(conversation_search::search_conversations_in(
                conn, query, options, scope, caps,
            )?)
        })
    }
}
