//! `sort = newest | oldest` on an FTS route.
//!
//! Pages that start within one page of the top (`offset <= limit`) begin
//! with a probe that reads the first `limit + offset` visible matches from
//! the end of the FTS index the order wants, with every column
//! ([`Search::fts_by_time_bounded`]). When that is all the matches, or no
//! match beyond it can be as new (old) as its worst, the page is those rows
//! put in the one statement's order: one walk of the matches, `snippet()`
//! for the probe's rows only, no second statement. Otherwise the one
//! statement runs with a time bound that skips most matches' `snippet()`.
//! Deeper pages run the two steps below, where the bound would still leave
//! every row above the page to the sorter.
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

use std::cmp::Ordering;
use std::collections::HashMap;

use rusqlite::types::{Value as SqlValue, ValueRef};

use super::{Failure, Row, Search, fts_tables, hit_columns};
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

    /// The first page of `… ORDER BY m.timestamp {direction}, rank LIMIT n
    /// OFFSET m` (the one statement), reading as few matches' `snippet()`
    /// as it can.
    ///
    /// SQLite's top-N sorter computes a row's result columns (`snippet()`,
    /// the content) only when the row enters the sorter (the deferred row
    /// load of `select.c`, SQLite 3.54), and a row enters it only if it is
    /// among the best `n + m` seen so far. Matches arrive in FTS rowid order,
    /// which in a store written as things happen is time order: oldest
    /// first, few rows enter; newest first, every row does, and so every
    /// match pays its `snippet()`.
    ///
    /// So a probe first reads the first `k = n + m` visible matches (same
    /// `WHERE`) with every column of a hit and their rank, walking the FTS
    /// index from the end the order wants (rowid descending for newest
    /// first): FTS5 walks in rowid order itself, no sorter, and `snippet()`
    /// runs for those `k` rows only. Then:
    ///
    /// - fewer than `k` rows: they are all the visible matches, so the page
    ///   is these rows in the one statement's order ([`one_statement_order`]),
    ///   and no second walk is needed;
    /// - `k` rows: with `T` the worst of their times, a row outside the probe
    ///   can be on the page only if its time is `T` or better; when a short
    ///   look over the matches beyond the probe finds none
    ///   ([`Search::beyond_the_probe`], no `snippet()`, no rank), the page
    ///   is again the probe's rows in order. Otherwise (rowid order is not
    ///   time order there) the one statement runs with the bound
    ///   `+m.timestamp >= T` (`<= T` oldest first, rows without a time
    ///   kept): no row worse than `T` can be among the first `k`, so the
    ///   bound drops only rows the one statement would not return, and rank,
    ///   the session look-up and `snippet()` are skipped for them. The rows
    ///   left reach the sorter in the same relative order as without the
    ///   bound, so the answer is the one statement's.
    ///
    /// The probe's order is used only when every time and rank it read is a
    /// REAL (a v23 `timestamp` column has REAL affinity, so integers come
    /// back as REALs too): two REALs compare as SQLite compares them. Any
    /// other value (NULL, text) sends the search to the earlier shape: a
    /// probe of the times only, then the one statement with the bound when
    /// that probe found `k`, without it otherwise.
    ///
    /// Ties on time and rank are put in the order SQLite's sorter gives
    /// them, arrival order, which is FTS rowid order, ascending. Snippets of
    /// probe rows off the page are never decoded (one that is not UTF-8 is
    /// an error of the route only when the one statement hands it out;
    /// `search_shapes::by_time_a_snippet_that_cannot_be_decoded_off_the_page_is_no_error`).
    /// An error SQLite itself raises while computing a `snippet()` (the
    /// tokenizer, a damaged index) can come from a probe row the one
    /// statement would not have computed it for; the bounded statement has
    /// the same gap, and either is a failure of the file, not an answer. All of it is
    /// checked against the one statement by
    /// `search_shapes::search_sorted_by_time_equals_one_statement`, on a
    /// store written in time order and on one that is not.
    fn fts_by_time_bounded(
        &self,
        table: &str,
        params: Vec<SqlValue>,
        filters: &str,
        direction: &str,
    ) -> Result<Vec<Row>, Failure> {
        let what = format!("searching {table} by time");
        let wanted = self.first_rows_wanted();
        let probe_order = if direction == "DESC" { "DESC" } else { "ASC" };
        let probe_sql = format!(
            "SELECT {columns}, rank FROM {tables}
             WHERE {table} MATCH ?1{filters}
             ORDER BY {table}.rowid {probe_order} LIMIT {wanted}",
            columns = hit_columns(table),
            tables = fts_tables(table),
        );
        super::in_read_snapshot(self.conn, || {
            let probed = self.probe(&probe_sql, params.clone(), &what)?;
            if probed.is_empty() {
                // No visible match at all.
                return Ok(Vec::new());
            }
            let Some(keys) = probed.iter().map(|p| p.keys).collect::<Option<Vec<_>>>() else {
                return self.fts_by_time_probing_times(table, params, filters, direction);
            };
            let found = probed.len() as i64;
            if found == wanted {
                let times = keys.iter().map(|(time, _)| *time);
                let (bound, edge) = if direction == "DESC" {
                    let edge = probed.iter().map(|p| p.row.hit.id).min();
                    (times.fold(f64::INFINITY, f64::min), edge)
                } else {
                    let edge = probed.iter().map(|p| p.row.hit.id).max();
                    (times.fold(f64::NEG_INFINITY, f64::max), edge)
                };
                let edge = edge.unwrap_or_default();
                if self.beyond_the_probe(table, &params, filters, direction, edge, bound)? {
                    return self.one_statement(
                        table,
                        params,
                        filters,
                        direction,
                        Some(SqlValue::Real(bound)),
                        &what,
                    );
                }
            }
            self.page_of(probed, direction, &what)
        })
    }

    /// `limit + offset`: the rows a probe reads, the first `k` of the one
    /// statement's order that the page is cut from.
    fn first_rows_wanted(&self) -> i64 {
        i64::from(self.options.limit) + i64::from(self.options.offset)
    }

    /// The probe's rows in the one statement's order, cut to the page, their
    /// snippets decoded.
    fn page_of(
        &self,
        probed: Vec<Probed>,
        direction: &str,
        what: &str,
    ) -> Result<Vec<Row>, Failure> {
        let mut probed = probed;
        probed.sort_by(|a, b| one_statement_order(a, b, direction));
        probed
            .into_iter()
            .skip(self.options.offset as usize)
            .take(self.options.limit as usize)
            .map(|mut p| {
                if let Some(bytes) = p.snippet_text {
                    p.row.hit.snippet = super::snippet_text(ValueRef::Text(&bytes))
                        .context(what)
                        .map_err(|e| Failure::Run(e.into()))?;
                }
                Ok(p.row)
            })
            .collect()
    }

    /// Whether a visible match beyond the probe (rowids past `edge` in the
    /// probe's direction) has a time as good as `bound` or better — rows
    /// without a time count oldest first, where they sort first.
    fn beyond_the_probe(
        &self,
        table: &str,
        params: &[SqlValue],
        filters: &str,
        direction: &str,
        edge: i64,
        bound: f64,
    ) -> Result<bool, Failure> {
        let what = format!("searching {table} by time");
        let (e, b) = (params.len() + 1, params.len() + 2);
        let beyond = if direction == "DESC" {
            format!("{table}.rowid < ?{e} AND +m.timestamp >= ?{b}")
        } else {
            format!("{table}.rowid > ?{e} AND (+m.timestamp <= ?{b} OR +m.timestamp IS NULL)")
        };
        let sql = format!(
            "SELECT 1 FROM {tables} WHERE {table} MATCH ?1{filters} AND {beyond} LIMIT 1",
            tables = fts_tables(table),
        );
        let mut values = params.to_vec();
        values.push(SqlValue::Integer(edge));
        values.push(SqlValue::Real(bound));
        self.conn
            .prepare_cached(&sql)
            .context(&what)
            .map_err(|e| Failure::Prepare(e.into()))?
            .exists(rusqlite::params_from_iter(values))
            .context(&what)
            .map_err(|e| Failure::Run(e.into()))
    }

    /// The one statement, with `+m.timestamp` bounded by `bound` when given.
    fn one_statement(
        &self,
        table: &str,
        mut params: Vec<SqlValue>,
        filters: &str,
        direction: &str,
        bound: Option<SqlValue>,
        what: &str,
    ) -> Result<Vec<Row>, Failure> {
        let n = params.len() + 1;
        let bound_clause = match (&bound, direction) {
            (None, _) => String::new(),
            (Some(_), "DESC") => format!(" AND +m.timestamp >= ?{n}"),
            (Some(_), _) => format!(" AND (+m.timestamp <= ?{n} OR +m.timestamp IS NULL)"),
        };
        params.extend(bound);
        let sql = format!(
            "SELECT {columns} FROM {tables}
             WHERE {table} MATCH ?1{filters}{bound_clause}
             ORDER BY m.timestamp {direction}, rank {}",
            self.paging_literals(),
            columns = hit_columns(table),
            tables = fts_tables(table),
        );
        self.run_cached(&sql, params, what)
    }

    /// The earlier shape, for matches whose times are not all REALs: a probe
    /// of the first `k` visible matches' times, then the one statement,
    /// bounded by the worst of those times when the probe found `k` (and,
    /// newest first, all `k` have a time, since rows without one sort last
    /// there), unbounded otherwise. The bound is compared without affinity
    /// (`+m.timestamp`, the value bound as read), as `min()`/`max()` and
    /// `ORDER BY` compare.
    fn fts_by_time_probing_times(
        &self,
        table: &str,
        params: Vec<SqlValue>,
        filters: &str,
        direction: &str,
    ) -> Result<Vec<Row>, Failure> {
        let what = format!("searching {table} by time");
        let wanted = self.first_rows_wanted();
        let (probe_order, best) = if direction == "DESC" {
            ("DESC", "min")
        } else {
            ("ASC", "max")
        };
        let probe_sql = format!(
            "SELECT count(*), count(t), {best}(t) FROM (
                 SELECT m.timestamp AS t FROM {tables}
                 WHERE {table} MATCH ?1{filters}
                 ORDER BY {table}.rowid {probe_order} LIMIT {wanted})",
            tables = fts_tables(table),
        );
        let mut stmt = self
            .conn
            .prepare_cached(&probe_sql)
            .context(&what)
            .map_err(|e| Failure::Prepare(e.into()))?;
        let (found, timed, bound) = stmt
            .query_row(rusqlite::params_from_iter(params.clone()), |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, i64>(1)?,
                    bindable(row.get_ref(2)?),
                ))
            })
            .context(&what)
            .map_err(|e| Failure::Run(e.into()))?;
        let bounded = match direction {
            "DESC" => found == wanted && timed == wanted,
            _ => found == wanted && timed > 0,
        };
        // Without a bound that can be bound back, the statement runs whole.
        let bound = bound.filter(|_| bounded);
        self.one_statement(table, params, filters, direction, bound, &what)
    }

    /// The rows of the probe of [`Search::fts_by_time_bounded`].
    fn probe(&self, sql: &str, params: Vec<SqlValue>, what: &str) -> Result<Vec<Probed>, Failure> {
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .context(what)
            .map_err(|e| Failure::Prepare(e.into()))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params), |row| {
                let keys = match (row.get_ref(5)?, row.get_ref(10)?) {
                    (ValueRef::Real(time), ValueRef::Real(rank)) => Some((time, rank)),
                    _ => None,
                };
                // A text snippet is kept as bytes: it may not be UTF-8, which
                // is an error only if the row is on the page.
                let (snippet_text, snippet) = match row.get_ref(3)? {
                    ValueRef::Text(bytes) => (Some(bytes.to_vec()), String::new()),
                    other => (None, super::snippet_text(other)?),
                };
                Ok(Probed {
                    row: super::hit_row(row, snippet)?,
                    snippet_text,
                    keys,
                })
            })
            .context(what)
            .map_err(|e| Failure::Run(e.into()))?;
        rows.collect::<Result<_, _>>()
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
            "SELECT m.id FROM {tables}
             WHERE {table} MATCH ?1{filters}
             ORDER BY m.timestamp {direction}, rank {}",
            self.paging_literals(),
            tables = fts_tables(table),
        );
        super::in_read_snapshot(self.conn, || {
            let ids = self.ids(&ids_sql, params, &what)?;
            rows_of_ids(self.conn, table, match_text, &ids, &what)
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

/// The rows of `ids` (found by `match_text` on `table`), in the order of
/// `ids`; an id the match does not find is left out. One walk of the
/// matches over the ids' rowid range, the ids picked by a filter FTS5 does
/// not see: `rowid IN (…)` handed to FTS5 would run the query once per id.
pub(super) fn rows_of_ids(
    conn: &rusqlite::Connection,
    table: &str,
    match_text: SqlValue,
    ids: &[i64],
    what: &str,
) -> Result<Vec<Row>, Failure> {
    let (Some(low), Some(high)) = (ids.iter().min(), ids.iter().max()) else {
        return Ok(Vec::new());
    };
    let sql = format!(
        "SELECT {columns} FROM {tables}
         WHERE {table} MATCH ?1 AND {table}.rowid BETWEEN ?3 AND ?4
           AND +{table}.rowid IN (SELECT value FROM json_each(?2))",
        columns = hit_columns(table),
        tables = fts_tables(table),
    );
    let list = format!(
        "[{}]",
        ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
    );
    let mut stmt = conn
        .prepare_cached(&sql)
        .context(what)
        .map_err(|e| Failure::Prepare(e.into()))?;
    let params = vec![
        match_text,
        SqlValue::Text(list),
        SqlValue::Integer(*low),
        SqlValue::Integer(*high),
    ];
    let mut found: HashMap<i64, Row> = super::hit_rows(&mut stmt, params, what)?
        .into_iter()
        .map(|row| (row.hit.id, row))
        .collect();
    Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
}

/// `value` as a parameter to bind back, `None` for text that is not UTF-8
/// (a time no `rusqlite` string can hold).
fn bindable(value: ValueRef<'_>) -> Option<SqlValue> {
    Some(match value {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Integer(i),
        ValueRef::Real(f) => SqlValue::Real(f),
        ValueRef::Text(bytes) => SqlValue::Text(std::str::from_utf8(bytes).ok()?.to_owned()),
        ValueRef::Blob(bytes) => SqlValue::Blob(bytes.to_vec()),
    })
}

/// A row of the probe of [`Search::fts_by_time_bounded`]: the hit, its
/// snippet as read (decoded only if it is on the page), and its time and
/// rank when both are REALs.
struct Probed {
    row: Row,
    /// The snippet's bytes when it is text (the row's own snippet is set
    /// from them on the page); other values are decoded into the row.
    snippet_text: Option<Vec<u8>>,
    keys: Option<(f64, f64)>,
}

/// `ORDER BY m.timestamp {direction}, rank` as SQLite's sorter orders
/// matches that arrive in rowid order: time, then rank (ascending), then
/// arrival (the sorter's sequence number), that is rowid, ascending. Only
/// for rows whose time and rank are REALs (never NaN in SQLite), which
/// compare as numbers do (`-0.0` equals `0.0`).
fn one_statement_order(a: &Probed, b: &Probed, direction: &str) -> Ordering {
    let ((a_time, a_rank), (b_time, b_rank)) =
        (a.keys.unwrap_or_default(), b.keys.unwrap_or_default());
    let by_time = if direction == "DESC" {
        b_time.partial_cmp(&a_time)
    } else {
        a_time.partial_cmp(&b_time)
    };
    by_time
        .unwrap_or(Ordering::Equal)
        .then(a_rank.partial_cmp(&b_rank).unwrap_or(Ordering::Equal))
        .then(a.row.hit.id.cmp(&b.row.hit.id))
}
