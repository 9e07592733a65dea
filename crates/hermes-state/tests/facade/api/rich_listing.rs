//! `search_sessions`, `list_sessions_rich` with every filter, the other
//! listing helpers, prune candidates and archiving (`api.md` §10, §11.3,
//! §11.4, §11.6).

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::serde_json::{self, Value};
use hermes_state::{
    ArchiveSelection, ErrorKind, PruneCandidate, PruneFilters, PruneSelection, RichListOptions,
    RichSession, SessionActivity, SessionDb,
};

use super::lookups::{add, end, message, set};
use crate::common::{Store, assert_kind, unix_now};
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Listings;
use hermes_state_core::store::Messages;

fn t(text: &str) -> Sql {
    Sql::Text(text.to_owned())
}

fn ids(rows: &[SessionActivity]) -> Vec<&str> {
    rows.iter().map(|r| r.session.id.as_str()).collect()
}

fn candidate_ids(rows: &[PruneCandidate]) -> Vec<&str> {
    rows.iter().map(|r| r.id.as_str()).collect()
}

fn rich_ids(rows: &[RichSession]) -> Vec<&str> {
    rows.iter().map(|r| r.session.id.as_str()).collect()
}

fn rich(store: &Store, options: RichListOptions) -> Vec<RichSession> {
    store
        .db
        .list_sessions_rich(&options)
        .expect("list_sessions_rich")
}

#[test]
fn search_sessions_orders_by_last_activity_and_includes_everything() {
    let store = Store::new();
    add(&store, "a", "cli", 10.0, None);
    add(&store, "b", "telegram", 20.0, None);
    add(&store, "c", "cli", 30.0, Some("a"));
    set(&store, "c", "archived", Sql::Integer(1));
    message(&store, "a", "user", "late", 100.0);
    let db = &store.db;
    let rows = db.search_sessions(None, 20, 0).unwrap();
    assert_eq!(ids(&rows), ["a", "c", "b"]);
    assert_eq!(rows[0].last_active, 100.0);
    assert_eq!(rows[1].last_active, 30.0);
    assert_eq!(
        ids(&db.search_sessions(Some("cli"), 20, 0).unwrap()),
        ["a", "c"]
    );
    assert_eq!(ids(&db.search_sessions(Some(""), 1, 1).unwrap()), ["c"]);
    // Keys: every session column, then last_active.
    let json = serde_json::to_value(&rows[0]).unwrap();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys.first().map(|k| k.as_str()), Some("id"));
    assert_eq!(keys[keys.len() - 2], "pinned");
    assert_eq!(keys.last().map(|k| k.as_str()), Some("last_active"));
}

#[test]
fn rich_preview_is_one_line_of_at_most_sixty_characters() {
    let store = Store::new();
    let cases = [
        (
            "p1",
            "  first line\nsecond line with a lot more words to exceed sixty characters total ok  ",
            "first line second line with a lot more words to exceed sixty",
        ),
        ("p2", &"x".repeat(60), &"x".repeat(60)),
        ("p3", &"y".repeat(61), &format!("{}...", "y".repeat(60))),
        ("p4", "a\r\nb", "a  b"),
    ];
    for (n, (id, text, _)) in cases.iter().enumerate() {
        add(&store, id, "cli", n as f64, None);
        message(&store, id, "assistant", "not me", 0.5);
        message(&store, id, "user", text, 1.0);
        message(&store, id, "user", "later", 2.0);
    }
    add(&store, "none", "cli", 9.0, None);
    message(&store, "none", "assistant", "only the assistant", 1.0);
    let rows = rich(&store, RichListOptions::default());
    for (id, _, preview) in cases {
        let row = rows.iter().find(|r| r.session.id == id).unwrap();
        assert_eq!(row.preview, preview, "{id}");
        assert_eq!(row.last_active, 2.0);
    }
    let none = rows.iter().find(|r| r.session.id == "none").unwrap();
    assert_eq!(none.preview, "");
    // A multimodal first user message gives ''.
    add(&store, "mm", "cli", 10.0, None);
    store
        .db
        .append_message(
            &hermes_state::NewMessage::new("mm", "user")
                .content(serde_json::json!([{"type": "text", "text": "hi"}]))
                .timestamp(1.0),
        )
        .unwrap();
    let rows = rich(&store, RichListOptions::default());
    assert_eq!(rows[0].session.id, "mm");
    assert_eq!(rows[0].preview, "");
}

#[test]
fn rich_hides_children_unless_asked_and_keeps_branches() {
    let store = Store::new();
    add(&store, "root", "cli", 1.0, None);
    end(&store, "root", "branched", 5.0);
    add(&store, "branch_marker", "cli", 2.0, Some("root"));
    set(
        &store,
        "branch_marker",
        "model_config",
        t(r#"{"_branched_from": "root"}"#),
    );
    add(&store, "branch_late", "cli", 6.0, Some("root"));
    add(&store, "early_child", "cli", 3.0, Some("root"));
    add(&store, "delegate", "cli", 7.0, Some("root"));
    set(
        &store,
        "delegate",
        "model_config",
        t(r#"{"_delegate_from": "root"}"#),
    );
    add(&store, "delegate_root", "cli", 8.0, None);
    set(
        &store,
        "delegate_root",
        "model_config",
        t(r#"{"_delegate_from": "x"}"#),
    );
    let listed = rich(&store, RichListOptions::default());
    assert_eq!(rich_ids(&listed), ["branch_late", "branch_marker", "root"]);
    let all = rich(
        &store,
        RichListOptions {
            include_children: true,
            ..Default::default()
        },
    );
    assert_eq!(
        rich_ids(&all),
        [
            "delegate_root",
            "delegate",
            "branch_late",
            "early_child",
            "branch_marker",
            "root"
        ]
    );
}

#[test]
fn rich_filters_by_source_cwd_count_archive_and_ids() {
    let store = Store::new();
    add(&store, "w", "cli", 1.0, None);
    set(&store, "w", "cwd", t("/w"));
    add(&store, "w_sub", "telegram", 2.0, None);
    set(&store, "w_sub", "cwd", t("/w/sub"));
    add(&store, "w_win", "cron", 3.0, None);
    set(&store, "w_win", "cwd", t("/w\\win"));
    add(&store, "wx", "cli", 4.0, None);
    set(&store, "wx", "cwd", t("/wx"));
    add(&store, "arch", "cli", 5.0, None);
    set(&store, "arch", "archived", Sql::Integer(1));
    message(&store, "w", "user", "needle in here", 1.5);
    message(&store, "w", "assistant", "two", 1.6);
    set(&store, "wx", "title", t("Needle title"));
    let list = |options: RichListOptions| -> Vec<String> {
        rich(&store, options)
            .into_iter()
            .map(|r| r.session.id)
            .collect()
    };
    assert_eq!(list(Default::default()), ["wx", "w_win", "w_sub", "w"]);
    assert_eq!(
        list(RichListOptions {
            source: Some("cli".into()),
            ..Default::default()
        }),
        ["wx", "w"]
    );
    assert_eq!(
        list(RichListOptions {
            exclude_sources: vec!["cli".into(), "cron".into()],
            ..Default::default()
        }),
        ["w_sub"]
    );
    for prefix in ["/w", "/w/", "/w//"] {
        assert_eq!(
            list(RichListOptions {
                cwd_prefix: Some(prefix.into()),
                ..Default::default()
            }),
            ["w_win", "w_sub", "w"],
            "{prefix}"
        );
    }
    assert_eq!(
        list(RichListOptions {
            min_message_count: 2,
            ..Default::default()
        }),
        ["w"]
    );
    assert_eq!(
        list(RichListOptions {
            archived_only: true,
            ..Default::default()
        }),
        ["arch"]
    );
    assert_eq!(
        list(RichListOptions {
            include_archived: true,
            limit: 2,
            offset: 0,
            ..Default::default()
        }),
        ["arch", "wx"]
    );
    assert_eq!(
        list(RichListOptions {
            limit: 2,
            offset: 3,
            ..Default::default()
        }),
        ["w"]
    );
    // The original applies the id and search filters only in the
    // last-activity order; elsewhere they are ignored.
    for (id_query, search_query) in [(Some("W_"), None), (None, Some("NEEDLE"))] {
        assert_eq!(
            list(RichListOptions {
                id_query: id_query.map(Into::into),
                search_query: search_query.map(Into::into),
                ..Default::default()
            }),
            ["wx", "w_win", "w_sub", "w"]
        );
    }
    assert_eq!(
        list(RichListOptions {
            id_query: Some(" W_ ".into()),
            order_by_last_active: true,
            ..Default::default()
        }),
        ["w_win", "w_sub"]
    );
    // Titles and ids, never message text.
    assert_eq!(
        list(RichListOptions {
            search_query: Some("NEEDLE".into()),
            order_by_last_active: true,
            ..Default::default()
        }),
        ["wx"]
    );
}

#[test]
fn rich_compact_rows_leave_the_system_prompt_out() {
    let store = Store::new();
    add(&store, "s", "cli", 1.0, None);
    set(&store, "s", "system_prompt", t("long prompt"));
    let full = rich(&store, RichListOptions::default());
    assert_eq!(
        full[0].session.system_prompt.as_deref(),
        Some("long prompt")
    );
    let json = serde_json::to_value(&full[0]).unwrap();
    assert_eq!(json["system_prompt"], "long prompt");
    let keys: Vec<String> = json.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys[keys.len() - 2..],
        ["last_active".to_owned(), "preview".to_owned()]
    );
    let compact = rich(
        &store,
        RichListOptions {
            compact_rows: true,
            ..Default::default()
        },
    );
    assert_eq!(compact[0].session.system_prompt, None);
    let json = serde_json::to_value(&compact[0]).unwrap();
    assert!(json.get("system_prompt").is_none(), "{json}");
    assert_eq!(json["id"], "s");
}

#[test]
fn rich_projects_a_compressed_root_onto_its_tip() {
    let store = Store::new();
    add(&store, "root", "cli", 100.0, None);
    set(&store, "root", "title", t("Base"));
    set(&store, "root", "model", t("m1"));
    message(&store, "root", "user", "root question", 101.0);
    end(&store, "root", "compression", 150.0);
    add(&store, "tip", "cli", 160.0, Some("root"));
    set(&store, "tip", "title", t("Base #2"));
    set(&store, "tip", "model", t("m2"));
    set(&store, "tip", "cwd", t("/tip"));
    message(&store, "tip", "user", "tip question", 170.0);
    add(&store, "other", "cli", 120.0, None);
    let rows = rich(&store, RichListOptions::default());
    assert_eq!(rich_ids(&rows), ["other", "tip"]);
    let row = &rows[1];
    assert_eq!(row.session.started_at, 100.0, "the root's start is kept");
    assert_eq!(row.session.title.as_deref(), Some("Base #2"));
    assert_eq!(row.session.model.as_deref(), Some("m2"));
    assert_eq!(row.session.cwd.as_deref(), Some("/tip"));
    assert_eq!(row.session.end_reason, None);
    assert_eq!(row.session.ended_at, None);
    assert_eq!(row.session.message_count, Some(1));
    assert_eq!(row.preview, "tip question");
    assert_eq!(row.last_active, 170.0);
    assert_eq!(row.lineage_root_id.as_deref(), Some("root"));
    let json = serde_json::to_value(row).unwrap();
    assert_eq!(json["_lineage_root_id"], "root");
    assert_eq!(
        json.as_object().unwrap().keys().next_back().unwrap(),
        "_lineage_root_id"
    );
    // Without projection the root is listed as it is.
    let plain = rich(
        &store,
        RichListOptions {
            project_compression_tips: false,
            ..Default::default()
        },
    );
    assert_eq!(rich_ids(&plain), ["other", "root"]);
    assert_eq!(plain[1].lineage_root_id, None);
    assert!(
        serde_json::to_value(&plain[1])
            .unwrap()
            .get("_lineage_root_id")
            .is_none()
    );
    // Ordered by activity, the chain's newest message counts.
    let by_activity = rich(
        &store,
        RichListOptions {
            order_by_last_active: true,
            ..Default::default()
        },
    );
    assert_eq!(rich_ids(&by_activity), ["tip", "other"]);
    message(&store, "other", "user", "newer", 200.0);
    let by_activity = rich(
        &store,
        RichListOptions {
            order_by_last_active: true,
            ..Default::default()
        },
    );
    assert_eq!(rich_ids(&by_activity), ["other", "tip"]);
}

#[test]
fn cron_runs_search_by_id_and_cwds() {
    let store = Store::new();
    add(&store, "cron_job1_20260101", "cron", 1.0, None);
    add(&store, "cron_job1_20260102", "cron", 2.0, None);
    add(&store, "cron_job10_20260101", "cron", 3.0, None);
    add(&store, "cron_jobX1_x", "cron", 4.0, None);
    add(&store, "cron_job1_cli", "cli", 5.0, None);
    let db = &store.db;
    assert_eq!(
        rich_ids(&db.list_cron_job_runs("job1", 20, 0).unwrap()),
        ["cron_job1_20260102", "cron_job1_20260101"]
    );
    assert_eq!(
        rich_ids(&db.list_cron_job_runs("job1", 1, 1).unwrap()),
        ["cron_job1_20260101"]
    );
    assert!(db.list_cron_job_runs("job_", 20, 0).unwrap().is_empty());
    assert!(db.list_cron_job_runs("", 20, 0).unwrap().is_empty());
    // The original's id range is case-sensitive.
    assert!(db.list_cron_job_runs("JOB1", 20, 0).unwrap().is_empty());

    set(&store, "cron_job1_20260101", "archived", Sql::Integer(1));
    assert_eq!(
        rich_ids(&db.search_sessions_by_id("JOB1_", 10, true).unwrap()),
        ["cron_job1_cli", "cron_job1_20260102", "cron_job1_20260101"]
    );
    assert_eq!(
        rich_ids(&db.search_sessions_by_id("job1_", 10, false).unwrap()),
        ["cron_job1_cli", "cron_job1_20260102"]
    );
    assert_eq!(
        rich_ids(&db.search_sessions_by_id("job1_", 1, true).unwrap()),
        ["cron_job1_cli"]
    );
    assert!(db.search_sessions_by_id("%", 10, true).unwrap().is_empty());
    assert!(db.search_sessions_by_id("", 10, true).unwrap().is_empty());

    set(&store, "cron_job1_20260101", "cwd", t("/b"));
    set(&store, "cron_job1_20260102", "cwd", t("/a"));
    set(&store, "cron_job10_20260101", "cwd", t("/a"));
    set(&store, "cron_jobX1_x", "cwd", t(""));
    let cwds =
        |archived| serde_json::to_value(db.distinct_session_cwds(archived).unwrap()).unwrap();
    assert_eq!(
        cwds(false),
        serde_json::json!([{"cwd": "/a", "sessions": 2, "last_active": 3.0}])
    );
    assert_eq!(
        cwds(true),
        serde_json::json!([
            {"cwd": "/a", "sessions": 2, "last_active": 3.0},
            {"cwd": "/b", "sessions": 1, "last_active": 1.0}
        ])
    );
}

const DAY: f64 = 86_400.0;

/// `api.md` §11.3's measured store.
fn prune_store() -> (Store, f64) {
    let store = Store::new();
    let old = unix_now() - 100.0 * DAY;
    add(&store, "parent", "cli", old, None);
    end(&store, "parent", "user_exit", old + 1.0);
    add(&store, "live_child", "cli", old + 2.0, Some("parent"));
    add(&store, "delegate", "cli", old + 3.0, Some("parent"));
    set(
        &store,
        "delegate",
        "model_config",
        t(r#"{"_delegate_from": "parent"}"#),
    );
    end(&store, "delegate", "user_exit", old + 4.0);
    add(&store, "live_old", "cli", old + 5.0, None);
    add(&store, "telegram_old", "telegram", old + 6.0, None);
    end(&store, "telegram_old", "user_exit", old + 7.0);
    add(&store, "new", "cli", unix_now(), None);
    end(&store, "new", "user_exit", unix_now());
    (store, old)
}

#[test]
fn prune_candidates_are_the_measured_ones() {
    let (store, old) = prune_store();
    let db = &store.db;
    let days_90 = |source: Option<&str>| PruneSelection {
        older_than_days: Some(90.0),
        source: source.map(Into::into),
        ..Default::default()
    };
    assert_eq!(
        candidate_ids(
            &db.list_prune_candidates(&days_90(Some("telegram")))
                .unwrap()
        ),
        ["telegram_old"]
    );
    assert_eq!(
        candidate_ids(&db.list_prune_candidates(&days_90(None)).unwrap()),
        ["parent", "delegate", "telegram_old"]
    );
    let everything = PruneSelection {
        older_than_days: Some(0.0),
        ..Default::default()
    };
    assert_eq!(db.list_prune_candidates(&everything).unwrap().len(), 4);
    // The original's default: no age bound.
    assert_eq!(
        db.list_prune_candidates(&PruneSelection::default())
            .unwrap()
            .len(),
        4
    );
    // An explicit started_before wins over the age bound.
    let before = PruneSelection {
        older_than_days: Some(90.0),
        filters: PruneFilters {
            started_before: Some(old + 2.0),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(
        candidate_ids(&db.list_prune_candidates(&before).unwrap()),
        ["parent"]
    );
    // Listing writes nothing.
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 6);
    let nan = PruneSelection {
        older_than_days: Some(f64::NAN),
        ..Default::default()
    };
    assert_kind(db.list_prune_candidates(&nan), ErrorKind::InvalidInput);
    let inf = PruneSelection {
        filters: PruneFilters {
            max_cost: Some(f64::INFINITY),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_kind(db.list_prune_candidates(&inf), ErrorKind::InvalidInput);
}

#[test]
fn every_prune_filter_narrows_the_candidates() {
    let store = Store::new();
    for (n, id) in ["a", "b"].iter().enumerate() {
        add(&store, id, "cli", 10.0 + n as f64, None);
        end(&store, id, "user_exit", 20.0);
    }
    store.exec(
        "UPDATE sessions SET title = 'Fix 100%', end_reason = 'compression', cwd = '/w/x',
         message_count = 5, archived = 1, model = 'gpt-5', billing_provider = 'openai',
         user_id = 'u', chat_id = 'c', chat_type = 'dm', git_branch = 'feature/x',
         input_tokens = 70, output_tokens = 30, estimated_cost_usd = 0.5,
         actual_cost_usd = 2.0, tool_call_count = 3 WHERE id = 'a'",
        [],
    );
    let only_a = |filters: PruneFilters| {
        let rows = store
            .db
            .list_prune_candidates(&PruneSelection {
                filters,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(candidate_ids(&rows), ["a"]);
    };
    only_a(PruneFilters {
        started_before: Some(10.5),
        ..Default::default()
    });
    only_a(PruneFilters {
        started_after: Some(5.0),
        started_before: Some(11.0),
        ..Default::default()
    });
    only_a(PruneFilters {
        title_like: Some("fix 100%".into()),
        ..Default::default()
    });
    only_a(PruneFilters {
        end_reason: Some("compression".into()),
        ..Default::default()
    });
    only_a(PruneFilters {
        cwd_prefix: Some("/w".into()),
        ..Default::default()
    });
    only_a(PruneFilters {
        min_messages: Some(5),
        ..Default::default()
    });
    only_a(PruneFilters {
        archived: Some(true),
        ..Default::default()
    });
    only_a(PruneFilters {
        model_like: Some("GPT".into()),
        ..Default::default()
    });
    only_a(PruneFilters {
        provider: Some("openai".into()),
        ..Default::default()
    });
    only_a(PruneFilters {
        user_id: Some("u".into()),
        ..Default::default()
    });
    only_a(PruneFilters {
        chat_id: Some("c".into()),
        ..Default::default()
    });
    only_a(PruneFilters {
        chat_type: Some("dm".into()),
        ..Default::default()
    });
    only_a(PruneFilters {
        branch_like: Some("feature".into()),
        ..Default::default()
    });
    only_a(PruneFilters {
        min_tokens: Some(100),
        ..Default::default()
    });
    only_a(PruneFilters {
        min_cost: Some(1.5),
        ..Default::default()
    });
    only_a(PruneFilters {
        min_tool_calls: Some(3),
        ..Default::default()
    });
    let only_b = |filters: PruneFilters| {
        let rows = store
            .db
            .list_prune_candidates(&PruneSelection {
                filters,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(candidate_ids(&rows), ["b"]);
    };
    only_b(PruneFilters {
        max_messages: Some(4),
        ..Default::default()
    });
    only_b(PruneFilters {
        archived: Some(false),
        ..Default::default()
    });
    only_b(PruneFilters {
        max_tokens: Some(99),
        ..Default::default()
    });
    only_b(PruneFilters {
        max_cost: Some(1.9),
        ..Default::default()
    });
    // A NULL tool call count is 0, as the original's `COALESCE`.
    set(&store, "b", "tool_call_count", Sql::Null);
    only_b(PruneFilters {
        max_tool_calls: Some(2),
        ..Default::default()
    });
    only_b(PruneFilters {
        started_after: Some(10.5),
        ..Default::default()
    });
}

#[test]
fn archive_sessions_archives_the_prune_candidates() {
    let (store, _) = prune_store();
    let db = &store.db;
    let days_90 = ArchiveSelection {
        older_than_days: Some(90.0),
        ..Default::default()
    };
    assert_eq!(db.archive_sessions(&days_90).unwrap(), 3);
    let archived = store.rows("SELECT id FROM sessions WHERE archived = 1 ORDER BY id", []);
    assert_eq!(
        archived,
        [[t("delegate")], [t("parent")], [t("telegram_old")]]
    );
    // Nothing is deleted, and a second run changes nothing.
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 6);
    assert_eq!(db.archive_sessions(&days_90).unwrap(), 0);
    // The original's default: no age bound, unarchived sessions only.
    assert_eq!(
        db.archive_sessions(&ArchiveSelection::default()).unwrap(),
        1
    );
    assert_eq!(
        db.archive_sessions(&ArchiveSelection::default()).unwrap(),
        0
    );
}

#[test]
fn archive_stale_sessions_archives_idle_sessions_except_pinned() {
    let store = Store::new();
    let now = unix_now();
    add(&store, "idle", "cli", now - 10.0 * DAY, None);
    add(&store, "idle_pinned", "cli", now - 10.0 * DAY, None);
    set(&store, "idle_pinned", "pinned", Sql::Integer(1));
    add(&store, "old_but_active", "cli", now - 10.0 * DAY, None);
    message(&store, "old_but_active", "user", "recent", now - DAY);
    add(&store, "fresh", "cli", now, None);
    let db = &store.db;
    assert_eq!(db.archive_stale_sessions(3.0, true).unwrap(), 1);
    assert_eq!(
        store.count("SELECT archived FROM sessions WHERE id = 'idle'", []),
        1
    );
    assert_eq!(db.archive_stale_sessions(3.0, true).unwrap(), 0);
    assert_eq!(db.archive_stale_sessions(3.0, false).unwrap(), 1);
    assert_eq!(
        store.count("SELECT archived FROM sessions WHERE id = 'idle_pinned'", []),
        1
    );
    assert_eq!(
        store.count("SELECT count(*) FROM sessions WHERE archived = 1", []),
        2
    );
    // The original archives nothing for a NaN or negative age.
    set(&store, "fresh", "started_at", Sql::Real(now - 10.0 * DAY));
    assert_eq!(db.archive_stale_sessions(f64::NAN, false).unwrap(), 0);
    assert_eq!(db.archive_stale_sessions(-1.0, false).unwrap(), 0);
}

#[test]
fn count_empty_sessions_counts_ended_unarchived_sessions_without_messages() {
    let store = Store::new();
    add(&store, "empty_ended", "cli", 1.0, None);
    end(&store, "empty_ended", "user_exit", 2.0);
    add(&store, "empty_live", "cli", 1.0, None);
    add(&store, "empty_archived", "cli", 1.0, None);
    end(&store, "empty_archived", "user_exit", 2.0);
    set(&store, "empty_archived", "archived", Sql::Integer(1));
    add(&store, "full", "cli", 1.0, None);
    message(&store, "full", "user", "x", 1.5);
    end(&store, "full", "user_exit", 2.0);
    assert_eq!(store.db.count_empty_sessions().unwrap(), 1);
}

#[test]
fn listings_read_on_a_read_only_handle_and_archiving_is_refused() {
    let (store, _) = prune_store();
    let ro = SessionDb::open_read_only(&store.path).unwrap();
    assert_eq!(ro.search_sessions(None, 20, 0).unwrap().len(), 6);
    assert!(
        !ro.list_sessions_rich(&RichListOptions::default())
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        ro.list_prune_candidates(&PruneSelection::default())
            .unwrap()
            .len(),
        4
    );
    assert!(ro.list_cron_job_runs("x", 20, 0).unwrap().is_empty());
    assert!(ro.search_sessions_by_id("parent", 20, true).unwrap().len() == 1);
    assert!(ro.distinct_session_cwds(true).unwrap().is_empty());
    assert_eq!(ro.count_empty_sessions().unwrap(), 4);
    assert_kind(
        ro.archive_sessions(&ArchiveSelection::default()),
        ErrorKind::ReadOnly,
    );
    assert_kind(ro.archive_stale_sessions(3.0, true), ErrorKind::ReadOnly);
    let value: Value = serde_json::to_value(ro.search_sessions(None, 1, 0).unwrap()).unwrap();
    assert!(value.is_array());
}

/// The original's `cwd_prefix` clause has no `ESCAPE`: `%` and `_` in the
/// folder are wildcards, ASCII letters match either case in the `LIKE`s
/// (not in the `=`), and `/` alone stays `/`. Expected rows measured on the
/// original.
#[test]
fn cwd_prefix_is_the_originals_like_in_listings_and_prunes() {
    let store = Store::new();
    for (n, (id, cwd)) in [
        ("mine", "/w/my_app"),
        ("mine_sub", "/w/my_app/src"),
        ("other", "/w/myXapp/src"),
        ("percent", "/w/100%/x"),
        ("percent_other", "/w/100abc/x"),
    ]
    .into_iter()
    .enumerate()
    {
        add(&store, id, "cli", 1.0 + n as f64, None);
        set(&store, id, "cwd", t(cwd));
        end(&store, id, "user_exit", 10.0);
    }
    for (prefix, expected) in [
        ("/w/my_app", vec!["mine", "mine_sub", "other"]),
        ("/w/100%", vec!["percent", "percent_other"]),
        ("/w/MY_APP/", vec!["mine_sub", "other"]),
        ("/", vec![]),
    ] {
        let mut listed: Vec<String> = rich(
            &store,
            RichListOptions {
                cwd_prefix: Some(prefix.into()),
                ..Default::default()
            },
        )
        .into_iter()
        .map(|r| r.session.id)
        .collect();
        listed.sort();
        assert_eq!(listed, expected, "list_sessions_rich {prefix}");
        let candidates = store
            .db
            .list_prune_candidates(&PruneSelection {
                filters: PruneFilters {
                    cwd_prefix: Some(prefix.into()),
                    ..Default::default()
                },
                ..Default::default()
            })
            .unwrap();
        assert_eq!(
            candidate_ids(&candidates),
            expected,
            "prune candidates {prefix}"
        );
    }
}

/// A store whose handle's clock stands at `now`.
fn store_at(now: f64) -> Store {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let options = hermes_state::StoreOptions {
        clock: Some(hermes_state::FixedClock::new(now) as std::sync::Arc<dyn hermes_state::Clock>),
        ..Default::default()
    };
    let db = SessionDb::open_with(&path, &options).expect("open");
    Store { db, path, dir }
}

/// The original's `archive_stale_sessions`: idle by the newest message, else
/// the start (an end is no activity); compression-ended sessions are no
/// candidates, a candidate takes its compression chain along; children
/// count; the result is the number of candidates. Measured on the original.
#[test]
fn archive_stale_sessions_archives_idle_tips_with_their_chains() {
    let now = 1_800_000_000.0;
    let store = store_at(now);
    let ago = |days: f64| now - days * DAY;
    add(&store, "root", "cli", ago(30.0), None);
    end(&store, "root", "compression", ago(29.0));
    add(&store, "tip", "cli", ago(29.0), Some("root"));
    message(&store, "tip", "user", "old words", ago(20.0));
    add(&store, "root2", "cli", ago(30.0), None);
    end(&store, "root2", "compression", ago(29.0));
    add(&store, "tip2", "cli", ago(29.0), Some("root2"));
    message(&store, "tip2", "user", "new words", ago(1.0));
    add(&store, "parent", "cli", ago(2.0), None);
    add(&store, "kid", "cli", ago(10.0), Some("parent"));
    add(&store, "pinned", "cli", ago(10.0), None);
    set(&store, "pinned", "pinned", Sql::Integer(1));
    add(&store, "gone", "cli", ago(10.0), None);
    set(&store, "gone", "archived", Sql::Integer(1));
    add(&store, "live_old", "cli", ago(10.0), None);
    add(&store, "ended_recently", "cli", ago(10.0), None);
    end(&store, "ended_recently", "user_exit", ago(1.0));
    let first = ["ended_recently", "gone", "kid", "live_old", "root", "tip"];
    let cases: [(f64, bool, usize, &[&str]); 4] = [
        (7.0, true, 4, &first),
        (7.0, true, 0, &first),
        (
            7.0,
            false,
            1,
            &[
                "ended_recently",
                "gone",
                "kid",
                "live_old",
                "pinned",
                "root",
                "tip",
            ],
        ),
        (
            0.0,
            false,
            2,
            &[
                "ended_recently",
                "gone",
                "kid",
                "live_old",
                "parent",
                "pinned",
                "root",
                "root2",
                "tip",
                "tip2",
            ],
        ),
    ];
    for (n, (days, exclude_pinned, count, archived)) in cases.into_iter().enumerate() {
        assert_eq!(
            store
                .db
                .archive_stale_sessions(days, exclude_pinned)
                .unwrap(),
            count,
            "case {n}"
        );
        let rows = store.rows("SELECT id FROM sessions WHERE archived = 1 ORDER BY id", []);
        let ids: Vec<Sql> = archived.iter().map(|id| t(id)).collect();
        assert_eq!(rows.concat(), ids, "case {n}");
    }
}

/// The forward compression chain of the last-activity order (and of
/// `id_query` / `search_query`) leaves out branch, delegate and `tool`
/// children, as the original's. Measured on the original.
#[test]
fn the_chain_leaves_tool_and_branch_children_out() {
    let store = Store::new();
    add(&store, "root", "cli", 100.0, None);
    message(&store, "root", "user", "root q", 101.0);
    end(&store, "root", "compression", 102.0);
    add(&store, "cont", "cli", 103.0, Some("root"));
    message(&store, "cont", "user", "cont q", 110.0);
    end(&store, "cont", "compression", 111.0);
    add(&store, "toolkid", "tool", 112.0, Some("cont"));
    message(&store, "toolkid", "user", "tool q", 900.0);
    add(&store, "tip", "cli", 113.0, Some("cont"));
    message(&store, "tip", "user", "tip q", 120.0);
    add(&store, "branchy", "cli", 114.0, Some("cont"));
    set(
        &store,
        "branchy",
        "model_config",
        t(r#"{"_branched_from": "cont"}"#),
    );
    message(&store, "branchy", "user", "b", 800.0);
    add(&store, "other", "cli", 200.0, None);
    message(&store, "other", "user", "other q", 300.0);
    add(&store, "stale_kid", "cli", 50.0, Some("other"));
    type Row = (String, Option<String>, f64, String);
    let row = |id: &str, root: Option<&str>, at: f64, preview: &str| -> Row {
        (id.into(), root.map(Into::into), at, preview.into())
    };
    let tip = row("tip", Some("root"), 120.0, "tip q");
    let by_activity = RichListOptions {
        order_by_last_active: true,
        ..Default::default()
    };
    let cases: Vec<(RichListOptions, Vec<Row>)> = vec![
        (
            by_activity.clone(),
            vec![
                row("branchy", None, 800.0, "b"),
                row("other", None, 300.0, "other q"),
                tip.clone(),
            ],
        ),
        (
            RichListOptions {
                id_query: Some("toolkid".into()),
                ..by_activity.clone()
            },
            vec![],
        ),
        (
            RichListOptions {
                id_query: Some("TIP".into()),
                ..by_activity.clone()
            },
            vec![tip.clone()],
        ),
        (
            RichListOptions {
                search_query: Some("branchy".into()),
                ..by_activity.clone()
            },
            vec![row("branchy", None, 800.0, "b")],
        ),
        (
            RichListOptions {
                source: Some("cli".into()),
                id_query: Some("tip".into()),
                ..by_activity.clone()
            },
            vec![tip.clone()],
        ),
        (
            RichListOptions {
                include_children: true,
                project_compression_tips: false,
                limit: 3,
                ..by_activity.clone()
            },
            vec![
                row("toolkid", None, 900.0, "tool q"),
                row("branchy", None, 800.0, "b"),
                row("other", None, 300.0, "other q"),
            ],
        ),
    ];
    for (n, (options, expected)) in cases.into_iter().enumerate() {
        let got: Vec<Row> = rich(&store, options)
            .into_iter()
            .map(|r| (r.session.id, r.lineage_root_id, r.last_active, r.preview))
            .collect();
        assert_eq!(got, expected, "case {n}");
    }
}
