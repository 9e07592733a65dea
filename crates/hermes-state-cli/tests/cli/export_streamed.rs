//! `export` (default JSON format) streams session by session, with the bytes
//! the library's in-memory `export_all` gives.

use hermes_state::prelude::*;
use std::path::Path;

use hermes_state::{NewMessage, NewSession, SessionDb};
use serde_json::{Value, json};

use crate::common::Env;

/// What `export` wrote before it streamed: `export_all` as one compact array.
fn in_memory(db: &Path, source: Option<&str>, since: Option<f64>) -> String {
    let store = SessionDb::open_read_only(db).expect("open");
    let values: Vec<Value> = store
        .export_all(source)
        .expect("export_all")
        .iter()
        .filter(|e| since.is_none_or(|since| e.session.started_at >= since))
        .map(|e| e.to_value())
        .collect();
    serde_json::to_string(&Value::Array(values)).expect("json") + "\n"
}

fn several_sessions(env: &Env) -> std::path::PathBuf {
    let path = env.path("several.db");
    let db = SessionDb::open(&path).expect("open");
    for (n, source) in ["cli", "telegram", "cli", "discord", "cli"]
        .into_iter()
        .enumerate()
    {
        let id = format!("s{n}");
        db.create_session(&NewSession::new(&id, source).model("m"))
            .expect("create");
        let messages: Vec<NewMessage> = (0..=n)
            .map(|i| {
                let message = NewMessage::new(&id, if i % 2 == 0 { "user" } else { "assistant" })
                    .content(format!(
                        "message {i} of {id}: \"quoted\", 日本語, line\nbreak"
                    ))
                    .timestamp(1_700_000_000.0 + (n * 100 + i) as f64);
                if i == 1 {
                    message.tool_calls(json!([{"id": "c1", "type": "function"}]))
                } else {
                    message
                }
            })
            .collect();
        db.append_messages(&messages).expect("append");
    }
    path
}

#[test]
fn streamed_json_export_has_the_bytes_of_export_all() {
    let env = Env::new();
    let demo = env.demo("demo.db");
    let several = several_sessions(&env);
    for db in [&demo, &several] {
        let streamed = env.run(db, &["export"]).ok().stdout;
        assert_eq!(streamed, in_memory(db, None, None), "{}", db.display());
        for source in ["cli", "telegram", "nobody"] {
            let streamed = env.run(db, &["export", "--source", source]).ok().stdout;
            assert_eq!(
                streamed,
                in_memory(db, Some(source), None),
                "--source {source}"
            );
        }
    }
    // A window keeps the order and bytes of the sessions it lets through.
    let store = SessionDb::open_read_only(&demo).expect("open");
    let mut starts: Vec<f64> = store
        .export_all(None)
        .expect("export_all")
        .iter()
        .map(|e| e.session.started_at)
        .collect();
    starts.sort_by(f64::total_cmp);
    let middle = starts[starts.len() / 2];
    let streamed = env
        .run(&demo, &["export", "--since", &format!("{middle}")])
        .ok()
        .stdout;
    assert_eq!(streamed, in_memory(&demo, None, Some(middle)));
    // An empty store: an empty array.
    let empty = env.path("empty.db");
    SessionDb::open(&empty).expect("create");
    assert_eq!(env.run(&empty, &["export"]).ok().stdout, "[]\n");
}
