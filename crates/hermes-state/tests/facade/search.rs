//! `search_messages` against the measured examples of `api.md` §8.6, with
//! the built-in CJK index serving (the spec's "with the CJK index serving"
//! results apply to CJK queries): SQLite's bm25 order and snippets, and its
//! CJK index. What every backend finds (the hits' fields and context, ten
//! thousand messages by every kind of query) is the conformance suite's
//! `search` cases.

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
