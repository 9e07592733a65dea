//! `api.md` §10.2: recent sessions with preview and last activity.

use hermes_state_query::listing::{
    DEFAULT_LIST_LIMIT, ListFilter, SessionListing, recent_sessions,
};
use hermes_state_schema::rusqlite::Connection;
use serde_json::Value;

use crate::common::Db;

fn list(conn: &Connection, filter: &ListFilter) -> Vec<SessionListing> {
    recent_sessions(conn, filter).expect("recent_sessions")
}

fn ids(rows: &[SessionListing]) -> Vec<&str> {
    rows.iter().map(|r| r.session.id.as_str()).collect()
}

/// A first user message longer than 63 characters, with a newline and non-ASCII text.
const LONG: &str =
    "first line\nsecond line — with “quotes” and accents éèêë, then more text after sixty-three";

/// `a` (cli, 100), `b` (telegram, 200, no messages), `c` (cli, 300), `d` (cli, 50).
fn example() -> Db {
    let db = Db::new();
    db.session_from("a", "cli", 100.0);
    db.session_from("b", "telegram", 200.0);
    db.session_from("c", "cli", 300.0);
    db.session_from("d", "cli", 50.0);

    // a: the earliest user message by timestamp wins, not the first inserted;
    // NULL content and other roles are skipped; last_active is the newest
    // message of any role.
    db.message("a", "user", Some("later user message"), 120.0);
    db.message("a", "user", None, 101.0);
    db.message("a", "assistant", Some("assistant first"), 102.0);
    db.message("a", "user", Some(LONG), 110.0);
    db.message("a", "tool", Some("tool output"), 130.0);

    // c: equal timestamps → the lower id.
    db.message("c", "user", Some("first by id"), 305.0);
    db.message("c", "user", Some("second by id"), 305.0);
    db.message("c", "assistant", Some("reply"), 304.0);

    // d: a multimodal first user message gives '' even with a later text one.
    db.message(
        "d",
        "user",
        Some("\u{0}json:[{\"type\": \"text\", \"text\": \"look\"}, {\"type\": \"image_url\"}]"),
        60.0,
    );
    db.message("d", "user", Some("plain later"), 70.0);
    db
}

#[test]
fn preview_last_active_and_order() {
    let db = example();
    let rows = list(&db.conn, &ListFilter::default());
    assert_eq!(ids(&rows), ["c", "b", "a", "d"], "started_at DESC");

    let by_id = |id: &str| rows.iter().find(|r| r.session.id == id).expect("listed");

    let expected_a: String = LONG.chars().take(63).collect();
    assert!(expected_a.contains('\n'), "raw, newlines kept");
    assert_eq!(expected_a.chars().count(), 63);
    assert_eq!(by_id("a").preview, expected_a);
    assert_eq!(by_id("a").last_active, 130.0);

    assert_eq!(by_id("b").preview, "");
    assert_eq!(by_id("b").last_active, 200.0, "no messages → started_at");

    assert_eq!(by_id("c").preview, "first by id");
    assert_eq!(by_id("c").last_active, 305.0);

    assert_eq!(by_id("d").preview, "", "multimodal first user message");
    assert_eq!(by_id("d").last_active, 70.0);

    // The session columns come through.
    assert_eq!(by_id("b").session.source, "telegram");
    assert_eq!(by_id("a").session.started_at, 100.0);
}

#[test]
fn preview_is_63_characters_not_bytes() {
    let db = Db::new();
    db.session("s", 1.0);
    db.message("s", "user", Some(&"é😀".repeat(40)), 2.0);
    let rows = list(&db.conn, &ListFilter::default());
    let preview: String = "é😀".repeat(40).chars().take(63).collect();
    assert_eq!(rows[0].preview, preview);
    assert_eq!(rows[0].preview.chars().count(), 63);

    // Exactly 63 and shorter are kept whole; no trimming, no ellipsis.
    let db = Db::new();
    db.session("x", 1.0);
    db.message("x", "user", Some(&format!("  {}", "x".repeat(61))), 2.0);
    db.session("y", 2.0);
    db.message("y", "user", Some(" short \n"), 3.0);
    let rows = list(&db.conn, &ListFilter::default());
    assert_eq!(rows[0].preview, " short \n");
    assert_eq!(rows[1].preview, format!("  {}", "x".repeat(61)));
}

#[test]
fn source_filter_limit_and_offset() {
    let db = example();
    let cli = ListFilter {
        source: Some("cli".into()),
        ..Default::default()
    };
    assert_eq!(ids(&list(&db.conn, &cli)), ["c", "a", "d"]);
    let telegram = ListFilter {
        source: Some("telegram".into()),
        ..Default::default()
    };
    assert_eq!(ids(&list(&db.conn, &telegram)), ["b"]);
    let nobody = ListFilter {
        source: Some("discord".into()),
        ..Default::default()
    };
    assert!(list(&db.conn, &nobody).is_empty());
    // An empty source does not filter.
    let empty = ListFilter {
        source: Some(String::new()),
        ..Default::default()
    };
    assert_eq!(ids(&list(&db.conn, &empty)), ["c", "b", "a", "d"]);

    let page = |limit, offset| ListFilter {
        source: None,
        limit: Some(limit),
        offset,
    };
    assert_eq!(ids(&list(&db.conn, &page(2, 0))), ["c", "b"]);
    assert_eq!(ids(&list(&db.conn, &page(2, 1))), ["b", "a"]);
    assert_eq!(ids(&list(&db.conn, &page(2, 3))), ["d"]);
    assert!(list(&db.conn, &page(2, 4)).is_empty());
    assert!(list(&db.conn, &page(0, 0)).is_empty());
    let cli_page = ListFilter {
        source: Some("cli".into()),
        limit: Some(1),
        offset: 1,
    };
    assert_eq!(ids(&list(&db.conn, &cli_page)), ["a"]);
}

#[test]
fn default_limit_is_20() {
    let db = Db::new();
    for i in 0..25 {
        db.session(&format!("s{i:02}"), f64::from(i));
    }
    assert_eq!(DEFAULT_LIST_LIMIT, 20);
    let rows = list(&db.conn, &ListFilter::default());
    assert_eq!(rows.len(), 20);
    assert_eq!(rows[0].session.id, "s24");
    assert_eq!(rows[19].session.id, "s05");
}

#[test]
fn json_keys_are_session_columns_then_preview_then_last_active() {
    let db = example();
    let columns: Vec<String> = {
        let mut stmt = db
            .conn
            .prepare("SELECT name FROM pragma_table_info('sessions') ORDER BY cid")
            .expect("prepare");
        stmt.query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    assert_eq!(columns.len(), 48);
    let rows = list(&db.conn, &ListFilter::default());
    let value = serde_json::to_value(&rows[2]).expect("serialise");
    let Value::Object(map) = &value else {
        panic!("not an object: {value}")
    };
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    let mut expected: Vec<&str> = columns.iter().map(String::as_str).collect();
    expected.extend(["preview", "last_active"]);
    assert_eq!(keys, expected);
    assert_eq!(map["id"], "a");
    assert_eq!(map["last_active"], 130.0);
    assert_eq!(
        map["preview"],
        Value::String(LONG.chars().take(63).collect())
    );
}
