//! The SQLite store as a [`ConversationSource`]: the search's pages, its
//! hits as keys ([`search_keys`]) and the full hits of a few of them
//! ([`hits_by_id`]), steps up compression chains one at a time or many at
//! once, tips and titles.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension};

use super::{ConversationSource, HitKey};
use crate::error::{QueryContext, QueryError};
use crate::lookups::{get_compression_tip, marker};
use crate::search::{
    FtsCapabilities, KeyedHits, SearchHit, SearchOptions, hits_by_id, search_keys, search_messages,
};
use crate::titles::get_session_title;
use crate::values::text;

const WALKING: &str = "walking a compression chain";

/// The parent of a session when the session is its compression
/// continuation: `?1` one session, or a JSON array of sessions.
fn continued_from_sql(sessions: &str) -> String {
    format!(
        "SELECT c.id, p.id FROM sessions c JOIN sessions p ON p.id = c.parent_session_id
         WHERE c.id {sessions} AND p.end_reason = 'compression'
           AND {branched} IS NULL AND {delegate} IS NULL
           AND COALESCE(c.source, '') != 'tool'",
        branched = marker("c", "_branched_from"),
        delegate = marker("c", "_delegate_from"),
    )
}

/// The SQLite store as a [`ConversationSource`].
pub(super) struct SqliteSource<'c> {
    conn: &'c Connection,
    caps: FtsCapabilities,
    continued_from: String,
    continued_from_each: String,
    /// The leg of the last [`ConversationSource::hit_keys`] list.
    keyed: Option<KeyedHits>,
}

impl<'c> SqliteSource<'c> {
    pub(super) fn new(conn: &'c Connection, caps: FtsCapabilities) -> Self {
        SqliteSource {
            conn,
            caps,
            continued_from: continued_from_sql("= ?1"),
            continued_from_each: continued_from_sql("IN (SELECT value FROM json_each(?1))"),
            keyed: None,
        }
    }
}

impl ConversationSource for SqliteSource<'_> {
    type Error = QueryError;

    fn search_page(
        &mut self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit>, QueryError> {
        // Past the end of the listed hits, the page is often provably empty
        // (the grouping asks for it when the hits fill their last page).
        let offset = options.offset as usize;
        if self
            .keyed
            .as_ref()
            .is_some_and(|k| k.past_the_end_is_empty(self.conn, options, self.caps, offset))
        {
            return Ok(Vec::new());
        }
        search_messages(self.conn, query, options, self.caps)
    }

    fn hit_keys(
        &mut self,
        query: &str,
        options: &SearchOptions,
        at_most: Option<usize>,
    ) -> Result<Option<Vec<HitKey>>, QueryError> {
        self.keyed = search_keys(self.conn, query, options, self.caps, at_most)?;
        Ok(self
            .keyed
            .as_mut()
            .map(|keyed| std::mem::take(&mut keyed.keys)))
    }

    fn hits_by_id(&mut self, ids: &[i64]) -> Result<Vec<SearchHit>, QueryError> {
        match &self.keyed {
            Some(keyed) => hits_by_id(self.conn, keyed, ids),
            None => Ok(Vec::new()),
        }
    }

    fn continued_from(&mut self, session_id: &str) -> Result<Option<String>, QueryError> {
        self.conn
            .prepare_cached(&self.continued_from)
            .context(WALKING)?
            .query_row([session_id], |row| Ok(text(row.get_ref(1)?)))
            .optional()
            .context(WALKING)
            .map(Option::flatten)
            .map_err(Into::into)
    }

    fn continued_from_each(
        &mut self,
        session_ids: &[String],
    ) -> Result<Vec<Option<String>>, QueryError> {
        let list = serde_json::to_string(session_ids).unwrap_or_else(|_| "[]".to_owned());
        let mut stmt = self
            .conn
            .prepare_cached(&self.continued_from_each)
            .context(WALKING)?;
        let mut parents: HashMap<String, Option<String>> = HashMap::new();
        let mut rows = stmt.query([list]).context(WALKING)?;
        while let Some(row) = rows.next().context(WALKING)? {
            let child = text(row.get_ref(0).context(WALKING)?).unwrap_or_default();
            parents.insert(child, text(row.get_ref(1).context(WALKING)?));
        }
        Ok(session_ids
            .iter()
            .map(|id| parents.get(id).cloned().flatten())
            .collect())
    }

    fn sessions_with_parent(
        &mut self,
        at_most: usize,
    ) -> Result<Option<HashSet<String>>, QueryError> {
        const WHAT: &str = "listing sessions with a parent";
        // Counted on `idx_sessions_parent` alone (where the file has it).
        let count: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM sessions WHERE parent_session_id IS NOT NULL")
            .context(WHAT)?
            .query_row([], |row| row.get(0))
            .context(WHAT)?;
        if usize::try_from(count).map_or(true, |count| count > at_most) {
            return Ok(None);
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM sessions WHERE parent_session_id IS NOT NULL")
            .context(WHAT)?;
        let mut rows = stmt.query([]).context(WHAT)?;
        let mut found = HashSet::new();
        while let Some(row) = rows.next().context(WHAT)? {
            found.extend(text(row.get_ref(0).context(WHAT)?));
        }
        Ok(Some(found))
    }

    fn compression_tip(&mut self, session_id: &str) -> Result<String, QueryError> {
        get_compression_tip(self.conn, session_id)
    }

    fn session_title(&mut self, session_id: &str) -> Result<Option<String>, QueryError> {
        get_session_title(self.conn, session_id)
    }
}
