//! The JSONL format: lossless round trips, imports into stores that
//! already hold some of the sessions, refused files.

use super::*;
use hermes_state::prelude::Exchange;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;

#[test]
fn jsonl_lines_header_sessions_parents_first_messages_and_end() {
    let s = rich_store();
    let bytes = export(&s.db, &all());
    let lines = lines(&bytes);
    let header = &lines[0];
    assert_eq!(
        header.keys().collect::<Vec<_>>(),
        ["format", "version", "schema_version", "exported_at"]
    );
    assert_eq!(header["format"], json!("hermes-state-export"));
    assert_eq!(header["version"], json!(1));
    assert_eq!(header["schema_version"], json!(23));

    let sessions: Vec<&str> = lines
        .iter()
        .filter(|l| l.get("type") == Some(&json!("session")))
        .map(|l| l["id"].as_str().expect("id"))
        .collect();
    // Roots first (by start), then depth 1, then depth 2.
    assert_eq!(sessions, ["root", "cjk", "cont1", "branch", "cont2"]);

    let end = lines.last().expect("end");
    assert_eq!(end["type"], json!("end"));
    assert_eq!(end["sessions"], json!(5));
    let message_lines: Vec<&Map<String, Value>> = lines
        .iter()
        .filter(|l| l.get("type") == Some(&json!("message")))
        .collect();
    assert_eq!(end["messages"], json!(message_lines.len()));
    assert_eq!(message_lines.len(), 14, "inactive rows are exported too");

    // Every message line follows its session's line; content is decoded
    // losslessly, BLOB content in the plain encoding.
    let first_session = &lines[1];
    assert_eq!(
        first_session.keys().next().map(String::as_str),
        Some("type")
    );
    assert_eq!(first_session.len(), 49);
    let blob = message_lines
        .iter()
        .find(|l| l.contains_key("$content"))
        .expect("blob line");
    assert_eq!(blob["$content"], json!({"blob": "000102feff"}));
    assert!(!blob.contains_key("content"));
    let multimodal = message_lines
        .iter()
        .find(|l| l.get("content").is_some_and(Value::is_array))
        .expect("multimodal");
    assert_eq!(multimodal["content"][0]["text"], json!("look at this 画像"));
    let compact = message_lines
        .iter()
        .find(|l| l.get("content") == Some(&json!("\u{0}json:{\"a\":1}")))
        .expect("compact JSON content stays a string");
    assert_eq!(compact["timestamp"], json!(1.5));
    let assistant = message_lines
        .iter()
        .find(|l| l["role"] == json!("assistant") && l["session_id"] == json!("root"))
        .expect("assistant");
    assert_eq!(assistant["reasoning_content"], json!(""));
    assert_eq!(assistant["content"], Value::Null);
    assert!(
        assistant["tool_calls"].is_string(),
        "JSON columns stay raw text"
    );
}

#[test]
fn export_import_export_is_byte_identical() {
    let s = rich_store();
    let first = export(&s.db, &all());

    let fresh = Store::new();
    let mut seen = Vec::new();
    let report = fresh
        .db
        .import_jsonl(&first[..], &ImportOptions::default(), |n| seen.push(n))
        .expect("import");
    assert_eq!(
        report,
        ImportReport {
            imported: 5,
            messages: 14,
            ..ImportReport::default()
        }
    );
    assert_eq!(seen.last(), Some(&14));

    let second = export(&fresh.db, &all());
    let (h1, body1) = comparable(&first);
    let (h2, body2) = comparable(&second);
    assert_eq!(h1, h2);
    assert_eq!(body1, body2);

    // The original's shapes agree too, and the FTS indexes followed.
    let a: Vec<Value> =
        s.db.export_all(None)
            .expect("a")
            .iter()
            .map(|e| e.to_value())
            .collect();
    let b: Vec<Value> = fresh
        .db
        .export_all(None)
        .expect("b")
        .iter()
        .map(|e| e.to_value())
        .collect();
    assert_eq!(a, b);
    let (old, new) = (setup_connection(&s.path), setup_connection(&fresh.path));
    for query in [
        "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'weather'",
        "SELECT count(*) FROM messages_fts_trigram WHERE messages_fts_trigram MATCH '全文检索'",
        "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'lineage'",
    ] {
        assert_eq!(count(&old, query), count(&new, query), "{query}");
        assert!(count(&new, query) > 0, "{query}");
    }
    new.execute_batch("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')")
        .expect("fts integrity");
    assert_eq!(
        fresh.db.resolve_session_by_title("X").expect("resolve"),
        s.db.resolve_session_by_title("X").expect("resolve")
    );
}

#[test]
fn unknown_columns_reserved_names_and_odd_values_round_trip() {
    let setup = |path: &Path| {
        let conn = setup_connection(path);
        conn.execute_batch(
            "ALTER TABLE sessions ADD COLUMN \"type\" TEXT;
             ALTER TABLE sessions ADD COLUMN \"$odd\" INTEGER;
             ALTER TABLE messages ADD COLUMN extra_col BLOB;",
        )
        .expect("alter");
        conn
    };
    let s = Store::new();
    s.db.create_session(&NewSession::new("s", "cli"))
        .expect("s");
    say(&s.db, "s", "user", "hello");
    let conn = setup(&s.path);
    conn.execute_batch(
        "UPDATE sessions SET \"type\" = 'kind', \"$odd\" = 7, input_tokens = 1e999;
         INSERT INTO messages (session_id, role, content, tool_name, timestamp, token_count, extra_col)
         VALUES ('s', 'assistant', CAST(x'41ff42' AS TEXT), CAST(x'c3' AS TEXT), 2.0, -1e999, x'00ff');",
    )
    .expect("odd values");
    let first = export(&s.db, &all());
    let lines = lines(&first);
    assert_eq!(lines[1]["$type"], json!("kind"));
    assert_eq!(lines[1]["type"], json!("session"));
    assert_eq!(lines[1]["$$odd"], json!(7));
    assert_eq!(lines[1]["input_tokens"], json!({"real": "Infinity"}));
    let odd = &lines[3];
    assert_eq!(odd["$content"], json!({"text_hex": "41ff42"}));
    assert_eq!(odd["tool_name"], json!({"text_hex": "c3"}));
    assert_eq!(odd["token_count"], json!({"real": "-Infinity"}));
    assert_eq!(odd["extra_col"], json!({"blob": "00ff"}));

    // Into a store with the same columns: identical.
    let same = Store::new();
    setup(&same.path);
    let report = import(&same.db, &first, false).expect("import");
    assert!(report.dropped_columns.is_empty());
    assert_eq!(comparable(&first), comparable(&export(&same.db, &all())));
    let check = setup_connection(&same.path);
    let (kind, bytes): (String, Vec<u8>) = check
        .query_row(
            "SELECT typeof(content), CAST(content AS BLOB) FROM messages WHERE role = 'assistant'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("raw text");
    assert_eq!((kind.as_str(), bytes.as_slice()), ("text", &b"A\xffB"[..]));

    // Into a plain store: the unknown columns are reported and dropped.
    let plain = Store::new();
    let report = import(&plain.db, &first, false).expect("import");
    assert_eq!(
        report.dropped_columns,
        ["messages.extra_col", "sessions.$odd", "sessions.type"]
    );
    assert_eq!(report.messages, 2);
}

#[test]
fn existing_sessions_are_reported_and_kept_unless_overwritten() {
    let source = Store::new();
    for id in ["s1", "s2"] {
        source
            .db
            .create_session(&NewSession::new(id, "cli"))
            .expect("create");
        say(&source.db, id, "user", format!("{id} first"));
        say(&source.db, id, "assistant", format!("{id} second"));
    }
    source
        .db
        .set_session_title("s1", Some("Shared"))
        .expect("title");
    let bytes = export(&source.db, &all());

    let target = Store::new();
    target
        .db
        .create_session(&NewSession::new("s1", "telegram"))
        .expect("s1");
    for _ in 0..4 {
        say(&target.db, "s1", "user", "old content");
    }

    // s2's messages had ids 3 and 4, taken here by s1's.
    let report = import(&target.db, &bytes, false).expect("import");
    assert_eq!(report.skipped_existing, ["s1"]);
    assert_eq!(report.imported, 1);
    assert_eq!(report.messages, 2);
    assert_eq!(report.renumbered_messages, 2);
    let s1 = target.db.get_messages("s1").expect("s1");
    assert_eq!(s1.len(), 4);
    assert_eq!(s1[0].content, Some(Content::Text("old content".to_owned())));
    assert_eq!(
        target
            .db
            .get_session("s1")
            .expect("get")
            .expect("s1")
            .source,
        "telegram"
    );
    let s2: Vec<_> = target
        .db
        .get_messages("s2")
        .expect("s2")
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(
        s2,
        [
            Some(Content::Text("s2 first".to_owned())),
            Some(Content::Text("s2 second".to_owned()))
        ]
    );

    // Overwrite: both replaced, their old messages' ids freed and reused:
    // the store is now exactly the file's.
    let report = import(&target.db, &bytes, true).expect("overwrite");
    assert_eq!(report.replaced, ["s1", "s2"]);
    assert_eq!(report.imported, 2);
    assert_eq!(report.renumbered_messages, 0);
    assert!(report.skipped_existing.is_empty());
    assert_eq!(comparable(&bytes), comparable(&export(&target.db, &all())));
    let conn = setup_connection(&target.path);
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'old'"
        ),
        0,
        "replaced messages left the index"
    );
}

#[test]
fn titles_stay_unique_and_missing_parents_are_reported() {
    let s = rich_store();
    let only_children = ExportFilter {
        session_ids: Some(vec!["cont1".to_owned(), "branch".to_owned()]),
        ..ExportFilter::default()
    };
    let bytes = export(&s.db, &only_children);

    let target = Store::new();
    target
        .db
        .create_session(&NewSession::new("holder", "cli"))
        .expect("holder");
    target
        .db
        .set_session_title("holder", Some("X #2"))
        .expect("title");
    let report = import(&target.db, &bytes, false).expect("import");
    assert_eq!(report.orphaned, ["cont1", "branch"]);
    assert_eq!(
        report.title_conflicts,
        [("cont1".to_owned(), "X #2".to_owned())]
    );
    let cont1 = target.db.get_session("cont1").expect("get").expect("cont1");
    assert_eq!(cont1.parent_session_id, None);
    assert_eq!(cont1.title, None);
    let branch = target
        .db
        .get_session("branch")
        .expect("get")
        .expect("branch");
    assert_eq!(branch.title.as_deref(), Some("Branch of X"));
    assert_eq!(branch.message_count, Some(1));
}

#[test]
fn renumbered_messages_keep_their_order() {
    let source = Store::new();
    source
        .db
        .create_session(&NewSession::new("a", "cli"))
        .expect("a");
    for i in 0..5 {
        say(&source.db, "a", "user", format!("message {i}"));
    }
    let bytes = export(&source.db, &all());

    let target = Store::new();
    target
        .db
        .create_session(&NewSession::new("b", "cli"))
        .expect("b");
    say(&target.db, "b", "user", "x");
    say(&target.db, "b", "user", "y");
    let conn = setup_connection(&target.path);
    conn.execute("DELETE FROM messages WHERE id = 1", [])
        .expect("free id 1");
    // Id 1 is free, id 2 is taken: message 0 keeps id 1, the rest are renumbered.
    let report = import(&target.db, &bytes, false).expect("import");
    assert_eq!(report.renumbered_messages, 4);
    let messages = target.db.get_messages("a").expect("a");
    let texts: Vec<_> = messages
        .iter()
        .map(|m| m.content.clone().expect("content"))
        .collect();
    let expected: Vec<Content> = (0..5)
        .map(|i| Content::Text(format!("message {i}")))
        .collect();
    assert_eq!(texts, expected);
    assert_eq!(messages[0].id, 1);
    assert!(messages[1].id > 2);
}

#[test]
fn refused_files_write_nothing() {
    let s = rich_store();
    let good = export(&s.db, &all());
    let text = String::from_utf8(good.clone()).expect("utf-8");
    let body = text.split_once('\n').expect("header").1;
    let without_end = {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.pop();
        lines.join("\n") + "\n"
    };
    let wrong_count = text.replace(
        "\"type\":\"end\",\"sessions\":5",
        "\"type\":\"end\",\"sessions\":6",
    );
    let cases: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("not json", "hello\n".to_owned() + body),
        (
            "other format",
            "{\"format\":\"other\",\"version\":1}\n".to_owned() + body,
        ),
        (
            "newer version",
            "{\"format\":\"hermes-state-export\",\"version\":2}\n".to_owned() + body,
        ),
        ("no header", body.to_owned()),
        ("truncated", without_end),
        ("counts differ", wrong_count),
        (
            "unknown line type",
            text.replacen("\"type\":\"message\"", "\"type\":\"mystery\"", 1),
        ),
    ];
    for (name, input) in cases {
        let target = Store::new();
        let error = import(&target.db, input.as_bytes(), false).expect_err(name);
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{name}: {error}");
        let conn = setup_connection(&target.path);
        assert_eq!(count(&conn, "SELECT count(*) FROM sessions"), 0, "{name}");
        assert_eq!(count(&conn, "SELECT count(*) FROM messages"), 0, "{name}");
    }
}

/// A line longer than `IMPORT_LINE_LIMIT` (here an endless one, as
/// `/dev/zero` gives) is refused naming the line, after reading one byte
/// more than the limit: before, the import grew its line buffer until the
/// allocation failed and the process aborted. A line of exactly the limit
/// is read.
#[test]
fn a_line_longer_than_the_limit_is_refused_naming_it() {
    use std::io::Read;
    let header = "{\"format\":\"hermes-state-export\",\"version\":1,\"schema_version\":23,\"exported_at\":1.0}\n";
    let limit = hermes_state::IMPORT_LINE_LIMIT;
    assert_eq!(limit, 64 << 20);
    for (name, input, line) in [
        (
            "endless first line",
            Box::new(std::io::repeat(0)) as Box<dyn Read>,
            1,
        ),
        (
            "endless second line",
            Box::new(header.as_bytes().chain(std::io::repeat(b'x'))),
            2,
        ),
    ] {
        let target = Store::new();
        let error = target
            .db
            .import_jsonl(
                std::io::BufReader::new(input),
                &ImportOptions::default(),
                |_| {},
            )
            .expect_err(name);
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{name}: {error}");
        assert!(
            error
                .to_string()
                .contains(&format!("export line {line}: longer than 64 MiB")),
            "{name}: {error}"
        );
    }
    // Exactly the limit: read, then refused for what it holds, not its length.
    let mut text = header.to_owned();
    text.push_str(&" ".repeat(limit - 2));
    text.push_str("{}\n");
    let target = Store::new();
    let error = import(&target.db, text.as_bytes(), false).expect_err("no type");
    assert!(
        error.to_string().contains("export line 2: no \"type\""),
        "{error}"
    );
}

#[test]
fn a_large_session_cut_short_is_removed_again() {
    // One session with 25 000 messages spans import transactions; the file
    // ends before its last message and has no end line.
    let mut text = String::from(
        "{\"format\":\"hermes-state-export\",\"version\":1,\"schema_version\":23,\"exported_at\":1.0}\n",
    );
    text.push_str("{\"type\":\"session\",\"id\":\"big\",\"source\":\"cli\",\"started_at\":1.0}\n");
    for i in 1..=25_000 {
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":{i},\"session_id\":\"big\",\"role\":\"user\",\"content\":\"m {i}\",\"timestamp\":2.0}}\n"
        ));
    }
    let target = Store::new();
    let mut progress = Vec::new();
    let error = target
        .db
        .import_jsonl(text.as_bytes(), &ImportOptions::default(), |n| {
            progress.push(n)
        })
        .expect_err("truncated");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(progress, [20_000], "one part was committed");
    let conn = setup_connection(&target.path);
    assert_eq!(count(&conn, "SELECT count(*) FROM sessions"), 0);
    assert_eq!(count(&conn, "SELECT count(*) FROM messages"), 0);
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'm'"
        ),
        0
    );
}

#[test]
fn export_filters_by_source_and_ids_and_reports_progress() {
    let s = rich_store();
    let telegram = export(
        &s.db,
        &ExportFilter {
            source: Some("telegram".to_owned()),
            ..ExportFilter::default()
        },
    );
    let ids: Vec<String> = lines(&telegram)
        .iter()
        .filter(|l| l.get("type") == Some(&json!("session")))
        .map(|l| l["id"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(ids, ["branch"]);
    let none = export(
        &s.db,
        &ExportFilter {
            session_ids: Some(Vec::new()),
            ..ExportFilter::default()
        },
    );
    assert_eq!(lines(&none).len(), 2, "header and end only");

    let mut calls = Vec::new();
    let mut out = Vec::new();
    let summary =
        s.db.export_jsonl(&mut out, &all(), |n| calls.push(n))
            .expect("export");
    assert_eq!((summary.sessions, summary.messages), (5, 14));
    assert_eq!(summary.bytes, out.len() as u64);
    assert_eq!(calls, [14]);
}
