//! Why a search found nothing because of its query rather than the store.
//!
//! `search_messages` answers `[]` both when nothing matches and when the
//! query cannot be searched at all (`api.md` §7, §8.2, §8.4), as the
//! original does, so its results stay the original's. [`query_problem`]
//! tells the two apart for a caller who got no results, from the query
//! alone.

use std::fmt;

use crate::fts5_syntax::{Fts5SyntaxError, check_fts5_syntax};
use crate::sanitize::sanitize_fts5_query;

use super::is_router_cjk;

/// A query that search can only answer with `[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryProblem {
    /// The sanitizer left nothing to search for (`"***"`, `"AND"`, `"()"`,
    /// blank text), so search returns `[]` without looking.
    NothingToSearch,
    /// FTS5 cannot parse the sanitized query (`50%`, `don't`, `-foo`,
    /// `a AND OR b`), so the unicode61 index route returns `[]`.
    Unparsable {
        /// The `MATCH` text the sanitizer made of the query.
        sanitized: String,
        /// What FTS5 reports for it.
        error: Fts5SyntaxError,
    },
}

impl fmt::Display for QueryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryProblem::NothingToSearch => f.write_str(
                "nothing is left to search for once FTS5 operators and special characters are removed",
            ),
            QueryProblem::Unparsable { sanitized, error } => {
                write!(f, "query cannot be parsed: {error} (searched as {sanitized:?})")
            }
        }
    }
}

/// Why `query` can only give `[]`, or `None` when an empty result means
/// that nothing matches.
///
/// [`QueryProblem::Unparsable`] concerns the route a store with a served
/// `messages_fts` index takes for a query without CJK characters (§8.4
/// route A), which answers an FTS5 syntax error with `[]`. A query with
/// CJK characters never meets that error (its routes quote every term and
/// fall back to a LIKE scan), so it has no problem here; a store without a
/// served base index scans `messages` instead and may still find rows, which
/// is why this is for a caller who got none. Pure: no database is read.
pub fn query_problem(query: &str) -> Option<QueryProblem> {
    let sanitized = sanitize_fts5_query(query);
    if sanitized.is_empty() {
        return Some(QueryProblem::NothingToSearch);
    }
    if sanitized.chars().any(is_router_cjk) {
        return None;
    }
    check_fts5_syntax(&sanitized)
        .err()
        .map(|error| QueryProblem::Unparsable { sanitized, error })
}
