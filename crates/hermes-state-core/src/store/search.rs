//! The `Search` part of the contract: full-text search of messages, by hit and
//! by conversation (`api.md` §7, §8).

use crate::conversation_search::{ConversationHit, ConversationScope};
use crate::error::Result;
use crate::search::{SearchHit, SearchOptions};

/// Full-text search of messages, by hit and by conversation (`api.md` §7, §8).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Search {
    /// `api.md` §8.
    fn search_messages(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>>;
    /// `api.md` §8 by conversation (§9.2): hits collapsed by compression
    /// chain; `options.limit`/`offset` count conversations.
    fn search_conversations(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<ConversationHit>>;
    /// [`SessionStore::search_conversations`](crate::store::Search::search_conversations) over the hits `scope` takes.
    fn search_conversations_in(
        &self,
        query: &str,
        options: &SearchOptions,
        scope: &ConversationScope,
    ) -> Result<Vec<ConversationHit>>;
}
