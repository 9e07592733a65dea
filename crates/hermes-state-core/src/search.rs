//! What `search_messages` (`api.md` §8) takes and gives on every backend,
//! and the rules of it that need no index: the options, a hit and its
//! context, the keys a search by conversation reads of every hit, the
//! router's CJK set, the text of a context entry, and why a query can only
//! give `[]` ([`query_problem`]). The routing between indexes is each
//! backend's own (the SQLite read crate's `search`, the PostgreSQL
//! backend's `tsquery` compiler).

mod preview;
mod problem;

use serde::Serialize;

pub use preview::{context_preview, plain_text_preview};
pub use problem::{QueryProblem, query_problem};

/// Options of a search; the defaults are the original's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOptions {
    /// Only sessions of these sources (`Some(vec![])` matches nothing).
    pub source_filter: Option<Vec<String>>,
    /// Not sessions of these sources.
    pub exclude_sources: Option<Vec<String>>,
    /// Only messages of these roles (an empty list is ignored).
    pub role_filter: Option<Vec<String>>,
    /// At most this many results (default 20).
    pub limit: u32,
    /// Skip this many results.
    pub offset: u32,
    /// `"newest"` or `"oldest"` order by time; anything else ranks by relevance.
    pub sort: Option<String>,
    /// Also find rewound messages (`active = 0, compacted = 0`).
    pub include_inactive: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            source_filter: None,
            exclude_sources: None,
            role_filter: None,
            limit: 20,
            offset: 0,
            sort: None,
            include_inactive: false,
        }
    }
}

/// One neighbour of a hit (or the hit itself) in its `context`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextMessage {
    /// Its role.
    pub role: String,
    /// Its content as text, cut at 200 characters.
    pub content: String,
    /// Whether this is the hit itself rather than a neighbour (not in the
    /// original's dict, so not serialized: a reader's way to tell
    /// `[before, hit]` from `[hit, after]`).
    #[serde(skip)]
    pub is_hit: bool,
}

/// One search result, with the original's field names and order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// Message id.
    pub id: i64,
    /// Its session.
    pub session_id: String,
    /// Its role.
    pub role: String,
    /// The matching excerpt, terms marked `>>>`…`<<<` on index routes; raw text on the LIKE route.
    pub snippet: String,
    /// Message time (Unix seconds).
    pub timestamp: f64,
    /// Tool name of a tool result.
    pub tool_name: Option<String>,
    /// The session's source.
    pub source: Option<String>,
    /// The session's model.
    pub model: Option<String>,
    /// When the session started.
    pub session_started: Option<f64>,
    /// The message before, the message, and the message after, in the session.
    pub context: Vec<ContextMessage>,
}

/// What the search by conversation reads of every hit.
#[derive(Debug, Clone, PartialEq)]
pub struct HitKey {
    /// Message id.
    pub id: i64,
    /// Its session, as [`SearchHit::session_id`].
    pub session_id: String,
    /// Message time, as [`SearchHit::timestamp`].
    pub timestamp: f64,
}

/// Whether a character counts as CJK for the query router (`api.md` §8.4).
/// This set differs on purpose from the tokenizer's (`schema-v23.md` §10.4).
pub fn is_router_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x3000..=0x303F
        | 0x3040..=0x309F | 0x30A0..=0x30FF | 0xAC00..=0xD7AF)
}
