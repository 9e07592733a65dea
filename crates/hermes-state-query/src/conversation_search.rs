//! Search by conversation on a SQLite store: the grouping of
//! `hermes_state_core::conversation_search` (its documentation says what a
//! conversation is and how hits are collapsed) over this crate's reads
//! (a private [`ConversationSource`] over a connection), in one read
//! transaction.

mod sqlite;

use rusqlite::Connection;

use crate::error::QueryError;
use crate::search::{FtsCapabilities, SearchOptions, in_read_snapshot};
pub use crate::search::{HitKey, search_keys};
pub use hermes_state_core::conversation_search::{
    ConversationHit, ConversationScope, ConversationSource, MAX_HITS_READ, PAGE_HITS,
    group_conversations, group_conversations_by_pages,
};
use sqlite::SqliteSource;

/// Searches the messages (`api.md` §8, with every filter and the sort of
/// `options`) and collapses the hits by conversation; `options.limit` and
/// `options.offset` count conversations, not hits.
pub fn search_conversations(
    conn: &Connection,
    query: &str,
    options: &SearchOptions,
    caps: FtsCapabilities,
) -> Result<Vec<ConversationHit>, QueryError> {
    search_conversations_in(conn, query, options, &ConversationScope::default(), caps)
}

/// [`search_conversations`] over the hits `scope` takes only; the reading
/// bound ([`MAX_HITS_READ`]) counts every hit read, in scope or not. Every
/// read runs in one read transaction.
pub fn search_conversations_in(
    conn: &Connection,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
    caps: FtsCapabilities,
) -> Result<Vec<ConversationHit>, QueryError> {
    let mut source = SqliteSource::new(conn, caps);
    in_read_snapshot(conn, || {
        group_conversations(&mut source, query, options, scope)
    })
}

/// [`search_conversations_in`] reading the search's pages only
/// ([`group_conversations_by_pages`]): the same answer, slower. The
/// reference the keyed reading is checked against.
pub fn search_conversations_by_pages(
    conn: &Connection,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
    caps: FtsCapabilities,
) -> Result<Vec<ConversationHit>, QueryError> {
    let mut source = SqliteSource::new(conn, caps);
    in_read_snapshot(conn, || {
        group_conversations_by_pages(&mut source, query, options, scope)
    })
}
