//! Search by conversation: the hits of a store's `search_messages`
//! (`api.md` §8) collapsed by compression lineage, so a long conversation
//! that context compression split into segments shows once.
//!
//! A *conversation* is a compression chain (`api.md` §9.2): a session and its
//! compression continuations. Walking up from a hit's session, a step to the
//! parent is taken only when the session is a compression continuation: its
//! parent ended with `compression`, and the session is neither a branch (a
//! `$._branched_from` marker) nor a delegate (`$._delegate_from`) nor a
//! `source = 'tool'` session — the children a compression tip
//! (`api.md` §9.2) never follows. So branch children, delegates and the children of sessions that
//! ended otherwise are conversations of their own. The walk is bounded by
//! [`MAX_LINEAGE_STEPS`](crate::sessions::MAX_LINEAGE_STEPS) and stops at the
//! first repeated id.
//!
//! The hits are read page by page in the search's own order, so the first
//! hit seen of a conversation is its best one (best rank, or newest/oldest as
//! the sort says), and conversations come out in the order of their best
//! hits.
//!
//! Reading the pages themselves costs each page the whole ranking again and
//! every hit its row, snippet and context, though only the best hits of one
//! page of conversations are shown. So when the store can list every hit of
//! the search in its order as keys (id, session, time) and show that each
//! page holding a hit is that list's slice at its offset
//! ([`ConversationSource::hit_keys`]; for SQLite the read crate's
//! `search_keys`), the pages
//! are cut from the list, and only the shown conversations' best hits are
//! read in full ([`ConversationSource::hits_by_id`]). A page past the list's
//! end is still read from the search (route A's zero-hit fallback answers
//! there) unless the store proves it empty, and the answer is the pages' in
//! every case ([`group_conversations_by_pages`] reads the pages only).
//!
//! A [`ConversationScope`] narrows which hits count — to some sessions (one
//! lineage, say) and to a time window — before they are grouped, so the
//! counts and spans describe the hits in scope only.
//!
//! The grouping is written once, over a [`ConversationSource`] (a page of
//! the search, one step up a chain, a tip, a title): the SQLite read
//! crate's reads are one, the PostgreSQL backend's reads another.

mod grouping;

use std::collections::HashSet;

use serde::Serialize;

pub use grouping::{group_conversations, group_conversations_by_pages};

use crate::search::{HitKey, SearchHit, SearchOptions};

/// How many hits one page of the underlying search reads.
pub const PAGE_HITS: u32 = 200;

/// After this many hits, reading stops as soon as the requested
/// conversations are filled; below it, every hit is read, so the counts and
/// spans of the returned conversations are exact. A query matching more
/// messages has its counts and spans taken over the first this-many hits
/// (in the search's order) plus the pages needed to fill the conversations.
pub const MAX_HITS_READ: usize = 5_000;

/// One conversation of a search by conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationHit {
    /// The first session of the conversation's compression chain.
    pub root_session_id: String,
    /// The title a session picker shows for it: the title of the chain's
    /// compression tip (the newest segment, as `list_sessions_rich` projects
    /// it), else the root's own title.
    pub title: Option<String>,
    /// The conversation's best hit, first in the search's order.
    pub best: SearchHit,
    /// How many messages of the conversation match.
    pub hits: usize,
    /// The segments holding hits, root side first.
    pub session_ids: Vec<String>,
    /// The time of the earliest hit (Unix seconds).
    pub first_timestamp: f64,
    /// The time of the latest hit (Unix seconds).
    pub last_timestamp: f64,
}

/// Which hits count, beyond the filters of [`SearchOptions`]: the default
/// scope takes every hit. Single hits are scoped alike by
/// [`crate::search_scope::search_messages_in`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConversationScope {
    /// Only hits in these sessions (`None`: any session).
    pub sessions: Option<HashSet<String>>,
    /// Only hits sent at or after this time (Unix seconds, inclusive).
    pub since: Option<f64>,
    /// Only hits sent before this time (Unix seconds, exclusive).
    pub until: Option<f64>,
}

impl ConversationScope {
    /// Whether a hit (its session and time) is in scope.
    pub fn takes(&self, session_id: &str, t: f64) -> bool {
        self.since.is_none_or(|since| t >= since)
            && self.until.is_none_or(|until| t < until)
            && self
                .sessions
                .as_ref()
                .is_none_or(|ids| ids.contains(session_id))
    }

    /// Whether no later hit of a search in time order (`newest`/`oldest`)
    /// than one at time `t` can be in the window: reading can stop.
    pub fn is_past(&self, t: f64, sort: Option<&str>) -> bool {
        match sort {
            Some("newest") => self.since.is_some_and(|since| t < since),
            Some("oldest") => self.until.is_some_and(|until| t >= until),
            _ => false,
        }
    }
}

/// What grouping hits by conversation asks of a store: a page of its
/// search, one step up a compression chain, a chain's tip and a session's
/// title; and, when it can give them, every hit of the search as keys and
/// the full hits of some of them. The SQLite reads of this crate implement
/// it; another backend implements it over its own connection (the
/// PostgreSQL backend does), so the grouping rules of this module are
/// written once.
pub trait ConversationSource {
    /// The store's error.
    type Error;
    /// One page of `search_messages` (`api.md` §8) with `options`.
    fn search_page(
        &mut self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit>, Self::Error>;
    /// The hits of the search (the filters and sort of `options`; its
    /// `limit` and `offset` ignored) as keys, in the search's order, the
    /// first `at_most` of them (all with `None`) — when the store can show
    /// that every page of [`Self::search_page`] that holds a hit is the
    /// whole list's slice at the page's offset. `None` when it cannot, and
    /// the grouping reads the pages. The default declines.
    fn hit_keys(
        &mut self,
        query: &str,
        options: &SearchOptions,
        at_most: Option<usize>,
    ) -> Result<Option<Vec<HitKey>>, Self::Error> {
        let _ = (query, options, at_most);
        Ok(None)
    }
    /// The full hits of `ids` (some of the last list [`Self::hit_keys`]
    /// gave), as [`Self::search_page`] gives them, in the order of `ids`;
    /// an id not found is left out (the grouping then reads the pages).
    /// The default finds none.
    fn hits_by_id(&mut self, ids: &[i64]) -> Result<Vec<SearchHit>, Self::Error> {
        let _ = ids;
        Ok(Vec::new())
    }
    /// The parent of `session_id` when the session is its compression
    /// continuation (the module documentation says when), else `None`.
    fn continued_from(&mut self, session_id: &str) -> Result<Option<String>, Self::Error>;
    /// [`Self::continued_from`] of each of `session_ids`, in their order.
    /// The default asks one by one; a store answers many at once.
    fn continued_from_each(
        &mut self,
        session_ids: &[String],
    ) -> Result<Vec<Option<String>>, Self::Error> {
        session_ids
            .iter()
            .map(|id| self.continued_from(id))
            .collect()
    }
    /// Every session with a parent (`parent_session_id` set) when there are
    /// at most `at_most` of them: only these can continue one, so
    /// [`Self::continued_from`] is not asked about the others once more
    /// sessions are to be walked than the store has children. `None` when
    /// there are more, or the store does not list them (the default).
    fn sessions_with_parent(
        &mut self,
        at_most: usize,
    ) -> Result<Option<HashSet<String>>, Self::Error> {
        let _ = at_most;
        Ok(None)
    }
    /// The compression tip of a session (`api.md` §9.2).
    fn compression_tip(&mut self, session_id: &str) -> Result<String, Self::Error>;
    /// A session's title; `None` for an untitled or unknown session.
    fn session_title(&mut self, session_id: &str) -> Result<Option<String>, Self::Error>;
}
