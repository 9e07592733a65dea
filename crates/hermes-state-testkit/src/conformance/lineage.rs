//! Lineage reads (`api.md` §9.2: the ancestors, descendants and roots,
//! the compression chain as the original answers it) and the next title of a lineage (§6.4)
//! through the seam.

use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;
use crate::build::{child, say};

pub fn ancestors_descendants_and_roots_walk_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("r", "cli")).unwrap();
    s.set_session_title("r", Some("Root one")).unwrap();
    s.create_session(&child("c1", "r")).unwrap();
    s.create_session(&child("c2", "r")).unwrap();
    // The grandchild under the second child is created first: levels
    // still come in the order of their parents.
    s.create_session(&child("g2", "c2")).unwrap();
    s.create_session(&child("g1", "c1")).unwrap();

    let ids = |entries: Vec<hermes_state_core::lineage::LineageEntry>| -> Vec<String> {
        entries.into_iter().map(|e| e.id).collect()
    };
    let up = s.ancestors("g1").unwrap();
    assert_eq!(ids(up.clone()), ["g1", "c1", "r"], "{n}");
    assert_eq!(up[2].title.as_deref(), Some("Root one"), "{n}");
    assert_eq!(up[2].parent_session_id, None, "{n}");
    assert_eq!(up[0].parent_session_id.as_deref(), Some("c1"), "{n}");
    assert_eq!(
        up[2].started_at,
        s.get_session("r").unwrap().unwrap().started_at,
        "{n}"
    );
    assert_eq!(
        ids(s.descendants("r").unwrap()),
        ["r", "c1", "c2", "g1", "g2"],
        "{n}"
    );
    assert_eq!(ids(s.descendants("c2").unwrap()), ["c2", "g2"], "{n}");
    assert_eq!(s.lineage_root("g2").unwrap(), "r", "{n}");
    assert_eq!(s.lineage_root("r").unwrap(), "r", "{n}");

    // Unknown ids.
    assert!(s.ancestors("nope").unwrap().is_empty(), "{n}");
    assert!(s.descendants("nope").unwrap().is_empty(), "{n}");
    assert_eq!(s.lineage_root("nope").unwrap(), "nope", "{n}");

    // A damaged store: re-creating `x` fills its NULL parent with `y`,
    // whose parent is `x`. Every walk ends.
    s.create_session(&NewSession::new("x", "cli")).unwrap();
    s.create_session(&child("y", "x")).unwrap();
    s.create_session(&child("x", "y")).unwrap();
    assert_eq!(ids(s.ancestors("x").unwrap()), ["x", "y"], "{n}");
    assert_eq!(ids(s.descendants("x").unwrap()), ["x", "y"], "{n}");
    assert_eq!(s.lineage_root("x").unwrap(), "y", "{n}");
}

pub fn next_titles_in_a_lineage_are_numbered_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    assert_eq!(
        s.get_next_title_in_lineage("Fresh").unwrap(),
        "Fresh",
        "{n}"
    );
    for (id, title) in [
        ("a", "Docker fix"),
        ("b", "docker fix #5"),
        ("c", "100% done"),
        ("d", "100x done #7"),
        ("e", "école"),
        ("f", "ÉCOLE #4"),
    ] {
        s.create_session(&NewSession::new(id, "cli")).unwrap();
        s.set_session_title(id, Some(title)).unwrap();
    }
    assert_eq!(
        s.get_next_title_in_lineage("Docker fix").unwrap(),
        "Docker fix #6",
        "{n}: LIKE folds ASCII case"
    );
    assert_eq!(
        s.get_next_title_in_lineage("Docker fix #2").unwrap(),
        "Docker fix #6",
        "{n}"
    );
    assert_eq!(
        s.get_next_title_in_lineage("100% done").unwrap(),
        "100% done #2",
        "{n}: % is no wildcard"
    );
    assert_eq!(
        s.get_next_title_in_lineage("école").unwrap(),
        "école #2",
        "{n}: no case folding beyond ASCII"
    );
    assert_eq!(
        s.get_next_title_in_lineage("Other #3").unwrap(),
        "Other",
        "{n}"
    );
}

/// `export_session_lineage`: a compression chain exported as one logical
/// session, root first, from any of its sessions; `None` for an unknown id.
pub fn a_compression_chain_exports_as_one_session_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("root", "cli")).unwrap();
    crate::build::say(s.as_ref(), "root", "first part", 10.0);
    s.end_session("root", "compression").unwrap();
    s.create_session(&child("tip", "root")).unwrap();
    crate::build::say(s.as_ref(), "tip", "second part", 20.0);
    s.create_session(&NewSession::new("other", "cli")).unwrap();
    crate::build::say(s.as_ref(), "other", "not in the chain", 30.0);

    for from in ["root", "tip"] {
        let export = s.export_session_lineage(from).unwrap().unwrap();
        assert_eq!(
            export.lineage_session_ids(),
            ["root", "tip"],
            "{n}: from {from}"
        );
        let value = export.to_value();
        assert_eq!(value["id"], "tip", "{n}: the tip's columns lead");
        assert_eq!(value["message_count"], 2, "{n}");
        let contents: Vec<&str> = value["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert_eq!(contents, ["first part", "second part"], "{n}: from {from}");
    }
    let alone = s.export_session_lineage("other").unwrap().unwrap();
    assert_eq!(alone.lineage_session_ids(), ["other"], "{n}");
    assert!(s.export_session_lineage("nope").unwrap().is_none(), "{n}");
}

/// The lineage export is the tip's export (its keys first, its columns),
/// then `segments` (each session's own export, root first) and
/// `lineage_session_ids`, with every segment's messages; a branch and an
/// empty id are no part of it.
pub fn a_lineage_exports_as_its_tip_with_every_segments_messages_alike(backend: &dyn Backend) {
    let b = backend.open_at(1000.0);
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("root", "cli").model("m1"))
        .unwrap();
    s.append_message(&crate::build::user("root", "before"))
        .unwrap();
    s.end_session("root", "compression").unwrap();
    let later = b.writer_at(1001.0);
    later
        .create_session(&child("tip", "root").model("m2"))
        .unwrap();
    later
        .append_message(&crate::build::assistant("tip", "after"))
        .unwrap();
    let branch =
        child("branch", "root").model_config(serde_json::json!({"_branched_from": "root"}));
    later.create_session(&branch).unwrap();

    let value = serde_json::to_value(s.export_session_lineage("tip").unwrap().unwrap()).unwrap();
    let tip = s.export_session("tip").unwrap().unwrap().to_value();
    let root = s.export_session("root").unwrap().unwrap().to_value();
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    let mut expected: Vec<&String> = tip.as_object().unwrap().keys().collect();
    let extra = ["segments".to_owned(), "lineage_session_ids".to_owned()];
    expected.extend(extra.iter());
    assert_eq!(keys, expected, "{n}: the tip's keys, then segments and ids");
    let fields = (&value["id"], &value["model"], &value["message_count"]);
    assert_eq!(fields, (&"tip".into(), &"m2".into(), &2.into()), "{n}");
    assert_eq!(
        value["lineage_session_ids"],
        serde_json::json!(["root", "tip"]),
        "{n}"
    );
    let contents: Vec<&serde_json::Value> = value["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["content"])
        .collect();
    assert_eq!(contents, ["before", "after"], "{n}");
    assert_eq!(value["segments"], serde_json::json!([root, tip]), "{n}");
    let ids = |id: &str| {
        s.export_session_lineage(id)
            .unwrap()
            .map(|e| e.lineage_session_ids())
    };
    assert_eq!(ids("branch"), Some(vec!["branch".to_owned()]), "{n}");
    assert_eq!(ids(""), None, "{n}");
}

/// `api.md` §9.2, as the original answers (checked against it): the chain
/// through a session on it; `[id]` for a branch child, a later sibling of
/// the chain and a session outside any chain; `[]` for an unknown id.
pub fn compression_lineage_follows_the_original_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let child = |id: &str, parent: &str| {
        let mut session = NewSession::new(id, "cli");
        session.parent_session_id = Some(parent.into());
        session
    };
    let branch_of = |id: &str, parent: &str| {
        let mut session = child(id, parent);
        session.model_config = Some(json!({"_branched_from": parent}));
        session
    };
    b.add(NewSession::new("root", "cli"), 1.0);
    s.end_session("root", "compression").unwrap();
    // An earlier branch of the root is not part of the chain.
    b.add(branch_of("branch", "root"), 2.0);
    b.add(child("mid", "root"), 3.0);
    b.add(child("later", "root"), 4.0);
    s.end_session("mid", "compression").unwrap();
    b.add(child("tip", "mid"), 5.0);
    say(&*b, "tip", "hello", 6.0);
    // A parent that did not end with compression starts no chain.
    b.add(NewSession::new("plain", "cli"), 7.0);
    b.add(child("plain-child", "plain"), 8.0);
    // A compacted branch starts a chain of its own: walking up stops
    // at the branch child.
    s.end_session("branch", "compression").unwrap();
    b.add(child("branch-tip", "branch"), 9.0);
    // A null marker is no marker.
    let mut unmarked = child("unmarked", "branch-tip");
    unmarked.model_config = Some(json!({"_branched_from": null}));
    s.end_session("branch-tip", "compression").unwrap();
    b.add(unmarked, 10.0);

    let chain = ["root", "mid", "tip"];
    let cases: &[(&str, &[&str])] = &[
        ("root", &chain),
        ("mid", &chain),
        ("tip", &chain),
        ("branch", &["branch"]),
        ("branch-tip", &["branch", "branch-tip", "unmarked"]),
        ("unmarked", &["branch", "branch-tip", "unmarked"]),
        ("later", &["later"]),
        ("plain", &["plain"]),
        ("plain-child", &["plain-child"]),
        ("nobody", &[]),
        ("", &[]),
    ];
    for (id, want) in cases {
        assert_eq!(
            s.get_compression_lineage(id).unwrap(),
            want.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
            "{n}: {id:?}"
        );
    }
}
