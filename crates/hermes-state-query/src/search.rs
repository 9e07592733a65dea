//! `search_messages` (`api.md` §8): full-text search with the original's
//! routing between the unicode61 index, the trigram index, the CJK index and
//! a LIKE scan, its filters, ordering, snippets and context.
//!
//! Routing in short: a query without CJK characters goes to the unicode61
//! index (`messages_fts`); when that finds nothing, a substring search on the
//! CJK and then the trigram index is tried. A query with CJK characters goes to
//! the CJK index when it serves and the query has no lone CJK character, else
//! to the trigram index when every CJK term has at least 3 characters, else to
//! a LIKE scan.
//!
//! Which indexes serve is decided by [`FtsObjects::probe`] from their stored
//! SQL (`newer-versions.md` §5.1): the legacy inline layout (v11–v22) and
//! layouts 1–3 are queried by MATCH as v23 does; a missing base index, the
//! v1–v10 content-only one, a missing trigger or `fts_stale` make search scan
//! `messages` instead (`scan`, with the choice between the two documented
//! scans explained there).
//!
//! Errors are never answers: a leg swallows only what the original treats as
//! "this query does not work here" — for the unicode61 MATCH an
//! `SQLITE_ERROR` raised while the MATCH runs (FTS5 syntax error), which gives
//! `[]`; for the trigram and CJK legs an `SQLITE_ERROR` or an invalid UTF-8
//! snippet, which sends the search to the next step. On a file written by a
//! newer release (`newer-versions.md` §5.3 item 4) any failure of a trigram or
//! CJK leg goes to the next step, except those of the file itself or its locks
//! (busy, I/O, not a database, read-only), which no other step could answer
//! either. Everything else is returned as a [`QueryError`] with its kind.
//!
//! Callers reading files older than v23 call [`crate::compat::adapt`] first, so
//! that `m.active` and `m.compacted` exist; without it the statement fails to
//! compile and the error is returned (a compile error is never a syntax error
//! of the user's query).
//!
//! [`search_partial`] finds a partial answer cheaply (the newest matches),
//! for search as you type while the exact answer is computed.

mod by_time;
mod context;
mod keys;
mod objects;
mod partial;
mod preview;
mod scan;
mod snapshot;

use std::collections::HashSet;

use hermes_state_types::ErrorKind;
use hermes_state_types::text::is_python_whitespace;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use crate::error::{QueryContext, QueryError};
use crate::sanitize::sanitize_fts5_query;
use crate::titles::escape_like;
use crate::values::{real, text};
pub use hermes_state_core::search::{
    ContextMessage, HitKey, QueryProblem, SearchHit, SearchOptions, context_preview, is_router_cjk,
    query_problem,
};
use hermes_state_sqlite::names;
pub use keys::{KeyedHits, hits_by_id, search_keys};
pub use objects::{BaseLayout, FtsCapabilities, FtsObjects, TrigramCoverage};
pub use partial::{PartialStep, search_partial};
use preview::stored_preview;
pub use snapshot::in_read_snapshot;

fn is_operator(token: &str) -> bool {
    matches!(token.to_uppercase().as_str(), "AND" | "OR" | "NOT")
}

fn python_split(text: &str) -> Vec<&str> {
    text.split(is_python_whitespace)
        .filter(|t| !t.is_empty())
        .collect()
}

/// `fb.strip('"').strip()`: surrounding double quotes removed, then whitespace.
fn strip_quotes(query: &str) -> &str {
    query.trim_matches('"').trim_matches(is_python_whitespace)
}

/// The MATCH string of the substring and CJK routes: operators kept as
/// typed, every other token quoted (inner quotes doubled).
fn quoted_terms(tokens: &[&str]) -> String {
    tokens
        .iter()
        .map(|t| {
            if is_operator(t) {
                (*t).to_owned()
            } else {
                format!("\"{}\"", t.replace('"', "\"\""))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Searches the messages (`api.md` §8, `newer-versions.md` §5.3 for newer
/// files). An FTS5 syntax error of the query gives no results; every other
/// failure is an error with its kind, never an empty answer. An error of kind
/// [`ErrorKind::Corrupt`] on a file of v23 or older means an FTS index needs a
/// rebuild.
pub fn search_messages(
    conn: &Connection,
    query: &str,
    options: &SearchOptions,
    caps: FtsCapabilities,
) -> Result<Vec<SearchHit>, QueryError> {
    let Some((search, q)) = Search::over(conn, query, options, caps) else {
        return Ok(Vec::new());
    };
    in_read_snapshot(conn, || {
        let rows = if caps.fts {
            search.indexed(&q)?
        } else {
            search.scan(&q)?
        };
        context::attach(conn, rows)
    })
}

/// `api.md` §8.5: a failure while building a context yields `[]` — but a
/// failure of the file or its locks is an error of the search, not an empty
/// context.
fn context_failure(error: rusqlite::Error) -> Result<Vec<ContextMessage>, QueryError> {
    let error = QueryError::Sqlite(hermes_state_sqlite::SqliteError::new(
        "reading the context of a hit",
        error,
    ));
    if is_environment_failure(&error) || error.kind() == ErrorKind::Corrupt {
        Err(error)
    } else {
        Ok(Vec::new())
    }
}

/// A hit before its context is attached.
struct Row {
    hit: SearchHit,
    /// Its own entry's text in the context ([`preview::stored_preview`]).
    preview: String,
}

/// How a leg's statement failed.
enum Failure {
    /// It did not compile (no such table, column or tokenizer; the file).
    Prepare(QueryError),
    /// It compiled and failed while running (FTS5 query syntax, the file).
    Run(QueryError),
}

/// A failure of the search's read transaction itself.
impl From<QueryError> for Failure {
    fn from(error: QueryError) -> Self {
        Failure::Run(error)
    }
}

impl Failure {
    fn error(self) -> QueryError {
        match self {
            Failure::Prepare(e) | Failure::Run(e) => e,
        }
    }
}

/// Busy, I/O, not a database, read-only: the file or its locks failed, so no
/// other step could answer either.
fn is_environment_failure(error: &QueryError) -> bool {
    matches!(
        error.kind(),
        ErrorKind::Busy | ErrorKind::Io | ErrorKind::NotADatabase | ErrorKind::ReadOnly
    )
}

struct Search<'a> {
    conn: &'a Connection,
    options: &'a SearchOptions,
    caps: FtsCapabilities,
}

impl<'a> Search<'a> {
    /// A search of `query` and its sanitized form, or `None` when the query
    /// can find nothing (blank, or nothing left after sanitizing).
    fn over(
        conn: &'a Connection,
        query: &str,
        options: &'a SearchOptions,
        caps: FtsCapabilities,
    ) -> Option<(Search<'a>, String)> {
        if query.chars().all(is_python_whitespace) {
            return None;
        }
        let q = sanitize_fts5_query(query);
        if q.is_empty() {
            return None;
        }
        Some((
            Search {
                conn,
                options,
                caps,
            },
            q,
        ))
    }
}

impl Search<'_> {
    /// Routes A and B over served indexes, with the §8.7 supplement and the
    /// zero-hit fallback.
    fn indexed(&self, q: &str) -> Result<Vec<Row>, QueryError> {
        let wants_unindexed = self.wants_unindexed()?;
        let mut rows = if q.chars().any(is_router_cjk) {
            self.cjk_query(q, wants_unindexed)?
        } else {
            match self.fts(names::FTS_BASE, q) {
                Ok(rows) => rows,
                Err(Failure::Run(error)) if error.is_sql_error() => return Ok(Vec::new()),
                Err(failure) => return Err(failure.error()),
            }
        };
        self.supplement_pending_rebuild(q, &mut rows)?;
        if rows.is_empty() && !q.chars().any(is_router_cjk) && !wants_unindexed {
            rows = self.zero_hit_fallback(q)?;
        }
        Ok(rows)
    }

    /// `wants_tool` of `api.md` §8.4, widened by `newer-versions.md` §5.3
    /// item 3 when the trigram index leaves out some sessions' rows.
    fn wants_unindexed(&self) -> Result<bool, QueryError> {
        let wants_tool = self
            .options
            .role_filter
            .as_ref()
            .is_some_and(|roles| roles.iter().any(|r| r == "tool"));
        if wants_tool || !self.caps.trigram_restricted {
            return Ok(wants_tool);
        }
        let Some(sources) = &self.options.source_filter else {
            return Ok(false);
        };
        let excluded = objects::trigram_excluded_sources(self.conn)?;
        Ok(sources.iter().any(|s| excluded.contains(s)))
    }

    /// Whether a failed trigram or CJK leg lets the next step run; otherwise
    /// its error is the search's.
    fn leg_failed(&self, failure: Failure) -> Result<(), QueryError> {
        let error = failure.error();
        let falls_through = if self.caps.newer_file {
            !is_environment_failure(&error)
        } else {
            error.is_sql_error() || error.is_conversion()
        };
        if falls_through { Ok(()) } else { Err(error) }
    }

    /// Route B (`api.md` §8.4): CJK index, trigram index, LIKE scan.
    fn cjk_query(&self, q: &str, wants_unindexed: bool) -> Result<Vec<Row>, QueryError> {
        let raw = strip_quotes(q);
        let tokens = python_split(raw);
        for table in self.cjk_legs(raw, &tokens, wants_unindexed) {
            match self.fts(table, &quoted_terms(&tokens)) {
                Ok(rows) => return Ok(rows),
                Err(failure) => self.leg_failed(failure)?,
            }
        }
        let terms: Vec<&str> = tokens.iter().copied().filter(|t| !is_operator(t)).collect();
        let terms = if terms.is_empty() { vec![raw] } else { terms };
        self.like(&terms)
    }

    /// The indexes route B tries, in order, before its LIKE scan (`raw`:
    /// the query without surrounding quotes, `tokens`: its words): the CJK
    /// index unless a CJK character stands alone, then the trigram index
    /// when every CJK term has at least 3 characters. A leg that answers
    /// (even with no row) is the route's answer; one that fails sends the
    /// search to the next ([`Search::leg_failed`]).
    fn cjk_legs(&self, raw: &str, tokens: &[&str], wants_unindexed: bool) -> Vec<&'static str> {
        let cjk_count = raw.chars().filter(|c| is_router_cjk(*c)).count();
        let short = tokens.iter().filter(|t| !is_operator(t)).any(|t| {
            t.chars().any(is_router_cjk) && t.chars().filter(|c| is_router_cjk(*c)).count() < 3
        });
        let mut legs = Vec::new();
        if self.caps.cjk_serving && !wants_unindexed && !has_lone_cjk_char(raw) {
            legs.push(names::FTS_CJK);
        }
        if cjk_count >= 3 && !short && self.caps.trigram && !wants_unindexed {
            legs.push(names::FTS_TRIGRAM);
        }
        legs
    }

    /// The zero-hit fallback of route A: substring search on the CJK index,
    /// then on the trigram index when every term has at least 3 characters.
    /// A leg that fails (see [`Search::leg_failed`]) finds nothing and the
    /// next leg runs; the original lets a CJK snippet decoding error escape
    /// here, which this port treats like the other legs.
    fn zero_hit_fallback(&self, q: &str) -> Result<Vec<Row>, QueryError> {
        let (legs, match_text) = self.fallback_legs(q);
        for table in legs {
            match self.fts(table, &match_text) {
                Ok(rows) if !rows.is_empty() => return Ok(rows),
                Ok(_) => {}
                Err(failure) => self.leg_failed(failure)?,
            }
        }
        Ok(Vec::new())
    }

    /// The legs of [`Search::zero_hit_fallback`] in order, and their MATCH
    /// text: the CJK index when it serves and holds a match, the trigram
    /// index when every term has at least 3 characters.
    fn fallback_legs(&self, q: &str) -> (Vec<&'static str>, String) {
        let fallback = strip_quotes(q);
        let tokens = python_split(fallback);
        let match_text = quoted_terms(&tokens);
        let mut legs = Vec::new();
        if self.caps.cjk_serving && self.may_match(names::FTS_CJK, &match_text) {
            legs.push(names::FTS_CJK);
        }
        let terms: Vec<&&str> = tokens.iter().filter(|t| !is_operator(t)).collect();
        let long_enough = !terms.is_empty() && terms.iter().all(|t| t.chars().count() >= 3);
        if self.caps.trigram && long_enough {
            legs.push(names::FTS_TRIGRAM);
        }
        (legs, match_text)
    }

    /// False when `table` holds no row at all for `match_text`, so a leg of
    /// it would find nothing whatever its filters. Asked before a leg that
    /// usually finds nothing (the CJK leg of the zero-hit fallback): this
    /// look-up costs about a microsecond, a ranked leg about five, most of it
    /// FTS5 preparing its rank sorter (`docs/PERFORMANCE.md`, "Fourth
    /// round"). A failure says nothing: the leg runs and meets it itself.
    fn may_match(&self, table: &str, match_text: &str) -> bool {
        let sql = format!("SELECT 1 FROM {table} WHERE {table} MATCH ?1 LIMIT 1");
        !matches!(
            self.conn
                .prepare_cached(&sql)
                .and_then(|mut stmt| stmt.exists([match_text])),
            Ok(false)
        )
    }

    /// The scan of `scan` when the base index is not served.
    fn scan(&self, q: &str) -> Result<Vec<Row>, QueryError> {
        let groups = scan::groups(q);
        let Some(first) = groups.first().and_then(|g| g.positive.first()).cloned() else {
            return Ok(Vec::new());
        };
        let mut params: Vec<SqlValue> = Vec::new();
        let condition = scan::condition(&groups, &mut params);
        params.push(SqlValue::Text(first));
        let first = params.len();
        let filters = self.filters(&mut params);
        let direction = match self
            .options
            .sort
            .as_deref()
            .map(|s| s.trim().to_lowercase())
        {
            Some(sort) if sort == "oldest" => "ASC",
            _ => "DESC",
        };
        let sql = format!(
            "SELECT m.id, m.session_id, m.role,
                    substr(m.content, max(1, instr(m.content, ?{first}) - 40), 120) AS snippet,
                    m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started
             FROM messages m JOIN sessions s ON s.id = m.session_id
             WHERE ({condition}){filters}
             ORDER BY m.timestamp {direction}, m.id {direction} LIMIT ?{} OFFSET ?{}",
            params.len() + 1,
            params.len() + 2
        );
        self.push_paging(&mut params);
        self.run(&sql, params, "scanning messages")
            .map_err(Failure::error)
    }

    /// `DESC` (newest first) or `ASC` (oldest first) when the options sort
    /// an FTS route by time; `None` for relevance order.
    fn time_direction(&self) -> Option<&'static str> {
        match self
            .options
            .sort
            .as_deref()
            .map(|s| s.trim().to_lowercase())
            .as_deref()
        {
            Some("newest") => Some("DESC"),
            Some("oldest") => Some("ASC"),
            _ => None,
        }
    }

    /// A MATCH query on one FTS table, with the shared filters and ordering.
    fn fts(&self, table: &str, match_text: &str) -> Result<Vec<Row>, Failure> {
        let mut params = vec![SqlValue::Text(match_text.to_owned())];
        let filters = self.filters(&mut params);
        if let Some(direction) = self.time_direction() {
            return self.fts_by_time(table, params, &filters, direction);
        }
        let sql = format!(
            "SELECT {columns} FROM {tables}
             WHERE {table} MATCH ?1{filters}
             ORDER BY rank {}",
            self.paging_literals(),
            columns = hit_columns(table),
            tables = fts_tables(table),
        );
        self.run_cached(&sql, params, &format!("searching {table}"))
    }

    /// The LIKE route: tokens OR-ed, each against content, tool name and tool
    /// calls; raw-text snippet around the first token; newest first.
    fn like(&self, terms: &[&str]) -> Result<Vec<Row>, QueryError> {
        let mut params: Vec<SqlValue> = Vec::new();
        let mut conditions = Vec::new();
        for term in terms {
            params.push(SqlValue::Text(format!("%{}%", escape_like(term))));
            let n = params.len();
            conditions.push(format!(
                "(m.content LIKE ?{n} ESCAPE '\\' OR m.tool_name LIKE ?{n} ESCAPE '\\' OR m.tool_calls LIKE ?{n} ESCAPE '\\')"
            ));
        }
        params.push(SqlValue::Text(
            terms.first().copied().unwrap_or_default().to_owned(),
        ));
        let first = params.len();
        let filters = self.filters(&mut params);
        let sql = format!(
            "SELECT m.id, m.session_id, m.role,
                    substr(m.content, max(1, instr(m.content, ?{first}) - 40), 120) AS snippet,
                    m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started
             FROM messages m JOIN sessions s ON s.id = m.session_id
             WHERE ({}){filters}
             ORDER BY m.timestamp DESC LIMIT ?{} OFFSET ?{}",
            conditions.join(" OR "),
            params.len() + 1,
            params.len() + 2
        );
        self.push_paging(&mut params);
        self.run(&sql, params, "searching with LIKE")
            .map_err(Failure::error)
    }

    /// Rows of the id range a deferred FTS rebuild has not indexed yet
    /// (`api.md` §8.7), appended while fewer than `limit` rows were found.
    fn supplement_pending_rebuild(&self, q: &str, rows: &mut Vec<Row>) -> Result<(), QueryError> {
        let limit = self.options.limit as usize;
        if rows.len() >= limit {
            return Ok(());
        }
        let Some(high_water) = self.rebuild_marker(names::REBUILD_HIGH_WATER_KEY)? else {
            return Ok(());
        };
        let progress = self
            .rebuild_marker(names::REBUILD_PROGRESS_KEY)?
            .unwrap_or(0);
        let terms = supplement_terms(q);
        if terms.is_empty() {
            return Ok(());
        }
        let mut params = vec![SqlValue::Integer(progress), SqlValue::Integer(high_water)];
        let mut conditions = Vec::new();
        for term in &terms {
            params.push(SqlValue::Text(format!("%{}%", escape_like(term))));
            let n = params.len();
            conditions.push(format!(
                "(m.content LIKE ?{n} ESCAPE '\\' OR m.tool_name LIKE ?{n} ESCAPE '\\' OR m.tool_calls LIKE ?{n} ESCAPE '\\')"
            ));
        }
        params.push(SqlValue::Text(terms[0].clone()));
        let first = params.len();
        let filters = self.filters(&mut params);
        params.push(SqlValue::Integer((limit - rows.len()) as i64));
        let sql = format!(
            "SELECT m.id, m.session_id, m.role,
                    substr(m.content, max(1, instr(m.content, ?{first}) - 40), 120) AS snippet,
                    m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started
             FROM messages m JOIN sessions s ON s.id = m.session_id
             WHERE m.id > ?1 AND m.id <= ?2 AND {}{filters}
             ORDER BY m.timestamp DESC LIMIT ?{}",
            conditions.join(" AND "),
            params.len()
        );
        let found: HashSet<i64> = rows.iter().map(|r| r.hit.id).collect();
        let extra = self
            .run(&sql, params, "searching not yet indexed messages")
            .map_err(Failure::error)?;
        rows.extend(extra.into_iter().filter(|r| !found.contains(&r.hit.id)));
        Ok(())
    }

    /// A marker of a deferred FTS rebuild (`api.md` §8.7) as an integer;
    /// `None` when absent.
    fn rebuild_marker(&self, key: &str) -> Result<Option<i64>, QueryError> {
        // Cached: read by every search that finds fewer than `limit`.
        match self
            .conn
            .prepare_cached("SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = ?1")
            .and_then(|mut stmt| stmt.query_row([key], |r| r.get::<_, Option<i64>>(0)))
            .optional()
        {
            Ok(value) => Ok(value.flatten()),
            // No `state_meta` at all (v1–v7 without compatibility views).
            Err(e) if crate::error::is_sql_error(&e) => Ok(None),
            Err(e) => Err(e)
                .context("reading the FTS rebuild markers")
                .map_err(Into::into),
        }
    }

    /// Visibility and the source/role filters, as ` AND …` clauses.
    fn filters(&self, params: &mut Vec<SqlValue>) -> String {
        let mut clauses = String::new();
        if !self.options.include_inactive {
            clauses.push_str(" AND (m.active = 1 OR m.compacted = 1)");
        }
        let mut list =
            |column: &str, negate: bool, values: &[String], params: &mut Vec<SqlValue>| {
                if values.is_empty() {
                    if !negate {
                        clauses.push_str(" AND 0");
                    }
                    return;
                }
                let start = params.len() + 1;
                params.extend(values.iter().map(|v| SqlValue::Text(v.clone())));
                let placeholders = (start..start + values.len())
                    .map(|i| format!("?{i}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let not = if negate { "NOT " } else { "" };
                clauses.push_str(&format!(" AND {column} {not}IN ({placeholders})"));
            };
        if let Some(sources) = &self.options.source_filter {
            list("s.source", false, sources, params);
        }
        if let Some(sources) = &self.options.exclude_sources {
            list("s.source", true, sources, params);
        }
        if let Some(roles) = self.options.role_filter.as_ref().filter(|r| !r.is_empty()) {
            list("m.role", false, roles, params);
        }
        clauses
    }

    fn push_paging(&self, params: &mut Vec<SqlValue>) {
        params.push(SqlValue::Integer(i64::from(self.options.limit)));
        params.push(SqlValue::Integer(i64::from(self.options.offset)));
    }

    /// `LIMIT n OFFSET m` with the values written into the text, for the
    /// statements of the FTS routes, which come from the statement cache.
    ///
    /// With `LIMIT ?n OFFSET ?m` SQLite marks those parameters as taking
    /// part in the plan, and a statement whose such parameter is bound (or
    /// whose bindings rusqlite clears when it goes back to the cache) is
    /// parsed and planned again before its next run: a cached statement
    /// would be prepared anew on every search anyway. With literals the
    /// text is the same for the same options and filters, so a repeated
    /// search runs a ready statement. Both values are `u32`s: nothing a
    /// caller types ends up in the text. The rows are the same: a literal
    /// and a bound integer of the same value mean the same `LIMIT`.
    fn paging_literals(&self) -> String {
        format!(
            "LIMIT {} OFFSET {}",
            self.options.limit, self.options.offset
        )
    }

    fn run(&self, sql: &str, params: Vec<SqlValue>, what: &str) -> Result<Vec<Row>, Failure> {
        let mut stmt = self
            .conn
            .prepare(sql)
            .context(what)
            .map_err(|e| Failure::Prepare(e.into()))?;
        hit_rows(&mut stmt, params, what)
    }

    /// [`Search::run`] on a statement from the connection's cache.
    fn run_cached(
        &self,
        sql: &str,
        params: Vec<SqlValue>,
        what: &str,
    ) -> Result<Vec<Row>, Failure> {
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .context(what)
            .map_err(|e| Failure::Prepare(e.into()))?;
        hit_rows(&mut stmt, params, what)
    }
}

/// Runs a hit statement (the columns of [`Search::fts`]) and reads its rows.
fn hit_rows(
    stmt: &mut rusqlite::Statement<'_>,
    params: Vec<SqlValue>,
    what: &str,
) -> Result<Vec<Row>, Failure> {
    let rows = stmt
        .query_map(params_from_iter(params), |row| {
            hit_row(row, snippet_text(row.get_ref(3)?)?)
        })
        .context(what)
        .map_err(|e| Failure::Run(e.into()))?;
    rows.collect::<Result<_, _>>()
        .context(what)
        .map_err(|e| Failure::Run(e.into()))
}

/// The columns of a hit statement over FTS table `table` (read by
/// [`hit_row`]), from [`fts_tables`].
fn hit_columns(table: &str) -> String {
    format!(
        "m.id, m.session_id, m.role, snippet({table}, -1, '>>>', '<<<', '...', 40) AS snippet,
         m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started"
    )
}

/// FTS table `table` joined to the matched messages and their sessions.
fn fts_tables(table: &str) -> String {
    format!(
        "{table} JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id"
    )
}

/// Columns 0–9 of a hit statement (see [`Search::fts`]) but the snippet,
/// which the caller gives.
fn hit_row(row: &rusqlite::Row<'_>, snippet: String) -> rusqlite::Result<Row> {
    Ok(Row {
        hit: SearchHit {
            id: row.get(0)?,
            session_id: text(row.get_ref(1)?).unwrap_or_default(),
            role: text(row.get_ref(2)?).unwrap_or_default(),
            snippet,
            timestamp: real(row.get_ref(5)?).unwrap_or_default(),
            tool_name: text(row.get_ref(6)?),
            source: text(row.get_ref(7)?),
            model: text(row.get_ref(8)?),
            session_started: real(row.get_ref(9)?),
            context: Vec::new(),
        },
        preview: stored_preview(row.get_ref(4)?),
    })
}

/// A snippet must be valid UTF-8: the CJK tokenizer's offset drift can cut
/// one inside a character, which the original reports as an error of the
/// route (falling through to the next one), and so does this.
fn snippet_text(value: ValueRef<'_>) -> rusqlite::Result<String> {
    match value {
        ValueRef::Text(bytes) => String::from_utf8(bytes.to_vec()).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, Box::new(e))
        }),
        other => Ok(text(other).unwrap_or_default()),
    }
}

/// The terms of the deferred-rebuild supplement: tokens of `"[^"]+"|\S+`,
/// stripped of surrounding quotes and stars, without empty ones and
/// `AND`/`OR`/`NOT`/`NEAR`.
fn supplement_terms(q: &str) -> Vec<String> {
    scan::tokens(q)
        .into_iter()
        .map(|token| token.trim_matches(|c| c == '"' || c == '*'))
        .filter(|token| !token.is_empty() && !matches!(*token, "AND" | "OR" | "NOT" | "NEAR"))
        .map(str::to_owned)
        .collect()
}

/// Whether `raw` has a maximal run of exactly one CJK character (router set;
/// anything else ends a run).
fn has_lone_cjk_char(raw: &str) -> bool {
    let mut run = 0;
    for c in raw.chars().chain(std::iter::once(' ')) {
        if is_router_cjk(c) {
            run += 1;
        } else {
            if run == 1 {
                return true;
            }
            run = 0;
        }
    }
    false
}
