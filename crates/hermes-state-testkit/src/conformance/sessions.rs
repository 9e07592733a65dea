//! Sessions, messages, titles, listings and deletion through the seam.

use hermes_state_core::SessionStore;
use hermes_state_core::listing::ListFilter;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;

pub fn sessions_are_created_filled_ended_and_reopened_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let mut parent = NewSession::new("p", "telegram");
    parent.cwd = Some("/work".into());
    parent.chat_id = Some("chat-1".into());
    s.create_session(&parent).unwrap();
    s.end_session("p", "compression").unwrap();
    let mut child = NewSession::new("c", "telegram");
    child.parent_session_id = Some("p".into());
    s.create_session(&child).unwrap();
    let child = s.get_session("c").unwrap().unwrap();
    assert_eq!(child.cwd.as_deref(), Some("/work"), "{}", b.name());
    assert_eq!(
        child.chat_id.as_deref(),
        Some("chat-1"),
        "{}: gateway fields follow a compression",
        b.name()
    );
    // A second create fills NULLs only.
    let mut again = NewSession::new("c", "cli");
    again.model = Some("m".into());
    s.create_session(&again).unwrap();
    let child = s.get_session("c").unwrap().unwrap();
    assert_eq!(
        (child.source.as_str(), child.model.as_deref()),
        ("telegram", Some("m"))
    );
    // First end wins; reopen clears it.
    s.end_session("c", "user_exit").unwrap();
    s.end_session("c", "other").unwrap();
    assert_eq!(
        s.get_session("c").unwrap().unwrap().end_reason.as_deref(),
        Some("user_exit")
    );
    s.reopen_session("c").unwrap();
    assert_eq!(s.get_session("c").unwrap().unwrap().ended_at, None);
    let mut orphan = NewSession::new("o", "cli");
    orphan.parent_session_id = Some("missing".into());
    let error = s.create_session(&orphan).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{}: {error}", b.name());
    assert!(s.get_session("o").unwrap().is_none(), "{}", b.name());
}

pub fn messages_are_appended_counted_and_read_back_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    let first = s
        .append_message(
            &NewMessage::new("s", "user")
                .content("hello there")
                .timestamp(10.0),
        )
        .unwrap();
    let ids = s
        .append_messages(&[
            NewMessage::new("s", "assistant")
                .content("calling")
                .tool_calls(json!([{"id": "1", "function": {"name": "web_search"}}, {"id": "2"}]))
                .timestamp(11.0),
            NewMessage::new("s", "tool")
                .tool_result("web_search", "1")
                .content("result text")
                .timestamp(12.0),
        ])
        .unwrap();
    assert!(ids[0] > first && ids[1] > ids[0], "{}", b.name());
    let session = s.get_session("s").unwrap().unwrap();
    assert_eq!(
        (session.message_count, session.tool_call_count),
        (Some(3), Some(2)),
        "{}",
        b.name()
    );
    let messages = s.get_messages("s").unwrap();
    let roles: Vec<_> = messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"], "{}", b.name());
    assert_eq!(
        messages[1].tool_calls,
        Some(json!([{"id": "1", "function": {"name": "web_search"}}, {"id": "2"}]))
    );
    assert_eq!(s.message_count(Some("s")).unwrap(), 3);
    assert_eq!(s.message_count(None).unwrap(), 3);
    let error = s
        .append_message(&NewMessage::new("ghost", "user").content("x"))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{}", b.name());
    assert_eq!(
        s.message_count(None).unwrap(),
        3,
        "{}: nothing written",
        b.name()
    );
}

pub fn titles_are_unique_move_down_a_compression_lineage_and_resolve_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    for id in ["a", "b"] {
        s.create_session(&NewSession::new(id, "cli")).unwrap();
    }
    assert!(s.set_session_title("a", Some("  Docker   fix ")).unwrap());
    assert_eq!(
        s.get_session_title("a").unwrap().as_deref(),
        Some("Docker fix"),
        "{}",
        b.name()
    );
    let error = s.set_session_title("b", Some("Docker fix")).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Constraint, "{}", b.name());
    assert!(
        !s.set_session_title("missing", Some("x")).unwrap(),
        "{}",
        b.name()
    );
    s.set_session_title("b", Some("Docker fix #2")).unwrap();
    assert_eq!(
        s.resolve_session_by_title("Docker fix").unwrap().as_deref(),
        Some("b"),
        "{}",
        b.name()
    );
    // A compression continuation takes its ancestor's title.
    s.end_session("a", "compression").unwrap();
    let mut cont = NewSession::new("a2", "cli");
    cont.parent_session_id = Some("a".into());
    s.create_session(&cont).unwrap();
    assert!(s.set_session_title("a2", Some("Docker fix")).unwrap());
    assert_eq!(s.get_session_title("a").unwrap(), None, "{}", b.name());
}

pub fn listings_have_previews_last_activity_filters_and_pages_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    for (id, source) in [("one", "cli"), ("two", "telegram"), ("three", "cli")] {
        s.create_session(&NewSession::new(id, source)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    s.append_message(
        &NewMessage::new("one", "user")
            .content(format!("{}!", "x".repeat(80)))
            .timestamp(5e9),
    )
    .unwrap();
    s.append_message(&NewMessage::new("three", "user").content(
        hermes_state_types::Content::Structured(json!([{"type": "text", "text": "hi"}])),
    ))
    .unwrap();
    let all = s.recent_sessions(&ListFilter::default()).unwrap();
    let ids: Vec<_> = all.iter().map(|l| l.session.id.as_str()).collect();
    assert_eq!(ids, ["three", "two", "one"], "{}", b.name());
    assert_eq!(all[2].preview, "x".repeat(63), "{}", b.name());
    assert_eq!(all[2].last_active, 5e9, "{}", b.name());
    assert_eq!(
        all[0].preview,
        "",
        "{}: structured content previews as empty",
        b.name()
    );
    let cli = s
        .recent_sessions(&ListFilter {
            source: Some("cli".into()),
            limit: Some(1),
            offset: 1,
        })
        .unwrap();
    assert_eq!(
        cli.iter()
            .map(|l| l.session.id.as_str())
            .collect::<Vec<_>>(),
        ["one"],
        "{}",
        b.name()
    );
}

pub fn deleting_takes_delegates_along_and_orphans_other_children_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    s.create_session(&NewSession::new("par", "cli")).unwrap();
    let mut branch = NewSession::new("branch", "cli");
    branch.parent_session_id = Some("par".into());
    s.create_session(&branch).unwrap();
    let mut sub = NewSession::new("sub", "cli");
    sub.parent_session_id = Some("par".into());
    sub.model_config = Some(json!({"_delegate_from": "par"}));
    s.create_session(&sub).unwrap();
    let mut grand = NewSession::new("grand", "cli");
    grand.parent_session_id = Some("sub".into());
    grand.model_config = Some(json!({"_delegate_from": "sub"}));
    s.create_session(&grand).unwrap();
    s.append_message(&NewMessage::new("sub", "user").content("x"))
        .unwrap();
    assert!(s.delete_session("par").unwrap());
    assert!(!s.delete_session("par").unwrap(), "{}", b.name());
    for gone in ["par", "sub", "grand"] {
        assert!(
            s.get_session(gone).unwrap().is_none(),
            "{}: {gone}",
            b.name()
        );
    }
    assert_eq!(
        s.get_session("branch").unwrap().unwrap().parent_session_id,
        None,
        "{}",
        b.name()
    );
    assert_eq!(s.message_count(None).unwrap(), 0, "{}", b.name());
}

pub fn a_read_only_handle_refuses_writes_alike(backend: &dyn Backend) {
    let b = backend.open();
    b.store
        .create_session(&NewSession::new("s", "cli"))
        .unwrap();
    let reader = b.read_only();
    assert!(reader.get_session("s").unwrap().is_some(), "{}", b.name());
    let error = reader.end_session("s", "x").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ReadOnly, "{}: {error}", b.name());
}

/// A store says which backend keeps it, as its backend's tests name it,
/// and is itself as `Any` (what a backend's crate downcasts to reach what
/// only it offers), on a writable handle and a read-only one alike.
pub fn a_store_names_its_backend_and_is_itself_as_any(backend: &dyn Backend) {
    let b = backend.open();
    let reader = b.read_only();
    for store in [&*b.store, &*reader] {
        assert_eq!(store.backend_name(), backend.name());
        let any: *const dyn std::any::Any = store.as_any();
        let itself: *const dyn SessionStore = store;
        assert!(
            std::ptr::addr_eq(any, itself),
            "{}: as_any is the store itself",
            backend.name()
        );
    }
    assert_ne!(
        b.store.as_any().type_id(),
        std::any::TypeId::of::<Box<dyn SessionStore>>(),
        "{}: the backend's own type, not the box",
        backend.name()
    );
}
