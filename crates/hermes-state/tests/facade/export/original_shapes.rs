//! The original's `export_session` / `export_all` shapes.

use super::*;
use hermes_state::prelude::Exchange;
use hermes_state_core::store::Messages;

#[test]
fn export_session_is_the_row_then_its_active_messages() {
    let s = rich_store();
    assert_eq!(s.db.export_session("nope").expect("export"), None);

    let export = s.db.export_session("cjk").expect("export").expect("some");
    assert_eq!(export.last_active, None);
    let value = export.to_value();
    let object = value.as_object().expect("object");
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    assert_eq!(keys.first(), Some(&"id"));
    assert_eq!(keys[keys.len() - 2..], ["pinned", "messages"]);
    assert!(!keys.contains(&"last_active"));
    assert_eq!(keys.len(), 48 + 1);

    // Active rows only, decoded as get_messages.
    let messages = object["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 6, "the rewound row is not exported");
    assert_eq!(messages[0]["content"], json!("会话存储与全文检索 😀 emoji"));
    assert_eq!(messages[1]["content"], json!("nul\u{0}inside"));
    assert_eq!(messages[2]["content"][1]["type"], json!("image_url"));
    assert_eq!(messages[3]["content"], json!([0, 1, 2, 254, 255]));
    assert_eq!(messages[4]["content"], json!("42"));
    assert_eq!(messages[5]["content"], json!({"a": 1}));
    let message_keys: Vec<&str> = messages[0]
        .as_object()
        .expect("message")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(message_keys.first(), Some(&"id"));
    assert_eq!(message_keys.last(), Some(&"display_metadata"));
    assert_eq!(message_keys.len(), 23);
    assert_eq!(
        export.messages,
        s.db.get_messages("cjk").expect("get_messages")
    );
}

#[test]
fn export_all_orders_by_last_activity_and_filters_by_source() {
    let s = rich_store();
    let conn = setup_connection(&s.path);
    // Make the activity order differ from the creation order.
    conn.execute(
        "UPDATE messages SET timestamp = 4e9 WHERE session_id = 'root' AND role = 'tool'",
        [],
    )
    .expect("backdate");

    let exports = s.db.export_all(None).expect("export_all");
    let ids: Vec<&str> = exports.iter().map(|e| e.session.id.as_str()).collect();
    assert_eq!(ids[0], "root", "newest activity first");
    assert_eq!(ids.len(), 5);
    for export in &exports {
        let newest = export
            .messages
            .iter()
            .map(|m| m.timestamp)
            .fold(None, |a: Option<f64>, t| Some(a.map_or(t, |a| a.max(t))));
        let last_active = export.last_active.expect("last_active");
        assert!(last_active >= newest.unwrap_or(export.session.started_at));
    }
    let value = exports[0].to_value();
    let keys: Vec<&str> = value
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys[keys.len() - 3..],
        ["pinned", "last_active", "messages"]
    );
    assert_eq!(value["last_active"], json!(4e9));

    let telegram = s.db.export_all(Some("telegram")).expect("telegram");
    assert_eq!(telegram.len(), 1);
    assert_eq!(telegram[0].session.id, "branch");
    assert_eq!(s.db.export_all(Some("")).expect("empty source").len(), 5);
}
