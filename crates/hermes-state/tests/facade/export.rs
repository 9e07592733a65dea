//! Export and import: the original's `export_session` / `export_all` shapes,
//! the JSONL format's lossless round trip, imports into stores that already
//! hold some of the sessions, refused files, and the streaming export's
//! bounded memory (measured in child processes). The fixtures are here, one
//! module per subject below.

pub(crate) mod import_sessions;
mod jsonl;
mod memory;
mod original_shapes;

use std::path::Path;

use hermes_state::{
    Content, ErrorKind, ExportFilter, ImportOptions, ImportReport, NewMessage, NewSession,
    SessionDb, TokenUpdate,
};
use serde_json::{Map, Value, json};

use crate::common::{Store, child_test, count, setup_connection};
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;

fn say(db: &SessionDb, session: &str, role: &str, content: impl Into<Content>) -> i64 {
    db.append_message(&NewMessage::new(session, role).content(content))
        .expect("append")
}

/// A store with everything the format must carry: a three-level compression
/// lineage with a branch, titles `X` and `X #2`, tool calls, reasoning (an
/// empty `reasoning_content` too), multimodal content, CJK, emoji, NUL, a
/// BLOB, an inactive row, usage counters and JSON columns.
fn rich_store() -> Store {
    let s = Store::new();
    let db = &s.db;
    db.create_session(
        &NewSession::new("root", "cli")
            .model("gpt-5")
            .model_config(json!({"temperature": 0.5, "name": "é"}))
            .system_prompt("You are helpful.")
            .cwd("/work/project"),
    )
    .expect("root");
    say(db, "root", "user", "What's the weather in Paris?");
    db.append_message(&NewMessage {
        reasoning: Some("The user wants weather; call the tool.".to_owned()),
        reasoning_content: Some(String::new()),
        reasoning_details: Some(json!([{"type": "summary", "text": "think"}])),
        finish_reason: Some("tool_calls".to_owned()),
        token_count: Some(42),
        ..NewMessage::new("root", "assistant").tool_calls(json!([
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}
        ]))
    })
    .expect("assistant");
    db.append_message(
        &NewMessage::new("root", "tool")
            .content("18°C, clear")
            .tool_result("weather", "c1"),
    )
    .expect("tool");
    db.update_token_counts(
        "root",
        &TokenUpdate {
            input_tokens: 1200,
            output_tokens: 300,
            model: Some("gpt-5".to_owned()),
            billing_provider: Some("openai".to_owned()),
            estimated_cost_usd: Some(0.0125),
            api_call_count: 2,
            ..TokenUpdate::default()
        },
    )
    .expect("tokens");
    db.set_session_title("root", Some("X")).expect("title X");
    db.end_session("root", "compression").expect("end root");

    db.create_session(&NewSession::new("cont1", "cli").parent_session_id("root"))
        .expect("cont1");
    say(db, "cont1", "user", "Continue, please 🙂");
    db.set_session_title("cont1", Some("X #2"))
        .expect("title X #2");
    db.end_session("cont1", "compression").expect("end cont1");

    db.create_session(&NewSession::new("cont2", "cli").parent_session_id("cont1"))
        .expect("cont2");
    say(db, "cont2", "user", "Third level of the lineage");
    db.append_message(&NewMessage {
        display_kind: Some("steer".to_owned()),
        display_metadata: Some(json!({"origin": "cli", "n": 1})),
        codex_reasoning_items: Some(json!([{"id": "r1"}])),
        codex_message_items: Some(json!([{"id": "m1"}])),
        platform_message_id: Some("pm-7".to_owned()),
        observed: true,
        api_content: Some("wire text".to_owned()),
        effect_disposition: Some("applied".to_owned()),
        ..NewMessage::new("cont2", "assistant").content("Done.")
    })
    .expect("cont2 assistant");

    db.create_session(&NewSession::new("branch", "telegram").parent_session_id("root"))
        .expect("branch");
    db.set_session_title("branch", Some("Branch of X"))
        .expect("branch title");
    say(db, "branch", "user", "A branch");

    db.create_session(&NewSession::new("cjk", "cli"))
        .expect("cjk");
    say(db, "cjk", "user", "会话存储与全文检索 😀 emoji");
    say(db, "cjk", "assistant", "nul\u{0}inside");
    say(
        db,
        "cjk",
        "user",
        Content::Structured(json!([
            {"type": "text", "text": "look at this 画像"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
        ])),
    );
    say(
        db,
        "cjk",
        "assistant",
        Content::Bytes(vec![0, 1, 2, 0xfe, 0xff]),
    );
    say(db, "cjk", "user", Content::Integer(42));
    let rewound = say(db, "cjk", "user", "rewound away");

    let conn = setup_connection(&s.path);
    conn.execute(
        "UPDATE messages SET active = 0, compacted = 1 WHERE id = ?1",
        [rewound],
    )
    .expect("inactive row");
    // Multimodal content in compact JSON (not the Python encoder's spacing):
    // it must come back byte for byte too.
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('cjk', 'user', ?1, 1.5)",
        ["\u{0}json:{\"a\":1}"],
    )
    .expect("compact json content");
    s
}

fn export(db: &SessionDb, filter: &ExportFilter) -> Vec<u8> {
    let mut out = Vec::new();
    db.export_jsonl(&mut out, filter, |_| {}).expect("export");
    out
}

fn all() -> ExportFilter {
    ExportFilter::default()
}

fn lines(bytes: &[u8]) -> Vec<Map<String, Value>> {
    std::str::from_utf8(bytes)
        .expect("utf-8")
        .lines()
        .map(|line| serde_json::from_str(line).expect("json line"))
        .collect()
}

/// The export without its header's `exported_at`.
fn comparable(bytes: &[u8]) -> (Map<String, Value>, String) {
    let text = std::str::from_utf8(bytes).expect("utf-8");
    let (header, rest) = text.split_once('\n').expect("header line");
    let mut header: Map<String, Value> = serde_json::from_str(header).expect("header");
    assert!(header.remove("exported_at").is_some_and(|v| v.is_f64()));
    (header, rest.to_owned())
}

fn import(db: &SessionDb, bytes: &[u8], overwrite: bool) -> hermes_state::Result<ImportReport> {
    db.import_jsonl(
        bytes,
        &ImportOptions {
            overwrite_existing: overwrite,
        },
        |_| {},
    )
}
