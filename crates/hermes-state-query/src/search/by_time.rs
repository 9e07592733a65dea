//! `sort = newest | oldest` on an FTS route.
//!
//! Pages that start within one page of the top (`offset <= limit`) run the
//! one statement with a time bound found by a short probe
//! ([`Search::fts_by_time_bounded`]): one walk of the matches, `snippet()`
//! for about the page's rows only, and no second statement, so a search
//! with few matches costs what the one statement costs. Deeper pages run
//! the two steps below, where the bound would still leave every row above
//! the page to the sorter.
//!
//! The two steps:
//! The one-statement shape (`… ORDER BY m.timestamp DESC, rank LIMIT n`)
//! cannot stop early: every match goes through SQLite's sorter with its
//! result columns — `snippet()` (which tokenizes the content again) and the
//! content — computed for far more rows than the `n` returned (measured
//! with `benches/examples/search_overhead.rs` at 100k messages, a word in
//! 10 % of them: 109 ms newest first, 36 ms oldest first, against 6.7 ms in
//! relevance order, where FTS5 sorts by rank itself and `snippet()` runs for
//! the returned rows only). So the ids are chosen first with the same
//! `FROM`, `WHERE`, `ORDER BY`, `LIMIT` and `OFFSET` but no `snippet()` or
//! content, then the columns of those ids only are read (one walk of the
//! FTS index over the ids' rowid range, the ids picked by a filter FTS5
//! does not see: `rowid IN (…)` handed to FTS5 would run the query once per
//! id, ~50 µs each), and the rows are
//! put back in the order of the first step. Both steps run in the search's
//! read transaction ([`super::in_read_snapshot`]: one snapshot), so the
//! second sees exactly the rows the first chose. The answer is the
//! one-statement shape's: the same rows in the same order, rows tied on
//! time and rank included (the first step's sorter gets the same keys in
//! the same input order, FTS rowid order; checked by the facade test
//! `search_shapes::search_sorted_by_time_equals_one_statement`).

use std::collections::HashMap;

use rusqlite::types::Value as SqlValue;

use super::{Failure, Row, Search};
use crate::error::QueryContext;

impl Search<'_> {
    /// A MATCH query on `table` ordered by time (`direction`: `ASC` or
    /// `DESC`, then rank); `params` holds the MATCH text as `?1` and the
    /// values of `filters`. Pages that start within one page of the top take
    /// the bounded one-statement path ([`Search::fts_by_time_bounded`]);
    /// deeper pages the two steps ([`Search::fts_by_time_two_steps`]).
    pub(super) fn fts_by_time(
        &self,
        table: &str,
        params: Vec<SqlValue>,
        filters: &str,
        direction: &str,
    ) -> Result<Vec<Row>, Failure> {
        let (limit, offset) = (self.options.limit, self.options.offset);
        if limit > 0 && offset <= limit {
            self.fts_by_time_bounded(table, params, filters, direction)
        } else {
            self.fts_by_time_two_steps(table, params, filters, direction)
        }
    }

    /// The one statement `… ORDER BY m.timestamp {direction}, rank LIMIT n
    /// OFFSET m`, with a bound on the time that lets it skip most matches.
    ///
    /// SQLite's top-N sorter computes a row's result columns (`snippet()`,
    /// the content) only when the row enters the sorter (the deferred row
    /// load of `select.c`, SQLite 3.54), and a row enters it only if it is
    /// among the best `n + m` seen so far. Matches arrive in FTS rowid order,
    /// which in a store written as things happen is time order: oldest
    /// first, few rows enter; newest first, every row does, and so every
    /// match pays its `snippet()`. The bound: a probe reads the first
    /// `k = n + m` visible matches (same `WHERE`) walking the FTS index from
    /// the end the order wants (rowid descending for newest first), without
    /// the sorter or `snippet()`; if it finds `k`, the `k`-th best time is at
    /// least as good as the worst of those `k` (`T`, their minimum for
    /// newest first, their maximum for oldest first), so no row worse than
    /// `T` can be among the first `k`, and `+m.timestamp >= T` (or `<= T`)
    /// drops only rows the one statement would not return. The rows left
    /// reach the sorter in the same relative order as without the bound, so
    /// the answer is the one statement's, ties on time and rank included
    /// (the sorter breaks full ties by arrival; checked by
    /// `search_shapes::search_sorted_by_time_equals_one_statement`). The
    /// bound is compared without affinity (`+m.timestamp`, the value bound
    /// as read), as `min()`/`max()` and `ORDER BY` compare. When the probe
    /// finds fewer than `k` matches there are fewer than `k` in all, and the
    /// statement runs without a bound (each match enters the sorter once);
    /// when it finds none, the answer is empty without it. (Running the
    /// statement over the probe's ids only, their rowid range filtered
    /// outside FTS5 as in the two steps, was tried for that case: 22 → 56 µs
    /// for one match at 10k, and no gain for a filter leaving 17 of 100.)
    ///
    /// Where rowid order is not time order the bound drops less and the
    /// statement does more of the sorter's work; at worst it is the one
    /// statement without a bound.
    fn fts_by_time_bounded(
        &self,
        table: &str,
        mut params: Vec<SqlValue>,
        filters: &str,
        direction: &str,
    ) -> Result<Vec<Row>, Failure> {
        let what = format!("searching {table} by time");
        let wanted = i64::from(self.options.limit) + i64::from(self.options.offset);
        let (probe_order, best) = if direction == "DESC" {
            ("DESC", "min")
        } else {
            ("ASC", "max")
        };
        let probe_sql = format!(
            "SELECT count(*), count(t), {best}(t) FROM (
                 SELECT m.timestamp AS t
                 FROM {table} JOIN messages m ON m.id = {table}.rowid
                 JOIN sessions s ON s.id = m.session_id
                 WHERE {table} MATCH ?1{filters}
                 ORDER BY {table}.rowid {probe_order} LIMIT {wanted})"
        );
        super::in_read_snapshot(self.conn, || {
            let (found, timed, bound) = self.probe(&probe_sql, params.clone(), &what)?;
            if found == 0 {
                // No visible match at all.
                return Ok(Vec::new());
            }
            let n = params.len() + 1;
            // Newest first: rows without a time sort last, so the bound
            // needs `wanted` rows with one. Oldest first: they sort first,
            // so they are kept, and one row with a time gives the bound.
            let bound_clause = match direction {
                "DESC" if found == wanted && timed == wanted => {
                    format!(" AND +m.timestamp >= ?{n}")
                }
                "ASC" if found == wanted && timed > 0 => {
                    format!(" AND (+m.timestamp <= ?{n} OR +m.timestamp IS NULL)")
                }
                _ => String::new(),
            };
            if !bound_clause.is_empty() {
                params.push(bound);
            }
            let sql = format!(
                "SELECT m.id, m.session_id, m.role,
                        snippet({table}, -1, '>>>', '<<<', '...', 40) AS snippet,
                        m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started
                 FROM {table} JOIN messages m ON m.id = {table}.rowid
                 JOIN sessions s ON s.id = m.session_id
                 WHERE {table} MATCH ?1{filters}{bound_clause}
                 ORDER BY m.timestamp {direction}, rank {}",
                self.paging_literals()
            );
            self.run_cached(&sql, params, &what)
        })
    }

    /// The probe of [`Search::fts_by_time_bounded`]: how many matches it
    /// read, how many of them have a time, and the worst of those times.
    fn probe(
        &self,
        sql: &str,
        params: Vec<SqlValue>,
        what: &str,
    ) -> Result<(i64, i64, SqlValue), Failure> {
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .context(what)
            .map_err(|e| Failure::Prepare(e.into()))?;
        stmt.query_row(rusqlite::params_from_iter(params), |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, SqlValue>(2)?,
            ))
        })
        .context(what)
        .map_err(|e| Failure::Run(e.into()))
    }

    /// The ids first (no `snippet()`, no content), then the rows of those
    /// ids only: for pages deeper than one page, where the bounded statement
    /// would compute `snippet()` for every row above the page.
    fn fts_by_time_two_steps(
        &self,
        table: &str,
        params: Vec<SqlValue>,
        filters: &str,
        direction: &str,
    ) -> Result<Vec<Row>, Failure> {
        let what = format!("searching {table} by time");
        let match_text = params.first().cloned().unwrap_or(SqlValue::Null);
        let ids_sql = format!(
            "SELECT m.id
             FROM {table} JOIN messages m ON m.id = {table}.rowid
             JOIN sessions s ON s.id = m.session_id
             WHERE {table} MATCH ?1{filters}
             ORDER BY m.timestamp {direction}, rank {}",
            self.paging_literals()
        );
        let rows_sql = format!(
            "SELECT m.id, m.session_id, m.role,
                    snippet({table}, -1, '>>>', '<<<', '...', 40) AS snippet,
                    m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started
             FROM {table} JOIN messages m ON m.id = {table}.rowid
             JOIN sessions s ON s.id = m.session_id
             WHERE {table} MATCH ?1 AND {table}.rowid BETWEEN ?3 AND ?4
               AND +{table}.rowid IN (SELECT value FROM json_each(?2))"
        );
        super::in_read_snapshot(self.conn, || {
            let ids = self.ids(&ids_sql, params, &what)?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let list = format!(
                "[{}]",
                ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
            );
            let mut found: HashMap<i64, Row> = self
                .run_cached(
                    &rows_sql,
                    vec![
                        match_text,
                        SqlValue::Text(list),
                        SqlValue::Integer(ids.iter().copied().min().unwrap_or_default()),
                        SqlValue::Integer(ids.iter().copied().max().unwrap_or_default()),
                    ],
                    &what,
                )?
                .into_iter()
                .map(|row| (row.hit.id, row))
                .collect();
            Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
        })
    }

    fn ids(&self, sql: &str, params: Vec<SqlValue>, what: &str) -> Result<Vec<i64>, Failure> {
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .context(what)
            .map_err(|e| Failure::Prepare(e.into()))?;
        let ids = stmt
            .query_map(rusqlite::params_from_iter(params), |row| {
                row.get::<_, i64>(0)
            })
            .context(what)
            .map_err(|e| Failure::Run(e.into()))?;
        ids.collect::<Result<_, _>>()
            .context(what)
            .map_err(|e| Failure::Run(e.into()))
    }
}
