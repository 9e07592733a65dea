//! Full-text search on the facade.

use hermes_state_query::search::{self, FtsCapabilities, FtsObjects, SearchHit, SearchOptions};

use crate::db::SessionDb;
use crate::error::{Error, Result};
use hermes_state_core::cancel::Cancel;
use hermes_state_core::store::Search;
use hermes_state_query::conversation_search;
use hermes_state_query::conversation_search::ConversationHit;
use hermes_state_query::conversation_search::ConversationScope;

impl SessionDb {
    /// A step of a partial answer to `query`, for search as you type while
    /// the exact answer ([`SessionDb::search_messages`]) is computed: hits
    /// of the query, the newest found so far, not the search's answer (see
    /// [`hermes_state_query::search::search_partial`] for the steps and
    /// `below`/`rows`). `None` when the query has none. Stopped, with
    /// [`Error::Cancelled`], when `cancel` is raised.
    pub fn search_partial(
        &self,
        query: &str,
        options: &SearchOptions,
        below: Option<i64>,
        rows: u32,
        cancel: &Cancel,
    ) -> Result<Option<search::PartialStep>> {
        self.cancellable_read(cancel, |conn| {
            let caps = FtsCapabilities::from_objects(conn, &self.fts_objects(conn)?)?;
            Ok(search::search_partial(
                conn, query, options, caps, below, rows,
            )?)
        })
    }

    /// `read` in one read transaction on a read connection, its statements
    /// interrupted when `cancel` is raised; [`Error::Cancelled`] then,
    /// whatever they returned (an interrupted leg may fall through to the
    /// next, a context that fails reads as empty: an interrupted read
    /// could otherwise look like a smaller answer).
    fn cancellable_read<T>(
        &self,
        cancel: &Cancel,
        read: impl FnOnce(&rusqlite::Connection) -> Result<T>,
    ) -> Result<T> {
        cancel.check()?;
        let value = self.snapshot_read(|conn| {
            let was_autocommit = conn.is_autocommit();
            let interrupt = conn.get_interrupt_handle();
            // Removed before the connection goes back to the pool.
            let hook = cancel.on_cancel(move || interrupt.interrupt())?;
            let value = search::in_read_snapshot(conn, || read(conn));
            drop(hook);
            // An interrupted `COMMIT` or `ROLLBACK` of the read's own
            // transaction leaves it open: never hand back a connection so.
            if was_autocommit && !conn.is_autocommit() {
                conn.execute_batch("ROLLBACK")
                    .map_err(|e| crate::error::sqlite("ending a cancelled read", e))?;
            }
            value
        });
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        value
    }

    /// The FTS objects of the store, probed again only when the schema
    /// changed since the last search (another process may have dropped the
    /// CJK triggers, or finished a conversion).
    pub(crate) fn fts_objects(&self, conn: &rusqlite::Connection) -> Result<FtsObjects> {
        let cookie = FtsObjects::schema_cookie(conn);
        let mut cached = self.fts_objects.lock().unwrap_or_else(|p| p.into_inner());
        match *cached {
            Some(objects) if objects.schema_cookie == cookie && cookie >= 0 => Ok(objects),
            _ => {
                let objects = FtsObjects::probe(conn)?;
                *cached = Some(objects);
                Ok(objects)
            }
        }
    }
}

impl Search for SessionDb {
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
    fn search_conversations(
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
    fn search_conversations_in(
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

    /// Searches the messages (`api.md` §8): FTS5 syntax (implicit AND,
    /// `"phrases"`, `OR`, `NOT`, `prefix*`), CJK and substring search, with
    /// source/role filters, paging and ordering as the original.
    ///
    /// A query FTS5 cannot parse gives no results, not an error; every other
    /// failure is an error, never an empty answer. Searching is a read: a
    /// corrupt FTS index is reported (kind [`crate::ErrorKind::Corrupt`]), not
    /// rebuilt here (the original rebuilds in place; here a read never
    /// writes). [`SessionDb::repair`] or [`SessionDb::rebuild_fts`] rebuild it,
    /// and the write path rebuilds it once when a write meets it.
    fn search_messages(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
        // One read transaction for the cookie, the markers and the whole search.
        self.snapshot_read(|conn| {
            search::in_read_snapshot(conn, || {
                let caps = FtsCapabilities::from_objects(conn, &self.fts_objects(conn)?)?;
                Ok(search::search_messages(conn, query, options, caps)?)
            })
        })
    }

    /// [`SessionDb::search_messages`], stopped when `cancel` is raised: the
    /// read connection's running statement is interrupted
    /// (`sqlite3_interrupt`) and the answer is [`Error::Cancelled`].
    fn search_messages_cancellable(
        &self,
        query: &str,
        options: &SearchOptions,
        cancel: &Cancel,
    ) -> Result<Vec<SearchHit>> {
        self.cancellable_read(cancel, |conn| {
            let caps = FtsCapabilities::from_objects(conn, &self.fts_objects(conn)?)?;
            Ok(search::search_messages(conn, query, options, caps)?)
        })
    }
}
