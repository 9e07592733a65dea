//! A search's hits as keys only — id, session, time — in the search's order,
//! for a caller that looks at every hit but shows few of them: the search by
//! conversation groups every hit into its conversation and shows the best
//! hit of a page of conversations.
//!
//! Reading pages of [`super::search_messages`] for that costs every page the
//! whole ranking again (FTS5 scores every match before it skips `OFFSET`
//! rows) plus every hit's row, `snippet()` and context. [`search_keys`]
//! runs the page statement's `FROM`, `WHERE` and `ORDER BY` once, without
//! `LIMIT`/`OFFSET` and with three columns; [`hits_by_id`] then reads the
//! full hits of the few ids shown.
//!
//! The list is given only when every page of `search_messages` (any `limit`
//! and `offset`) that holds a hit is the list's slice at that offset:
//!
//! - the rows: the same statement without paging orders its rows as the
//!   paged one does, ties included (FTS5 sorts by rank itself, and SQLite's
//!   sorter keeps rows tied on `m.timestamp, rank` in arrival order with or
//!   without `LIMIT`), and the time-ordered shapes of `by_time` all answer as
//!   that statement does; a list cut at its first `n` rows is the first `n`
//!   rows of the whole;
//! - the leg: route A's unicode61 leg, or the first index leg of route B,
//!   answers every page unless it fails, and a leg fails on a page by an SQL
//!   error (which the unpaged statement meets too) or a `snippet()` that is
//!   not UTF-8. On the CJK index that happens to valid text (the CJK
//!   tokenizer's offset drift can cut a character), so its list reads every
//!   row's snippet and checks it without keeping it. The unicode61 and
//!   trigram tokenizers cut at characters: their snippets are UTF-8 when the
//!   stored text is, which every writer of the store (the original, this
//!   library) guarantees — text that is not UTF-8 is damage, met by the
//!   reads that show it (`docs/DECISIONS.md`, "Search by conversation");
//! - route A's zero-hit fallback runs only on a page without a hit of the
//!   unicode61 leg, i.e. past the end of the list, where the caller reads
//!   the page itself;
//! - anything else declines (`None`): the LIKE routes and the scan (their
//!   ties in time are not proven), a deferred rebuild's supplement (it
//!   depends on the page's `limit`), a failing leg.

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, params_from_iter};

use super::{
    FtsCapabilities, HitKey, Search, SearchHit, SearchOptions, by_time, context, fts_tables,
    is_router_cjk, python_split, quoted_terms, strip_quotes,
};
use crate::error::QueryError;
use crate::values::{real, text};
use hermes_state_sqlite::names;

/// Every hit of a search, in its order, as keys; and the index leg that
/// found them, which [`hits_by_id`] reads again.
#[derive(Debug, Clone)]
pub struct KeyedHits {
    /// The hits in the search's order.
    pub keys: Vec<HitKey>,
    table: &'static str,
    match_text: String,
    /// The sanitized query (route A's fallback is built from it).
    q: String,
    /// How many hits were listed, and whether they are all of them.
    listed: usize,
    complete: bool,
}

/// The hits of [`super::search_messages`] for `query` and `options` (its
/// filters and sort; `limit` and `offset` are ignored) as keys, in the
/// search's order, the first `at_most` of them (all with `None`) — or
/// `None` when a page of that search could differ from the list's slice at
/// its offset (see the module documentation); a failure of the statement is
/// `None` too, for the pages to meet again. Run it and [`hits_by_id`] in one
/// read transaction ([`super::in_read_snapshot`]).
pub fn search_keys(
    conn: &Connection,
    query: &str,
    options: &SearchOptions,
    caps: FtsCapabilities,
    at_most: Option<usize>,
) -> Result<Option<KeyedHits>, QueryError> {
    if !caps.fts {
        return Ok(None);
    }
    let Some((search, q)) = Search::over(conn, query, options, caps) else {
        return Ok(None);
    };
    if search
        .rebuild_marker(names::REBUILD_HIGH_WATER_KEY)?
        .is_some()
    {
        return Ok(None);
    }
    let (table, match_text) = if q.chars().any(is_router_cjk) {
        let raw = strip_quotes(&q);
        let tokens = python_split(raw);
        let wants_unindexed = search.wants_unindexed()?;
        match search.cjk_legs(raw, &tokens, wants_unindexed).first() {
            Some(table) => (*table, quoted_terms(&tokens)),
            None => return Ok(None),
        }
    } else {
        (names::FTS_BASE, q.clone())
    };
    Ok(search
        .keys(table, &match_text, at_most)
        .map(|keys| KeyedHits {
            listed: keys.len(),
            complete: at_most.is_none_or(|n| keys.len() < n),
            keys,
            table,
            match_text,
            q,
        }))
}

impl KeyedHits {
    /// Whether the page of the search at `offset` (with the `options` and
    /// `caps` the list was made with) is empty, proven without running it:
    /// the list is whole and ends at or before `offset`, so the page's leg
    /// finds nothing there; on route A the zero-hit fallback then runs its
    /// legs at the same offset, and each finds nothing when its index holds
    /// at most `offset` matches, filters aside. `false` when that cannot be
    /// shown (or a count fails): the page is to be read.
    pub fn past_the_end_is_empty(
        &self,
        conn: &Connection,
        options: &SearchOptions,
        caps: FtsCapabilities,
        offset: usize,
    ) -> bool {
        if !self.complete || offset < self.listed {
            return false;
        }
        if self.table != names::FTS_BASE {
            // Route B has no fallback: its leg's page past the end is empty.
            return true;
        }
        let search = Search {
            conn,
            options,
            caps,
        };
        let (legs, match_text) = search.fallback_legs(&self.q);
        legs.into_iter().all(|table| {
            let sql = format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1");
            conn.prepare_cached(&sql)
                .and_then(|mut stmt| stmt.query_row([&match_text], |row| row.get::<_, i64>(0)))
                .is_ok_and(|count| usize::try_from(count).is_ok_and(|count| count <= offset))
        })
    }
}

/// The full hits of `ids` — row, snippet and context as the search's pages
/// give them — from the leg of `keyed`, in the order of `ids`; an id the leg
/// does not find (a row deleted since, outside a read transaction) is left
/// out.
pub fn hits_by_id(
    conn: &Connection,
    keyed: &KeyedHits,
    ids: &[i64],
) -> Result<Vec<SearchHit>, QueryError> {
    let what = format!("searching {}", keyed.table);
    let match_text = SqlValue::Text(keyed.match_text.clone());
    let rows = by_time::rows_of_ids(conn, keyed.table, match_text, ids, &what)
        .map_err(super::Failure::error)?;
    context::attach(conn, rows)
}

impl Search<'_> {
    /// The keys of the rows of the page statement on `table` (relevance or
    /// time order as the options say), the first `at_most` of them; on the
    /// CJK index each row's `snippet()` checked. `None` when the statement
    /// fails or a checked snippet is not UTF-8.
    fn keys(&self, table: &str, match_text: &str, at_most: Option<usize>) -> Option<Vec<HitKey>> {
        let mut params = vec![SqlValue::Text(match_text.to_owned())];
        let filters = self.filters(&mut params);
        let order = match self.time_direction() {
            Some(direction) => format!("m.timestamp {direction}, rank"),
            None => "rank".to_owned(),
        };
        let checked = table == names::FTS_CJK;
        let snippet = if checked {
            format!(", snippet({table}, -1, '>>>', '<<<', '...', 40)")
        } else {
            String::new()
        };
        // A literal, as the pages' `LIMIT`: the text is the same for the
        // same bound, and a repeated search runs a ready statement.
        let limit = at_most.map_or_else(String::new, |n| format!(" LIMIT {n}"));
        let sql = format!(
            "SELECT m.id, m.session_id, m.timestamp{snippet}
             FROM {tables}
             WHERE {table} MATCH ?1{filters}
             ORDER BY {order}{limit}",
            tables = fts_tables(table),
        );
        let mut stmt = self.conn.prepare_cached(&sql).ok()?;
        let mut rows = stmt.query(params_from_iter(params)).ok()?;
        let mut keys = Vec::new();
        while let Some(row) = rows.next().ok()? {
            if checked
                && let ValueRef::Text(bytes) = row.get_ref(3).ok()?
                && std::str::from_utf8(bytes).is_err()
            {
                return None;
            }
            keys.push(HitKey {
                id: row.get(0).ok()?,
                session_id: text(row.get_ref(1).ok()?).unwrap_or_default(),
                timestamp: real(row.get_ref(2).ok()?).unwrap_or_default(),
            });
        }
        Some(keys)
    }
}
