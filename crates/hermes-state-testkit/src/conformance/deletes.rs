//! Deleting sessions through the seam (`api.md` §11.6): one session with
//! its delegate descendants and transcripts, a batch, a session only when
//! it is empty, every empty session; children orphaned, counters and usage
//! rows following, unknown ids and read-only handles alike on both backends.

use std::path::Path;

use hermes_state_core::SessionStore;
use hermes_state_types::AuxiliaryUsage;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

use super::{Backend, TestStore};
use crate::build::child;
use crate::build::say;

fn exists(s: &dyn SessionStore, id: &str) -> bool {
    s.get_session(id).unwrap().is_some()
}

fn parent(s: &dyn SessionStore, id: &str) -> Option<String> {
    s.get_session(id).unwrap().unwrap().parent_session_id
}

fn usage(s: &dyn SessionStore, id: &str) {
    let vision = AuxiliaryUsage {
        task: "vision".into(),
        model: Some("m".into()),
        input_tokens: 3,
        ..AuxiliaryUsage::default()
    };
    s.record_auxiliary_usage(id, &vision).unwrap();
}

/// Sessions with usage rows for the model and task `usage` records.
fn usage_sessions(s: &dyn SessionStore) -> i64 {
    s.usage_by_model_and_task()
        .unwrap()
        .iter()
        .map(|row| row.session_count)
        .sum()
}

fn touch(dir: &Path, names: &[&str]) {
    for name in names {
        std::fs::write(dir.join(name), "{}").unwrap();
    }
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// The spec's measured case (`api.md` §11.6) and more markers: a branch, a
/// plain child (a compression continuation: the parent ended so), a
/// delegate child and grandchild, a delegate found by its marker alone,
/// markers naming another session or whose value is JSON `null` or a
/// number (SQLite's `json_type` sees a marker there), a marker in text
/// that is not JSON, and a delegate of an unrelated session.
fn lineage_to_delete(b: &TestStore) {
    let s = &*b.store;
    b.add(NewSession::new("d_par", "cli"), 1.0);
    say(&**b, "d_par", "parent says", 1.5);
    s.end_session("d_par", "compression").unwrap();
    let rows = [
        ("branch", "d_par", Some(json!({"_branched_from": "d_par"}))),
        ("plain", "d_par", None),
        ("d_sub", "d_par", Some(json!({"_delegate_from": "d_par"}))),
        ("d_grand", "d_sub", Some(json!({"_delegate_from": "d_sub"}))),
        ("d_null", "d_par", Some(json!({"_delegate_from": null}))),
        ("d_number", "d_par", Some(json!({"_delegate_from": 7}))),
        (
            "d_other",
            "d_par",
            Some(json!({"_delegate_from": "elsewhere"})),
        ),
        ("bad_json", "d_par", None),
        ("unrelated", "", None),
        (
            "theirs",
            "unrelated",
            Some(json!({"_delegate_from": "unrelated"})),
        ),
    ];
    for (i, (id, parent, config)) in rows.into_iter().enumerate() {
        let at = 2.0 + i as f64;
        let session = if parent.is_empty() {
            NewSession::new(id, "cli")
        } else {
            child(id, parent)
        };
        b.add(
            NewSession {
                model_config: config,
                ..session
            },
            at,
        );
        say(&**b, id, format!("{id} says"), at + 0.5);
    }
    for id in ["d_par", "d_sub", "plain", "theirs"] {
        usage(s, id);
    }
    s.update_session_meta("bad_json", Some(r#"{"_delegate_from": "d_par""#), None)
        .unwrap();
    // A delegate by its marker only, with no parent link.
    let mut marked = NewSession::new("d_far", "cli");
    marked.model_config = Some(json!({"_delegate_from": "d_par"}));
    b.add(marked, 20.0);
    say(&**b, "d_far", "far", 20.5);
    b.add(child("far_child", "d_far"), 21.0);
    say(&**b, "far_child", "near", 21.5);
}

pub fn a_delete_takes_delegates_and_transcripts_and_orphans_other_children_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    lineage_to_delete(&b);
    let dir = tempfile::tempdir().unwrap();
    touch(
        dir.path(),
        &[
            "d_par.json",
            "request_dump_d_par_1.json",
            "d_sub.jsonl",
            "d_far.json",
            "plain.json",
            "request_dump_d_parx_1.json",
        ],
    );
    let (sessions_before, messages_before) = (
        s.session_count(&hermes_state_core::sessions::SessionCountOptions::all())
            .unwrap(),
        s.message_count(None).unwrap(),
    );
    assert_eq!(usage_sessions(s), 4, "{n}");

    assert!(
        s.delete_session_with("d_par", Some(dir.path())).unwrap(),
        "{n}"
    );

    let gone = [
        "d_par", "d_sub", "d_grand", "d_null", "d_number", "d_other", "d_far",
    ];
    let kept = [
        "branch",
        "plain",
        "bad_json",
        "unrelated",
        "theirs",
        "far_child",
    ];
    for id in gone {
        assert!(!exists(s, id), "{n}: {id} deleted");
        assert!(s.get_messages(id).unwrap().is_empty(), "{n}: {id}");
    }
    for id in kept {
        assert!(exists(s, id), "{n}: {id} kept");
        let link = (id == "theirs").then(|| "unrelated".to_owned());
        assert_eq!(
            parent(s, id),
            link,
            "{n}: {id} orphaned, a foreign delegate's link kept"
        );
        assert_eq!(s.get_messages(id).unwrap().len(), 1, "{n}: {id}");
        assert_eq!(
            s.get_session(id).unwrap().unwrap().message_count,
            Some(1),
            "{n}: {id}'s counter"
        );
    }
    assert_eq!(
        s.session_count(&hermes_state_core::sessions::SessionCountOptions::all())
            .unwrap(),
        sessions_before - gone.len() as i64,
        "{n}"
    );
    assert_eq!(
        s.message_count(None).unwrap(),
        messages_before - gone.len() as i64,
        "{n}"
    );
    assert_eq!(
        usage_sessions(s),
        2,
        "{n}: usage rows go with their sessions only"
    );
    assert_eq!(
        s.get_session("bad_json").unwrap().unwrap().model_config,
        Some(r#"{"_delegate_from": "d_par""#.into()),
        "{n}: text that is not JSON is left as it is"
    );
    let left = ["plain.json", "request_dump_d_parx_1.json"];
    assert_eq!(files(dir.path()), left, "{n}");

    // Unknown ids, a second delete: false, nothing touched.
    assert!(
        !s.delete_session_with("d_par", Some(dir.path())).unwrap(),
        "{n}"
    );
    assert!(!s.delete_session("nobody").unwrap(), "{n}");
    assert!(!s.delete_session("").unwrap(), "{n}");
    assert_eq!(files(dir.path()), left, "{n}: no file touched");
    // Without a folder no file is touched; `''` is an ordinary id.
    assert!(s.delete_session_with("plain", None).unwrap(), "{n}");
    assert_eq!(files(dir.path()), left, "{n}");
    b.add(NewSession::new("", "cli"), 30.0);
    say(&*b, "", "empty id", 30.5);
    assert!(s.delete_session("").unwrap(), "{n}");
    assert!(!exists(s, ""), "{n}");
    assert_eq!(
        s.session_count(&hermes_state_core::sessions::SessionCountOptions::all())
            .unwrap(),
        kept.len() as i64 - 1,
        "{n}"
    );
    assert_eq!(s.message_count(None).unwrap(), kept.len() as i64 - 1, "{n}");
}

pub fn a_batch_delete_counts_the_sessions_that_existed_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    b.add(NewSession::new("a", "cli"), 1.0);
    b.add(
        child("a_sub", "a").model_config(json!({"_delegate_from": "a"})),
        2.0,
    );
    b.add(
        child("a_grand", "a_sub").model_config(json!({"_delegate_from": "a_sub"})),
        2.5,
    );
    b.add(NewSession::new("b", "cli"), 3.0);
    b.add(child("b_kid", "b"), 4.0);
    b.add(NewSession::new("c", "cli"), 5.0);
    for id in ["a", "a_sub", "a_grand", "b", "b_kid", "c"] {
        say(&*b, id, id, 6.0);
    }
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "a.json",
        "request_dump_a_1.json",
        "a_sub.jsonl",
        "b.json",
        "c.json",
    ];
    touch(dir.path(), &names);

    // `a_sub` goes with `a` before its turn; `b` twice counts once.
    let ids = ["a", "", "nobody", "a_sub", "b", "b"];
    assert_eq!(s.delete_sessions(&ids, Some(dir.path())).unwrap(), 2, "{n}");
    for id in ["a", "a_sub", "a_grand", "b"] {
        assert!(!exists(s, id), "{n}: {id}");
    }
    assert_eq!(parent(s, "b_kid"), None, "{n}");
    assert_eq!(s.message_count(None).unwrap(), 2, "{n}");
    assert_eq!(files(dir.path()), ["c.json"], "{n}");
    assert_eq!(s.delete_sessions(&[], None).unwrap(), 0, "{n}");
    assert_eq!(s.delete_sessions(&["", "nobody"], None).unwrap(), 0, "{n}");
    assert_eq!(
        s.session_count(&hermes_state_core::sessions::SessionCountOptions::all())
            .unwrap(),
        2,
        "{n}"
    );
}

pub fn only_an_untitled_childless_session_without_messages_is_deleted_if_empty_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    b.add(NewSession::new("titled", "cli"), 1.0);
    s.set_session_title("titled", Some("Kept")).unwrap();
    b.add(NewSession::new("talked", "cli"), 2.0);
    say(&*b, "talked", "hi", 2.5);
    b.add(NewSession::new("parent", "cli"), 3.0);
    b.add(child("kid", "parent"), 4.0);
    b.add(NewSession::new("rewound", "cli"), 5.0);
    let first = s
        .append_message(&NewMessage::new("rewound", "user").content("gone"))
        .unwrap();
    s.rewind_to_message("rewound", first).unwrap();
    b.add(NewSession::new("empty", "cli"), 6.0);
    usage(s, "empty");
    // Inactive rows count as messages, whatever the counter says.
    b.add(NewSession::new("inactive", "cli"), 7.0);
    b.deactivate(say(&*b, "inactive", "gone", 7.5));
    b.exec("UPDATE sessions SET message_count = 0 WHERE id = 'inactive'");

    for id in [
        "titled", "talked", "parent", "rewound", "inactive", "nobody", "",
    ] {
        assert!(!s.delete_session_if_empty(id).unwrap(), "{n}: {id}");
    }
    assert!(s.delete_session_if_empty("kid").unwrap(), "{n}");
    assert!(s.delete_session_if_empty("empty").unwrap(), "{n}");
    assert!(!s.delete_session_if_empty("empty").unwrap(), "{n}: gone");
    assert!(!exists(s, "empty"), "{n}");
    assert_eq!(usage_sessions(s), 0, "{n}: usage rows cascade");
    // Its only child gone, the parent is empty now.
    assert!(s.delete_session_if_empty("parent").unwrap(), "{n}");
    assert_eq!(
        s.session_count(&hermes_state_core::sessions::SessionCountOptions::all())
            .unwrap(),
        4,
        "{n}"
    );
    assert_eq!(s.message_count(None).unwrap(), 3, "{n}");
}

pub fn empty_sessions_are_ended_unarchived_and_uncounted_and_go_with_stray_rows_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    b.add(NewSession::new("e1", "cli"), 1.0);
    s.end_session("e1", "user_exit").unwrap();
    b.add(NewSession::new("archived", "cli"), 2.0);
    s.end_session("archived", "user_exit").unwrap();
    s.set_session_archived("archived", true).unwrap();
    b.add(NewSession::new("live", "cli"), 3.0);
    b.add(NewSession::new("talked", "cli"), 4.0);
    say(&*b, "talked", "hi", 4.5);
    s.end_session("talked", "user_exit").unwrap();
    // Ended with a live child: deleted, the child orphaned.
    b.add(NewSession::new("e_parent", "cli"), 5.0);
    s.end_session("e_parent", "compression").unwrap();
    b.add(child("e_kid", "e_parent"), 6.0);
    // Compacted to nothing: the counter says 0, inactive rows remain.
    b.add(NewSession::new("compacted", "cli"), 7.0);
    say(&*b, "compacted", "one", 7.1);
    say(&*b, "compacted", "two", 7.2);
    assert_eq!(s.archive_and_compact("compacted", &[]).unwrap(), 0, "{n}");
    s.end_session("compacted", "user_exit").unwrap();
    assert_eq!(s.message_count(Some("compacted")).unwrap(), 2, "{n}");
    // A NULL counter is not 0 (the original's `message_count = 0`).
    b.add(NewSession::new("null_count", "cli"), 8.0);
    s.end_session("null_count", "user_exit").unwrap();
    b.exec("UPDATE sessions SET message_count = NULL WHERE id = 'null_count'");

    let dir = tempfile::tempdir().unwrap();
    touch(
        dir.path(),
        &[
            "e1.json",
            "request_dump_e1_1.json",
            "e_parent.jsonl",
            "live.json",
            "talked.jsonl",
        ],
    );

    assert_eq!(s.count_empty_sessions().unwrap(), 3, "{n}");
    assert_eq!(
        s.delete_empty_sessions_with(Some(dir.path())).unwrap(),
        3,
        "{n}"
    );
    for id in ["e1", "e_parent", "compacted"] {
        assert!(!exists(s, id), "{n}: {id}");
    }
    assert_eq!(
        files(dir.path()),
        ["live.json", "talked.jsonl"],
        "{n}: the deleted sessions' transcripts go"
    );
    for id in ["archived", "live", "talked", "e_kid", "null_count"] {
        assert!(exists(s, id), "{n}: {id}");
    }
    assert_eq!(parent(s, "e_kid"), None, "{n}");
    assert_eq!(s.message_count(None).unwrap(), 1, "{n}: stray rows gone");
    assert_eq!(s.count_empty_sessions().unwrap(), 0, "{n}");
    assert_eq!(s.delete_empty_sessions().unwrap(), 0, "{n}");
}

pub fn deletes_refuse_a_read_only_handle_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    b.add(NewSession::new("empty", "cli"), 1.0);
    b.store.end_session("empty", "user_exit").unwrap();
    let reader = b.read_only();
    let errors = [
        reader.delete_session_with("empty", None).unwrap_err(),
        reader.delete_sessions(&["empty"], None).unwrap_err(),
        reader.delete_session_if_empty("empty").unwrap_err(),
        reader.delete_empty_sessions().unwrap_err(),
    ];
    for error in errors {
        assert_eq!(error.kind(), ErrorKind::ReadOnly, "{n}: {error}");
    }
    assert!(exists(&*b.store, "empty"), "{n}: nothing written");
}
