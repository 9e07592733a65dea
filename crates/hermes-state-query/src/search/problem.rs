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

#[cfg(test)]
mod tests {
    use super::{QueryProblem, query_problem};
    use crate::fts5_syntax::Fts5SyntaxError::{self, SyntaxErrorNear};
    use crate::fts5_syntax::tests::{sqlite_says, v23_store};

    fn near(token: &str) -> Option<Fts5SyntaxError> {
        Some(SyntaxErrorNear(token.to_owned()))
    }

    /// Every input of the sanitizer examples of `api.md` §7 whose output
    /// FTS5 rejects, or that leaves nothing to search, and a sample of those
    /// that are fine; the error is checked against FTS5 itself.
    #[test]
    fn spec_examples() {
        let unparsable: &[(&str, &str, Option<Fts5SyntaxError>)] = &[
            ("a--b", "a--b", near("-")),
            ("a..b", "a..b", near(".")),
            ("foo-", "foo-", near("")),
            (
                "-foo",
                "-foo",
                Some(Fts5SyntaxError::NoSuchColumn("foo".into())),
            ),
            ("NOT NOT x", "NOT x", near("NOT")),
            ("a AND OR b", "a AND OR b", near("OR")),
            ("don't", "don't", near("'")),
            ("50%", "50%", near("%")),
            ("alice@example.com", "alice@\"example.com\"", near("@")),
            ("src/main.py", "src/\"main.py\"", near("/")),
            ("#123", "#123", near("#")),
            ("$5", "$5", near("$")),
            ("a,b", "a,b", near(",")),
            ("ok?", "ok?", near("?")),
            ("'single quotes'", "'single quotes'", near("'")),
        ];
        let (_dir, conn) = v23_store();
        for (input, sanitized, error) in unparsable {
            let error = error.clone().expect("an error");
            assert_eq!(
                sqlite_says(&conn, sanitized),
                Some(error.to_string()),
                "FTS5 on {sanitized:?}"
            );
            assert_eq!(
                query_problem(input),
                Some(QueryProblem::Unparsable {
                    sanitized: (*sanitized).to_owned(),
                    error,
                }),
                "{input:?}"
            );
        }
        for input in [
            "AND", "OR", "NOT", "  AND  ", "***", "*", "* *", "", "   ", "(+)",
        ] {
            assert_eq!(
                query_problem(input),
                Some(QueryProblem::NothingToSearch),
                "{input:?}"
            );
        }
        for input in [
            "docker deployment",
            "chat-send",
            "\"exact phrase\"",
            "python NOT java",
            "\"unterminated",
            "NEAR(a b)",
            "TODO: fix",
            "foo*bar",
            "a\"b\"c",
            "C++",
            "大别山项目",
            "广西 OR 桂林 OR 漓江",
        ] {
            assert_eq!(query_problem(input), None, "{input:?}");
        }
    }

    /// A query with CJK characters is routed to quoted terms and a LIKE
    /// scan, which never fail on syntax, so an empty answer means no match.
    #[test]
    fn cjk_queries_have_no_syntax_problem() {
        assert_eq!(query_problem("项目 50%"), None);
        assert_eq!(query_problem("a AND OR 日本"), None);
    }

    #[test]
    fn the_message_names_the_error_and_the_searched_text() {
        let problem = query_problem("50%").expect("a problem");
        assert_eq!(
            problem.to_string(),
            "query cannot be parsed: fts5: syntax error near \"%\" (searched as \"50%\")"
        );
    }
}
