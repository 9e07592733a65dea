//! Search by conversation: the hits of [`search_messages`] collapsed by
//! compression lineage, so a long conversation that context compression split
//! into segments shows once.
//!
//! A *conversation* is a compression chain (`api.md` §9.2): a session and its
//! compression continuations. Walking up from a hit's session, a step to the
//! parent is taken only when the session is a compression continuation: its
//! parent ended with `compression`, and the session is neither a branch (a
//! `$._branched_from` marker) nor a delegate (`$._delegate_from`) nor a
//! `source = 'tool'` session — the children [`get_compression_tip`] never
//! follows. So branch children, delegates and the children of sessions that
//! ended otherwise are conversations of their own. The walk is bounded by
//! [`MAX_LINEAGE_STEPS`] and stops at the first repeated id.
//!
//! The hits are read page by page in the search's own order, so the first
//! hit seen of a conversation is its best one (best rank, or newest/oldest as
//! the sort says), and conversations come out in the order of their best
//! hits.
//!
//! A [`ConversationScope`] narrows which hits count — to some sessions (one
//! lineage, say) and to a time window — before they are grouped, so the
//! counts and spans describe the hits in scope only.
//!
//! The grouping is written once, over a [`ConversationSource`] (a page of
//! the search, one step up a chain, a tip, a title): this crate's SQLite
//! reads are one, the PostgreSQL backend's reads another.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::error::{QueryContext, QueryError};
use crate::lookups::{get_compression_tip, marker};
use crate::search::{FtsCapabilities, SearchHit, SearchOptions, search_messages};
use crate::sessions::MAX_LINEAGE_STEPS;
use crate::titles::get_session_title;
use crate::values::text;

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
/// scope takes every hit.
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
    /// Whether a hit is in scope.
    fn takes(&self, hit: &SearchHit) -> bool {
        let t = hit.timestamp;
        self.since.is_none_or(|since| t >= since)
            && self.until.is_none_or(|until| t < until)
            && self
                .sessions
                .as_ref()
                .is_none_or(|ids| ids.contains(&hit.session_id))
    }

    /// Whether no later hit of a search in time order (`newest`/`oldest`)
    /// can be in the window: reading can stop.
    fn is_past(&self, hit: &SearchHit, sort: Option<&str>) -> bool {
        let t = hit.timestamp;
        match sort {
            Some("newest") => self.since.is_some_and(|since| t < since),
            Some("oldest") => self.until.is_some_and(|until| t >= until),
            _ => false,
        }
    }
}

/// The parent of a session when the session is its compression continuation.
fn continued_from_sql() -> String {
    format!(
        "SELECT p.id FROM sessions c JOIN sessions p ON p.id = c.parent_session_id
         WHERE c.id = ?1 AND p.end_reason = 'compression'
           AND {branched} IS NULL AND {delegate} IS NULL
           AND COALESCE(c.source, '') != 'tool'",
        branched = marker("c", "_branched_from"),
        delegate = marker("c", "_delegate_from"),
    )
}

/// What grouping hits by conversation asks of a store: a page of its
/// search, one step up a compression chain, a chain's tip and a session's
/// title. The SQLite reads of this crate implement it; another backend
/// implements it over its own connection (the PostgreSQL backend does), so
/// the grouping rules of this module are written once.
pub trait ConversationSource {
    /// The store's error.
    type Error;
    /// One page of `search_messages` (`api.md` §8) with `options`.
    fn search_page(
        &mut self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit>, Self::Error>;
    /// The parent of `session_id` when the session is its compression
    /// continuation (the module documentation says when), else `None`.
    fn continued_from(&mut self, session_id: &str) -> Result<Option<String>, Self::Error>;
    /// The compression tip of a session (`api.md` §9.2).
    fn compression_tip(&mut self, session_id: &str) -> Result<String, Self::Error>;
    /// A session's title; `None` for an untitled or unknown session.
    fn session_title(&mut self, session_id: &str) -> Result<Option<String>, Self::Error>;
}

/// The SQLite store as a [`ConversationSource`].
struct SqliteSource<'c> {
    conn: &'c Connection,
    caps: FtsCapabilities,
    continued_from: String,
}

impl ConversationSource for SqliteSource<'_> {
    type Error = QueryError;

    fn search_page(
        &mut self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit>, QueryError> {
        search_messages(self.conn, query, options, self.caps)
    }

    fn continued_from(&mut self, session_id: &str) -> Result<Option<String>, QueryError> {
        const WHAT: &str = "walking a compression chain";
        self.conn
            .prepare_cached(&self.continued_from)
            .context(WHAT)?
            .query_row([session_id], |row| Ok(text(row.get_ref(0)?)))
            .optional()
            .context(WHAT)
            .map(Option::flatten)
            .map_err(Into::into)
    }

    fn compression_tip(&mut self, session_id: &str) -> Result<String, QueryError> {
        get_compression_tip(self.conn, session_id)
    }

    fn session_title(&mut self, session_id: &str) -> Result<Option<String>, QueryError> {
        get_session_title(self.conn, session_id)
    }
}

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
/// bound ([`MAX_HITS_READ`]) counts every hit read, in scope or not.
pub fn search_conversations_in(
    conn: &Connection,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
    caps: FtsCapabilities,
) -> Result<Vec<ConversationHit>, QueryError> {
    let mut source = SqliteSource {
        conn,
        caps,
        continued_from: continued_from_sql(),
    };
    group_conversations(&mut source, query, options, scope)
}

/// The search by conversation over any [`ConversationSource`]: the hits
/// `scope` takes, read page by page in the search's order and collapsed by
/// conversation; `options.limit` and `options.offset` count conversations.
/// The reading bound ([`MAX_HITS_READ`]) counts every hit read, in scope or
/// not.
pub fn group_conversations<S: ConversationSource>(
    source: &mut S,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
) -> Result<Vec<ConversationHit>, S::Error> {
    let wanted = options.offset as usize + options.limit as usize;
    let mut grouping = Grouping::default();
    let mut page = SearchOptions {
        limit: PAGE_HITS,
        offset: 0,
        ..options.clone()
    };
    let mut read = 0usize;
    loop {
        let hits = source.search_page(query, &page)?;
        let count = hits.len();
        let mut past = false;
        for hit in hits {
            if scope.is_past(&hit, options.sort.as_deref()) {
                past = true;
                break;
            }
            if scope.takes(&hit) {
                grouping.add(source, hit)?;
            }
        }
        read += count;
        let filled = grouping.conversations.len() >= wanted;
        if past || count < PAGE_HITS as usize || (filled && read >= MAX_HITS_READ) {
            break;
        }
        let Some(next) = page.offset.checked_add(PAGE_HITS) else {
            break;
        };
        page.offset = next;
    }
    grouping.finish(source, options.offset as usize, options.limit as usize)
}

/// The conversations met so far, in the order of their best hits.
#[derive(Default)]
struct Grouping {
    /// Each session met: its conversation's root and its depth in the chain.
    roots: HashMap<String, (String, usize)>,
    /// Message ids already counted (pages may overlap if the store changes).
    seen: HashSet<i64>,
    index: HashMap<String, usize>,
    conversations: Vec<Building>,
}

struct Building {
    root: String,
    best: SearchHit,
    hits: usize,
    sessions: Vec<(usize, String)>,
    first: f64,
    last: f64,
}

impl Grouping {
    fn add<S: ConversationSource>(
        &mut self,
        source: &mut S,
        hit: SearchHit,
    ) -> Result<(), S::Error> {
        if !self.seen.insert(hit.id) {
            return Ok(());
        }
        let (root, depth) = self.root_of(source, &hit.session_id)?;
        let at = hit.timestamp;
        match self.index.get(&root) {
            Some(&i) => {
                let conversation = &mut self.conversations[i];
                conversation.hits += 1;
                conversation.first = conversation.first.min(at);
                conversation.last = conversation.last.max(at);
                if !conversation
                    .sessions
                    .iter()
                    .any(|(_, id)| *id == hit.session_id)
                {
                    conversation.sessions.push((depth, hit.session_id));
                }
            }
            None => {
                self.index.insert(root.clone(), self.conversations.len());
                self.conversations.push(Building {
                    root,
                    sessions: vec![(depth, hit.session_id.clone())],
                    best: hit,
                    hits: 1,
                    first: at,
                    last: at,
                });
            }
        }
        Ok(())
    }

    /// The conversation root of a session and the session's depth below it.
    fn root_of<S: ConversationSource>(
        &mut self,
        source: &mut S,
        session_id: &str,
    ) -> Result<(String, usize), S::Error> {
        if let Some(found) = self.roots.get(session_id) {
            return Ok(found.clone());
        }
        let mut chain = vec![session_id.to_owned()];
        let mut seen: HashSet<String> = HashSet::from([session_id.to_owned()]);
        for _ in 0..MAX_LINEAGE_STEPS {
            let current = chain.last().map(String::as_str).unwrap_or(session_id);
            let Some(parent) = source.continued_from(current)? else {
                break;
            };
            if !seen.insert(parent.clone()) {
                break;
            }
            chain.push(parent);
        }
        let root = chain
            .last()
            .cloned()
            .unwrap_or_else(|| session_id.to_owned());
        let depth = chain.len() - 1;
        self.roots
            .insert(session_id.to_owned(), (root.clone(), depth));
        Ok((root, depth))
    }

    /// The page `offset..offset + limit` of the conversations, titled.
    fn finish<S: ConversationSource>(
        self,
        source: &mut S,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ConversationHit>, S::Error> {
        self.conversations
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|mut c| {
                let tip = source.compression_tip(&c.root)?;
                let title = match source.session_title(&tip)? {
                    Some(title) => Some(title),
                    None if tip != c.root => source.session_title(&c.root)?,
                    None => None,
                };
                c.sessions.sort();
                Ok(ConversationHit {
                    root_session_id: c.root,
                    title,
                    best: c.best,
                    hits: c.hits,
                    session_ids: c.sessions.into_iter().map(|(_, id)| id).collect(),
                    first_timestamp: c.first,
                    last_timestamp: c.last,
                })
            })
            .collect()
    }
}
