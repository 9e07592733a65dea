//! A syntax checker for FTS5 queries: a pure-Rust replica of the query
//! front end of the bundled SQLite (3.54.1), answering, without a round
//! trip to SQLite, whether `messages_fts MATCH ?` accepts a query and, if
//! not, with which error.
//!
//! What it is for: search turns an FTS5 syntax error into "no results"
//! (`api.md` §8.4), exactly as the original does, so a caller cannot tell
//! "nothing matches" from "FTS5 could not read the query".
//! [`crate::search::query_problem`] uses this checker to tell them apart;
//! the tests and the fuzz target use it to state exactly which sanitizer
//! outputs FTS5 rejects. Search itself never calls it: what a search
//! returns stays the original's.
//!
//! The replica: FTS5's tokenizer (`fts5ExprGetToken`: FTS5 reads the MATCH
//! argument as a C string, so it stops at the first NUL; whitespace is only
//! space, tab, CR and LF — not Python's; barewords are runs of non-ASCII
//! bytes, ASCII letters, digits, `_` and U+001A; `"…"` strings with `""`
//! escapes; `AND`/`OR`/`NOT` are operators only in upper case), its
//! LALR(1) parser (the lemon tables of `fts5parse.y`, with its fixed
//! 100-entry stack, in `parser`), and the checks its reduce actions make:
//! `NEAR` spelled exactly so, the `NEAR` distance all digits, column filters
//! naming `content`, `tool_name` or `tool_calls` (ASCII case-insensitive),
//! and the expression depth limit, which needs to know which phrases the
//! `unicode61` tokenizer turns into no token at all (`unicode61`). A query
//! starting with `*` is one of FTS5's special commands (`*reads`, `*id`).
//!
//! Phrase tokenisation never fails in `unicode61`, and query-time errors
//! (I/O, corruption) are not syntax, so they are out of scope.

mod parser;
mod unicode61;

use std::fmt;

/// Why FTS5 rejects a query: the first error SQLite reports for it, whose
/// text [`fmt::Display`] reproduces.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fts5SyntaxError {
    /// `fts5: syntax error near "…"`: a token the grammar does not allow
    /// there (empty at the end of the query), a character FTS5 does not know
    /// (`%`, `'`, `@`, `.`, `,`, …), or a `NEAR` group not spelled `NEAR`.
    SyntaxErrorNear(String),
    /// `unterminated string`: a `"` without its partner.
    UnterminatedString,
    /// `no such column: …`: a column filter naming no column of
    /// `messages_fts` (`content`, `tool_name`, `tool_calls`).
    NoSuchColumn(String),
    /// `expected integer, got "…"`: a `NEAR` distance that is not a number.
    ExpectedInteger(String),
    /// `fts5: parser stack overflow`: nesting deeper than FTS5's fixed
    /// parser stack.
    ParserStackOverflow,
    /// `fts5 expression tree is too large (maximum depth 256)`.
    TooDeep {
        /// `SQLITE_FTS5_MAX_EXPR_DEPTH`.
        max_depth: u32,
    },
    /// `unknown special query: …`: a query starting with `*` names no
    /// special command.
    UnknownSpecialQuery(String),
}

impl fmt::Display for Fts5SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fts5SyntaxError::SyntaxErrorNear(near) => {
                write!(f, "fts5: syntax error near \"{near}\"")
            }
            Fts5SyntaxError::UnterminatedString => f.write_str("unterminated string"),
            Fts5SyntaxError::NoSuchColumn(name) => write!(f, "no such column: {name}"),
            Fts5SyntaxError::ExpectedInteger(got) => write!(f, "expected integer, got \"{got}\""),
            Fts5SyntaxError::ParserStackOverflow => f.write_str("fts5: parser stack overflow"),
            Fts5SyntaxError::TooDeep { max_depth } => write!(
                f,
                "fts5 expression tree is too large (maximum depth {max_depth})"
            ),
            Fts5SyntaxError::UnknownSpecialQuery(name) => {
                write!(f, "unknown special query: {name}")
            }
        }
    }
}

impl std::error::Error for Fts5SyntaxError {}

/// Checks `query` as the right-hand side of `MATCH` on the store's
/// `messages_fts` table: `Ok(())` when `SELECT … WHERE messages_fts MATCH ?`
/// runs, otherwise the error SQLite fails it with.
///
/// The property tests and the fuzz target check the verdict against a real
/// FTS5 table on arbitrary strings and on every sanitizer output; the query
/// crate's tests check the error texts against SQLite's.
///
/// ```
/// use hermes_state_core::fts5_syntax::{check_fts5_syntax, is_valid_fts5_syntax};
///
/// assert!(is_valid_fts5_syntax("docker AND \"compose file\""));
/// // What SQLite would fail the statement with, without a database:
/// assert!(check_fts5_syntax("docker AND").is_err());
/// ```
pub fn check_fts5_syntax(query: &str) -> Result<(), Fts5SyntaxError> {
    let query = match query.find('\0') {
        Some(nul) => &query[..nul],
        None => query,
    };
    match query.strip_prefix('*') {
        Some(command) => check_special_query(command),
        None => parser::parse(query),
    }
}

/// Whether SQLite's FTS5 accepts `query` on `messages_fts`: whether
/// [`check_fts5_syntax`] finds nothing.
pub fn is_valid_fts5_syntax(query: &str) -> bool {
    check_fts5_syntax(query).is_ok()
}

/// `fts5SpecialMatch`: `MATCH '*reads'` / `'* id'` return internal counters
/// instead of searching; anything else after a leading `*` is
/// `unknown special query`.
fn check_special_query(command: &str) -> Result<(), Fts5SyntaxError> {
    let command = command.trim_start_matches(' ');
    let name = command.split(' ').next().unwrap_or_default();
    if name.eq_ignore_ascii_case("reads") || name.eq_ignore_ascii_case("id") {
        Ok(())
    } else {
        Err(Fts5SyntaxError::UnknownSpecialQuery(name.to_owned()))
    }
}
