//! A store written here is readable and writable by the original: Python's
//! sqlite3 (no `cjk_unicode61` tokenizer) checks the shape and encodings,
//! applies the original's tokenizer-absent rule, writes a message; then this
//! library reopens the file, leaves the stale CJK index alone (no trigger is
//! handed back to the original), and still finds everything (trigram route).

use std::process::Command;

use hermes_state::{NewMessage, NewSession, SearchOptions, SessionDb};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use serde_json::{Value, json};

/// Why Python with its `sqlite3` module cannot run here, if it cannot.
fn python_sqlite3_missing() -> Option<String> {
    match Command::new("python3")
        .args(["-c", "import sqlite3"])
        .output()
    {
        Ok(output) if output.status.success() => None,
        Ok(output) => Some(format!(
            "`python3 -c 'import sqlite3'` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(error) => Some(format!("python3 cannot be run: {error}")),
    }
}

// A machine without CPython (a minimal container) skips this test, saying
// why on stderr, rather than failing the whole suite; CI machines have
// python3 with sqlite3, so there it always runs.
#[allow(clippy::print_stderr)]
#[test]
fn a_store_written_here_round_trips_through_python() {
    if let Some(reason) = python_sqlite3_missing() {
        eprintln!("skipped: {reason}");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    {
        let db = SessionDb::open(&path).expect("open");
        db.create_session(
            &NewSession::new("py", "cli").model_config(json!({"temperature": 0.5, "name": "é"})),
        )
        .expect("create");
        db.append_message(&NewMessage::new("py", "user").content("the docker build fails"))
            .expect("user");
        db.append_message(&NewMessage::new("py", "assistant").tool_calls(json!([
            {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{\"q\": \"数据 ✓\"}"}}
        ])))
        .expect("assistant");
        db.append_message(
            &NewMessage::new("py", "assistant").content("我们在大别山项目中使用docker部署"),
        )
        .expect("cjk");
        db.append_message(
            &NewMessage::new("py", "user")
                .content(json!([{"type": "text", "text": "multimodal look"}, {"type": "image_url", "image_url": {"url": "x"}}])),
        )
        .expect("multimodal");
        db.close().expect("close");
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/facade/interop/original_reads.py"
    );
    let output = Command::new("python3")
        .arg(script)
        .arg(&path)
        .output()
        .expect("python3 runs (it did a moment ago)");
    assert!(
        output.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let found: Value = serde_json::from_slice(&output.stdout).expect("json line");
    assert_eq!(found["schema_version"], json!([[23]]));
    assert_eq!(found["session_columns"].as_array().map(Vec::len), Some(48));
    assert_eq!(found["message_columns"].as_array().map(Vec::len), Some(23));
    assert_eq!(found["journal_mode"], "wal");
    assert_eq!(
        found["tool_calls_roundtrip"], true,
        "tool_calls are exactly Python's json.dumps"
    );
    assert_eq!(
        found["model_config_roundtrip"], true,
        "model_config is exactly Python's json.dumps"
    );
    // unicode61 keeps "docker" glued to the CJK run of message 3 (api.md §8.6).
    assert_eq!(found["fts_hits"], json!([1]));
    assert_eq!(found["trigram_hits"], json!([3]));
    assert_eq!(found["multimodal"][0]["text"], "multimodal look");
    assert_eq!(found["integrity"], "ok");
    let python_id = found["python_message_id"].as_i64().expect("id");

    // Back here: the stale CJK index stays stale (its triggers would break the
    // original's next insert); the trigram route finds the message Python wrote.
    let db = SessionDb::open(&path).expect("reopen");
    let report = db.migrate().expect("our writable open");
    assert!(!report.fts.cjk_rebuilt, "{report:?}");
    let cjk_triggers: i64 = db
        .read(|conn| {
            Ok(conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages_fts_cjk%'",
                    [],
                    |r| r.get(0),
                )
                .expect("count"))
        })
        .expect("read");
    assert_eq!(cjk_triggers, 0);
    let hits: Vec<i64> = db
        .search_messages("数据库", &SearchOptions::default())
        .expect("search")
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(hits, vec![python_id]);
    let mut docker: Vec<i64> = db
        .search_messages("docker", &SearchOptions::default())
        .expect("search")
        .into_iter()
        .map(|h| h.id)
        .collect();
    docker.sort_unstable();
    assert_eq!(docker, vec![1, python_id], "unicode61 hits");
    assert_eq!(
        db.get_session("py")
            .expect("read")
            .expect("row")
            .message_count,
        Some(5)
    );
}
