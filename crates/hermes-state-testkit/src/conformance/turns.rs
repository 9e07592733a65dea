//! What a gateway does around a turn, through the seam: ensuring its
//! session (`api.md` §2.1), titling it automatically (§6.2), and reading
//! its history with the rewound or compacted rows (§5.2, §5.3).

use hermes_state_core::SessionStore;
use hermes_state_types::Content;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;

use super::Backend;
use crate::build::say;

fn title(s: &dyn SessionStore, id: &str) -> Option<String> {
    s.get_session_title(id).unwrap()
}

pub fn ensuring_a_session_creates_it_once_and_only_fills_a_missing_model_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    assert_eq!(
        s.ensure_session("e", "telegram", Some("m1")).unwrap(),
        "e",
        "{n}"
    );
    assert_eq!(
        s.ensure_session("e", "cli", Some("m2")).unwrap(),
        "e",
        "{n}"
    );
    let row = s.get_session("e").unwrap().unwrap();
    assert_eq!(
        (row.source.as_str(), row.model.as_deref()),
        ("telegram", Some("m1")),
        "{n}"
    );
    let started = row.started_at;
    b.add(NewSession::new("bare", "cli"), 5.0);
    s.ensure_session("bare", "unknown", None).unwrap();
    assert_eq!(s.get_session("bare").unwrap().unwrap().model, None, "{n}");
    s.ensure_session("bare", "unknown", Some("m3")).unwrap();
    let row = s.get_session("bare").unwrap().unwrap();
    assert_eq!(
        (row.source.as_str(), row.model.as_deref()),
        ("cli", Some("m3")),
        "{n}"
    );
    assert_eq!(row.started_at, 5.0, "{n}: the start stays");
    assert_eq!(
        s.get_session("e").unwrap().unwrap().started_at,
        started,
        "{n}"
    );
    assert_eq!(
        s.session_count(&hermes_state_core::sessions::SessionCountOptions::all())
            .unwrap(),
        2,
        "{n}"
    );
    let reader = b.read_only();
    let error = reader.ensure_session("new", "cli", None).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ReadOnly, "{n}: {error}");
    assert!(s.get_session("new").unwrap().is_none(), "{n}");
}

pub fn an_automatic_title_is_set_and_checked_only_on_an_untitled_session_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    b.add(NewSession::new("s", "cli"), 1.0);
    assert!(
        s.set_auto_title_if_empty("s", "  First   auto ").unwrap(),
        "{n}"
    );
    assert_eq!(title(s, "s").as_deref(), Some("First auto"), "{n}");
    assert!(
        !s.set_auto_title_if_empty("s", "Second auto").unwrap(),
        "{n}"
    );
    assert_eq!(title(s, "s").as_deref(), Some("First auto"), "{n}");
    assert!(
        !s.set_auto_title_if_empty("missing", "Whatever").unwrap(),
        "{n}"
    );
    assert!(s.get_session("missing").unwrap().is_none(), "{n}");
    // Nothing left after normalising: nothing set.
    b.add(NewSession::new("blank", "cli"), 2.0);
    assert!(!s.set_auto_title_if_empty("blank", "   ").unwrap(), "{n}");
    assert_eq!(title(s, "blank"), None, "{n}");
    let error = s
        .set_auto_title_if_empty("blank", &"d".repeat(101))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{n}");

    // `api.md` §6: a titled or missing session answers false and no
    // uniqueness check runs; an untitled one is still checked.
    b.add(NewSession::new("other", "cli"), 3.0);
    s.set_session_title("other", Some("Taken")).unwrap();
    assert!(!s.set_auto_title_if_empty("s", "Taken").unwrap(), "{n}");
    assert!(!s.set_auto_title_if_empty("gone", "Taken").unwrap(), "{n}");
    assert_eq!(title(s, "s").as_deref(), Some("First auto"), "{n}");
    let error = s.set_auto_title_if_empty("blank", "Taken").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Constraint, "{n}");
    assert_eq!(title(s, "blank"), None, "{n}");

    // A compression ancestor's title moves to an untitled continuation,
    // and stays with the ancestor when the continuation has one.
    b.add(NewSession::new("root", "cli"), 4.0);
    s.set_session_title("root", Some("Moved")).unwrap();
    s.end_session("root", "compression").unwrap();
    let mut tip = NewSession::new("tip", "cli");
    tip.parent_session_id = Some("root".into());
    b.add(tip, 5.0);
    assert!(s.set_auto_title_if_empty("tip", "Moved").unwrap(), "{n}");
    assert_eq!(
        (title(s, "root"), title(s, "tip").as_deref()),
        (None, Some("Moved")),
        "{n}"
    );
    s.end_session("tip", "compression").unwrap();
    let mut next = NewSession::new("next", "cli");
    next.parent_session_id = Some("tip".into());
    b.add(next, 6.0);
    s.set_session_title("next", Some("Own")).unwrap();
    assert!(!s.set_auto_title_if_empty("next", "Moved").unwrap(), "{n}");
    assert_eq!(
        (title(s, "tip").as_deref(), title(s, "next").as_deref()),
        (Some("Moved"), Some("Own")),
        "{n}"
    );
}

pub fn rewound_and_compacted_rows_show_as_archived_and_in_the_full_conversation_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    b.add(NewSession::new("p", "cli"), 1.0);
    say(&*b, "p", "before", 1.5);
    s.end_session("p", "compression").unwrap();
    let mut c = NewSession::new("c", "cli");
    c.parent_session_id = Some("p".into());
    b.add(c, 2.0);
    let turn = |role: &str, text: &str, at: f64| {
        s.append_message(&NewMessage::new("c", role).content(text).timestamp(at))
            .unwrap()
    };
    turn("user", "q1", 3.0);
    turn("assistant", "a1", 4.0);
    let q2 = turn("user", "q2", 5.0);
    turn("assistant", "a2", 6.0);
    assert!(!s.has_archived_messages("c").unwrap(), "{n}");
    s.rewind_to_message("c", q2).unwrap();
    assert!(s.has_archived_messages("c").unwrap(), "{n}");
    assert!(!s.has_archived_messages("p").unwrap(), "{n}");
    assert!(!s.has_archived_messages("nobody").unwrap(), "{n}");

    let texts = |own: bool, ancestors: bool, inactive: bool| -> Vec<String> {
        let id = if own { "c" } else { "p" };
        s.get_messages_as_conversation_with(id, ancestors, inactive)
            .unwrap()
            .into_iter()
            .map(|m| match m.content {
                Some(Content::Text(text)) => text,
                other => panic!("{n}: {other:?}"),
            })
            .collect()
    };
    assert_eq!(texts(true, false, false), ["q1", "a1"], "{n}");
    assert_eq!(texts(true, false, true), ["q1", "a1", "q2", "a2"], "{n}");
    assert_eq!(texts(true, true, false), ["before", "q1", "a1"], "{n}");
    assert_eq!(
        texts(true, true, true),
        ["before", "q1", "a1", "q2", "a2"],
        "{n}"
    );
    assert_eq!(
        s.get_messages_as_conversation_with("c", true, false)
            .unwrap(),
        s.get_messages_as_conversation("c", true).unwrap(),
        "{n}: without inactive rows it is the plain conversation"
    );
    assert!(
        s.get_messages_as_conversation_with("nobody", true, true)
            .unwrap()
            .is_empty(),
        "{n}"
    );

    // Compaction archives the old rows too.
    b.add(NewSession::new("k", "cli"), 7.0);
    for none in ["k", ""] {
        assert!(!s.has_archived_messages(none).unwrap(), "{n}: {none:?}");
    }
    say(&*b, "k", "long", 7.5);
    s.archive_and_compact(
        "k",
        &[NewMessage::new("k", "user").content("short").timestamp(8.0)],
    )
    .unwrap();
    assert!(s.has_archived_messages("k").unwrap(), "{n}");
    let full = s
        .get_messages_as_conversation_with("k", false, true)
        .unwrap();
    assert_eq!(full.len(), 2, "{n}");
    // The SQLite backend is the reference: every field equal.
    super::agreed::check(
        "turns::rewound_and_compacted_rows_show_as_archived_and_in_the_full_conversation_alike",
        n,
        &(
            s.get_messages_as_conversation_with("c", true, true)
                .unwrap(),
            full,
        ),
    );
}
