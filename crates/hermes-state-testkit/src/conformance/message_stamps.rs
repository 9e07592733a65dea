//! Stamping the newest matching message of a session (`api.md` §4.5): its
//! API content and its display kind.

use hermes_state_types::Content;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;
use crate::build::say;

pub fn the_newest_live_user_row_gets_api_content_only_when_its_content_matches_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("s", "cli"), 1.0);
    say(&*b, "s", "one", 2.0);
    say(&*b, "s", "two", 3.0);
    s.append_message(&NewMessage::new("s", "assistant").content("reply"))
        .unwrap();
    let text = |t: &str| Content::Text(t.into());
    let api = |id: &str| -> Vec<Option<String>> {
        s.get_messages(id)
            .unwrap()
            .into_iter()
            .map(|m| m.api_content)
            .collect()
    };
    assert_eq!(
        s.set_latest_user_api_content("s", Some(&text("one")), "w1")
            .unwrap(),
        0,
        "{n}: not the newest user row"
    );
    assert_eq!(
        s.set_latest_user_api_content("s", Some(&text("two")), "w2")
            .unwrap(),
        1,
        "{n}"
    );
    assert_eq!(api("s"), vec![None, Some("w2".into()), None], "{n}");
    assert_eq!(
        s.set_latest_user_api_content("s", None, "w3").unwrap(),
        0,
        "{n}: the content is not NULL"
    );
    let structured = Content::Structured(json!([{"type": "text", "text": "look"}]));
    let structured_id = s
        .append_message(&NewMessage::new("s", "user").content(structured.clone()))
        .unwrap();
    assert_eq!(
        s.set_latest_user_api_content("s", Some(&structured), "w4")
            .unwrap(),
        1,
        "{n}"
    );
    s.append_message(&NewMessage::new("s", "user")).unwrap();
    assert_eq!(
        s.set_latest_user_api_content("s", None, "w5").unwrap(),
        1,
        "{n}: None matches a NULL content"
    );
    assert_eq!(
        api("s"),
        vec![
            None,
            Some("w2".into()),
            None,
            Some("w4".into()),
            Some("w5".into())
        ],
        "{n}"
    );
    // Rewound rows are skipped: the newest live user row is `two` then.
    s.rewind_to_message("s", structured_id).unwrap();
    assert_eq!(
        s.set_latest_user_api_content("s", Some(&text("two")), "w6")
            .unwrap(),
        1,
        "{n}"
    );
    assert_eq!(api("s"), vec![None, Some("w6".into()), None], "{n}");
    for nobody in ["nobody", ""] {
        assert_eq!(
            s.set_latest_user_api_content(nobody, None, "x").unwrap(),
            0,
            "{n}"
        );
    }
}

pub fn the_newest_live_matching_message_gets_the_display_kind_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("s", "cli"), 1.0);
    say(&*b, "s", "hi", 2.0);
    s.append_message(&NewMessage::new("s", "assistant").content("hi"))
        .unwrap();
    let last = say(&*b, "s", "hi", 3.0);
    let shown = || -> Vec<(Option<String>, Option<String>)> {
        s.get_messages("s")
            .unwrap()
            .into_iter()
            .map(|m| (m.display_kind, m.display_metadata))
            .collect()
    };
    assert!(
        s.set_latest_matching_message_display_kind(
            "s",
            "user",
            "hi",
            "note",
            Some(&json!({"from": "cron"}))
        )
        .unwrap(),
        "{n}"
    );
    assert_eq!(
        shown(),
        vec![
            (None, None),
            (None, None),
            (Some("note".into()), Some(r#"{"from": "cron"}"#.into()))
        ],
        "{n}"
    );
    // Falsy metadata replaces what was there with NULL.
    assert!(
        s.set_latest_matching_message_display_kind("s", "user", "hi", "plain", Some(&json!({})))
            .unwrap(),
        "{n}"
    );
    assert_eq!(shown()[2], (Some("plain".into()), None), "{n}");
    assert!(
        s.set_latest_matching_message_display_kind("s", "assistant", "hi", "k", None)
            .unwrap(),
        "{n}"
    );
    assert_eq!(shown()[1], (Some("k".into()), None), "{n}");
    for (session, role, content, kind) in [
        ("s", "user", "absent", "k"),
        ("s", "tool", "hi", "k"),
        ("", "user", "hi", "k"),
        ("s", "user", "", "k"),
        ("s", "user", "hi", ""),
    ] {
        assert!(
            !s.set_latest_matching_message_display_kind(session, role, content, kind, None)
                .unwrap(),
            "{n}: {session:?} {role:?} {content:?} {kind:?}"
        );
    }
    assert_eq!(shown()[2], (Some("plain".into()), None), "{n}");
    assert!(
        !s.set_latest_matching_message_display_kind("nope", "user", "hi", "k", None)
            .unwrap(),
        "{n}"
    );
    // Metadata is stored as the original's JSON text; other rows' stays;
    // rewound rows do not match, the older live one does; the
    // model-facing columns are untouched.
    b.exec("UPDATE messages SET display_metadata = '{\"x\": 1}' WHERE role = 'assistant'");
    s.rewind_to_message("s", last).unwrap();
    let metadata = json!({"source": "cron", "n": 1.5, "name": "é"});
    assert!(
        s.set_latest_matching_message_display_kind("s", "user", "hi", "steer", Some(&metadata))
            .unwrap(),
        "{n}"
    );
    let stamped = (
        Some("steer".to_owned()),
        Some(r#"{"source": "cron", "n": 1.5, "name": "\u00e9"}"#.to_owned()),
    );
    let assistant = (Some("k".to_owned()), Some(r#"{"x": 1}"#.to_owned()));
    assert_eq!(shown(), [stamped, assistant], "{n}");
    // Without metadata the stamp clears what was there.
    assert!(
        s.set_latest_matching_message_display_kind("s", "assistant", "hi", "k2", None)
            .unwrap(),
        "{n}"
    );
    assert_eq!(shown()[1], (Some("k2".into()), None), "{n}");
    let first = &s.get_messages("s").unwrap()[0];
    assert_eq!(
        (first.role.as_str(), &first.content),
        ("user", &Some(Content::Text("hi".into()))),
        "{n}"
    );
}
