//! The faster shapes of `search_messages` give what the plain shapes give:
//! the context of many hits (looked up 20 hits per statement) equals the
//! per-hit look-ups of `api.md` §8.5, and `sort = newest | oldest` (ids
//! chosen first, then their snippets) equals the one statement
//! `… ORDER BY m.timestamp …, rank LIMIT … OFFSET …`, on a store with equal
//! timestamps, long multibyte contents and structured contents.

use hermes_state::query::rows::decode_content;
use hermes_state::query::search::context_preview;
use hermes_state::rusqlite::{self, params};
use hermes_state::{NewMessage, NewSession, SearchOptions, SessionDb};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use serde_json::json;

/// Three sessions of 40 messages, two of every four mentioning `lantern`;
/// pairs of messages share a timestamp (so time ties are broken by rank, and
/// some pairs tie on rank too), contents are short, long (over 1 KB, with
/// CJK and emoji) or structured.
fn store() -> (tempfile::TempDir, SessionDb) {
    store_written(false)
}

/// Three sessions of 40 messages; two messages per timestamp, the sessions'
/// times interleaved. Written session after session (rowid order is not
/// time order), or `in_time_order` (rowid order is time order, ties kept).
fn store_written(in_time_order: bool) -> (tempfile::TempDir, SessionDb) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    for s in 0..3 {
        db.create_session(&NewSession::new(format!("s{s}"), "cli"))
            .expect("session");
    }
    let mut order: Vec<(usize, usize)> =
        (0..3).flat_map(|s| (0..40).map(move |i| (s, i))).collect();
    if in_time_order {
        order.sort_by_key(|&(s, i)| (i / 2, s, i % 2));
    }
    for (s, i) in order {
        let id = format!("s{s}");
        let word = if i % 4 < 2 { "lantern" } else { "harbor" };
        let message = NewMessage::new(&id, if i % 2 == 0 { "user" } else { "assistant" });
        let message = match i % 5 {
            0 => message.content(format!("{word} {}", "长文本🙂 é ".repeat(90 + i))),
            1 => message.content(json!([
                {"type": "text", "text": format!("{word} picture {i}")},
                {"type": "image_url", "image_url": {"url": "x"}}
            ])),
            _ => message.content(format!("{word} message {i} of {id}")),
        };
        // Two messages per timestamp, sessions interleaved in time.
        let timestamp = 1000.0 + (i / 2) as f64 + s as f64 * 0.25;
        db.append_message(&message.timestamp(timestamp))
            .expect("append");
    }
    (dir, db)
}

/// A fresh store with one session `s`.
fn one_session() -> (tempfile::TempDir, SessionDb) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    db.create_session(&NewSession::new("s", "cli"))
        .expect("session");
    (dir, db)
}

/// The ids and snippets `search_messages` answers.
fn found(db: &SessionDb, query: &str, options: &SearchOptions) -> Vec<(i64, String)> {
    db.search_messages(query, options)
        .expect("search")
        .into_iter()
        .map(|h| (h.id, h.snippet))
        .collect()
}

/// The `(id, snippet)` rows of one statement, raw on the store's connection.
fn statement_rows(db: &SessionDb, sql: &str, params: impl rusqlite::Params) -> Vec<(i64, String)> {
    db.read(|conn| {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let rows = stmt
            .query_map(params, |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        Ok(rows)
    })
    .expect("read")
}

/// The context of hit `(session, timestamp, id)` by the per-hit look-ups.
fn expected_context(
    conn: &rusqlite::Connection,
    hit: &hermes_state::SearchHit,
) -> Vec<(String, String)> {
    let neighbour = |sql: &str| -> Option<(String, String)> {
        conn.query_row(sql, params![hit.session_id, hit.timestamp, hit.id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                context_preview(decode_content(r.get_ref(1)?)),
            ))
        })
        .ok()
    };
    let itself: (String, String) = conn
        .query_row(
            "SELECT role, content FROM messages WHERE id = ?1",
            [hit.id],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    context_preview(decode_content(r.get_ref(1)?)),
                ))
            },
        )
        .expect("the hit");
    neighbour("SELECT role, content FROM messages WHERE session_id = ?1 AND (timestamp < ?2 OR (timestamp = ?2 AND id < ?3)) ORDER BY timestamp DESC, id DESC LIMIT 1")
        .into_iter()
        .chain(std::iter::once(itself))
        .chain(neighbour("SELECT role, content FROM messages WHERE session_id = ?1 AND (timestamp > ?2 OR (timestamp = ?2 AND id > ?3)) ORDER BY timestamp ASC, id ASC LIMIT 1"))
        .collect()
}

#[test]
fn search_context_of_many_hits_equals_per_hit_lookups() {
    let (_dir, db) = store();
    for sort in [None, Some("newest"), Some("oldest")] {
        let options = SearchOptions {
            limit: 45,
            sort: sort.map(str::to_owned),
            ..SearchOptions::default()
        };
        let hits = db.search_messages("lantern", &options).expect("search");
        assert_eq!(hits.len(), 45, "{sort:?}: 45 of the 60 lantern messages");
        db.read(|conn| {
            for hit in &hits {
                let got: Vec<(String, String)> = hit
                    .context
                    .iter()
                    .map(|c| (c.role.clone(), c.content.clone()))
                    .collect();
                assert_eq!(got, expected_context(conn, hit), "hit {}", hit.id);
            }
            Ok(())
        })
        .expect("read");
        let long = hits
            .iter()
            .flat_map(|h| &h.context)
            .find(|c| c.content.starts_with("lantern 长文本"))
            .expect("a long content in a context");
        assert_eq!(long.content.chars().count(), 200);
        assert!(
            hits.iter()
                .flat_map(|h| &h.context)
                .any(|c| c.content.starts_with("lantern picture")),
            "a structured content's text part"
        );
    }
}

/// Both paths of `sort = newest | oldest` (`by_time.rs`: the one statement
/// with a time bound from a probe, for pages that start within one page of
/// the top; ids first, then their rows, for deeper pages; and the one
/// statement without a bound when the probe finds fewer matches than the
/// page needs) answer what the one statement answers, on a store whose
/// rowid order is not time order (sessions written one after the other,
/// their times interleaved), with ties on time at the bound, and with role
/// filters that leave fewer matches than the page, or none.
#[test]
fn search_sorted_by_time_equals_one_statement() {
    for (in_time_order, not_all_reals) in [(false, false), (true, false), (true, true)] {
        sorted_by_time_equals_one_statement(in_time_order, not_all_reals);
    }
}

/// `not_all_reals`: some times are text (`timestamp` is `NOT NULL`), which
/// SQLite orders after every number; three of them not UTF-8.
fn sorted_by_time_equals_one_statement(in_time_order: bool, not_all_reals: bool) {
    let (dir, db) = store_written(in_time_order);
    if not_all_reals {
        crate::common::setup_connection(&dir.path().join("state.db"))
            .execute_batch(
                "UPDATE messages SET timestamp = 'x' WHERE id % 7 = 0;
                 UPDATE messages SET timestamp = CAST(X'C3A9C3' AS TEXT) WHERE id IN (101, 102, 103);",
            )
            .expect("times that are not REALs");
    }
    let roles: [(Option<Vec<String>>, &str); 4] = [
        (None, ""),
        (Some(vec!["user".to_owned()]), " AND m.role IN ('user')"),
        (
            Some(vec!["assistant".to_owned()]),
            " AND m.role IN ('assistant')",
        ),
        (Some(vec!["tool".to_owned()]), " AND m.role IN ('tool')"),
    ];
    for (sort, direction) in [("newest", "DESC"), ("oldest", "ASC")] {
        for (role_filter, clause) in &roles {
            for (limit, offset) in [
                (5, 0),
                (1, 0),
                (3, 0),
                (4, 1),
                (7, 3),
                (2, 2),
                (20, 20),
                (20, 30),
                (5, 27),
                (100, 0),
                (29, 0),
                (30, 0),
                (31, 0),
                // Written in time order, newest first, the probe of these
                // ends on one message of a pair tied on time and rank whose
                // other message (the lower rowid, so first in the answer)
                // lies beyond it.
                (7, 0),
                (6, 3),
            ] {
                let options = SearchOptions {
                    limit,
                    offset,
                    role_filter: role_filter.clone(),
                    sort: Some(sort.to_owned()),
                    ..SearchOptions::default()
                };
                let got = found(&db, "lantern", &options);
                let expected = statement_rows(
                    &db,
                    &format!(
                        "SELECT m.id, snippet(messages_fts, -1, '>>>', '<<<', '...', 40)
                         FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
                         JOIN sessions s ON s.id = m.session_id
                         WHERE messages_fts MATCH 'lantern' AND (m.active = 1 OR m.compacted = 1){clause}
                         ORDER BY m.timestamp {direction}, rank LIMIT ?1 OFFSET ?2"
                    ),
                    [limit, offset],
                );
                assert_eq!(
                    got, expected,
                    "sort {sort}{clause}, limit {limit}, offset {offset}, in time order: {in_time_order}, not all REALs: {not_all_reals}"
                );
                // 60 lantern messages, 30 of each role, none from a tool.
                let matches = match *clause {
                    "" => 60,
                    c if c.contains("tool") => 0,
                    _ => 30,
                };
                assert!(
                    (offset >= matches || !got.is_empty()) && got.len() <= limit as usize,
                    "sort {sort}{clause}, limit {limit}, offset {offset}"
                );
            }
        }
    }
}

/// The FTS routes' statements with `LIMIT`/`OFFSET` written into their text
/// (so they come from the statement cache ready to run) answer what the same
/// statements with bound `LIMIT ?n OFFSET ?m` answer: the same ids, snippets
/// and order, for every route (unicode61 word and phrase, the CJK index, the
/// trigram index after two empty legs), with and without filters, and when
/// the same cached statement is run again with other paging.
/// Sources, roles, and the same as SQL clauses.
type Filters = (Option<Vec<String>>, Option<Vec<String>>, &'static str);

#[test]
fn search_with_literal_paging_equals_bound_paging() {
    let (_dir, db) = store();
    db.create_session(&NewSession::new("t", "telegram"))
        .expect("session");
    for i in 0..30 {
        let role = if i % 3 == 0 { "assistant" } else { "user" };
        db.append_message(
            &NewMessage::new("t", role)
                .content(format!("zephyrquartz{i} lantern 数据库 {i}"))
                .timestamp(2000.0 + f64::from(i)),
        )
        .expect("append");
    }
    // (query, the table its route answers from, its MATCH text there)
    let routes = [
        ("lantern", "messages_fts", "lantern"),
        ("\"lantern message\"", "messages_fts", "\"lantern message\""),
        ("数据库", "messages_fts_cjk", "\"数据库\""),
        ("yrquar", "messages_fts_trigram", "\"yrquar\""),
    ];
    let filters: [Filters; 3] = [
        (None, None, ""),
        (
            Some(vec!["telegram".to_owned()]),
            None,
            " AND s.source IN ('telegram')",
        ),
        (
            None,
            Some(vec!["assistant".to_owned()]),
            " AND m.role IN ('assistant')",
        ),
    ];
    for (query, table, match_text) in routes {
        let mut hits = 0;
        for (sources, roles, clause) in &filters {
            for (limit, offset) in [(20, 0), (5, 0), (7, 3), (5, 0), (50, 10), (3, 100)] {
                let options = SearchOptions {
                    limit,
                    offset,
                    source_filter: sources.clone(),
                    role_filter: roles.clone(),
                    ..SearchOptions::default()
                };
                let got = found(&db, query, &options);
                let expected = statement_rows(
                    &db,
                    &format!(
                        "SELECT m.id, snippet({table}, -1, '>>>', '<<<', '...', 40)
                         FROM {table} JOIN messages m ON m.id = {table}.rowid
                         JOIN sessions s ON s.id = m.session_id
                         WHERE {table} MATCH ?1 AND (m.active = 1 OR m.compacted = 1){clause}
                         ORDER BY rank LIMIT ?2 OFFSET ?3"
                    ),
                    params![match_text, limit, offset],
                );
                assert_eq!(
                    got, expected,
                    "{query} on {table}{clause}, limit {limit}, offset {offset}"
                );
                hits += got.len();
            }
        }
        assert!(
            hits > 100,
            "{query}: the route answers ({hits} hits in all)"
        );
    }
}

/// Why the zero-hit fallback's CJK leg cannot be skipped for a query without
/// CJK characters (routing decided from the query text alone): the CJK
/// tokenizer splits `东京yr` into `东京` and `yr`, while `unicode61` keeps
/// one token `东京yr`, so a Latin word glued to CJK text is found by the
/// CJK index only — here a two-letter one, which the trigram leg (terms of
/// at least 3 characters) does not search either.
#[test]
fn a_latin_word_glued_to_cjk_text_is_found_by_the_cjk_leg_only() {
    let (_dir, db) = one_session();
    let id = db
        .append_message(&NewMessage::new("s", "user").content("会议在东京yr举行"))
        .expect("append");
    let base: i64 = db
        .read(|conn| {
            Ok(conn
                .query_row(
                    "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'yr'",
                    [],
                    |r| r.get(0),
                )
                .expect("count"))
        })
        .expect("read");
    assert_eq!(base, 0, "unicode61 has no token `yr`");
    let hits = db
        .search_messages("yr", &SearchOptions::default())
        .expect("search");
    assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), vec![id]);
    assert!(hits[0].snippet.contains(">>>yr<<<"), "{}", hits[0].snippet);
}

/// The CJK tokenizer's offset drift cuts the snippet of `Café数据库` inside a
/// character (`api.md` §8.4, `schema-v23.md` §10.6): the CJK route fails
/// only when the one statement hands that row out. By time, a page that
/// leaves it out — below the page, or above it through the offset — is the
/// CJK index's answer, as the one statement's is.
#[test]
fn by_time_a_snippet_that_cannot_be_decoded_off_the_page_is_no_error() {
    let (_dir, db) = one_session();
    for (content, timestamp) in [
        ("数据 ok", 2000.0),
        ("Café数据库", 1000.0),
        ("Café数据库", 3000.0),
    ] {
        db.append_message(
            &NewMessage::new("s", "user")
                .content(content)
                .timestamp(timestamp),
        )
        .expect("append");
    }
    let page = |sort: &str, limit: u32, offset: u32| {
        let options = SearchOptions {
            limit,
            offset,
            sort: Some(sort.to_owned()),
            ..SearchOptions::default()
        };
        found(&db, "数据", &options)
    };
    let on_the_cjk_route = vec![(1, ">>>数据<<< ok".to_owned())];
    // The bad rows are the newest and the oldest; id 1 lies between them.
    assert_eq!(page("newest", 1, 1), on_the_cjk_route);
    assert_eq!(page("oldest", 1, 1), on_the_cjk_route);
}
