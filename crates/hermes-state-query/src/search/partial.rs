//! A partial answer to a search, found cheaply while the exact one is
//! computed: for search as you type, where the exact answer of a query
//! may take a scan of every message (a lone CJK character takes the LIKE
//! route) or the ranking of every match (a word in many messages), and the
//! screen should show something true at once.
//!
//! Every hit of a partial answer is a hit of the query (the same index, or
//! the same LIKE conditions, and the same filters as [`search_messages`](super::search_messages)),
//! but the answer is not the search's: it holds the newest matches found so
//! far, not the best ranked or the newest of all. A caller shows it as
//! partial and replaces it by the search's answer.
//!
//! - On an index route (a word, a CJK term the CJK or trigram index
//!   serves): the newest matches in the index's own order (`ORDER BY rowid
//!   DESC`: FTS5 walks its doclists backwards and stops at `limit`, no
//!   score computed), in one step; when the word index has none, those of
//!   the zero-hit fallback's first leg that has some (a part of a word:
//!   `har` of `harbor`).
//! - On the LIKE route: the messages of an id range, newest ids first, in
//!   steps of `rows` ids each ([`PartialStep::next`] says where the next
//!   one starts), each step a bounded scan of the primary key.
//! - Elsewhere (a file whose base index is not served, which `scan`s, or a
//!   query an index refuses): no partial answer.

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use super::{
    FtsCapabilities, Row, Search, SearchHit, SearchOptions, context, fts_tables, hit_columns,
    in_read_snapshot, is_operator, is_router_cjk, python_split, quoted_terms, strip_quotes,
};
use crate::error::{QueryContext, QueryError};
use crate::titles::escape_like;
use hermes_state_sqlite::names;

/// One step of a partial answer.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialStep {
    /// Hits found by this step (at most `options.limit`), newest first;
    /// each with its context, as the search's.
    pub hits: Vec<SearchHit>,
    /// Where the next step starts (its `below`), when ids are left to
    /// look at; `None` when this step was the last.
    pub next: Option<i64>,
}

/// What a step found before the context is attached, and the next step's
/// `below`.
struct Found {
    rows: Vec<Row>,
    next: Option<i64>,
}

impl Found {
    /// The last step, with `rows`.
    fn last(rows: Vec<Row>) -> Found {
        Found { rows, next: None }
    }
}

/// Where a query's partial answer comes from.
enum Route {
    /// The newest matches of an FTS table.
    Index {
        table: &'static str,
        match_text: String,
    },
    /// The LIKE route's conditions over an id range.
    Like { terms: Vec<String> },
}

/// A step of the partial answer to `query` (see the module): on the LIKE
/// route the messages with ids below `below` (all when `None`) and at least
/// `below - rows`; on an index route the newest `options.limit` matches
/// (`below` and `rows` unused, and no next step). `None` when the query has
/// no partial answer: empty, routed to a scan, or refused by its index (an
/// FTS5 syntax error, an index that cannot run it) — the search itself
/// answers those. `options.offset` is not used. Errors of the file or its
/// locks are errors.
pub fn search_partial(
    conn: &Connection,
    query: &str,
    options: &SearchOptions,
    caps: FtsCapabilities,
    below: Option<i64>,
    rows: u32,
) -> Result<Option<PartialStep>, QueryError> {
    if !caps.fts {
        return Ok(None);
    }
    let Some((search, q)) = Search::over(conn, query, options, caps) else {
        return Ok(None);
    };
    in_read_snapshot(conn, || {
        let Some(route) = search.partial_route(&q)? else {
            return Ok(None);
        };
        let step = match route {
            Route::Index { table, match_text } => {
                match search.newest_indexed(table, &match_text)? {
                    // The word route found nothing: the search goes on to
                    // its zero-hit fallback, and so does this.
                    Some(found) if found.rows.is_empty() && table == names::FTS_BASE => {
                        search.newest_of_fallback(&q)?
                    }
                    step => step,
                }
            }
            Route::Like { terms } => search.like_range(&terms, below, rows)?,
        };
        let Some(Found { rows, next }) = step else {
            return Ok(None);
        };
        let hits = context::attach(conn, rows)?;
        Ok(Some(PartialStep { hits, next }))
    })
}

impl Search<'_> {
    /// The route [`Search::indexed`] takes first for `q`, when it has a
    /// partial answer.
    fn partial_route(&self, q: &str) -> Result<Option<Route>, QueryError> {
        if !q.chars().any(is_router_cjk) {
            return Ok(Some(Route::Index {
                table: names::FTS_BASE,
                match_text: q.to_owned(),
            }));
        }
        let wants_unindexed = self.wants_unindexed()?;
        let raw = strip_quotes(q);
        let tokens = python_split(raw);
        if let Some(table) = self.cjk_legs(raw, &tokens, wants_unindexed).first() {
            return Ok(Some(Route::Index {
                table,
                match_text: quoted_terms(&tokens),
            }));
        }
        let terms: Vec<String> = tokens
            .iter()
            .filter(|t| !is_operator(t))
            .map(|t| (*t).to_owned())
            .collect();
        let terms = if terms.is_empty() {
            vec![raw.to_owned()]
        } else {
            terms
        };
        Ok(Some(Route::Like { terms }))
    }

    /// The newest `limit` matches of `table` under the filters; `None` when
    /// the index refuses the query (see [`search_partial`]).
    fn newest_indexed(&self, table: &str, match_text: &str) -> Result<Option<Found>, QueryError> {
        let mut params = vec![SqlValue::Text(match_text.to_owned())];
        let filters = self.filters(&mut params);
        let sql = format!(
            "SELECT {columns} FROM {tables}
             WHERE {table} MATCH ?1{filters}
             ORDER BY {table}.rowid DESC LIMIT {limit}",
            columns = hit_columns(table),
            tables = fts_tables(table),
            limit = self.options.limit,
        );
        match self.run_cached(
            &sql,
            params,
            &format!("listing the newest matches of {table}"),
        ) {
            Ok(rows) => Ok(Some(Found::last(rows))),
            Err(failure) => {
                let error = failure.error();
                if error.is_sql_error() || error.is_conversion() {
                    Ok(None)
                } else {
                    Err(error)
                }
            }
        }
    }

    /// The newest matches of the first leg of the zero-hit fallback
    /// ([`Search::zero_hit_fallback`]) that has any; none when no leg has.
    fn newest_of_fallback(&self, q: &str) -> Result<Option<Found>, QueryError> {
        if self.wants_unindexed()? {
            return Ok(Some(Found::last(Vec::new())));
        }
        let (legs, match_text) = self.fallback_legs(q);
        for table in legs {
            if let Some(found) = self.newest_indexed(table, &match_text)?
                && !found.rows.is_empty()
            {
                return Ok(Some(found));
            }
        }
        Ok(Some(Found::last(Vec::new())))
    }

    /// The LIKE route's matches among the ids in `[below - rows, below)`
    /// (`below`: past the newest id when `None`), newest first, at most
    /// `limit`; and the next step's `below`.
    fn like_range(
        &self,
        terms: &[String],
        below: Option<i64>,
        rows: u32,
    ) -> Result<Option<Found>, QueryError> {
        let below = match below {
            Some(below) => below,
            None => {
                let newest: Option<i64> = self
                    .conn
                    .prepare_cached("SELECT max(id) FROM messages")
                    .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
                    .context("finding the newest message")?;
                match newest {
                    Some(newest) => newest.saturating_add(1),
                    None => return Ok(Some(Found::last(Vec::new()))),
                }
            }
        };
        let from = below.saturating_sub(i64::from(rows.max(1)));
        let mut params = vec![SqlValue::Integer(from), SqlValue::Integer(below)];
        let mut conditions = Vec::new();
        for term in terms {
            params.push(SqlValue::Text(format!("%{}%", escape_like(term))));
            let n = params.len();
            conditions.push(format!(
                "(m.content LIKE ?{n} ESCAPE '\\' OR m.tool_name LIKE ?{n} ESCAPE '\\' OR m.tool_calls LIKE ?{n} ESCAPE '\\')"
            ));
        }
        params.push(SqlValue::Text(terms.first().cloned().unwrap_or_default()));
        let first = params.len();
        let filters = self.filters(&mut params);
        let sql = format!(
            "SELECT m.id, m.session_id, m.role,
                    substr(m.content, max(1, instr(m.content, ?{first}) - 40), 120) AS snippet,
                    m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started
             FROM messages m JOIN sessions s ON s.id = m.session_id
             WHERE m.id >= ?1 AND m.id < ?2 AND ({}){filters}
             ORDER BY m.timestamp DESC, m.id DESC LIMIT {}",
            conditions.join(" OR "),
            self.options.limit,
        );
        let found = self
            .run(&sql, params, "scanning the newest messages")
            .map_err(super::Failure::error)?;
        let oldest: Option<i64> = self
            .conn
            .prepare_cached("SELECT min(id) FROM messages")
            .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
            .context("finding the oldest message")?;
        let next = oldest.filter(|oldest| from > *oldest).map(|_| from);
        Ok(Some(Found { rows: found, next }))
    }
}
