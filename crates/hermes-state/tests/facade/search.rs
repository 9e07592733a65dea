//! `search_messages` against the measured examples of `api.md` §8.6, with
//! the built-in CJK index serving (the spec's "with the CJK index serving"
//! results apply to CJK queries).

use hermes_state::{NewMessage, NewSession, SearchOptions, SessionDb};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use serde_json::json;

fn store() -> (tempfile::TempDir, SessionDb) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    db.create_session(&NewSession::new("a", "cli").model("gpt"))
        .expect("a");
    db.create_session(&NewSession::new("b", "telegram").model("claude"))
        .expect("b");
    let rows: Vec<NewMessage> = vec![
        NewMessage::new("a", "user").content("How do I fix the docker build? It fails on step 3."),
        NewMessage::new("a", "assistant")
            .content("The docker build fails because the base image is missing. Try docker pull first."),
        NewMessage::new("a", "assistant").tool_calls(json!([{"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{\"q\": \"kubernetes ingress\"}"}}])),
        NewMessage::new("a", "tool").content("search results about kubernetes").tool_result("web_search", "c1"),
        NewMessage::new("b", "user").content("chat-send is broken in P2.2 release"),
        NewMessage::new("b", "assistant").content("我们在大别山项目中使用docker部署。修改youer服务端"),
        NewMessage::new("b", "user").content("广西 桂林 漓江 旅游"),
        NewMessage::new("b", "user").content(json!([{"type": "text", "text": "multimodal docker picture"}, {"type": "image_url", "image_url": {"url": "x"}}])),
    ];
    for (i, row) in rows.into_iter().enumerate() {
        db.append_message(&row.timestamp(1001.0 + i as f64))
            .expect("append");
    }
    (dir, db)
}

fn ids_and_snippets(db: &SessionDb, query: &str, options: &SearchOptions) -> Vec<(i64, String)> {
    db.search_messages(query, options)
        .expect("search")
        .into_iter()
        .map(|h| (h.id, h.snippet))
        .collect()
}

fn ids(db: &SessionDb, query: &str, options: &SearchOptions) -> Vec<i64> {
    ids_and_snippets(db, query, options)
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

#[test]
fn measured_examples() {
    let (_dir, db) = store();
    let all = SearchOptions::default();
    let with = |f: &dyn Fn(&mut SearchOptions)| {
        let mut o = SearchOptions::default();
        f(&mut o);
        o
    };
    assert_eq!(
        ids_and_snippets(&db, "docker", &all),
        vec![
            (2, "The >>>docker<<< build fails because the base image is missing. Try >>>docker<<< pull first.".to_owned()),
            (1, "How do I fix the >>>docker<<< build? It fails on step 3.".to_owned()),
            (8, ">>>docker<<< picture\"}, {\"type\": \"image_url\", \"image_url\": {\"url\": \"x\"}}]".to_owned()),
        ]
    );
    assert_eq!(ids(&db, "docker build", &all), vec![2, 1]);
    assert_eq!(
        ids_and_snippets(&db, "\"base image\"", &all),
        vec![(2, "The docker build fails because the >>>base image<<< is missing. Try docker pull first.".to_owned())]
    );
    assert_eq!(ids(&db, "docker OR kubernetes", &all), vec![4, 3, 2, 1, 8]);
    assert_eq!(ids(&db, "docker NOT build", &all), vec![8]);
    assert_eq!(ids(&db, "dock*", &all), vec![2, 1, 8]);
    assert_eq!(
        ids_and_snippets(&db, "chat-send", &all),
        vec![(5, ">>>chat-send<<< is broken in P2.2 release".to_owned())]
    );
    assert_eq!(
        ids_and_snippets(&db, "P2.2", &all),
        vec![(5, "chat-send is broken in >>>P2.2<<< release".to_owned())]
    );
    let web = ids_and_snippets(&db, "web_search", &all);
    assert_eq!(web[0], (4, ">>>web_search<<<".to_owned()));
    assert_eq!(web[1].0, 3);
    assert!(
        web[1].1.contains("\"name\": \">>>web_search<<<\""),
        "{}",
        web[1].1
    );
    assert_eq!(
        ids(
            &db,
            "kubernetes",
            &with(&|o| o.role_filter = Some(vec!["tool".into()]))
        ),
        vec![4]
    );
    assert_eq!(
        ids_and_snippets(&db, "大别山", &all),
        vec![(
            6,
            "我们在>>>大别山<<<项目中使用docker部署。修改youer服务端".to_owned()
        )]
    );
    assert_eq!(
        ids_and_snippets(&db, "大别山项目", &all),
        vec![(
            6,
            "我们在>>>大别山项目<<<中使用docker部署。修改youer服务端".to_owned()
        )]
    );
    assert_eq!(
        ids_and_snippets(&db, "漓江", &all),
        vec![(7, "广西 桂林 >>>漓江<<< 旅游".to_owned())]
    );
    assert_eq!(
        ids_and_snippets(&db, "广西 OR 桂林", &all),
        vec![(7, ">>>广西<<< >>>桂林<<< 漓江 旅游".to_owned())]
    );
    assert_eq!(
        ids_and_snippets(&db, "youer", &all),
        vec![(
            6,
            "我们在大别山项目中使用docker部署。修改>>>youer<<<服务端".to_owned()
        )]
    );
    assert_eq!(
        ids(
            &db,
            "docker",
            &with(&|o| o.source_filter = Some(vec!["telegram".into()]))
        ),
        vec![8]
    );
    assert_eq!(
        ids(
            &db,
            "docker",
            &with(&|o| o.exclude_sources = Some(vec!["telegram".into()]))
        ),
        vec![2, 1]
    );
    assert_eq!(
        ids(
            &db,
            "docker",
            &with(&|o| {
                o.sort = Some("oldest".into());
                o.limit = 2;
            })
        ),
        vec![1, 2]
    );
    assert_eq!(
        ids(
            &db,
            "docker",
            &with(&|o| {
                o.limit = 2;
                o.offset = 1;
            })
        ),
        vec![1, 8]
    );
    for query in [
        "C++",
        "50%",
        "alice@example.com",
        "src/main.py",
        "#123",
        "don't",
        "",
        "   ",
        "AND",
    ] {
        assert_eq!(ids(&db, query, &all), Vec::<i64>::new(), "query {query:?}");
    }
    // One CJK character: the LIKE route (raw snippet, no markers).
    assert_eq!(
        ids_and_snippets(&db, "漓", &all),
        vec![(7, "广西 桂林 漓江 旅游".to_owned())]
    );
}

#[test]
fn results_carry_fields_and_context() {
    let (_dir, db) = store();
    let hits = db
        .search_messages("docker", &SearchOptions::default())
        .expect("search");
    let second = serde_json::to_value(&hits[0]).expect("json");
    assert_eq!(
        second["context"],
        json!([
            {"role": "user", "content": "How do I fix the docker build? It fails on step 3."},
            {"role": "assistant", "content": "The docker build fails because the base image is missing. Try docker pull first."},
            {"role": "assistant", "content": ""}
        ])
    );
    let keys: Vec<&str> = second
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "session_id",
            "role",
            "snippet",
            "timestamp",
            "tool_name",
            "source",
            "model",
            "session_started",
            "context"
        ]
    );
    let eighth = serde_json::to_value(&hits[2]).expect("json");
    assert_eq!(
        eighth["context"],
        json!([
            {"role": "user", "content": "广西 桂林 漓江 旅游"},
            {"role": "user", "content": "multimodal docker picture"}
        ])
    );
    let tool = db
        .search_messages("kubernetes", &SearchOptions::default())
        .expect("search");
    let tool_hit = tool.iter().find(|h| h.id == 4).expect("hit 4");
    assert_eq!(tool_hit.tool_name.as_deref(), Some("web_search"));
    assert_eq!(tool_hit.source.as_deref(), Some("cli"));
    assert_eq!(tool_hit.model.as_deref(), Some("gpt"));
    assert_eq!(tool_hit.timestamp, 1004.0);
}

/// A deterministic mixed corpus: English, code, hyphenated terms and CJK.
fn corpus_text(i: usize) -> String {
    let n = i * 7919 % 1000;
    match i % 10 {
        0 => format!("我们需要优化数据库的性能 第{n}次"),
        1 => format!("部署到生产环境 kubernetes cluster {n}"),
        2 => format!("fn main() {{ let value_{n} = compute(); println!(\"{{}}\", value_{n}); }}"),
        3 => format!("The base image for deployment {n} is missing"),
        4 => format!("chat-send failed with error E{n}"),
        5 => format!("deploying the kubernetes ingress controller v{n}"),
        6 => format!("docker-compose up failed at step {n}"),
        7 => format!("東京の天気は晴れです {n}"),
        8 => format!("please concatenate these strings {n}"),
        _ => format!("deployment pipeline finished in {n} seconds"),
    }
}

#[test]
fn ten_thousand_messages_search_by_every_route() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    let sources = ["cli", "telegram", "discord"];
    for s in 0..50 {
        db.create_session(&NewSession::new(format!("s{s}"), sources[s % 3]))
            .expect("session");
    }
    let total = 10_000;
    let mut batch = Vec::new();
    for i in 0..total {
        let role = if i % 3 == 0 { "user" } else { "assistant" };
        batch.push(
            NewMessage::new(format!("s{}", i % 50), role)
                .content(corpus_text(i))
                .timestamp(1_700_000_000.0 + i as f64),
        );
    }
    for chunk in batch.chunks(1000) {
        db.append_messages(chunk).expect("append");
    }
    // Message ids are 1..=total in corpus order.
    let expected = |pred: &dyn Fn(usize) -> bool| -> Vec<i64> {
        (0..total)
            .filter(|i| pred(*i))
            .map(|i| i as i64 + 1)
            .collect()
    };
    let found = |query: &str, options: SearchOptions| -> Vec<i64> {
        let mut ids: Vec<i64> = db
            .search_messages(query, &options)
            .expect("search")
            .into_iter()
            .map(|h| h.id)
            .collect();
        ids.sort_unstable();
        ids
    };
    let everything = || SearchOptions {
        limit: total as u32,
        ..SearchOptions::default()
    };

    // Word (unicode61).
    assert_eq!(
        found("kubernetes", everything()),
        expected(&|i| i % 10 == 1 || i % 10 == 5)
    );
    // Phrase.
    assert_eq!(
        found("\"base image\"", everything()),
        expected(&|i| i % 10 == 3)
    );
    // Prefix.
    assert_eq!(
        found("deploy*", everything()),
        expected(&|i| matches!(i % 10, 3 | 5 | 9))
    );
    // Hyphenated compound (quoted by the sanitizer).
    assert_eq!(found("chat-send", everything()), expected(&|i| i % 10 == 4));
    // Substring through the trigram fallback: no unicode61 token is "catenat".
    assert_eq!(found("catenat", everything()), expected(&|i| i % 10 == 8));
    // Two-character CJK terms (the CJK index).
    assert_eq!(found("数据", everything()), expected(&|i| i % 10 == 0));
    assert_eq!(found("東京", everything()), expected(&|i| i % 10 == 7));
    // Three-character CJK term.
    assert_eq!(found("数据库", everything()), expected(&|i| i % 10 == 0));
    // Filters combined: source, role, and a word.
    let telegram_users = SearchOptions {
        source_filter: Some(vec!["telegram".into()]),
        role_filter: Some(vec!["user".into()]),
        ..everything()
    };
    assert_eq!(
        found("kubernetes", telegram_users.clone()),
        expected(&|i| (i % 10 == 1 || i % 10 == 5) && i % 3 == 0 && (i % 50) % 3 == 1)
    );
    assert_eq!(
        found("数据", telegram_users),
        expected(&|i| i % 10 == 0 && i % 3 == 0 && (i % 50) % 3 == 1)
    );
    // Paging returns the ranked list in slices.
    let page = |offset| {
        db.search_messages(
            "kubernetes",
            &SearchOptions {
                limit: 25,
                offset,
                sort: Some("newest".into()),
                ..SearchOptions::default()
            },
        )
        .expect("search")
        .into_iter()
        .map(|h| h.id)
        .collect::<Vec<_>>()
    };
    let (first, second) = (page(0), page(25));
    assert_eq!(first.len(), 25);
    assert!(first.last() > second.first(), "newest first across pages");
}

/// The handle caches which FTS indexes it can use, keyed by the schema
/// cookie: when another process (the original, without the tokenizer)
/// disables the CJK index, the next search of the same handle notices.
#[test]
fn a_cjk_index_disabled_by_another_process_stops_being_served() {
    let (dir, db) = store();
    let all = SearchOptions::default();
    assert_eq!(
        ids_and_snippets(&db, "漓江", &all),
        vec![(7, "广西 桂林 >>>漓江<<< 旅游".to_owned())]
    );
    let other =
        hermes_state::rusqlite::Connection::open(dir.path().join("state.db")).expect("plain");
    other
        .execute_batch(
            "INSERT INTO state_meta (key, value) VALUES ('fts_cjk_stale', '1');
             DROP TRIGGER messages_fts_cjk_insert; DROP TRIGGER messages_fts_cjk_delete; DROP TRIGGER messages_fts_cjk_update;",
        )
        .expect("disable");
    // Now the LIKE route answers: raw text, no markers.
    assert_eq!(
        ids_and_snippets(&db, "漓江", &all),
        vec![(7, "广西 桂林 漓江 旅游".to_owned())]
    );
}
