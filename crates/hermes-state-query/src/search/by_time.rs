//! `sort = newest | oldest` on an FTS route, in two steps.
//!
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
    /// values of `filters`.
    pub(super) fn fts_by_time(
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
