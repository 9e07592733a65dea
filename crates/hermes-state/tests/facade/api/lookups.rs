//! `get_session_by_title`, `resolve_session_id`, the lineage helpers and the
//! gateway lookups (`api.md` §2.4, §6.2, §9.2, §12.2).

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::{ErrorKind, NewMessage, PeerLookup, SessionDb};

use crate::common::{Store, assert_kind};
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Lineage;
use hermes_state_core::store::Listings;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;

/// A session row with a chosen start, source and parent (raw SQL: the API
/// stamps `started_at` with the clock).
pub fn add(store: &Store, id: &str, source: &str, started_at: f64, parent: Option<&str>) {
    store.exec(
        "INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES (?1, ?2, ?3, ?4)",
        (id, source, started_at, parent),
    );
}

/// Ends a session with a reason at a chosen time.
pub fn end(store: &Store, id: &str, reason: &str, at: f64) {
    store.exec(
        "UPDATE sessions SET ended_at = ?2, end_reason = ?3 WHERE id = ?1",
        (id, at, reason),
    );
}

/// Sets one column of a session.
pub fn set(store: &Store, id: &str, column: &str, value: Sql) {
    store.exec(
        &format!("UPDATE sessions SET {column} = ?2 WHERE id = ?1"),
        (id, value),
    );
}

/// Appends a message through the API (counters and FTS maintained).
pub fn message(store: &Store, id: &str, role: &str, text: &str, at: f64) {
    store
        .db
        .append_message(&NewMessage::new(id, role).content(text).timestamp(at))
        .expect("append_message");
}

fn t(text: &str) -> Sql {
    Sql::Text(text.to_owned())
}

#[test]
fn get_session_by_title_is_the_exact_case_sensitive_match() {
    let store = Store::new();
    add(&store, "a", "cli", 1.0, None);
    add(&store, "b", "cli", 2.0, None);
    set(&store, "a", "title", t("Proj"));
    set(&store, "b", "title", t("proj"));
    let found = store.db.get_session_by_title("Proj").unwrap().unwrap();
    assert_eq!(found.id, "a");
    assert_eq!(found.title.as_deref(), Some("Proj"));
    assert_eq!(
        store.db.get_session_by_title("proj").unwrap().unwrap().id,
        "b"
    );
    assert!(store.db.get_session_by_title("PROJ").unwrap().is_none());
    assert!(store.db.get_session_by_title("Pro").unwrap().is_none());
    assert!(store.db.get_session_by_title("").unwrap().is_none());
}

#[test]
fn resolve_session_id_takes_an_id_or_a_unique_prefix() {
    let store = Store::new();
    add(&store, "20260315_092437_c9a6ff", "cli", 1.0, None);
    add(&store, "20260315_100000_aaaaaa", "cli", 2.0, None);
    add(&store, "abc", "cli", 3.0, None);
    add(&store, "abcdef", "cli", 4.0, None);
    add(&store, "x%y", "cli", 5.0, None);
    let db = &store.db;
    // The id itself, even when it is also a prefix of another id.
    assert_eq!(
        db.resolve_session_id("abc").unwrap().as_deref(),
        Some("abc")
    );
    assert_eq!(
        db.resolve_session_id("20260315_09").unwrap().as_deref(),
        Some("20260315_092437_c9a6ff")
    );
    // Several matches: none.
    assert_eq!(db.resolve_session_id("20260315").unwrap(), None);
    assert_eq!(db.resolve_session_id("ab").unwrap(), None);
    // ASCII case-insensitive, as LIKE is.
    assert_eq!(
        db.resolve_session_id("ABCD").unwrap().as_deref(),
        Some("abcdef")
    );
    // Wildcards are literal.
    assert_eq!(db.resolve_session_id("x%").unwrap().as_deref(), Some("x%y"));
    assert_eq!(db.resolve_session_id("%").unwrap(), None);
    assert_eq!(db.resolve_session_id("2026031__").unwrap(), None);
    // Unknown and empty.
    assert_eq!(db.resolve_session_id("nope").unwrap(), None);
    assert_eq!(db.resolve_session_id("").unwrap(), None);
    // An empty id that exists is itself.
    add(&store, "", "cli", 6.0, None);
    assert_eq!(db.resolve_session_id("").unwrap().as_deref(), Some(""));
}

/// `api.md` §9.2's example: `root` (ended `compression`) → `child` → `gchild`.
#[test]
fn the_measured_lineage_example() {
    let store = Store::new();
    add(&store, "root", "cli", 100.0, None);
    end(&store, "root", "compression", 150.0);
    add(&store, "child", "cli", 160.0, Some("root"));
    message(&store, "child", "user", "continued", 170.0);
    add(&store, "gchild", "cli", 200.0, Some("child"));
    let db = &store.db;
    assert_eq!(db.get_conversation_root("gchild").unwrap(), "root");
    assert_eq!(db.get_conversation_root("root").unwrap(), "root");
    assert_eq!(db.get_compression_tip("root").unwrap(), "child");
    assert_eq!(
        db.get_compression_lineage("child").unwrap(),
        ["root", "child"]
    );
    assert_eq!(
        db.get_compression_lineage("root").unwrap(),
        ["root", "child"]
    );
    assert_eq!(db.resolve_resume_session_id("root").unwrap(), "child");
}

#[test]
fn compression_tip_ranks_continuations_and_skips_branches_delegates_and_tools() {
    let store = Store::new();
    add(&store, "root", "cli", 100.0, None);
    end(&store, "root", "compression", 110.0);
    add(&store, "live", "cli", 120.0, Some("root"));
    add(&store, "done", "cli", 115.0, Some("root"));
    end(&store, "done", "user_exit", 130.0);
    add(&store, "compressed", "cli", 111.0, Some("root"));
    end(&store, "compressed", "compression", 119.0);
    add(&store, "branch", "cli", 300.0, Some("root"));
    set(
        &store,
        "branch",
        "model_config",
        t(r#"{"_branched_from": "root"}"#),
    );
    add(&store, "delegate", "cli", 301.0, Some("root"));
    set(
        &store,
        "delegate",
        "model_config",
        t(r#"{"_delegate_from": "root"}"#),
    );
    add(&store, "tool", "tool", 302.0, Some("root"));
    // The compression-ended child wins over the live one, and the walk goes on.
    add(&store, "next_old", "cli", 200.0, Some("compressed"));
    add(&store, "next_new", "cli", 210.0, Some("compressed"));
    let db = &store.db;
    assert_eq!(db.get_compression_tip("root").unwrap(), "next_new");
    // Among live children the newest activity wins, not the newest start.
    message(&store, "next_old", "user", "late", 500.0);
    assert_eq!(db.get_compression_tip("root").unwrap(), "next_old");
    // Live beats ended when no child ended with compression.
    store.exec(
        "UPDATE sessions SET end_reason = 'user_exit' WHERE id = 'compressed'",
        [],
    );
    assert_eq!(db.get_compression_tip("root").unwrap(), "live");
    // Only the branch, delegate and tool children left: no move.
    store.exec("DELETE FROM messages WHERE session_id = 'next_old'", []);
    store.exec(
        "DELETE FROM sessions WHERE id IN ('next_old','next_new')",
        [],
    );
    store.exec(
        "DELETE FROM sessions WHERE id IN ('live','done','compressed')",
        [],
    );
    assert_eq!(db.get_compression_tip("root").unwrap(), "root");
    // A session that did not end with compression is its own tip.
    assert_eq!(db.get_compression_tip("branch").unwrap(), "branch");
}

#[test]
fn compression_lineage_follows_the_earliest_non_branch_child() {
    let store = Store::new();
    add(&store, "a", "cli", 1.0, None);
    end(&store, "a", "compression", 2.0);
    add(&store, "b_branch", "cli", 2.5, Some("a"));
    set(
        &store,
        "b_branch",
        "model_config",
        t(r#"{"_branched_from": "a"}"#),
    );
    add(&store, "b", "cli", 3.0, Some("a"));
    add(&store, "b_late", "cli", 4.0, Some("a"));
    end(&store, "b", "compression", 5.0);
    add(&store, "c", "cli", 6.0, Some("b"));
    let db = &store.db;
    for id in ["a", "b", "c"] {
        assert_eq!(
            db.get_compression_lineage(id).unwrap(),
            ["a", "b", "c"],
            "{id}"
        );
    }
    // The late sibling is not on the chain: it is a conversation of its
    // own, as in the original.
    assert_eq!(db.get_compression_lineage("b_late").unwrap(), ["b_late"]);
    // So is the branch child.
    assert_eq!(
        db.get_compression_lineage("b_branch").unwrap(),
        ["b_branch"]
    );
    // A parent that did not end with compression starts no chain.
    add(&store, "d", "cli", 7.0, Some("c"));
    assert_eq!(db.get_compression_lineage("d").unwrap(), ["d"]);
}

#[test]
fn resume_walks_below_the_tip_to_the_deepest_session_with_messages() {
    let store = Store::new();
    add(&store, "root", "cli", 1.0, None);
    end(&store, "root", "compression", 2.0);
    add(&store, "tip", "cli", 3.0, Some("root"));
    message(&store, "tip", "user", "hi", 3.5);
    add(&store, "below", "cli", 4.0, Some("tip"));
    message(&store, "below", "user", "more", 4.5);
    add(&store, "below_empty", "cli", 5.0, Some("below"));
    add(&store, "branch", "cli", 9.0, Some("below"));
    set(
        &store,
        "branch",
        "model_config",
        t(r#"{"_branched_from": "below"}"#),
    );
    message(&store, "branch", "user", "branch", 9.5);
    let db = &store.db;
    assert_eq!(db.resolve_resume_session_id("root").unwrap(), "below");
    // Nothing with messages anywhere: the input.
    let empty = Store::new();
    add(&empty, "r", "cli", 1.0, None);
    end(&empty, "r", "compression", 2.0);
    add(&empty, "c", "cli", 3.0, Some("r"));
    assert_eq!(empty.db.resolve_resume_session_id("r").unwrap(), "r");
}

#[test]
fn cycles_and_unknown_ids_end_every_walk() {
    let store = Store::new();
    add(&store, "a", "cli", 1.0, None);
    add(&store, "b", "cli", 2.0, Some("a"));
    store.exec(
        "UPDATE sessions SET parent_session_id = 'b' WHERE id = 'a'",
        [],
    );
    end(&store, "a", "compression", 3.0);
    end(&store, "b", "compression", 4.0);
    let db = &store.db;
    assert_eq!(db.get_compression_tip("a").unwrap(), "b");
    assert_eq!(db.get_compression_lineage("a").unwrap(), ["b", "a"]);
    assert_eq!(db.get_conversation_root("a").unwrap(), "b");
    assert_eq!(db.resolve_resume_session_id("a").unwrap(), "a");
    for id in ["missing", ""] {
        assert_eq!(db.get_compression_tip(id).unwrap(), id);
        // An unknown session has no chain, as in the original.
        assert!(db.get_compression_lineage(id).unwrap().is_empty());
        assert_eq!(db.get_conversation_root(id).unwrap(), id);
        assert_eq!(db.resolve_resume_session_id(id).unwrap(), id);
    }
}

fn gateway(store: &Store, id: &str, source: &str, started: f64, key: &str, chat: &str, user: &str) {
    add(store, id, source, started, None);
    store.exec(
        "UPDATE sessions SET session_key = ?2, chat_id = ?3, user_id = ?4, chat_type = 'group' WHERE id = ?1",
        (id, key, chat, user),
    );
}

#[test]
fn find_session_by_origin_prefers_the_user_and_refuses_ambiguity() {
    let store = Store::new();
    gateway(&store, "u1_old", "telegram", 1.0, "k1", "chat", "u1");
    gateway(&store, "u1_new", "telegram", 2.0, "k1", "chat", "u1");
    let db = &store.db;
    assert_eq!(
        db.find_session_by_origin("Telegram", "chat", None, None)
            .unwrap()
            .as_deref(),
        Some("u1_new")
    );
    assert_eq!(
        db.find_session_by_origin("telegram", "chat", None, Some("u1"))
            .unwrap()
            .as_deref(),
        Some("u1_new")
    );
    // A second user in the chat: the other user's id is refused, no user is ambiguous.
    gateway(&store, "u2", "telegram", 3.0, "k2", "chat", "u2");
    assert_eq!(
        db.find_session_by_origin("telegram", "chat", None, Some("u2"))
            .unwrap()
            .as_deref(),
        Some("u2")
    );
    assert_eq!(
        db.find_session_by_origin("telegram", "chat", None, Some("u3"))
            .unwrap(),
        None
    );
    assert_eq!(
        db.find_session_by_origin("telegram", "chat", None, None)
            .unwrap(),
        None
    );
    // Ended sessions and sessions without a key do not count.
    end(&store, "u2", "session_reset", 4.0);
    assert_eq!(
        db.find_session_by_origin("telegram", "chat", None, None)
            .unwrap()
            .as_deref(),
        Some("u1_new")
    );
    // A single session of another user is still that chat's session.
    assert_eq!(
        db.find_session_by_origin("telegram", "chat", None, Some("u9"))
            .unwrap(),
        None
    );
    store.exec("DELETE FROM sessions WHERE id = 'u1_old'", []);
    assert_eq!(
        db.find_session_by_origin("telegram", "chat", None, Some("u9"))
            .unwrap()
            .as_deref(),
        Some("u1_new")
    );
    // Threads: a given thread must match, a missing one matches ''.
    set(&store, "u1_new", "thread_id", t("t1"));
    assert_eq!(
        db.find_session_by_origin("telegram", "chat", Some("t1"), None)
            .unwrap()
            .as_deref(),
        Some("u1_new")
    );
    assert_eq!(
        db.find_session_by_origin("telegram", "chat", Some(""), None)
            .unwrap(),
        None
    );
    // Other platform, other chat, empty arguments.
    assert_eq!(
        db.find_session_by_origin("discord", "chat", None, None)
            .unwrap(),
        None
    );
    assert_eq!(
        db.find_session_by_origin("telegram", "other", None, None)
            .unwrap(),
        None
    );
    assert_eq!(
        db.find_session_by_origin("", "chat", None, None).unwrap(),
        None
    );
    assert_eq!(
        db.find_session_by_origin("telegram", "", None, None)
            .unwrap(),
        None
    );
}

#[test]
fn the_latest_gateway_session_of_a_peer_is_recoverable_and_has_messages() {
    let store = Store::new();
    gateway(&store, "old", "telegram", 1.0, "k", "chat", "u");
    message(&store, "old", "user", "hello", 1.5);
    gateway(&store, "empty", "telegram", 5.0, "k", "chat", "u");
    let db = &store.db;
    let peer = PeerLookup {
        source: "telegram".into(),
        session_key: Some("k".into()),
        ..Default::default()
    };
    // The newer session has no messages: the older one is found.
    assert_eq!(
        db.find_latest_gateway_session_for_peer(&peer)
            .unwrap()
            .unwrap()
            .id,
        "old"
    );
    // Ended by a cleanup: still recoverable; by the user: not.
    end(&store, "old", "agent_close", 2.0);
    assert_eq!(
        db.find_latest_gateway_session_for_peer(&peer)
            .unwrap()
            .unwrap()
            .id,
        "old"
    );
    store.exec(
        "UPDATE sessions SET end_reason = 'ws_orphan_reap' WHERE id = 'old'",
        [],
    );
    assert_eq!(
        db.find_latest_gateway_session_for_peer(&peer)
            .unwrap()
            .unwrap()
            .id,
        "old"
    );
    store.exec(
        "UPDATE sessions SET end_reason = 'session_reset' WHERE id = 'old'",
        [],
    );
    assert!(
        db.find_latest_gateway_session_for_peer(&peer)
            .unwrap()
            .is_none()
    );
    // The source must match exactly; no key finds nothing.
    store.exec(
        "UPDATE sessions SET end_reason = 'agent_close' WHERE id = 'old'",
        [],
    );
    let other = PeerLookup {
        source: "Telegram".into(),
        ..peer.clone()
    };
    assert!(
        db.find_latest_gateway_session_for_peer(&other)
            .unwrap()
            .is_none()
    );
    for key in [None, Some(String::new())] {
        let no_key = PeerLookup {
            session_key: key,
            ..peer.clone()
        };
        assert!(
            db.find_latest_gateway_session_for_peer(&no_key)
                .unwrap()
                .is_none()
        );
    }
    // Another key: found through the whole peer tuple, only when chat and type are given.
    let by_peer = PeerLookup {
        source: "telegram".into(),
        session_key: Some("lost".into()),
        user_id: Some("u".into()),
        chat_id: Some("chat".into()),
        chat_type: Some("group".into()),
        thread_id: None,
    };
    assert_eq!(
        db.find_latest_gateway_session_for_peer(&by_peer)
            .unwrap()
            .unwrap()
            .id,
        "old"
    );
    let partial = PeerLookup {
        chat_type: None,
        ..by_peer.clone()
    };
    assert!(
        db.find_latest_gateway_session_for_peer(&partial)
            .unwrap()
            .is_none()
    );
    let other_thread = PeerLookup {
        thread_id: Some("t".into()),
        ..by_peer
    };
    assert!(
        db.find_latest_gateway_session_for_peer(&other_thread)
            .unwrap()
            .is_none()
    );
}

#[test]
fn list_gateway_sessions_gives_the_newest_row_per_key() {
    let store = Store::new();
    gateway(&store, "k1_old", "telegram", 1.0, "k1", "c1", "u");
    gateway(&store, "k1_new", "telegram", 2.0, "k1", "c1", "u");
    gateway(&store, "k2", "Discord", 3.0, "k2", "c2", "u");
    message(&store, "k1_new", "user", "x", 50.0);
    add(&store, "cli", "cli", 9.0, None);
    let db = &store.db;
    let ids = |rows: Vec<hermes_state::SessionActivity>| -> Vec<String> {
        rows.into_iter().map(|r| r.session.id).collect()
    };
    let all = db.list_gateway_sessions(None, true).unwrap();
    assert_eq!(all[0].last_active, 50.0);
    assert_eq!(all[1].last_active, 3.0);
    assert_eq!(ids(all), ["k1_new", "k2"]);
    assert_eq!(
        ids(db.list_gateway_sessions(Some("discord"), true).unwrap()),
        ["k2"]
    );
    end(&store, "k1_new", "session_reset", 60.0);
    assert_eq!(ids(db.list_gateway_sessions(None, true).unwrap()), ["k2"]);
    assert_eq!(
        ids(db.list_gateway_sessions(Some(""), false).unwrap()),
        ["k1_new", "k2"]
    );
}

#[test]
fn lookups_work_on_a_read_only_handle() {
    let store = Store::new();
    add(&store, "root", "cli", 1.0, None);
    end(&store, "root", "compression", 2.0);
    add(&store, "child", "cli", 3.0, Some("root"));
    message(&store, "child", "user", "hi", 4.0);
    set(&store, "root", "title", t("T"));
    let ro = SessionDb::open_read_only(&store.path).unwrap();
    assert_eq!(ro.get_session_by_title("T").unwrap().unwrap().id, "root");
    assert_eq!(
        ro.resolve_session_id("ro").unwrap().as_deref(),
        Some("root")
    );
    assert_eq!(ro.get_compression_tip("root").unwrap(), "child");
    assert_eq!(
        ro.get_compression_lineage("child").unwrap(),
        ["root", "child"]
    );
    assert_eq!(ro.get_conversation_root("child").unwrap(), "root");
    assert_eq!(ro.resolve_resume_session_id("root").unwrap(), "child");
    assert_eq!(
        ro.find_session_by_origin("cli", "c", None, None).unwrap(),
        None
    );
    assert!(ro.list_gateway_sessions(None, false).unwrap().is_empty());
    assert_kind(ro.archive_stale_sessions(1.0, true), ErrorKind::ReadOnly);
}

#[test]
fn a_model_config_that_is_not_json_is_no_marker() {
    let store = Store::new();
    add(&store, "root", "cli", 1.0, None);
    end(&store, "root", "compression", 2.0);
    add(&store, "child", "cli", 3.0, Some("root"));
    set(&store, "child", "model_config", t("{not json"));
    assert_eq!(store.db.get_compression_tip("root").unwrap(), "child");
}
