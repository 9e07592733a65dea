//! Lookups through the seam: by title and id prefix (`api.md` §2.4,
//! §6.2), along compression lineages (§9.2), and the message readers of
//! §5.3 (a window, the recent user turns, a platform id).

use hermes_state_types::Content;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;
use crate::build::{child, say};

pub fn titles_and_id_prefixes_resolve_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("abc-1", "cli"), 1.0);
    b.add(NewSession::new("abd-2", "cli"), 2.0);
    b.add(NewSession::new("x_%y", "cli"), 3.0);
    b.add(NewSession::new("ÉTÉ-1", "cli"), 4.0);
    s.set_session_title("abc-1", Some("Trip")).unwrap();

    let by_title = s.get_session_by_title("Trip").unwrap().unwrap();
    assert_eq!(by_title.id, "abc-1", "{n}");
    assert_eq!(by_title.started_at, 1.0, "{n}");
    assert_eq!(s.get_session_by_title("trip").unwrap(), None, "{n}");
    assert_eq!(s.get_session_by_title("nope").unwrap(), None, "{n}");

    assert_eq!(
        s.resolve_session_id("abd-2").unwrap().as_deref(),
        Some("abd-2"),
        "{n}"
    );
    assert_eq!(
        s.resolve_session_id("abc").unwrap().as_deref(),
        Some("abc-1"),
        "{n}"
    );
    // ASCII case folds.
    assert_eq!(
        s.resolve_session_id("ABD").unwrap().as_deref(),
        Some("abd-2"),
        "{n}"
    );
    // Several match, none match, empty: none.
    assert_eq!(s.resolve_session_id("ab").unwrap(), None, "{n}");
    assert_eq!(s.resolve_session_id("zz").unwrap(), None, "{n}");
    assert_eq!(s.resolve_session_id("").unwrap(), None, "{n}");
    // Wildcards are literal.
    assert_eq!(
        s.resolve_session_id("x_%").unwrap().as_deref(),
        Some("x_%y"),
        "{n}"
    );
    assert_eq!(s.resolve_session_id("_").unwrap(), None, "{n}");
    assert_eq!(s.resolve_session_id("%").unwrap(), None, "{n}");
    // Only ASCII folds, as in SQLite's LIKE: `été` is not a prefix of `ÉTÉ-1`.
    assert_eq!(
        s.resolve_session_id("ÉT").unwrap().as_deref(),
        Some("ÉTÉ-1"),
        "{n}"
    );
    assert_eq!(s.resolve_session_id("ét").unwrap(), None, "{n}");

    // Titles differing in case are different titles; only the exact one
    // finds its session.
    b.add(NewSession::new("upper", "cli"), 5.0);
    b.add(NewSession::new("lower", "cli"), 6.0);
    s.set_session_title("upper", Some("Proj")).unwrap();
    s.set_session_title("lower", Some("proj")).unwrap();
    let titled = |title| {
        s.get_session_by_title(title)
            .unwrap()
            .map(|r| (r.id, r.title))
    };
    let upper = ("upper".to_owned(), Some("Proj".to_owned()));
    assert_eq!(titled("Proj"), Some(upper), "{n}");
    assert_eq!(titled("proj").unwrap().0, "lower", "{n}");
    for other in ["PROJ", "Pro", ""] {
        assert_eq!(titled(other), None, "{n}: {other:?}");
    }

    // `api.md` §2.4's ids: the id itself even when it prefixes another, a
    // unique prefix, and an empty id that exists.
    let b = backend.open();
    let s = &b.store;
    let ids = [
        "20260315_092437_c9a6ff",
        "20260315_100000_aaaaaa",
        "abc",
        "abcdef",
        "x%y",
    ];
    for (i, id) in ids.into_iter().enumerate() {
        b.add(NewSession::new(id, "cli"), i as f64);
    }
    let cases = [
        ("abc", Some("abc")),
        ("20260315_09", Some("20260315_092437_c9a6ff")),
        ("20260315", None),
        ("ab", None),
        ("ABCD", Some("abcdef")),
        ("x%", Some("x%y")),
        ("%", None),
        ("2026031__", None),
        ("nope", None),
        ("", None),
    ];
    for (arg, expected) in cases {
        let got = s.resolve_session_id(arg).unwrap();
        assert_eq!(got.as_deref(), expected, "{n}: {arg:?}");
    }
    b.add(NewSession::new("", "cli"), 6.0);
    assert_eq!(
        s.resolve_session_id("").unwrap().as_deref(),
        Some(""),
        "{n}"
    );
}

pub fn compression_tips_roots_and_resumes_walk_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("root", "cli"), 100.0);
    s.end_session("root", "compression").unwrap();
    b.add(child("live", "root"), 120.0);
    b.add(child("done", "root"), 115.0);
    s.end_session("done", "user_exit").unwrap();
    b.add(child("compressed", "root"), 111.0);
    s.end_session("compressed", "compression").unwrap();
    b.add(child("branch", "root"), 300.0);
    s.update_session_meta("branch", Some(r#"{"_branched_from": "root"}"#), None)
        .unwrap();
    b.add(child("delegate", "root"), 301.0);
    s.update_session_meta("delegate", Some(r#"{"_delegate_from": "root"}"#), None)
        .unwrap();
    b.add(
        {
            let mut tool = child("tool", "root");
            tool.source = "tool".into();
            tool
        },
        303.0,
    );
    b.add(child("next_old", "compressed"), 200.0);
    b.add(child("next_new", "compressed"), 210.0);

    // The compression-ended child wins over the live one, then the
    // newest start among live ones.
    assert_eq!(s.get_compression_tip("root").unwrap(), "next_new", "{n}");
    // The newest activity wins over the newest start.
    say(&*b, "next_old", "late", 500.0);
    assert_eq!(s.get_compression_tip("root").unwrap(), "next_old", "{n}");
    assert_eq!(s.get_compression_tip("live").unwrap(), "live", "{n}");
    // A `model_config` that is not JSON carries no marker; a branch
    // started later is still skipped.
    b.add(NewSession::new("p2", "cli"), 900.0);
    s.end_session("p2", "compression").unwrap();
    b.add(child("unparsable", "p2"), 901.0);
    s.update_session_meta("unparsable", Some("{not json"), None)
        .unwrap();
    b.add(child("later_branch", "p2"), 902.0);
    s.update_session_meta("later_branch", Some(r#"{"_branched_from": "p2"}"#), None)
        .unwrap();
    assert_eq!(s.get_compression_tip("p2").unwrap(), "unparsable", "{n}");
    assert_eq!(s.get_compression_tip("nope").unwrap(), "nope", "{n}");

    assert_eq!(s.get_conversation_root("next_old").unwrap(), "root", "{n}");
    assert_eq!(s.get_conversation_root("root").unwrap(), "root", "{n}");
    assert_eq!(s.get_conversation_root("nope").unwrap(), "nope", "{n}");

    // Resume: the tip has messages; below it, the newest child that is
    // not a branch; the deepest with messages wins.
    b.add(child("below", "next_old"), 600.0);
    say(&*b, "below", "more", 601.0);
    b.add(child("below_empty", "below"), 700.0);
    b.add(child("below_branch", "below"), 800.0);
    s.update_session_meta("below_branch", Some(r#"{"_branched_from": "below"}"#), None)
        .unwrap();
    say(&*b, "below_branch", "branch", 801.0);
    assert_eq!(s.resolve_resume_session_id("root").unwrap(), "below", "{n}");
    // Nothing with messages on the path: the input itself.
    assert_eq!(s.resolve_resume_session_id("live").unwrap(), "live", "{n}");
    assert_eq!(s.resolve_resume_session_id("nope").unwrap(), "nope", "{n}");
    // A tip without messages, nothing below it: the input itself.
    b.add(NewSession::new("r", "cli"), 1000.0);
    s.end_session("r", "compression").unwrap();
    b.add(child("rc", "r"), 1001.0);
    assert_eq!(s.resolve_resume_session_id("r").unwrap(), "r", "{n}");

    // Live beats ended when no child ended with compression; with only a
    // branch, a delegate and a tool child left, a session is its own tip,
    // as is one that did not end with compression.
    b.exec("UPDATE sessions SET end_reason = 'user_exit' WHERE id = 'compressed'");
    assert_eq!(s.get_compression_tip("root").unwrap(), "live", "{n}");
    for id in ["live", "done", "compressed"] {
        assert!(s.delete_session(id).unwrap(), "{n}");
    }
    assert_eq!(s.get_compression_tip("root").unwrap(), "root", "{n}");
    assert_eq!(s.get_compression_tip("branch").unwrap(), "branch", "{n}");

    // A cycle ends every walk; so does an unknown or empty id.
    b.add(NewSession::new("ca", "cli"), 1100.0);
    b.add(child("cb", "ca"), 1101.0);
    b.exec("UPDATE sessions SET parent_session_id = 'cb' WHERE id = 'ca'");
    s.end_session("ca", "compression").unwrap();
    s.end_session("cb", "compression").unwrap();
    assert_eq!(s.get_compression_tip("ca").unwrap(), "cb", "{n}");
    assert_eq!(
        s.get_compression_lineage("ca").unwrap(),
        ["cb", "ca"],
        "{n}"
    );
    assert_eq!(s.get_conversation_root("ca").unwrap(), "cb", "{n}");
    assert_eq!(s.resolve_resume_session_id("ca").unwrap(), "ca", "{n}");
    for id in ["missing", ""] {
        assert_eq!(s.get_compression_tip(id).unwrap(), id, "{n}");
        assert!(s.get_compression_lineage(id).unwrap().is_empty(), "{n}");
        assert_eq!(s.get_conversation_root(id).unwrap(), id, "{n}");
        assert_eq!(s.resolve_resume_session_id(id).unwrap(), id, "{n}");
    }
}

/// `api.md` §9.2's measured example: `root` (ended by compression) →
/// `child` (with a message) → `gchild`.
pub fn the_measured_lineage_example_walks_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("root", "cli"), 100.0);
    s.end_session("root", "compression").unwrap();
    b.add(child("child", "root"), 160.0);
    say(&*b, "child", "continued", 170.0);
    b.add(child("gchild", "child"), 200.0);
    assert_eq!(s.get_conversation_root("gchild").unwrap(), "root", "{n}");
    assert_eq!(s.get_conversation_root("root").unwrap(), "root", "{n}");
    assert_eq!(s.get_compression_tip("root").unwrap(), "child", "{n}");
    for id in ["child", "root"] {
        let chain = s.get_compression_lineage(id).unwrap();
        assert_eq!(chain, ["root", "child"], "{n}: {id}");
    }
    assert_eq!(s.resolve_resume_session_id("root").unwrap(), "child", "{n}");
    // Every lookup answers on a read-only handle; its writes are refused.
    s.set_session_title("root", Some("T")).unwrap();
    let ro = b.read_only();
    assert_eq!(
        ro.get_session_by_title("T").unwrap().unwrap().id,
        "root",
        "{n}"
    );
    let found = ro.resolve_session_id("ro").unwrap();
    assert_eq!(found.as_deref(), Some("root"), "{n}");
    assert_eq!(ro.get_compression_tip("root").unwrap(), "child", "{n}");
    let chain = ro.get_compression_lineage("child").unwrap();
    assert_eq!(chain, ["root", "child"], "{n}");
    assert_eq!(ro.get_conversation_root("child").unwrap(), "root", "{n}");
    assert_eq!(
        ro.resolve_resume_session_id("root").unwrap(),
        "child",
        "{n}"
    );
    assert_eq!(
        ro.find_session_by_origin("cli", "c", None, None).unwrap(),
        None,
        "{n}"
    );
    assert!(
        ro.list_gateway_sessions(None, false).unwrap().is_empty(),
        "{n}"
    );
    let error = ro.archive_stale_sessions(1.0, true).unwrap_err();
    assert_eq!(error.kind(), hermes_state_types::ErrorKind::ReadOnly, "{n}");
}

pub fn message_windows_recent_user_turns_and_platform_ids_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    s.create_session(&NewSession::new("other", "cli")).unwrap();
    let long = format!("  first\n\tline {}", "x".repeat(100));
    let ids = s
        .append_messages(&[
            NewMessage::new("s", "user")
                .content(long.as_str())
                .timestamp(1.0),
            NewMessage::new("s", "assistant")
                .content("a1")
                .timestamp(2.0),
            NewMessage::new("s", "user")
                .content(Content::Structured(json!([
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:x"}},
                    {"type": "text", "text": "here"}
                ])))
                .timestamp(3.0),
            NewMessage::new("s", "assistant")
                .content("a2")
                .timestamp(4.0),
            NewMessage::new("s", "user")
                .content(Content::Structured(json!([{"type": "image_url"}])))
                .timestamp(5.0),
        ])
        .unwrap();
    let mut tagged = NewMessage::new("other", "user").content("p");
    tagged.platform_message_id = Some("tg-42".into());
    let other = s.append_message(&tagged).unwrap();

    let around = s.get_messages_around("s", ids[2], 1).unwrap();
    let got: Vec<i64> = around.window.iter().map(|m| m.id).collect();
    assert_eq!(got, [ids[1], ids[2], ids[3]], "{n}");
    assert_eq!(
        (around.messages_before, around.messages_after),
        (1, 1),
        "{n}"
    );
    assert_eq!(
        around.window[1].content,
        s.get_messages("s").unwrap()[2].content,
        "{n}"
    );
    let edge = s.get_messages_around("s", ids[0], 3).unwrap();
    assert_eq!(
        (edge.messages_before, edge.messages_after, edge.window.len()),
        (0, 3, 4),
        "{n}"
    );
    // An anchor of another session, or none: empty.
    let empty = s.get_messages_around("s", other, 2).unwrap();
    assert!(empty.window.is_empty(), "{n}");
    assert_eq!((empty.messages_before, empty.messages_after), (0, 0), "{n}");
    assert!(
        s.get_messages_around("s", 999_999, 2)
            .unwrap()
            .window
            .is_empty(),
        "{n}"
    );

    let recent = s.list_recent_user_messages("s", 10, false).unwrap();
    let got: Vec<(i64, f64, &str)> = recent
        .iter()
        .map(|r| (r.id, r.timestamp, r.preview.as_str()))
        .collect();
    let cut = format!("first line {}...", "x".repeat(66));
    assert_eq!(
        got,
        [
            (ids[4], 5.0, "[multimodal content]"),
            (ids[2], 3.0, "look here"),
            (ids[0], 1.0, cut.as_str()),
        ],
        "{n}"
    );
    assert_eq!(
        s.list_recent_user_messages("s", 1, false).unwrap().len(),
        1,
        "{n}"
    );
    // Inactive rows only with `include_inactive`.
    b.deactivate(ids[4]);
    assert_eq!(
        s.list_recent_user_messages("s", 10, false).unwrap().len(),
        2,
        "{n}"
    );
    assert_eq!(
        s.list_recent_user_messages("s", 10, true).unwrap().len(),
        3,
        "{n}"
    );

    assert!(s.has_platform_message_id("other", "tg-42").unwrap(), "{n}");
    assert!(!s.has_platform_message_id("s", "tg-42").unwrap(), "{n}");
    assert!(!s.has_platform_message_id("other", "").unwrap(), "{n}");
    assert!(!s.has_platform_message_id("", "tg-42").unwrap(), "{n}");
    assert!(!s.has_platform_message_id("nope", "tg-42").unwrap(), "{n}");
    b.deactivate(other);
    assert!(
        s.has_platform_message_id("other", "tg-42").unwrap(),
        "{n}: an inactive row's too"
    );

    // A window holds rows in any state, with their flags.
    b.exec(&format!(
        "UPDATE messages SET active = 0, compacted = 1 WHERE id = {}",
        ids[1]
    ));
    let all = s.get_messages_around("s", ids[3], 5).unwrap();
    let flags: Vec<(i64, i64)> = all.window.iter().map(|m| (m.active, m.compacted)).collect();
    assert_eq!(flags, [(1, 0), (0, 1), (1, 0), (1, 0), (0, 0)], "{n}");
    assert_eq!((all.messages_before, all.messages_after), (3, 1), "{n}");
    let end = s.get_messages_around("s", ids[4], 5).unwrap();
    assert_eq!(
        (end.messages_before, end.messages_after, end.window.len()),
        (4, 0, 5),
        "{n}"
    );
    for session in ["nope", "", "other"] {
        let none = s.get_messages_around(session, ids[2], 5).unwrap();
        assert!(none.window.is_empty(), "{n}: {session:?}");
        assert_eq!((none.messages_before, none.messages_after), (0, 0), "{n}");
    }

    // The previews of the recent user turns, newest first.
    s.create_session(&NewSession::new("p", "cli")).unwrap();
    let turn = |content: Option<Content>, at: f64| {
        let message = NewMessage::new("p", "user").timestamp(at);
        match content {
            Some(content) => message.content(content),
            None => message,
        }
    };
    let structured = |value| Some(Content::Structured(value));
    let image = json!({"type": "image_url", "image_url": {"url": "x"}});
    let p = s
        .append_messages(&[
            turn(Some("  hello \n\t world  ".into()), 1.0),
            NewMessage::new("p", "assistant").content("not a user row"),
            turn(
                structured(json!([
                    {"type": "text", "text": "look\nat"},
                    image.clone(),
                    {"type": "text", "text": "this"},
                    {"type": "text", "text": ""}
                ])),
                2.0,
            ),
            turn(structured(json!([image])), 3.0),
            turn(Some("word ".repeat(30).into()), 4.0),
            turn(Some("x".repeat(80).into()), 5.0),
            turn(None, 6.0),
            turn(structured(json!({"type": "text", "text": "obj"})), 7.0),
        ])
        .unwrap();
    let recent = |session: &str, limit| -> Vec<(i64, f64, String)> {
        s.list_recent_user_messages(session, limit, false)
            .unwrap()
            .into_iter()
            .map(|m| (m.id, m.timestamp, m.preview))
            .collect()
    };
    let cut = format!("{}...", &"word ".repeat(16)[..77]);
    let want = [
        (p[7], 7.0, String::new()),
        (p[6], 6.0, String::new()),
        (p[5], 5.0, "x".repeat(80)),
        (p[4], 4.0, cut),
        (p[3], 3.0, "[multimodal content]".to_owned()),
        (p[2], 2.0, "look at this".to_owned()),
        (p[0], 1.0, "hello world".to_owned()),
    ];
    assert_eq!(recent("p", 20), want, "{n}");
    assert_eq!(recent("p", 2), want[..2], "{n}");
    for (session, limit) in [("p", 0), ("nope", 20), ("", 20)] {
        assert!(recent(session, limit).is_empty(), "{n}: {session:?}");
    }
}
