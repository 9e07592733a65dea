//! One- and two-character CJK terms on PostgreSQL (step 3 of the
//! migrations, the gram index): the LIKE route finds them through the
//! gram index, never by reading every message, and answers exactly what the
//! plain `ILIKE` scan answers — on generated texts, after every kind of
//! write that changes a message's text, and on a store made before step 3.

use hermes_state_core::prelude::*;
use hermes_state_core::search::SearchOptions;
use hermes_state_postgres::PgStore;
use hermes_state_types::{NewMessage, NewSession};
use postgres::types::ToSql;
use serde_json::json;

use crate::common::TestSchema;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// The name of the gram index.
const GRAM_INDEX: &str = "idx_messages_cjk_grams";

/// A small deterministic generator (xorshift64*): the same cases every run.
struct Gen(u64);

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }

    fn text(&mut self, from: &[&str], max: usize) -> String {
        let len = self.below(max + 1);
        (0..len).map(|_| self.pick(from)).collect()
    }
}

/// CJK characters of every kind the router counts (ideographs, the
/// supplementary plane, kana, Hangul, CJK punctuation), letters with case
/// (Latin, Greek, full-width), and spaces.
const TEXT_CHARS: [&str; 21] = [
    "中", "文", "搜", "索", "数", "据", "库", "の", "カ", "한", "。", "𠀀", "a", "B", "z", "Σ",
    "σ", "Ａ", "ａ", " ", " ",
];
/// The same without spaces: the characters of one query token. No `%`,
/// `_` or `\`, so a token is its own `LIKE` pattern.
const TOKEN_CHARS: [&str; 19] = [
    "中", "文", "搜", "索", "数", "据", "库", "の", "カ", "한", "。", "𠀀", "a", "B", "z", "Σ",
    "σ", "Ａ", "ａ",
];

fn is_cjk(token: &str) -> bool {
    token.chars().any(hermes_state_core::search::is_router_cjk)
}

/// A client with the store's schema first on its `search_path`.
fn raw(schema: &TestSchema) -> postgres::Client {
    let mut client = schema.client();
    client
        .batch_execute(&format!("SET search_path TO \"{}\"", schema.name()))
        .unwrap();
    client
}

/// What the LIKE route answered before the gram index, as one plain
/// statement: any token as a substring of `content`, `tool_name` or
/// `tool_calls` (`ILIKE`), the route's visibility and role filters, newest
/// first, then by id.
fn ilike_scan(
    client: &mut postgres::Client,
    tokens: &[String],
    options: &SearchOptions,
) -> Vec<i64> {
    let patterns: Vec<String> = tokens.iter().map(|t| format!("%{t}%")).collect();
    let mut params: Vec<&(dyn ToSql + Sync)> =
        patterns.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
    let mut sql = format!(
        "SELECT m.id FROM messages m JOIN sessions s ON s.id = m.session_id WHERE ({})",
        (1..=patterns.len())
            .map(|n| format!(
                "(m.content ILIKE ${n} OR m.tool_name ILIKE ${n} OR m.tool_calls ILIKE ${n})"
            ))
            .collect::<Vec<_>>()
            .join(" OR ")
    );
    if !options.include_inactive {
        sql.push_str(" AND (m.active = 1 OR m.compacted = 1)");
    }
    let roles = options.role_filter.clone().unwrap_or_default();
    if !roles.is_empty() {
        params.push(&roles);
        sql.push_str(&format!(" AND m.role = ANY(${}::TEXT[])", params.len()));
    }
    let limit = i64::from(options.limit);
    params.push(&limit);
    sql.push_str(&format!(
        " ORDER BY m.timestamp DESC, m.id LIMIT ${}",
        params.len()
    ));
    client
        .query(&sql, &params)
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// The route's hits equal the plain scan's (same ids, same order), and the
/// gram filter keeps every message any token matches, over the whole table
/// (the condition the route relies on, checked beyond the page).
fn check_query(
    store: &PgStore,
    client: &mut postgres::Client,
    tokens: &[String],
    options: &SearchOptions,
) {
    let query = tokens.join(" ");
    let found: Vec<i64> = store
        .search_messages(&query, options)
        .unwrap()
        .iter()
        .map(|hit| hit.id)
        .collect();
    assert_eq!(
        found,
        ilike_scan(client, tokens, options),
        "query {query:?}, {options:?}"
    );
    for token in tokens {
        let dropped: i64 = client
            .query_one(
                "SELECT count(*) FROM messages \
                 WHERE (content ILIKE $1 OR tool_name ILIKE $1 OR tool_calls ILIKE $1) \
                   AND NOT cjk_grams_of(content, tool_name, tool_calls) @> cjk_grams_of($2)",
                &[&format!("%{token}%"), token],
            )
            .unwrap()
            .get(0);
        assert_eq!(dropped, 0, "token {token:?}: matches the gram filter drops");
    }
}

/// Queries the LIKE route answers: a token of one or two CJK characters
/// (alone or with letters), or any CJK query restricted to tool rows.
fn queries(g: &mut Gen) -> Vec<(Vec<String>, SearchOptions)> {
    let mut out: Vec<(Vec<String>, SearchOptions)> = Vec::new();
    let fixed: [&[&str]; 12] = [
        &["中"],
        &["中文"],
        &["搜索"],
        &["a中"],
        &["中B"],
        &["σ中"],
        &["Σ中"],
        &["ａ搜"],
        &["中", "文"],
        &["中", "aB"],
        &["。"],
        &["𠀀"],
    ];
    for tokens in fixed {
        out.push((
            tokens.iter().map(|t| t.to_string()).collect(),
            SearchOptions::default(),
        ));
    }
    while out.len() < 40 {
        let count = 1 + g.below(2);
        let tokens: Vec<String> = (0..count)
            .map(|_| {
                let len = 1 + g.below(3);
                (0..len).map(|_| g.pick(&TOKEN_CHARS)).collect()
            })
            .collect();
        let cjk_count = |t: &String| {
            t.chars()
                .filter(|c| hermes_state_core::search::is_router_cjk(*c))
                .count()
        };
        if !tokens.iter().any(|t| is_cjk(t)) {
            continue;
        }
        let short = tokens.iter().any(|t| (1..3).contains(&cjk_count(t)));
        let mut options = SearchOptions::default();
        if !short {
            // Three or more CJK characters take the trigram route unless
            // the search is for tool rows.
            options.role_filter = Some(vec!["tool".to_owned()]);
        }
        out.push((tokens, options));
    }
    let mut with_variants = Vec::new();
    for (tokens, options) in out {
        let whole = SearchOptions {
            limit: 1000,
            ..options.clone()
        };
        let inactive = SearchOptions {
            limit: 1000,
            include_inactive: true,
            ..options.clone()
        };
        with_variants.push((tokens.clone(), options));
        with_variants.push((tokens.clone(), whole));
        with_variants.push((tokens, inactive));
    }
    with_variants.push((
        vec!["数据库".to_owned()],
        SearchOptions {
            role_filter: Some(vec!["tool".to_owned()]),
            ..SearchOptions::default()
        },
    ));
    with_variants
}

fn check_all(
    store: &PgStore,
    client: &mut postgres::Client,
    queries: &[(Vec<String>, SearchOptions)],
) {
    for (tokens, options) in queries {
        check_query(store, client, tokens, options);
    }
}

/// Generated messages: text, tool results, tool calls.
fn messages(g: &mut Gen, session: &str, count: usize) -> Vec<NewMessage> {
    (0..count)
        .map(|i| match g.below(4) {
            0 => NewMessage::new(session, "tool")
                .content(g.text(&TEXT_CHARS, 24))
                .tool_result(format!("{}_tool", g.text(&TOKEN_CHARS, 3)), format!("c{i}")),
            1 => NewMessage::new(session, "assistant").tool_calls(json!([
                {"id": format!("c{i}"), "type": "function",
                 "function": {"name": g.text(&TOKEN_CHARS, 3), "arguments": g.text(&TEXT_CHARS, 16)}}
            ])),
            2 => NewMessage::new(session, "assistant").content(g.text(&TEXT_CHARS, 40)),
            _ => NewMessage::new(session, "user").content(g.text(&TEXT_CHARS, 24)),
        })
        .collect()
}

#[test]
fn the_gram_filtered_route_answers_what_the_plain_ilike_scan_answers_after_every_edit() {
    let Some(schema) = TestSchema::new("cjk grams equal ilike") else {
        return;
    };
    let store = PgStore::open(&schema.url).unwrap();
    let mut client = raw(&schema);
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let queries = queries(&mut g);
    for session in ["a", "b", "c"] {
        store
            .create_session(&NewSession::new(session, "cli"))
            .unwrap();
        store
            .append_messages(&messages(&mut g, session, 60))
            .unwrap();
    }
    check_all(&store, &mut client, &queries);

    // Every write that puts text in a message, or hides or shows one.
    store
        .replace_messages("a", &messages(&mut g, "a", 40), false)
        .unwrap();
    check_all(&store, &mut client, &queries);
    let b_ids: Vec<i64> = store
        .get_messages("b")
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    let rewind_at = b_ids[b_ids.len() / 2];
    store.rewind_to_message("b", rewind_at).unwrap();
    check_all(&store, &mut client, &queries);
    store
        .archive_and_compact("c", &messages(&mut g, "c", 20))
        .unwrap();
    check_all(&store, &mut client, &queries);
    store.restore_rewound("b", rewind_at).unwrap();
    store
        .replace_messages("b", &messages(&mut g, "b", 30), true)
        .unwrap();
    store.append_messages(&messages(&mut g, "c", 10)).unwrap();
    check_all(&store, &mut client, &queries);
}

/// A store of `rows` plain messages, one in 500 holding `搜索引擎` and one
/// in 700 `数据库` (a tool result), written by plain SQL; analysed.
fn bulk(client: &mut postgres::Client, rows: i64) {
    client
        .execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('bulk', 'cli', 1)",
            &[],
        )
        .unwrap();
    client
        .execute(
            "INSERT INTO messages (session_id, role, content, tool_name, timestamp) \
             SELECT 'bulk', CASE WHEN g % 700 = 0 THEN 'tool' ELSE 'user' END, \
                    'message ' || g || ' about deploying the cluster' \
                    || CASE WHEN g % 500 = 0 THEN ' 搜索引擎' ELSE '' END \
                    || CASE WHEN g % 700 = 0 THEN ' 数据库' ELSE '' END, \
                    CASE WHEN g % 700 = 0 THEN 'shell' END, g \
             FROM generate_series(1, $1::BIGINT) AS g",
            &[&rows],
        )
        .unwrap();
}

/// Whether the gram index exists in `schema`, and if so whether it is valid.
fn gram_index(client: &mut postgres::Client, schema: &str) -> Option<bool> {
    client
        .query_opt(
            "SELECT x.indisvalid FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
             JOIN pg_namespace n ON n.oid = i.relnamespace WHERE n.nspname = $1 AND i.relname = $2",
            &[&schema, &GRAM_INDEX],
        )
        .unwrap()
        .map(|row| row.get(0))
}

/// The plans of `query`: the gram index, no sequential scan of `messages`;
/// the hits are the plain scan's.
fn assert_served_by_the_index(
    store: &PgStore,
    client: &mut postgres::Client,
    tokens: &[&str],
    options: &SearchOptions,
    expected_hits: usize,
) {
    let query = tokens.join(" ");
    let (hits, plans) = store.explain_search(&query, options).unwrap();
    assert_eq!(plans.len(), 1, "{query}: one statement, {plans:?}");
    assert!(
        plans[0].contains(GRAM_INDEX),
        "{query}: the gram index is used:\n{}",
        plans[0]
    );
    assert!(
        !plans[0].contains("Seq Scan on messages"),
        "{query}: no scan of messages:\n{}",
        plans[0]
    );
    let tokens: Vec<String> = tokens.iter().map(|t| t.to_string()).collect();
    let ids: Vec<i64> = hits.iter().map(|h| h.id).collect();
    assert_eq!(ids, ilike_scan(client, &tokens, options), "{query}");
    assert_eq!(ids.len(), expected_hits, "{query}");
}

/// The planner's own choice (no `enable_seqscan = off`): on 20,000 messages
/// with the terms in under 0.3 % of them, each short-CJK statement reads the
/// gram index.
#[test]
fn one_and_two_character_cjk_terms_are_looked_up_in_the_gram_index_not_scanned() {
    let Some(schema) = TestSchema::new("cjk grams explain") else {
        return;
    };
    let store = PgStore::open(&schema.url).unwrap();
    let mut client = raw(&schema);
    bulk(&mut client, 20_000);
    client.batch_execute("ANALYZE messages").unwrap();
    let all = SearchOptions {
        limit: 1000,
        ..SearchOptions::default()
    };
    let tool = SearchOptions {
        limit: 1000,
        role_filter: Some(vec!["tool".to_owned()]),
        ..SearchOptions::default()
    };
    // 40 messages hold 搜索引擎, 28 hold 数据库.
    assert_served_by_the_index(&store, &mut client, &["搜"], &all, 40);
    assert_served_by_the_index(&store, &mut client, &["搜索"], &all, 40);
    assert_served_by_the_index(
        &store,
        &mut client,
        &["搜索"],
        &SearchOptions::default(),
        20,
    );
    // Either term: 40 + 28, less the 5 messages holding both.
    assert_served_by_the_index(&store, &mut client, &["引", "库"], &all, 63);
    assert_served_by_the_index(&store, &mut client, &["DEPLOYING搜"], &all, 0);
    assert_served_by_the_index(&store, &mut client, &["数据库"], &tool, 28);
}

/// A store made by a build before step 3 (steps 1 and 2 only, written by
/// plain SQL) gets the gram index at its first writable open by this build,
/// and answers short CJK terms through it at once (before any `ANALYZE`).
#[test]
fn a_store_from_step_2_gets_the_gram_index_at_the_upgrade_and_answers_through_it() {
    let Some(schema) = TestSchema::new("cjk grams upgrade") else {
        return;
    };
    {
        let mut client = schema.client();
        client
            .batch_execute(&format!(
                "CREATE SCHEMA \"{0}\"; SET search_path TO \"{0}\", pg_catalog",
                schema.name()
            ))
            .unwrap();
        embedded::migrations::runner()
            .set_target(refinery::Target::Version(2))
            .run(&mut client)
            .unwrap();
        assert_eq!(gram_index(&mut client, schema.name()), None);
        bulk(&mut client, 20_000);
    }
    let store = PgStore::open(&schema.url).unwrap();
    let mut client = raw(&schema);
    let steps: i32 = client
        .query_one("SELECT max(version) FROM refinery_schema_history", &[])
        .unwrap()
        .get(0);
    assert_eq!(i64::from(steps), hermes_state_postgres::known_step());
    assert_eq!(gram_index(&mut client, schema.name()), Some(true));
    let all = SearchOptions {
        limit: 1000,
        ..SearchOptions::default()
    };
    assert_served_by_the_index(&store, &mut client, &["搜索"], &all, 40);
    assert_served_by_the_index(&store, &mut client, &["库"], &all, 28);
    assert!(store.doctor().unwrap().missing.is_empty());
}
