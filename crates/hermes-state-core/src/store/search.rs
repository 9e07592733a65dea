//! The `Search` part of the contract: full-text search of messages, by hit and
//! by conversation (`api.md` §7, §8).

use crate::cancel::Cancel;
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
    /// [`Search::search_messages`] that stops when `cancel` is raised, from
    /// another thread, while it runs: the statement running in the database
    /// is stopped (SQLite interrupts it, PostgreSQL cancels it on the
    /// server) and the call returns [`Error::Cancelled`](crate::Error::Cancelled)
    /// — never the hits found so far, never an empty list. A flag raised
    /// before the call stops it before it reads. When not raised, the
    /// answer is `search_messages`'s.
    fn search_messages_cancellable(
        &self,
        query: &str,
        options: &SearchOptions,
        cancel: &Cancel,
    ) -> Result<Vec<SearchHit>>;
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
