//! More of the `SessionDb` API through the seam (issue #13): replacing a
//! gateway routing scope (`api.md` §12.2), the compression chain (§9.2),
//! the working directories and finding sessions by id (§10.4), stamping
//! the newest matching message (§4.5), archiving idle sessions (§11.4).

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state::{Content, ErrorKind, NewMessage, NewSession};
use serde_json::json;

use super::backends;
use super::lookups::{add, say};

#[test]
fn replacing_a_routing_scope_drops_empty_pairs_keeps_the_last_duplicate_alike() {
    for b in backends("replace gateway routing") {
        let s = &b.store;
        let n = b.name();
        s.save_gateway_routing_entry("old", "{}", "").unwrap();
        s.save_gateway_routing_entry("kept", r#"{"x": 1}"#, "other")
            .unwrap();
        s.replace_gateway_routing_entries(
            &[
                ("k1", r#"{"a": 1}"#),
                ("", "{}"),
                ("k2", ""),
                ("k3", "first"),
                ("k3", "last"),
            ],
            "",
        )
        .unwrap();
        assert_eq!(
            s.load_gateway_routing_entries("").unwrap(),
            BTreeMap::from([
                ("k1".to_owned(), r#"{"a": 1}"#.to_owned()),
                ("k3".to_owned(), "last".to_owned()),
            ]),
            "{n}"
        );
        assert_eq!(
            s.load_gateway_routing_entries("other").unwrap(),
            BTreeMap::from([("kept".to_owned(), r#"{"x": 1}"#.to_owned())]),
            "{n}"
        );
        s.replace_gateway_routing_entries(&[], "").unwrap();
        assert!(
            s.load_gateway_routing_entries("").unwrap().is_empty(),
            "{n}"
        );
        assert_eq!(
            s.load_gateway_routing_entries("other").unwrap().len(),
            1,
            "{n}"
        );
    }
}

#[test]
fn compression_lineage_skips_branches_and_stops_at_a_live_tip_alike() {
    for b in backends("compression lineage") {
        let s = &b.store;
        let n = b.name();
        let child = |id: &str, parent: &str| {
            let mut session = NewSession::new(id, "cli");
            session.parent_session_id = Some(parent.into());
            session
        };
        add(&b, NewSession::new("root", "cli"), 1.0);
        s.end_session("root", "compression").unwrap();
        // An earlier branch of the root is not part of the chain.
        let mut branch = child("branch", "root");
        branch.model_config = Some(json!({"_branched_from": "root"}));
        add(&b, branch, 2.0);
        add(&b, child("mid", "root"), 3.0);
        add(&b, child("later", "root"), 4.0);
        s.end_session("mid", "compression").unwrap();
        add(&b, child("tip", "mid"), 5.0);
        say(&b, "tip", "hello", 6.0);
        // A parent that did not end with compression starts no chain.
        add(&b, NewSession::new("plain", "cli"), 7.0);
        add(&b, child("plain-child", "plain"), 8.0);
        let chain = ["root", "mid", "tip"].map(String::from).to_vec();
        for id in ["root", "mid", "tip"] {
            assert_eq!(s.get_compression_lineage(id).unwrap(), chain, "{n}: {id}");
        }
        assert_eq!(
            s.get_compression_lineage("branch").unwrap(),
            ["root", "mid", "tip"].map(String::from).to_vec(),
            "{n}: the branch's root leads down the chain"
        );
        assert_eq!(
            s.get_compression_lineage("plain-child").unwrap(),
            vec!["plain-child".to_owned()],
            "{n}"
        );
        assert_eq!(
            s.get_compression_lineage("nobody").unwrap(),
            vec!["nobody".to_owned()],
            "{n}"
        );
    }
}

#[test]
fn working_directories_are_distinct_non_empty_and_byte_ordered_alike() {
    for b in backends("distinct cwds") {
        let s = &b.store;
        let n = b.name();
        for (i, cwd) in [
            Some("/b"),
            Some("/a"),
            Some("/a"),
            Some(""),
            None,
            Some("/B"),
        ]
        .into_iter()
        .enumerate()
        {
            let mut session = NewSession::new(format!("s{i}"), "cli");
            session.cwd = cwd.map(String::from);
            add(&b, session, i as f64);
        }
        let mut archived = NewSession::new("old", "cli");
        archived.cwd = Some("/z".into());
        add(&b, archived, 10.0);
        assert!(s.set_session_archived("old", true).unwrap(), "{n}");
        assert_eq!(
            s.distinct_session_cwds(false).unwrap(),
            ["/B", "/a", "/b"].map(String::from).to_vec(),
            "{n}"
        );
        assert_eq!(
            s.distinct_session_cwds(true).unwrap(),
            ["/B", "/a", "/b", "/z"].map(String::from).to_vec(),
            "{n}"
        );
    }
}

#[test]
fn sessions_are_found_by_id_fragment_newest_first_alike() {
    for b in backends("search sessions by id") {
        let s = &b.store;
        let n = b.name();
        add(&b, NewSession::new("abc-1", "cli"), 1.0);
        add(&b, NewSession::new("xABC-2", "cli"), 2.0);
        add(&b, NewSession::new("x%y", "cli"), 3.0);
        add(&b, NewSession::new("abd", "cli"), 4.0);
        add(&b, NewSession::new("abc-3", "cli"), 5.0);
        say(&b, "abc-1", "late", 9.0);
        assert!(s.set_session_archived("abc-3", true).unwrap(), "{n}");
        let found = |query: &str, limit: u32, archived: bool| -> Vec<(String, f64)> {
            s.search_sessions_by_id(query, limit, archived)
                .unwrap()
                .into_iter()
                .map(|row| (row.session.id, row.last_active))
                .collect()
        };
        assert_eq!(
            found("abc", 10, false),
            vec![("xABC-2".to_owned(), 2.0), ("abc-1".to_owned(), 9.0)],
            "{n}"
        );
        assert_eq!(
            found("ABC", 2, true),
            vec![("abc-3".to_owned(), 5.0), ("xABC-2".to_owned(), 2.0)],
            "{n}"
        );
        assert_eq!(found("%", 10, true), vec![("x%y".to_owned(), 3.0)], "{n}");
        assert!(found("", 10, true).is_empty(), "{n}");
        assert!(found("abc", 0, true).is_empty(), "{n}");
    }
}

#[test]
fn the_newest_live_user_row_gets_api_content_only_when_its_content_matches_alike() {
    for b in backends("set latest user api_content") {
        let s = &b.store;
        let n = b.name();
        add(&b, NewSession::new("s", "cli"), 1.0);
        say(&b, "s", "one", 2.0);
        say(&b, "s", "two", 3.0);
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
        s.append_message(&NewMessage::new("s", "user").content(structured.clone()))
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
        assert_eq!(
            s.set_latest_user_api_content("nobody", None, "x").unwrap(),
            0,
            "{n}"
        );
    }
}

#[test]
fn the_newest_live_matching_message_gets_the_display_kind_alike() {
    for b in backends("set latest matching display kind") {
        let s = &b.store;
        let n = b.name();
        add(&b, NewSession::new("s", "cli"), 1.0);
        say(&b, "s", "hi", 2.0);
        s.append_message(&NewMessage::new("s", "assistant").content("hi"))
            .unwrap();
        say(&b, "s", "hi", 3.0);
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
            s.set_latest_matching_message_display_kind(
                "s",
                "user",
                "hi",
                "plain",
                Some(&json!({}))
            )
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
    }
}

#[test]
fn idle_sessions_are_archived_pinned_ones_only_when_asked_alike() {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let days_ago = |days: f64| now - days * 86_400.0;
    for b in backends("archive stale sessions") {
        let s = &b.store;
        let n = b.name();
        add(&b, NewSession::new("idle", "cli"), days_ago(10.0));
        add(&b, NewSession::new("idle-pinned", "cli"), days_ago(10.0));
        assert!(s.set_session_pinned("idle-pinned", true).unwrap(), "{n}");
        add(&b, NewSession::new("talked", "cli"), days_ago(10.0));
        say(&b, "talked", "recent", days_ago(1.0));
        add(&b, NewSession::new("fresh", "cli"), days_ago(2.0));
        add(&b, NewSession::new("gone", "cli"), days_ago(20.0));
        assert!(s.set_session_archived("gone", true).unwrap(), "{n}");
        let archived = || -> Vec<String> {
            ["idle", "idle-pinned", "talked", "fresh", "gone"]
                .into_iter()
                .filter(|id| s.get_session(id).unwrap().unwrap().archived == 1)
                .map(String::from)
                .collect()
        };
        assert_eq!(s.archive_stale_sessions(7.0, true).unwrap(), 1, "{n}");
        assert_eq!(archived(), vec!["idle", "gone"], "{n}");
        assert_eq!(s.archive_stale_sessions(7.0, false).unwrap(), 1, "{n}");
        assert_eq!(archived(), vec!["idle", "idle-pinned", "gone"], "{n}");
        assert_eq!(s.archive_stale_sessions(7.0, false).unwrap(), 0, "{n}");
        for bad in [f64::NAN, f64::INFINITY] {
            let error = s.archive_stale_sessions(bad, true).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{n}");
        }
    }
}
