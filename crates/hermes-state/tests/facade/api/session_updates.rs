//! The other session updates of `api.md` §2.5: every row of its table except
//! the handoff (`api::handoff`), with the unknown-id, empty-id and read-only
//! cases.

use hermes_state::{ErrorKind, GatewayPeer, NewSession, SESSION_RESET, SessionDb};

use crate::common::{NULL, Store, assert_kind, i, r, t};
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;
use hermes_state_testkit::build::{add_child, say_now};

const DAY: f64 = 86_400.0;

fn started(store: &Store, id: &str, days_ago: f64) {
    let at = store.db.now() - days_ago * DAY;
    store.exec(
        "UPDATE sessions SET started_at = ?1 WHERE id = ?2",
        hermes_state::rusqlite::params![at, id],
    );
}

fn sessions(store: &Store) -> i64 {
    store.count("SELECT count(*) FROM sessions", [])
}

#[test]
fn update_system_prompt_model_and_meta_set_their_columns() {
    let store = Store::new();
    store
        .db
        .create_session(&NewSession::new("s", "cli").model("m0").system_prompt("old"))
        .expect("create");
    const ROW: &str = "SELECT system_prompt, model, model_config FROM sessions WHERE id = 's'";

    store
        .db
        .update_system_prompt("s", "new prompt")
        .expect("prompt");
    assert_eq!(store.row(ROW, []), vec![t("new prompt"), t("m0"), NULL]);

    store
        .db
        .update_session_model("s", Some("m1"))
        .expect("model");
    assert_eq!(store.row(ROW, [])[1], t("m1"));
    store
        .db
        .update_session_model("s", None)
        .expect("model cleared");
    assert_eq!(store.row(ROW, [])[1], NULL, "unconditional: None clears");

    // The text as given (compact JSON stays compact); model COALESCEd.
    store
        .db
        .update_session_meta("s", Some(r#"{"a":1}"#), None)
        .expect("meta");
    assert_eq!(
        store.row(ROW, []),
        vec![t("new prompt"), NULL, t(r#"{"a":1}"#)]
    );
    store
        .db
        .update_session_meta("s", Some("{}"), Some("m2"))
        .expect("meta with model");
    assert_eq!(store.row(ROW, [])[1..], [t("m2"), t("{}")]);
    store
        .db
        .update_session_meta("s", None, None)
        .expect("meta cleared");
    assert_eq!(
        store.row(ROW, [])[1..],
        [t("m2"), NULL],
        "model kept when None"
    );

    // Unknown ids change nothing and create nothing; '' is an ordinary id.
    store.db.update_system_prompt("nope", "x").expect("unknown");
    store
        .db
        .update_session_model("nope", Some("x"))
        .expect("unknown");
    store
        .db
        .update_session_meta("nope", Some("{}"), Some("x"))
        .expect("unknown");
    assert_eq!(sessions(&store), 1);
    store.session("");
    store
        .db
        .update_system_prompt("", "empty id")
        .expect("empty id");
    assert_eq!(
        store.row("SELECT system_prompt FROM sessions WHERE id = ''", []),
        vec![t("empty id")]
    );
}

#[test]
fn update_session_billing_route_sets_route_coalesces_mode_and_drops_the_prompt() {
    let store = Store::new();
    store
        .db
        .create_session(&NewSession::new("s", "cli").system_prompt("cached"))
        .expect("create");
    const ROW: &str = "SELECT billing_provider, billing_base_url, billing_mode, system_prompt FROM sessions WHERE id = 's'";

    store
        .db
        .update_session_billing_route("s", Some("openrouter"), Some("https://o"), Some("api"))
        .expect("route");
    assert_eq!(
        store.row(ROW, []),
        vec![t("openrouter"), t("https://o"), t("api"), NULL]
    );
    store
        .db
        .update_session_billing_route("s", Some("anthropic"), None, None)
        .expect("route again");
    assert_eq!(
        store.row(ROW, []),
        vec![t("anthropic"), NULL, t("api"), NULL],
        "provider and URL set (None clears), mode kept when None"
    );
    store
        .db
        .update_session_billing_route("nope", Some("p"), None, None)
        .expect("unknown id");
    assert_eq!(sessions(&store), 1);
}

#[test]
fn update_session_cwd_trims_branch_and_root_and_ignores_empty_arguments() {
    let store = Store::new();
    store.session("s");
    const ROW: &str = "SELECT cwd, git_branch, git_repo_root FROM sessions WHERE id = 's'";

    store
        .db
        .update_session_cwd("s", "/w", Some("  main \n"), Some(" /w "))
        .expect("cwd");
    assert_eq!(store.row(ROW, []), vec![t("/w"), t("main"), t("/w")]);

    // Blank branch/root leave the stored ones; cwd is stored as given.
    store
        .db
        .update_session_cwd("s", " /x ", Some("   "), None)
        .expect("cwd only");
    assert_eq!(store.row(ROW, []), vec![t(" /x "), t("main"), t("/w")]);

    // Empty id or cwd: no-op.
    store
        .db
        .update_session_cwd("s", "", Some("dev"), None)
        .expect("empty cwd");
    store.session("");
    store
        .db
        .update_session_cwd("", "/y", None, None)
        .expect("empty id");
    assert_eq!(store.row(ROW, []), vec![t(" /x "), t("main"), t("/w")]);
    assert_eq!(
        store.row("SELECT cwd FROM sessions WHERE id = ''", []),
        vec![NULL]
    );
    store
        .db
        .update_session_cwd("nope", "/z", None, None)
        .expect("unknown id");
    assert_eq!(sessions(&store), 2);
}

#[test]
fn backfill_repo_roots_fills_only_missing_roots_of_non_empty_pairs() {
    let store = Store::new();
    for (id, cwd, root) in [
        ("null_root", Some("/w"), None),
        ("empty_root", Some("/w"), Some("")),
        ("known_root", Some("/w"), Some("/kept")),
        ("other_cwd", Some("/v"), None),
        ("no_cwd", None, None),
    ] {
        store.session(id);
        store.exec(
            "UPDATE sessions SET cwd = ?1, git_repo_root = ?2 WHERE id = ?3",
            hermes_state::rusqlite::params![cwd, root, id],
        );
    }
    store
        .db
        .backfill_repo_roots([("/w", "/repo"), ("/v", ""), ("", "/anything")])
        .expect("backfill");
    assert_eq!(
        store.rows("SELECT id, git_repo_root FROM sessions ORDER BY id", []),
        vec![
            vec![t("empty_root"), t("/repo")],
            vec![t("known_root"), t("/kept")],
            vec![t("no_cwd"), NULL],
            vec![t("null_root"), t("/repo")],
            vec![t("other_cwd"), NULL],
        ]
    );
    // A map works as well; nothing to do is no write.
    let map = std::collections::HashMap::from([("/v".to_owned(), "/vr".to_owned())]);
    store.db.backfill_repo_roots(&map).expect("map");
    assert_eq!(
        store.row(
            "SELECT git_repo_root FROM sessions WHERE id = 'other_cwd'",
            []
        ),
        vec![t("/vr")]
    );
    store
        .db
        .backfill_repo_roots(Vec::<(String, String)>::new())
        .expect("empty");
}

#[test]
fn record_gateway_session_peer_overwrites_peer_fields_and_keeps_absent_extras() {
    let store = Store::new();
    store
        .db
        .create_session(
            &NewSession::new("s", "cli")
                .user_id("u0")
                .chat_id("c0")
                .thread_id("t0"),
        )
        .expect("create");
    const ROW: &str = "SELECT session_key, source, user_id, chat_id, chat_type, thread_id, display_name, origin_json FROM sessions WHERE id = 's'";

    let peer = GatewayPeer {
        source: "telegram".to_owned(),
        session_key: "agent:main:telegram:dm:1".to_owned(),
        user_id: Some("u1".to_owned()),
        chat_id: Some("c1".to_owned()),
        chat_type: Some("dm".to_owned()),
        thread_id: None,
        display_name: Some("Ann".to_owned()),
        origin_json: Some(r#"{"platform": "telegram"}"#.to_owned()),
    };
    store
        .db
        .record_gateway_session_peer("s", &peer)
        .expect("peer");
    assert_eq!(
        store.row(ROW, []),
        vec![
            t("agent:main:telegram:dm:1"),
            t("telegram"),
            t("u1"),
            t("c1"),
            t("dm"),
            NULL,
            t("Ann"),
            t(r#"{"platform": "telegram"}"#)
        ],
        "thread_id None overwrites"
    );

    let second = GatewayPeer {
        source: "discord".to_owned(),
        session_key: "k2".to_owned(),
        ..GatewayPeer::default()
    };
    store
        .db
        .record_gateway_session_peer("s", &second)
        .expect("peer 2");
    assert_eq!(
        store.row(ROW, []),
        vec![
            t("k2"),
            t("discord"),
            NULL,
            NULL,
            NULL,
            NULL,
            t("Ann"),
            t(r#"{"platform": "telegram"}"#)
        ],
        "display_name and origin_json only when given"
    );

    // No-ops: empty session key, empty id, unknown id.
    let keyless = GatewayPeer {
        source: "slack".to_owned(),
        ..GatewayPeer::default()
    };
    store
        .db
        .record_gateway_session_peer("s", &keyless)
        .expect("no key");
    store.session("");
    store
        .db
        .record_gateway_session_peer("", &second)
        .expect("empty id");
    store
        .db
        .record_gateway_session_peer("nope", &second)
        .expect("unknown id");
    assert_eq!(store.row(ROW, [])[..2], [t("k2"), t("discord")]);
    assert_eq!(
        store.row("SELECT session_key, source FROM sessions WHERE id = ''", []),
        vec![NULL, t("cli")]
    );
    assert_eq!(sessions(&store), 2);
}

#[test]
fn set_expiry_finalized_writes_one_or_zero() {
    let store = Store::new();
    store.session("s");
    store.session("");
    const FLAG: &str = "SELECT expiry_finalized FROM sessions WHERE id = 's'";
    assert_eq!(store.row(FLAG, []), vec![i(0)]);
    store.db.set_expiry_finalized("s", true).expect("set");
    assert_eq!(store.row(FLAG, []), vec![i(1)]);
    store.db.set_expiry_finalized("s", false).expect("unset");
    assert_eq!(store.row(FLAG, []), vec![i(0)]);
    store
        .db
        .set_expiry_finalized("", true)
        .expect("empty id is a no-op");
    assert_eq!(
        store.row("SELECT expiry_finalized FROM sessions WHERE id = ''", []),
        vec![i(0)]
    );
    store
        .db
        .set_expiry_finalized("nope", true)
        .expect("unknown id");
}

/// `gp` (ended by the user) → `root` (compression) → `mid` (compression) →
/// `tip`, plus `side` (a second child of `root`) and `other`, a child of a
/// branched session.
fn compression_chain(store: &Store) {
    store.session("gp");
    add_child(&store.db, "root", "gp");
    add_child(&store.db, "mid", "root");
    add_child(&store.db, "tip", "mid");
    add_child(&store.db, "side", "root");
    store.session("br");
    add_child(&store.db, "other", "br");
    for (id, reason) in [
        ("gp", "user_exit"),
        ("root", "compression"),
        ("mid", "compression"),
        ("br", "branched"),
    ] {
        store.db.end_session(id, reason).expect("end");
    }
}

fn flagged(store: &Store, column: &str) -> Vec<String> {
    store
        .rows(
            &format!("SELECT id FROM sessions WHERE {column} = 1 ORDER BY id"),
            [],
        )
        .into_iter()
        .map(|row| match &row[0] {
            hermes_state::rusqlite::types::Value::Text(id) => id.clone(),
            other => panic!("id {other:?}"),
        })
        .collect()
}

#[test]
fn set_session_archived_covers_the_whole_compression_lineage() {
    let store = Store::new();
    compression_chain(&store);

    // From the middle: up through compression-ended parents (not past `gp`'s
    // user exit), down through compression-ended sessions.
    assert!(store.db.set_session_archived("mid", true).expect("archive"));
    assert_eq!(flagged(&store, "archived"), ["mid", "root", "tip"]);

    // From the root: every continuation, `side` included.
    assert!(
        store
            .db
            .set_session_archived("root", true)
            .expect("archive")
    );
    assert_eq!(flagged(&store, "archived"), ["mid", "root", "side", "tip"]);

    // From the tip: up to the root; restoring clears them.
    assert!(
        store
            .db
            .set_session_archived("tip", false)
            .expect("restore")
    );
    assert_eq!(flagged(&store, "archived"), ["side"]);

    // A branched parent is not part of the lineage.
    assert!(
        store
            .db
            .set_session_archived("other", true)
            .expect("archive")
    );
    assert_eq!(flagged(&store, "archived"), ["other", "side"]);

    // Already archived still matches a row; unknown or empty ids do not.
    assert!(store.db.set_session_archived("other", true).expect("again"));
    assert!(
        !store
            .db
            .set_session_archived("nope", true)
            .expect("unknown")
    );
    assert!(!store.db.set_session_archived("", true).expect("empty"));
}

#[test]
fn set_session_pinned_covers_the_whole_compression_lineage() {
    let store = Store::new();
    compression_chain(&store);
    // From the tip: its ancestors through compression-ended parents; the
    // root's other continuation is not an ancestor nor a descendant of it.
    assert!(store.db.set_session_pinned("tip", true).expect("pin"));
    assert_eq!(flagged(&store, "pinned"), ["mid", "root", "tip"]);
    assert_eq!(flagged(&store, "archived"), Vec::<String>::new());
    // `gp` ended by the user: its children are not continuations.
    assert!(store.db.set_session_pinned("gp", true).expect("pin gp"));
    assert_eq!(flagged(&store, "pinned"), ["gp", "mid", "root", "tip"]);
    // From `side`: itself and `root`.
    assert!(store.db.set_session_pinned("side", false).expect("unpin"));
    assert_eq!(flagged(&store, "pinned"), ["gp", "mid", "tip"]);
    assert!(!store.db.set_session_pinned("nope", true).expect("unknown"));
}

#[test]
fn lineage_flags_stop_on_a_parent_cycle() {
    let store = Store::new();
    store.session("a");
    add_child(&store.db, "b", "a");
    store.exec("UPDATE sessions SET parent_session_id = 'b', end_reason = 'compression', ended_at = 1 WHERE id = 'a'", []);
    store.exec(
        "UPDATE sessions SET end_reason = 'compression', ended_at = 1 WHERE id = 'b'",
        [],
    );
    assert!(store.db.set_session_archived("a", true).expect("archive"));
    assert_eq!(flagged(&store, "archived"), ["a", "b"]);
}

#[test]
fn promote_to_session_reset_ends_live_and_recoverably_ended_sessions() {
    let store = Store::new();
    for id in ["live", "closed", "reaped", "exited"] {
        store.session(id);
    }
    store.db.end_session("closed", "agent_close").expect("end");
    store
        .db
        .end_session("reaped", "ws_orphan_reap")
        .expect("end");
    store.db.end_session("exited", "user_exit").expect("end");
    let exited_before = store.row(
        "SELECT ended_at, end_reason FROM sessions WHERE id = 'exited'",
        [],
    );

    assert!(store.db.promote_to_session_reset("live", SESSION_RESET));
    assert!(store.db.promote_to_session_reset("closed", SESSION_RESET));
    assert!(store.db.promote_to_session_reset("reaped", "custom_reset"));
    assert!(!store.db.promote_to_session_reset("exited", SESSION_RESET));
    assert!(!store.db.promote_to_session_reset("nope", SESSION_RESET));
    assert!(!store.db.promote_to_session_reset("", SESSION_RESET));

    assert_eq!(
        store.rows(
            "SELECT id, end_reason, ended_at IS NOT NULL FROM sessions ORDER BY id",
            []
        ),
        vec![
            vec![t("closed"), t("session_reset"), i(1)],
            vec![t("exited"), t("user_exit"), i(1)],
            vec![t("live"), t("session_reset"), i(1)],
            vec![t("reaped"), t("custom_reset"), i(1)],
        ]
    );
    assert_eq!(
        store.row(
            "SELECT ended_at, end_reason FROM sessions WHERE id = 'exited'",
            []
        ),
        exited_before
    );
    // A session reset is itself final.
    assert!(!store.db.promote_to_session_reset("live", SESSION_RESET));
}

#[test]
fn finalize_orphaned_compression_sessions_ends_only_stale_half_done_continuations() {
    let store = Store::new();
    store.session("p");
    store.session("p_exit");
    // (id, parent, days ago, api calls, has messages, ended)
    let cases = [
        ("orphan", "p", 8.0, 0, true, false),
        ("orphan2", "p", 30.0, 0, true, false),
        ("recent", "p", 6.0, 0, true, false),
        ("called", "p", 8.0, 1, true, false),
        ("empty", "p", 8.0, 0, false, false),
        ("ended", "p", 8.0, 0, true, true),
        ("not_compression", "p_exit", 8.0, 0, true, false),
    ];
    for (id, parent, days, calls, messages, ended) in cases {
        add_child(&store.db, id, parent);
        if messages {
            say_now(&store.db, id, "hello");
        }
        if ended {
            store.db.end_session(id, "user_exit").expect("end");
        }
        started(&store, id, days);
        store.exec(
            "UPDATE sessions SET api_call_count = ?1 WHERE id = ?2",
            hermes_state::rusqlite::params![calls, id],
        );
    }
    store.session("root_live");
    started(&store, "root_live", 30.0);
    store.db.end_session("p", "compression").expect("end p");
    store
        .db
        .end_session("p_exit", "user_exit")
        .expect("end p_exit");

    let before = store.db.now();
    assert_eq!(
        store
            .db
            .finalize_orphaned_compression_sessions()
            .expect("finalize"),
        2
    );
    assert_eq!(
        store.rows(
            "SELECT id FROM sessions WHERE end_reason = 'orphaned_compression' ORDER BY id",
            []
        ),
        vec![vec![t("orphan")], vec![t("orphan2")]]
    );
    let ended_at = match store.row("SELECT ended_at FROM sessions WHERE id = 'orphan'", [])[0] {
        hermes_state::rusqlite::types::Value::Real(at) => at,
        ref other => panic!("ended_at {other:?}"),
    };
    assert!(ended_at >= before && ended_at <= store.db.now());
    assert_eq!(
        store.count("SELECT count(*) FROM sessions WHERE ended_at IS NULL", []),
        5,
        "recent, called, empty, not_compression and root_live stay live"
    );
    assert_eq!(
        store
            .db
            .finalize_orphaned_compression_sessions()
            .expect("again"),
        0
    );
}

#[test]
fn prune_empty_ghost_sessions_deletes_old_ended_untitled_empty_tui_sessions() {
    let store = Store::new();
    // (id, source, title, ended, days ago, has messages)
    let cases = [
        ("ghost", "tui", None, true, 2.0, false),
        ("ghost2", "tui", None, true, 40.0, false),
        ("titled", "tui", Some("Kept"), true, 2.0, false),
        ("live", "tui", None, false, 2.0, false),
        ("young", "tui", None, true, 0.5, false),
        ("cli", "cli", None, true, 2.0, false),
        ("talked", "tui", None, true, 2.0, true),
    ];
    for (id, source, title, ended, days, messages) in cases {
        store
            .db
            .create_session(&NewSession::new(id, source))
            .expect("create");
        if let Some(title) = title {
            store.db.set_session_title(id, Some(title)).expect("title");
        }
        if messages {
            say_now(&store.db, id, "hello");
        }
        if ended {
            store.db.end_session(id, "user_exit").expect("end");
        }
        started(&store, id, days);
    }
    // A ghost that is a parent: its child is orphaned, not deleted.
    add_child(&store.db, "kid", "ghost2");

    let dir = tempfile::tempdir().expect("sessions dir");
    let files = [
        "ghost.json",
        "ghost.jsonl",
        "request_dump_ghost_1.json",
        "ghost2.json",
        "titled.json",
        "request_dump_ghostly_1.json",
    ];
    for name in files {
        std::fs::write(dir.path().join(name), "{}").expect("write transcript");
    }

    assert_eq!(
        store
            .db
            .prune_empty_ghost_sessions(Some(dir.path()))
            .expect("prune"),
        2
    );
    assert_eq!(
        store.rows("SELECT id, parent_session_id FROM sessions ORDER BY id", []),
        vec![
            vec![t("cli"), NULL],
            vec![t("kid"), NULL],
            vec![t("live"), NULL],
            vec![t("talked"), NULL],
            vec![t("titled"), NULL],
            vec![t("young"), NULL],
        ]
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    left.sort();
    assert_eq!(left, ["request_dump_ghostly_1.json", "titled.json"]);

    assert_eq!(store.db.prune_empty_ghost_sessions(None).expect("again"), 0);
}

#[test]
fn compression_failure_cooldown_round_trips_and_expires() {
    let store = Store::new();
    store.session("s");
    let now = store.db.now();

    assert_eq!(
        store.db.get_compression_failure_cooldown("s").expect("get"),
        None
    );
    store
        .db
        .record_compression_failure_cooldown("s", now + 600.0, Some("summary model timed out"))
        .expect("record");
    assert_eq!(
        store.row(
            "SELECT compression_failure_cooldown_until, compression_failure_error FROM sessions WHERE id = 's'",
            []
        ),
        vec![r(now + 600.0), t("summary model timed out")]
    );
    let cooldown = store
        .db
        .get_compression_failure_cooldown("s")
        .expect("get")
        .expect("active");
    assert_eq!(cooldown.cooldown_until, now + 600.0);
    assert!(cooldown.remaining_seconds > 0.0 && cooldown.remaining_seconds <= 600.0);
    assert_eq!(cooldown.error.as_deref(), Some("summary model timed out"));

    // Expired (or ending right now): None, though still stored.
    store
        .db
        .record_compression_failure_cooldown("s", now - 1.0, None)
        .expect("record past");
    assert_eq!(
        store.db.get_compression_failure_cooldown("s").expect("get"),
        None
    );
    assert_eq!(
        store.row(
            "SELECT compression_failure_cooldown_until, compression_failure_error FROM sessions WHERE id = 's'",
            []
        ),
        vec![r(now - 1.0), NULL]
    );

    store
        .db
        .record_compression_failure_cooldown("s", now + 60.0, Some("e"))
        .expect("record");
    store
        .db
        .clear_compression_failure_cooldown("s")
        .expect("clear");
    assert_eq!(
        store.db.get_compression_failure_cooldown("s").expect("get"),
        None
    );
    assert_eq!(
        store.row(
            "SELECT compression_failure_cooldown_until, compression_failure_error FROM sessions WHERE id = 's'",
            []
        ),
        vec![NULL, NULL]
    );

    // Unknown and empty ids: no-ops and None.
    store.session("");
    for id in ["nope", ""] {
        store
            .db
            .record_compression_failure_cooldown(id, now + 60.0, None)
            .expect("record");
        assert_eq!(
            store.db.get_compression_failure_cooldown(id).expect("get"),
            None
        );
        store
            .db
            .clear_compression_failure_cooldown(id)
            .expect("clear");
    }
    assert_eq!(
        store.row(
            "SELECT compression_failure_cooldown_until FROM sessions WHERE id = ''",
            []
        ),
        vec![NULL]
    );
}

#[test]
fn fallback_streak_and_ineffective_count_clamp_at_zero_and_default_to_zero() {
    let store = Store::new();
    store.session("s");
    const ROW: &str = "SELECT compression_fallback_streak, compression_ineffective_count FROM sessions WHERE id = 's'";

    assert_eq!(
        store.db.get_compression_fallback_streak("s").expect("get"),
        0
    );
    assert_eq!(
        store
            .db
            .get_compression_ineffective_count("s")
            .expect("get"),
        0
    );
    store
        .db
        .set_compression_fallback_streak("s", 3)
        .expect("set");
    store
        .db
        .set_compression_ineffective_count("s", 2)
        .expect("set");
    assert_eq!(store.row(ROW, []), vec![i(3), i(2)]);
    assert_eq!(
        store.db.get_compression_fallback_streak("s").expect("get"),
        3
    );
    assert_eq!(
        store
            .db
            .get_compression_ineffective_count("s")
            .expect("get"),
        2
    );

    store
        .db
        .set_compression_fallback_streak("s", -5)
        .expect("negative");
    store
        .db
        .set_compression_ineffective_count("s", i64::MIN)
        .expect("negative");
    assert_eq!(store.row(ROW, []), vec![i(0), i(0)]);

    // Unknown ids: setters change nothing, getters give 0.
    store
        .db
        .set_compression_fallback_streak("nope", 4)
        .expect("unknown");
    store
        .db
        .set_compression_ineffective_count("nope", 4)
        .expect("unknown");
    assert_eq!(
        store
            .db
            .get_compression_fallback_streak("nope")
            .expect("get"),
        0
    );
    assert_eq!(
        store.db.get_compression_ineffective_count("").expect("get"),
        0
    );
    assert_eq!(sessions(&store), 1);

    // A value another writer stored as text still reads.
    store.exec(
        "UPDATE sessions SET compression_fallback_streak = '7' WHERE id = 's'",
        [],
    );
    assert_eq!(
        store.db.get_compression_fallback_streak("s").expect("get"),
        7
    );
}

#[test]
fn a_read_only_handle_refuses_these_writes_and_serves_the_reads() {
    let store = Store::new();
    store.session("s");
    store
        .db
        .record_compression_failure_cooldown("s", store.db.now() + 3600.0, Some("e"))
        .expect("record");
    store
        .db
        .set_compression_fallback_streak("s", 2)
        .expect("set");
    store.db.close().expect("close");
    let db = SessionDb::open_read_only(&store.path).expect("read-only");

    assert_kind(db.update_system_prompt("s", "x"), ErrorKind::ReadOnly);
    assert_kind(db.update_session_model("s", Some("x")), ErrorKind::ReadOnly);
    assert_kind(
        db.update_session_meta("s", Some("{}"), None),
        ErrorKind::ReadOnly,
    );
    assert_kind(
        db.update_session_billing_route("s", Some("p"), None, None),
        ErrorKind::ReadOnly,
    );
    assert_kind(
        db.update_session_cwd("s", "/w", None, None),
        ErrorKind::ReadOnly,
    );
    assert_kind(db.backfill_repo_roots([("/w", "/r")]), ErrorKind::ReadOnly);
    let peer = GatewayPeer {
        source: "telegram".to_owned(),
        session_key: "k".to_owned(),
        ..GatewayPeer::default()
    };
    assert_kind(
        db.record_gateway_session_peer("s", &peer),
        ErrorKind::ReadOnly,
    );
    assert_kind(db.set_expiry_finalized("s", true), ErrorKind::ReadOnly);
    assert_kind(db.set_session_archived("s", true), ErrorKind::ReadOnly);
    assert_kind(db.set_session_pinned("s", true), ErrorKind::ReadOnly);
    assert!(
        !db.promote_to_session_reset("s", SESSION_RESET),
        "errors give false"
    );
    assert_kind(
        db.finalize_orphaned_compression_sessions(),
        ErrorKind::ReadOnly,
    );
    assert_kind(db.prune_empty_ghost_sessions(None), ErrorKind::ReadOnly);
    assert_kind(
        db.record_compression_failure_cooldown("s", 1.0, None),
        ErrorKind::ReadOnly,
    );
    assert_kind(
        db.clear_compression_failure_cooldown("s"),
        ErrorKind::ReadOnly,
    );
    assert_kind(
        db.set_compression_fallback_streak("s", 1),
        ErrorKind::ReadOnly,
    );
    assert_kind(
        db.set_compression_ineffective_count("s", 1),
        ErrorKind::ReadOnly,
    );

    assert!(
        db.get_compression_failure_cooldown("s")
            .expect("read")
            .is_some()
    );
    assert_eq!(db.get_compression_fallback_streak("s").expect("read"), 2);
    assert_eq!(db.get_compression_ineffective_count("s").expect("read"), 0);
}
