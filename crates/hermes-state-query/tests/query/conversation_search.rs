//! The search by conversation answers as reading the search's pages does:
//! the keyed reading (one list of every hit as keys, the shown best hits read
//! in full) against `search_conversations_by_pages` on random stores with
//! compression chains, branches, delegates, tool sessions, rewound rows,
//! ties in rank and time, on every route (unicode61, CJK, trigram, LIKE, the
//! zero-hit fallback), both sorts, filters, scopes and pages.

use std::collections::HashSet;

use hermes_state_query::conversation_search::{
    ConversationScope, search_conversations_by_pages, search_conversations_in,
};
use hermes_state_query::rusqlite::Connection;
use hermes_state_query::search::{FtsCapabilities, SearchOptions, search_keys};
use hermes_state_schema::rusqlite::params;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::common::Db;

/// Words of the messages: few, so that hits tie on rank (same words, same
/// length), with CJK runs for route B and substrings for the fallback.
const WORDS: &[&str] = &[
    "ferry",
    "ferry",
    "glacier",
    "harbor",
    "harbour",
    "lantern",
    "数据库",
    "数据",
    "搜索",
    "ferryman",
    "日本語",
];

/// Queries over every route: words, operators, a prefix, a phrase, a
/// syntax error, CJK words of 2 and 3 characters, a lone CJK character (the
/// LIKE scan), a substring only the trigram index finds (zero-hit fallback),
/// words without a hit.
const QUERIES: &[&str] = &[
    "ferry",
    "harbor",
    "glacier OR lantern",
    "ferry NOT glacier",
    "harb*",
    "\"ferry glacier\"",
    "数据库",
    "数据",
    "搜索 ferry",
    "数",
    "erryma",
    "rbou",
    "nothing",
    "ferry AND",
];

const SOURCES: &[&str] = &["cli", "telegram", "tool", "cron"];
const ROLES: &[&str] = &["user", "assistant", "tool"];
const END_REASONS: &[Option<&str>] = &[
    Some("compression"),
    Some("compression"),
    Some("branched"),
    Some("user_exit"),
    None,
];

#[derive(Debug, Clone)]
struct SessionSpec {
    source: usize,
    /// Index of an earlier session (modulo), or none.
    parent: Option<usize>,
    end_reason: usize,
    /// 0: none, 1: `_branched_from`, 2: `_delegate_from`, 3: invalid JSON.
    marker: u8,
    titled: bool,
}

#[derive(Debug, Clone)]
struct MessageSpec {
    session: usize,
    role: usize,
    words: Vec<usize>,
    /// Few distinct times, so that hits tie on time.
    time: u8,
    /// 0: active, 1: rewound, 2: compacted.
    state: u8,
}

#[derive(Debug, Clone)]
struct Case {
    sessions: Vec<SessionSpec>,
    messages: Vec<MessageSpec>,
    /// Extra copies of one message, for pages past the first (200 hits).
    bulk: usize,
    queries: Vec<Asked>,
}

/// A search asked of a store: query (index into [`QUERIES`]), sort, limit,
/// offset, filters (see [`options`]), scope (see [`scope`]).
type Asked = (usize, Option<&'static str>, u32, u32, u8, u8);

fn session() -> impl Strategy<Value = SessionSpec> {
    (
        0..SOURCES.len(),
        prop::option::weighted(0.7, 0usize..64),
        0..END_REASONS.len(),
        prop::sample::select(vec![0u8, 0, 0, 0, 1, 2, 3]),
        any::<bool>(),
    )
        .prop_map(|(source, parent, end_reason, marker, titled)| SessionSpec {
            source,
            parent,
            end_reason,
            marker,
            titled,
        })
}

fn message(sessions: usize) -> impl Strategy<Value = MessageSpec> {
    (
        0..sessions,
        0..ROLES.len(),
        prop::collection::vec(0..WORDS.len(), 1..4),
        0u8..12,
        prop::sample::select(vec![0u8, 0, 0, 0, 1, 2]),
    )
        .prop_map(|(session, role, words, time, state)| MessageSpec {
            session,
            role,
            words,
            time,
            state,
        })
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..12)
        .prop_flat_map(|n| {
            (
                prop::collection::vec(session(), n),
                prop::collection::vec(message(n), 0..80),
                prop::sample::select(vec![0usize, 0, 0, 150, 230, 420]),
                prop::collection::vec(
                    (
                        0..QUERIES.len(),
                        prop::sample::select(vec![None, Some("newest"), Some("oldest")]),
                        0u32..5,
                        0u32..4,
                        0u8..6,
                        0u8..4,
                    ),
                    1..6,
                ),
            )
        })
        .prop_map(|(sessions, messages, bulk, queries)| Case {
            sessions,
            messages,
            bulk,
            queries,
        })
}

fn build(case: &Case) -> Db {
    let db = Db::new();
    db.exec("BEGIN", []);
    for (i, s) in case.sessions.iter().enumerate() {
        let id = format!("s{i}");
        let parent = s.parent.filter(|_| i > 0).map(|p| format!("s{}", p % i));
        let config = match s.marker {
            1 => Some("{\"_branched_from\": \"x\"}"),
            2 => Some("{\"_delegate_from\": \"x\"}"),
            3 => Some("{not json"),
            _ => None,
        };
        db.exec(
            "INSERT INTO sessions (id, source, started_at, parent_session_id, model_config, title, end_reason)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                id,
                SOURCES[s.source],
                i as f64,
                parent,
                config,
                s.titled.then(|| format!("title {i}")),
                END_REASONS[s.end_reason],
            ],
        );
    }
    let insert = |m: &MessageSpec| {
        let content = m
            .words
            .iter()
            .map(|w| WORDS[*w])
            .collect::<Vec<_>>()
            .join(" ");
        let (active, compacted) = match m.state {
            1 => (0, 0),
            2 => (0, 1),
            _ => (1, 0),
        };
        db.exec(
            "INSERT INTO messages (session_id, role, content, timestamp, active, compacted)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                format!("s{}", m.session),
                ROLES[m.role],
                content,
                f64::from(m.time) * 10.0,
                active,
                compacted,
            ],
        );
    };
    for m in &case.messages {
        insert(m);
    }
    if let Some(first) = case.messages.first() {
        for i in 0..case.bulk {
            let mut copy = first.clone();
            copy.words = vec![0, i % WORDS.len()];
            copy.session = i % case.sessions.len();
            insert(&copy);
        }
    }
    db.exec("COMMIT", []);
    db
}

fn options(sort: Option<&str>, limit: u32, offset: u32, filters: u8) -> SearchOptions {
    let strings = |v: &[&str]| Some(v.iter().map(|s| (*s).to_owned()).collect());
    SearchOptions {
        sort: sort.map(str::to_owned),
        limit,
        offset,
        source_filter: (filters == 1).then(|| strings(&["cli", "tool"])).flatten(),
        exclude_sources: (filters == 2).then(|| strings(&["telegram"])).flatten(),
        role_filter: (filters == 3).then(|| strings(&["assistant"])).flatten(),
        include_inactive: filters == 4,
    }
}

fn scope(kind: u8, sessions: usize) -> ConversationScope {
    match kind {
        1 => ConversationScope {
            since: Some(30.0),
            until: Some(90.0),
            ..ConversationScope::default()
        },
        2 => ConversationScope {
            sessions: Some((0..sessions).step_by(2).map(|i| format!("s{i}")).collect()),
            ..ConversationScope::default()
        },
        3 => ConversationScope {
            sessions: Some(HashSet::new()),
            since: Some(50.0),
            until: None,
        },
        _ => ConversationScope::default(),
    }
}

fn same_answers(conn: &Connection, case: &Case) -> Result<(), TestCaseError> {
    let caps = FtsCapabilities::detect(conn).expect("capabilities");
    for &(query, sort, limit, offset, filters, scope_kind) in &case.queries {
        let query = QUERIES[query];
        let options = options(sort, limit, offset, filters);
        let scope = scope(scope_kind, case.sessions.len());
        let keyed = search_conversations_in(conn, query, &options, &scope, caps);
        let paged = search_conversations_by_pages(conn, query, &options, &scope, caps);
        prop_assert_eq!(
            format!("{keyed:?}"),
            format!("{paged:?}"),
            "query {:?}, {:?}, {:?}",
            query,
            options,
            scope
        );
    }
    Ok(())
}

#[test]
fn the_keyed_reading_answers_as_the_pages_do() {
    let mut runner = TestRunner::new(Config {
        cases: 48,
        ..Config::default()
    });
    runner
        .run(&case(), |case| {
            let db = build(&case);
            same_answers(&db.read_only(), &case)
        })
        .unwrap();
}

/// Past [`MAX_HITS_READ`](hermes_state_query::conversation_search::MAX_HITS_READ)
/// hits the reading stops once the conversations asked for are filled: the
/// counts then cover the pages read, alike.
#[test]
fn past_the_reading_bound_both_stop_at_the_same_page() {
    let db = Db::new();
    db.exec("BEGIN", []);
    for i in 0..40 {
        db.exec(
            "INSERT INTO sessions (id, source, started_at) VALUES (?1, 'cli', ?2)",
            params![format!("s{i}"), f64::from(i)],
        );
    }
    for i in 0..5_300 {
        let words = ["ferry", "ferry glacier", "ferry ferry harbor"][i % 3];
        db.exec(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, 'user', ?2, ?3)",
            params![format!("s{}", i % 40), words, (i % 97) as f64],
        );
    }
    db.exec("COMMIT", []);
    let conn = db.read_only();
    let caps = FtsCapabilities::detect(&conn).expect("capabilities");
    // The keyed reading is the one under test here, not the pages alone.
    let keys = search_keys(&conn, "ferry", &SearchOptions::default(), caps, None).unwrap();
    assert_eq!(keys.map(|k| k.keys.len()), Some(5_300));
    for (sort, limit, offset) in [(None, 3, 0), (Some("newest"), 5, 2), (None, 45, 0)] {
        let options = options(sort, limit, offset, 0);
        let scope = ConversationScope::default();
        let keyed = search_conversations_in(&conn, "ferry", &options, &scope, caps).unwrap();
        let paged = search_conversations_by_pages(&conn, "ferry", &options, &scope, caps).unwrap();
        assert_eq!(keyed, paged, "{options:?}");
    }
}

/// Hits that fill their last page exactly: the page after it is route A's
/// zero-hit fallback at that offset, which the trigram index answers with
/// the substring matches past it (`ferryman` for `ferry`); both readings
/// count them, and a page proven empty (`harbor`: no index holds more) is
/// not read.
#[test]
fn a_last_page_filled_exactly_reads_the_fallback_past_it_alike() {
    let db = Db::new();
    db.exec("BEGIN", []);
    for i in 0..30 {
        db.exec(
            "INSERT INTO sessions (id, source, started_at) VALUES (?1, 'cli', ?2)",
            params![format!("s{i}"), f64::from(i)],
        );
    }
    let mut at = 0.0;
    let mut say = |session: usize, text: &str| {
        at += 1.0;
        db.exec(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, 'user', ?2, ?3)",
            params![format!("s{session}"), text, at],
        );
    };
    for i in 0..400 {
        say(i % 13, "ferry harbor");
    }
    for i in 0..57 {
        // Long, so that the trigram index ranks them after the 400 others.
        say(
            13 + i % 17,
            "ferryman rows the slow boat across the wide grey river past the mill at dawn",
        );
    }
    db.exec("COMMIT", []);
    let conn = db.read_only();
    let caps = FtsCapabilities::detect(&conn).expect("capabilities");
    for query in ["ferry", "harbor"] {
        for (sort, limit, offset) in [(None, 40, 0), (Some("oldest"), 5, 10), (None, 3, 12)] {
            let options = options(sort, limit, offset, 0);
            let scope = ConversationScope::default();
            let keyed = search_conversations_in(&conn, query, &options, &scope, caps).unwrap();
            let paged =
                search_conversations_by_pages(&conn, query, &options, &scope, caps).unwrap();
            assert_eq!(keyed, paged, "{query} {options:?}");
            if query == "ferry" && offset == 0 {
                let hits: usize = keyed.iter().map(|c| c.hits).sum();
                assert_eq!(hits, 457, "the fallback's rows past the last page count");
            }
        }
    }
}

/// Many sessions on one page of hits: the sessions with a parent are listed
/// once and only they are walked up; chains, branches, delegates and tool
/// sessions among 150 sessions group alike.
#[test]
fn many_sessions_on_a_page_group_alike() {
    let db = Db::new();
    db.exec("BEGIN", []);
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for i in 0..150usize {
        let parent = (i > 0 && next(3) > 0).then(|| format!("s{}", next(i as u64)));
        let end = END_REASONS[next(END_REASONS.len() as u64) as usize];
        let config = match next(8) {
            0 => Some("{\"_branched_from\": \"x\"}"),
            1 => Some("{\"_delegate_from\": \"x\"}"),
            _ => None,
        };
        let source = SOURCES[next(SOURCES.len() as u64) as usize];
        db.exec(
            "INSERT INTO sessions (id, source, started_at, parent_session_id, model_config, end_reason)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![format!("s{i}"), source, i as f64, parent, config, end],
        );
    }
    for i in 0..700u64 {
        db.exec(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, 'user', ?2, ?3)",
            params![format!("s{}", next(150)), ["ferry", "ferry glacier"][(i % 2) as usize], (i % 50) as f64],
        );
    }
    db.exec("COMMIT", []);
    let conn = db.read_only();
    let caps = FtsCapabilities::detect(&conn).expect("capabilities");
    for (sort, limit, offset) in [(None, 200, 0), (Some("newest"), 10, 5), (None, 3, 30)] {
        let options = options(sort, limit, offset, 0);
        for scope_kind in [0, 2] {
            let scope = scope(scope_kind, 150);
            let keyed = search_conversations_in(&conn, "ferry", &options, &scope, caps).unwrap();
            let paged =
                search_conversations_by_pages(&conn, "ferry", &options, &scope, caps).unwrap();
            assert_eq!(keyed, paged, "{options:?} {scope:?}");
        }
    }
}
