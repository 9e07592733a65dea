//! `search_messages` on PostgreSQL (`api.md` §8; differences in docs/POSTGRES.md).
//!
//! The same sanitizer and routing as the SQLite backend, with PostgreSQL's
//! indexes: the word route matches the generated `search_vector` (GIN)
//! against a `tsquery` compiled from the sanitized query (every user word a
//! bound parameter), ranked by `ts_rank_cd`, snippets by `ts_headline` with
//! the same `>>>`/`<<<` markers. Where SQLite uses its trigram index (CJK
//! queries of three or more characters, the zero-hit fallback), the
//! substring route matches `ILIKE` conditions with the same operators on
//! non-tool rows (served by the partial `pg_trgm` index when it exists);
//! short CJK terms and tool-role CJK queries take the LIKE route: any token
//! as a substring of `content`, `tool_name` or `tool_calls`, newest first,
//! raw snippets. A token holding a CJK character is looked up first in the
//! gram index (GIN over `cjk_grams_of(content, tool_name, tool_calls)`: the
//! CJK characters and adjacent pairs of the three columns, step 3 of the
//! migrations), its `ILIKE` kept as the exact check; a token without one is
//! matched by `ILIKE` alone, and then the statement reads every row.

mod expr;

use hermes_state_core::fts5_syntax::is_valid_fts5_syntax;
use hermes_state_core::sanitize::sanitize_fts5_query;
use hermes_state_core::search::{
    ContextMessage, SearchHit, SearchOptions, context_preview, is_router_cjk,
};
use hermes_state_types::stored;
use postgres::Transaction;
use postgres::types::ToSql;

pub use expr::{Expr, parse};

use crate::PgStore;
use crate::content;
use crate::conversation_search::PgSource;
use crate::error::{Context, Result};
use hermes_state_core::Result as CoreResult;
use hermes_state_core::cancel::Cancel;
use hermes_state_core::conversation_search::ConversationHit;
use hermes_state_core::conversation_search::ConversationScope;
use hermes_state_core::conversation_search::group_conversations;
use hermes_state_core::store::Search;

/// Characters of a snippet around the first match on the substring routes.
const SNIPPET_BEFORE: usize = 40;
const SNIPPET_LENGTH: usize = 120;

/// [`PgStore::search_messages`] inside a read transaction (the search by
/// conversation reads its pages in one).
pub(crate) fn search_in(
    tx: &mut Transaction<'_>,
    query: &str,
    options: &SearchOptions,
) -> Result<Vec<SearchHit>> {
    search_planned(tx, query, options, &mut None)
}

/// [`search_in`], with the plan (`EXPLAIN`) of each statement that finds
/// hits pushed on `plans` when it is `Some`.
fn search_planned(
    tx: &mut Transaction<'_>,
    query: &str,
    options: &SearchOptions,
    plans: &mut Option<Vec<String>>,
) -> Result<Vec<SearchHit>> {
    let q = sanitize_fts5_query(query);
    if q.trim().is_empty() {
        return Ok(Vec::new());
    }
    let wants_tool = options
        .role_filter
        .as_ref()
        .is_some_and(|roles| roles.iter().any(|r| r == "tool"));
    let raw = q.trim_matches('"').trim().to_owned();
    let mut hits = if q.chars().any(is_router_cjk) {
        let tokens = plain_tokens(&raw);
        let cjk_count = raw.chars().filter(|c| is_router_cjk(*c)).count();
        let short = tokens.iter().any(|t| {
            t.chars().any(is_router_cjk) && t.chars().filter(|c| is_router_cjk(*c)).count() < 3
        });
        match (
            cjk_count >= 3 && !short && !wants_tool,
            substring_expr(&raw),
        ) {
            (true, Some(expr)) => substring_route(tx, &expr, options, plans)?,
            _ => like_route(tx, &tokens, options, plans)?,
        }
    } else if !is_valid_fts5_syntax(&q) {
        Vec::new()
    } else {
        let Some(expr) = parse(&q) else {
            return Ok(Vec::new());
        };
        let hits = word_route(tx, &expr, options, plans)?;
        let fallback = substring_expr(&raw).filter(|_| hits.is_empty() && !wants_tool);
        match fallback {
            Some(expr) if plain_tokens(&raw).iter().all(|t| t.chars().count() >= 3) => {
                substring_route(tx, &expr, options, plans)?
            }
            _ => hits,
        }
    };
    attach_context(tx, &mut hits)?;
    Ok(hits)
}

/// The non-operator whitespace-separated tokens of `raw` (or `[raw]`).
fn plain_tokens(raw: &str) -> Vec<String> {
    let tokens: Vec<String> = raw
        .split_whitespace()
        .filter(|t| !matches!(t.to_uppercase().as_str(), "AND" | "OR" | "NOT"))
        .map(str::to_owned)
        .collect();
    if tokens.is_empty() {
        vec![raw.to_owned()]
    } else {
        tokens
    }
}

/// The substring routes' query: each non-operator token quoted, upper-case
/// operators kept, as SQLite builds its trigram `MATCH`.
fn substring_expr(raw: &str) -> Option<Expr> {
    let rebuilt = raw
        .split_whitespace()
        .map(|t| match t {
            "AND" | "OR" | "NOT" => t.to_owned(),
            _ => format!("\"{}\"", t.replace('"', "\"\"")),
        })
        .collect::<Vec<_>>()
        .join(" ");
    parse(&rebuilt)
}

/// The filters every route applies, as SQL with parameters appended.
fn filters(options: &SearchOptions, params: &mut Vec<Box<dyn ToSql + Sync>>) -> String {
    let mut sql = String::new();
    if !options.include_inactive {
        sql.push_str(" AND (m.active = 1 OR m.compacted = 1)");
    }
    if let Some(sources) = &options.source_filter {
        params.push(Box::new(sources.clone()));
        sql.push_str(&format!(" AND s.source = ANY(${}::TEXT[])", params.len()));
    }
    if let Some(excluded) = &options.exclude_sources {
        params.push(Box::new(excluded.clone()));
        sql.push_str(&format!(
            " AND NOT (s.source = ANY(${}::TEXT[]))",
            params.len()
        ));
    }
    if let Some(roles) = options.role_filter.as_ref().filter(|r| !r.is_empty()) {
        params.push(Box::new(roles.clone()));
        sql.push_str(&format!(" AND m.role = ANY(${}::TEXT[])", params.len()));
    }
    sql
}

fn sort_prefix(options: &SearchOptions) -> &'static str {
    match options
        .sort
        .as_deref()
        .map(|s| s.trim().to_lowercase())
        .as_deref()
    {
        Some("newest") => "m.timestamp DESC, ",
        Some("oldest") => "m.timestamp ASC, ",
        _ => "",
    }
}

/// The join a route's first step needs for the filters of `options`: the
/// source filters read `sessions`, the others `messages` alone.
fn sessions_join(options: &SearchOptions) -> &'static str {
    if options.source_filter.is_some() || options.exclude_sources.is_some() {
        " JOIN sessions s ON s.id = m.session_id"
    } else {
        ""
    }
}

fn paging(options: &SearchOptions, params: &mut Vec<Box<dyn ToSql + Sync>>) -> String {
    params.push(Box::new(i64::from(options.limit)));
    params.push(Box::new(i64::from(options.offset)));
    format!(" LIMIT ${} OFFSET ${}", params.len() - 1, params.len())
}

fn boxed(texts: Vec<String>) -> Vec<Box<dyn ToSql + Sync>> {
    texts
        .into_iter()
        .map(|t| Box::new(t) as Box<dyn ToSql + Sync>)
        .collect()
}

const HIT_COLUMNS: &str = "m.id, m.session_id, m.role, m.content, m.timestamp, m.tool_name, \
                           s.source, s.model, s.started_at";

/// The word route ranks in two steps: the page's ids first, from
/// `messages` alone (joined to `sessions` only when a source filter needs
/// it), then the page's rows, sessions and snippets. Every message has its
/// session (a foreign key), so the join decides nothing the first step
/// skips; joined first, the planner hashed every session for each search
/// (1.3–1.5 ms of a rare word's 1.5 ms at 100k messages, measured with
/// `EXPLAIN ANALYZE`).
fn word_route(
    tx: &mut Transaction<'_>,
    expr: &Expr,
    options: &SearchOptions,
    plans: &mut Option<Vec<String>>,
) -> Result<Vec<SearchHit>> {
    let mut texts = Vec::new();
    let tsquery = expr.to_tsquery_sql(&mut texts);
    let mut params = boxed(texts);
    let filter_sql = filters(options, &mut params);
    let sessions_join = sessions_join(options);
    let order = sort_prefix(options);
    let sql = format!(
        "WITH q AS (SELECT {tsquery} AS q),
         page AS (
             SELECT m.id, m.timestamp, ts_rank_cd(m.search_vector, q.q) AS rank
             FROM q, messages m{sessions_join}
             WHERE m.search_vector @@ q.q{filter_sql}
             ORDER BY {order}rank DESC, m.id{paging})
         SELECT {HIT_COLUMNS},
                ts_headline('simple', CASE WHEN left(m.content, 1) = chr(1) THEN '' ELSE m.content END, q.q,
                    'StartSel=>>>, StopSel=<<<, MaxWords=40, MinWords=10, MaxFragments=1') AS snippet
         FROM q, page JOIN messages m ON m.id = page.id JOIN sessions s ON s.id = m.session_id
         ORDER BY {outer_order}page.rank DESC, page.id",
        paging = paging(options, &mut params),
        outer_order = order.replace("m.", "page."),
    );
    // `ts_headline` of a NULL content (a tool call without text) is NULL;
    // FTS5's `snippet()` gives the empty string there.
    run(tx, &sql, &params, plans, |row| {
        row.get::<_, Option<String>>("snippet").unwrap_or_default()
    })
}

fn substring_route(
    tx: &mut Transaction<'_>,
    expr: &Expr,
    options: &SearchOptions,
    plans: &mut Option<Vec<String>>,
) -> Result<Vec<SearchHit>> {
    let mut texts = Vec::new();
    let condition = expr.to_substring_sql("m.content", &mut texts);
    let mut params = boxed(texts);
    let filter_sql = filters(options, &mut params);
    let order = match sort_prefix(options) {
        "" => "m.timestamp DESC, ",
        other => other,
    };
    // In two steps, as the word route: the page's ids, then its rows.
    let sessions_join = sessions_join(options);
    let sql = format!(
        "WITH page AS (
             SELECT m.id, m.timestamp FROM messages m{sessions_join}
             WHERE m.role <> 'tool' AND {condition}{filter_sql}
             ORDER BY {order}m.id{paging})
         SELECT {HIT_COLUMNS}, m.content AS snippet_source
         FROM page JOIN messages m ON m.id = page.id JOIN sessions s ON s.id = m.session_id
         ORDER BY {outer_order}page.id",
        paging = paging(options, &mut params),
        outer_order = order.replace("m.", "page."),
    );
    let first = expr
        .phrases()
        .first()
        .map(|p| p.to_string())
        .unwrap_or_default();
    run(tx, &sql, &params, plans, |row| {
        marked_snippet(&stored_text(row.get("snippet_source")), &first)
    })
}

fn like_route(
    tx: &mut Transaction<'_>,
    tokens: &[String],
    options: &SearchOptions,
    plans: &mut Option<Vec<String>>,
) -> Result<Vec<SearchHit>> {
    let mut params: Vec<Box<dyn ToSql + Sync>> = Vec::new();
    let mut conditions = Vec::new();
    for token in tokens {
        params.push(Box::new(format!("%{}%", expr::escape_like(token))));
        let n = params.len();
        let like = format!(
            "(m.content ILIKE ${n} ESCAPE '\\' OR m.tool_name ILIKE ${n} ESCAPE '\\' \
             OR m.tool_calls ILIKE ${n} ESCAPE '\\')"
        );
        conditions.push(if token.chars().any(is_router_cjk) {
            // The candidates from the gram index (the expression is the
            // index's), the ILIKE deciding: a message containing the token
            // holds every gram of it, both sides read by one function.
            params.push(Box::new(token.clone()));
            format!(
                "(cjk_grams_of(m.content, m.tool_name, m.tool_calls) @> cjk_grams_of(${}::TEXT) \
                 AND {like})",
                params.len()
            )
        } else {
            like
        });
    }
    let filter_sql = filters(options, &mut params);
    let sql = format!(
        "SELECT {HIT_COLUMNS}, m.content AS snippet_source
         FROM messages m JOIN sessions s ON s.id = m.session_id
         WHERE ({}){filter_sql}
         ORDER BY m.timestamp DESC, m.id{}",
        conditions.join(" OR "),
        paging(options, &mut params)
    );
    let first = tokens.first().cloned().unwrap_or_default();
    run(tx, &sql, &params, plans, |row| {
        raw_snippet(&stored_text(row.get("snippet_source")), &first)
    })
}

fn run(
    tx: &mut Transaction<'_>,
    sql: &str,
    params: &[Box<dyn ToSql + Sync>],
    plans: &mut Option<Vec<String>>,
    snippet: impl Fn(&postgres::Row) -> String,
) -> Result<Vec<SearchHit>> {
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
    if let Some(plans) = plans {
        // The same text and parameters, planned as the statement below is.
        let plan = tx
            .query(&format!("EXPLAIN {sql}"), &refs)
            .context("explaining a search")?
            .iter()
            .map(|row| row.get::<_, String>(0))
            .collect::<Vec<_>>()
            .join("\n");
        plans.push(plan);
    }
    Ok(tx
        .query(sql, &refs)
        .context("searching messages")?
        .iter()
        .map(|row| SearchHit {
            id: row.get("id"),
            session_id: row.get("session_id"),
            role: row.get("role"),
            snippet: snippet(row),
            timestamp: row.get("timestamp"),
            tool_name: row.get("tool_name"),
            source: row.get("source"),
            model: row.get("model"),
            session_started: row.get("started_at"),
            context: Vec::new(),
        })
        .collect())
}

/// Stored content as SQLite's string functions see it: structured content
/// (which starts with a NUL there) as empty text.
fn stored_text(content: Option<String>) -> String {
    match content::from_pg(content) {
        stored::StoredValue::Text(text) if !text.starts_with('\0') => text,
        stored::StoredValue::Integer(i) => i.to_string(),
        stored::StoredValue::Real(f) => f.to_string(),
        _ => String::new(),
    }
}

/// SQLite's `substr(content, max(1, instr(content, token) - 40), 120)`.
fn raw_snippet(text: &str, token: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = find_chars(&chars, token, false).unwrap_or(0);
    chars
        .iter()
        .skip(at.saturating_sub(SNIPPET_BEFORE))
        .take(SNIPPET_LENGTH)
        .collect()
}

/// A window around the first case-insensitive match, the match marked.
fn marked_snippet(text: &str, token: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let Some(at) = find_chars(&chars, token, true) else {
        return chars.iter().take(SNIPPET_LENGTH).collect();
    };
    let len = token.chars().count();
    let start = at.saturating_sub(SNIPPET_BEFORE);
    let end = (start + SNIPPET_LENGTH).max(at + len).min(chars.len());
    let mut out: String = chars[start..at].iter().collect();
    out.push_str(">>>");
    out.extend(&chars[at..at + len]);
    out.push_str("<<<");
    out.extend(&chars[at + len..end]);
    out
}

fn find_chars(haystack: &[char], needle: &str, fold: bool) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    let same = |a: char, b: char| {
        if fold {
            a.to_lowercase().eq(b.to_lowercase())
        } else {
            a == b
        }
    };
    (0..=haystack.len() - needle.len()).find(|&i| {
        needle
            .iter()
            .enumerate()
            .all(|(j, &c)| same(haystack[i + j], c))
    })
}

/// Before, the hit, after, by `(timestamp, id)` in the session, every row
/// (rewound ones too), as `api.md` §8.5 — for every hit of the page in one
/// statement.
fn attach_context(tx: &mut Transaction<'_>, hits: &mut [SearchHit]) -> Result<()> {
    if hits.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = hits.iter().map(|h| h.id).collect();
    let rows = tx
        .query(
            "SELECT h.id AS hit, c.id, c.role, c.content
             FROM unnest($1::BIGINT[]) WITH ORDINALITY AS h(id, n)
             JOIN messages hm ON hm.id = h.id
             CROSS JOIN LATERAL (
                 (SELECT m.id, m.role, m.content, 0 AS pos FROM messages m
                   WHERE m.session_id = hm.session_id
                     AND (m.timestamp, m.id) < (hm.timestamp, hm.id)
                   ORDER BY m.timestamp DESC, m.id DESC LIMIT 1)
                 UNION ALL
                 SELECT hm.id, hm.role, hm.content, 1
                 UNION ALL
                 (SELECT m.id, m.role, m.content, 2 FROM messages m
                   WHERE m.session_id = hm.session_id
                     AND (m.timestamp, m.id) > (hm.timestamp, hm.id)
                   ORDER BY m.timestamp, m.id LIMIT 1)
             ) c
             ORDER BY h.n, c.pos",
            &[&ids],
        )
        .context("reading the hits' context")?;
    for row in &rows {
        let hit: i64 = row.get(0);
        let id: i64 = row.get(1);
        let value = content::from_pg(row.get(3));
        let entry = ContextMessage {
            role: row.get(2),
            content: context_preview(stored::decode_content(value.as_ref())),
            is_hit: id == hit,
        };
        // A page may hold the same message once only; attach by id.
        if let Some(target) = hits.iter_mut().find(|h| h.id == hit) {
            target.context.push(entry);
        }
    }
    Ok(())
}

impl PgStore {
    /// [`PgStore::search_messages`], with the plan PostgreSQL chose for
    /// each statement that looked for hits (`EXPLAIN`, text format; the
    /// word route and its substring fallback are two): a diagnostic for an
    /// operator asking why a search is slow, and how the tests check which
    /// index a route uses. The hits are those `search_messages` gives.
    pub fn explain_search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<(Vec<SearchHit>, Vec<String>)> {
        self.read(|tx| {
            let mut plans = Some(Vec::new());
            let hits = search_planned(tx, query, options, &mut plans)?;
            Ok((hits, plans.unwrap_or_default()))
        })
    }
}

impl Search for PgStore {
    /// Searches the messages like [`PgStore::search_messages`] (same query
    /// syntax, filters and sort) and collapses the hits by conversation — a
    /// session and its compression continuations (`api.md` §9.2) — with
    /// its best hit, title, number of hits and their time span;
    /// `options.limit` and `options.offset` count conversations.
    fn search_conversations(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> CoreResult<Vec<ConversationHit>> {
        self.search_conversations_in(query, options, &ConversationScope::default())
    }

    /// [`PgStore::search_conversations`] over the hits `scope` takes only
    /// (some sessions, a time window: `since` inclusive, `until`
    /// exclusive); hits out of scope count nowhere.
    fn search_conversations_in(
        &self,
        query: &str,
        options: &SearchOptions,
        scope: &ConversationScope,
    ) -> CoreResult<Vec<ConversationHit>> {
        Ok(self.read(|tx| group_conversations(&mut PgSource { tx }, query, options, scope))?)
    }

    /// Full-text search over messages (`api.md` §8), with the SQLite
    /// backend's arguments, filters, visibility, paging and result fields.
    /// An empty or unparsable query gives no hits, as there.
    fn search_messages(&self, query: &str, options: &SearchOptions) -> CoreResult<Vec<SearchHit>> {
        Ok(self.read(|tx| search_in(tx, query, options))?)
    }

    /// [`PgStore::search_messages`], stopped when `cancel` is raised: the
    /// server is asked to cancel the running statement (as `pg_cancel_backend`
    /// would), the connection is closed rather than reused, and the answer
    /// is [`hermes_state_core::Error::Cancelled`].
    fn search_messages_cancellable(
        &self,
        query: &str,
        options: &SearchOptions,
        cancel: &Cancel,
    ) -> CoreResult<Vec<SearchHit>> {
        cancel.check()?;
        crate::transaction::read_cancellable(&self.pool, cancel, |tx| search_in(tx, query, options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_mark_the_first_match_case_insensitively() {
        assert_eq!(
            marked_snippet("please concatenate", "CAT"),
            "please con>>>cat<<<enate"
        );
        assert_eq!(raw_snippet("abc", "zz"), "abc");
        let long = "x".repeat(100) + "needle" + &"y".repeat(100);
        let snippet = raw_snippet(&long, "needle");
        assert!(snippet.starts_with(&"x".repeat(40)));
        assert_eq!(snippet.chars().count(), 120);
    }
}
