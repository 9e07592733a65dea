//! Listings for dashboards and cleanups through the seam: every session by
//! last activity (`api.md` §10.1), the prune candidates and archiving them
//! (§10.4, §11.3), and the count of empty sessions (§11.6).

use hermes_state_core::prune::ArchiveSelection;
use hermes_state_core::prune::PruneCandidate;
use hermes_state_core::prune::PruneFilters;
use hermes_state_core::prune::PruneSelection;
use hermes_state_core::rich_listing::RichListOptions;
use hermes_state_core::rich_listing::RichSession;
use hermes_state_types::Content;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

use super::{Backend, TestStore};
use crate::build::child;
use crate::build::say;

fn add(b: &TestStore, id: &str, source: &str, started_at: f64) {
    b.store
        .create_session(&NewSession::new(id, source))
        .unwrap();
    b.set_started(id, started_at);
}

fn ids(rows: &[hermes_state_core::lookups::SessionActivity]) -> Vec<&str> {
    rows.iter().map(|r| r.session.id.as_str()).collect()
}

pub fn sessions_by_last_activity_and_empty_counts_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    add(&b, "a", "cli", 100.0);
    add(&b, "b", "telegram", 200.0);
    add(&b, "c", "cli", 300.0);
    add(&b, "d", "cli", 300.0);
    // Children and archived sessions are listed too.
    b.add(child("e", "a"), 250.0);
    s.set_session_archived("e", true).unwrap();
    s.append_message(
        &NewMessage::new("a", "user")
            .content("late")
            .timestamp(900.0),
    )
    .unwrap();

    let all = s.search_sessions(None, 10, 0).unwrap();
    // Activity first; equal starts by id, descending.
    assert_eq!(ids(&all), ["a", "d", "c", "e", "b"], "{n}");
    assert_eq!(
        (all[0].last_active, all[3].last_active, all[4].last_active),
        (900.0, 250.0, 200.0),
        "{n}"
    );
    assert_eq!(all[0].session.message_count, Some(1), "{n}");
    // Every session column, then `last_active`.
    let json = serde_json::to_value(&all[0]).unwrap();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    let edges = [keys[0], keys[keys.len() - 2], keys[keys.len() - 1]];
    assert_eq!(edges, ["id", "pinned", "last_active"], "{n}");
    assert_eq!(
        ids(&s.search_sessions(Some("cli"), 10, 0).unwrap()),
        ["a", "d", "c", "e"],
        "{n}"
    );
    assert_eq!(
        ids(&s.search_sessions(Some(""), 2, 1).unwrap()),
        ["d", "c"],
        "{n}"
    );
    assert!(
        s.search_sessions(Some("nope"), 10, 0).unwrap().is_empty(),
        "{n}"
    );

    // Empty: no message, ended, not archived.
    assert_eq!(s.count_empty_sessions().unwrap(), 0, "{n}");
    for id in ["a", "b", "c", "d"] {
        s.end_session(id, "user_exit").unwrap();
    }
    assert_eq!(s.count_empty_sessions().unwrap(), 3, "{n}");
    s.set_session_archived("b", true).unwrap();
    assert_eq!(s.count_empty_sessions().unwrap(), 2, "{n}");
}

pub fn prune_candidates_list_and_archive_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    add(&b, "old-a", "cli", 100.0);
    add(&b, "old-b", "telegram", 50.0);
    add(&b, "old-c", "cli", 150.0);
    add(&b, "live", "cli", 10.0);
    s.append_message(
        &NewMessage::new("old-a", "user")
            .content("hi")
            .timestamp(120.0),
    )
    .unwrap();
    for id in ["old-a", "old-b"] {
        s.end_session(id, "user_exit").unwrap();
    }
    // `old-c` was compressed into `cont`, which is still live.
    s.end_session("old-c", "compression").unwrap();
    b.add(child("cont", "old-c"), 160.0);
    let selection = |source: Option<&str>| PruneSelection {
        older_than_days: Some(1.0),
        source: source.map(str::to_owned),
        ..PruneSelection::default()
    };

    let listed = s.list_prune_candidates(&selection(None)).unwrap();
    // Ended only, oldest start first, the original's eight columns.
    assert_eq!(candidate_ids(&listed), ["old-b", "old-a", "old-c"], "{n}");
    assert_eq!(
        serde_json::to_value(&listed[0]).unwrap(),
        json!({
            "id": "old-b", "source": "telegram", "title": null, "model": null,
            "started_at": 50.0, "ended_at": listed[0].ended_at, "message_count": 0,
            "archived": 0
        }),
        "{n}"
    );
    assert_eq!(
        candidate_ids(&s.list_prune_candidates(&selection(Some("cli"))).unwrap()),
        ["old-a", "old-c"],
        "{n}"
    );

    s.set_session_archived("old-b", true).unwrap();
    // Not yet archived ones by default; each with its compression
    // lineage; the count is of the sessions selected.
    let archive = |source: Option<&str>| ArchiveSelection {
        older_than_days: Some(1.0),
        source: source.map(str::to_owned),
        ..ArchiveSelection::default()
    };
    assert_eq!(s.archive_sessions(&archive(Some("cli"))).unwrap(), 2, "{n}");
    let archived: Vec<i64> = ["old-a", "old-b", "old-c", "cont", "live"]
        .iter()
        .map(|id| s.get_session(id).unwrap().unwrap().archived)
        .collect();
    assert_eq!(archived, [1, 1, 1, 1, 0], "{n}");
    assert_eq!(s.archive_sessions(&archive(None)).unwrap(), 0, "{n}");
    // `archived: None` selects archived ones too.
    let both = ArchiveSelection {
        filters: PruneFilters {
            archived: None,
            ..PruneFilters::default()
        },
        ..ArchiveSelection::default()
    };
    assert_eq!(s.archive_sessions(&both).unwrap(), 3, "{n}");

    // Filters apply: only archived ones listed (no age bound by default).
    let archived_only = PruneSelection {
        filters: PruneFilters {
            archived: Some(true),
            ..PruneFilters::default()
        },
        ..PruneSelection::default()
    };
    assert_eq!(
        candidate_ids(&s.list_prune_candidates(&archived_only).unwrap()).len(),
        3,
        "{n}"
    );

    let bad = PruneSelection {
        older_than_days: Some(f64::NAN),
        ..PruneSelection::default()
    };
    assert_eq!(
        s.list_prune_candidates(&bad).unwrap_err().kind(),
        ErrorKind::InvalidInput,
        "{n}"
    );
    assert_eq!(
        s.archive_sessions(&ArchiveSelection {
            older_than_days: Some(f64::NAN),
            ..ArchiveSelection::default()
        })
        .unwrap_err()
        .kind(),
        ErrorKind::InvalidInput,
        "{n}"
    );
}

fn candidate_ids(rows: &[PruneCandidate]) -> Vec<&str> {
    rows.iter().map(|r| r.id.as_str()).collect()
}

fn listed(rows: &[RichSession]) -> Vec<&str> {
    rows.iter().map(|r| r.session.id.as_str()).collect()
}

pub fn picker_listing_filters_projects_and_orders_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    // `root` was compressed into `cont`, which holds the newest turn.
    add(&b, "root", "cli", 100.0);
    say(
        &*b,
        "root",
        Content::Text("first\nline of the root".into()),
        101.0,
    );
    s.end_session("root", "compression").unwrap();
    b.add(child("cont", "root"), 110.0);
    s.set_session_title("cont", Some("Continued")).unwrap();
    say(&*b, "cont", Content::Text("x".repeat(80)), 500.0);
    // A branch child and a delegate child of another root.
    add(&b, "main", "telegram", 200.0);
    say(
        &*b,
        "main",
        Content::Structured(json!([{"type": "text", "text": "image"}])),
        201.0,
    );
    b.add(child("branch", "main"), 210.0);
    s.update_session_meta("branch", Some(r#"{"_branched_from": "main"}"#), None)
        .unwrap();
    b.add(child("delegate", "main"), 220.0);
    s.update_session_meta("delegate", Some(r#"{"_delegate_from": "main"}"#), None)
        .unwrap();
    b.add(child("plain", "main"), 230.0);
    s.update_session_meta("plain", Some("{not json"), None)
        .unwrap();
    let mut work = NewSession::new("work_1", "cli");
    work.cwd = Some("/Work/app".into());
    s.create_session(&work).unwrap();
    b.set_started("work_1", 300.0);
    say(
        &*b,
        "work_1",
        Content::Text("  Deploy the APP  ".into()),
        301.0,
    );

    let list = |options: RichListOptions| s.list_sessions_rich(&options).unwrap();
    let all = list(RichListOptions::default());
    // Listable: roots and branch children; newest start first.
    assert_eq!(listed(&all), ["work_1", "branch", "main", "cont"], "{n}");
    let projected = &all[3];
    assert_eq!(projected.lineage_root_id.as_deref(), Some("root"), "{n}");
    assert_eq!(projected.session.started_at, 100.0, "{n}");
    assert_eq!(projected.session.title.as_deref(), Some("Continued"), "{n}");
    assert_eq!(projected.last_active, 500.0, "{n}");
    assert_eq!(projected.preview, format!("{}...", "x".repeat(60)), "{n}");
    assert_eq!(all[0].preview, "Deploy the APP", "{n}");
    // Structured content previews as nothing, as on SQLite (NUL first).
    assert_eq!(all[2].preview, "", "{n}");
    assert_eq!(all[1].lineage_root_id, None, "{n}");

    let unprojected = list(RichListOptions {
        project_compression_tips: false,
        ..RichListOptions::default()
    });
    assert_eq!(unprojected[3].session.id, "root", "{n}");
    assert_eq!(unprojected[3].preview, "first line of the root", "{n}");
    assert_eq!(
        listed(&list(RichListOptions {
            include_children: true,
            ..RichListOptions::default()
        })),
        [
            "work_1", "plain", "delegate", "branch", "main", "cont", "root"
        ],
        "{n}"
    );
    // By the newest activity of the forward chain: `root` has `cont`'s.
    assert_eq!(
        listed(&list(RichListOptions {
            order_by_last_active: true,
            ..RichListOptions::default()
        })),
        ["cont", "work_1", "branch", "main"],
        "{n}"
    );
    assert_eq!(
        listed(&list(RichListOptions {
            limit: 2,
            offset: 1,
            ..RichListOptions::default()
        })),
        ["branch", "main"],
        "{n}"
    );

    // Filters.
    let by = |options: RichListOptions| listed(&list(options)).join(",");
    assert_eq!(
        by(RichListOptions {
            source: Some("telegram".into()),
            ..RichListOptions::default()
        }),
        "main",
        "{n}"
    );
    assert_eq!(
        by(RichListOptions {
            exclude_sources: vec!["telegram".into(), "x".into()],
            ..RichListOptions::default()
        }),
        "work_1,branch,cont",
        "{n}"
    );
    assert_eq!(
        by(RichListOptions {
            cwd_prefix: Some("/work/".into()),
            ..RichListOptions::default()
        }),
        "work_1",
        "{n}"
    );
    assert_eq!(
        by(RichListOptions {
            min_message_count: 1,
            ..RichListOptions::default()
        }),
        "work_1,main,cont",
        "{n}"
    );
    // The id and search filters apply only in the last-activity order,
    // as the original; elsewhere they are ignored.
    for (id_query, search_query) in [(Some("K_1"), None), (None, Some("deploy"))] {
        assert_eq!(
            by(RichListOptions {
                id_query: id_query.map(Into::into),
                search_query: search_query.map(Into::into),
                ..RichListOptions::default()
            }),
            "work_1,branch,main,cont",
            "{n}"
        );
    }
    s.set_session_title("branch", Some("AN-94 rifle")).unwrap();
    // Over the forward compression chain: `root`'s chain holds `cont`.
    // Ids (`_` literal) for `id_query`; ids and titles (also without
    // punctuation) for `search_query`, never message text.
    for (id_query, search_query, expected) in [
        (Some(" K_1 "), None, "work_1"),
        (Some("n_"), None, ""),
        (Some("ROOT"), None, "cont"),
        (Some("cont"), None, "cont"),
        (None, Some("deploy"), ""),
        (None, Some("CONTINUED"), "cont"),
        (None, Some("root"), "cont"),
        (None, Some("an94"), "branch"),
        (None, Some("AN-94 R"), "branch"),
        (None, Some("image"), ""),
        (Some("o"), Some("continued"), "cont"),
    ] {
        assert_eq!(
            by(RichListOptions {
                id_query: id_query.map(Into::into),
                search_query: search_query.map(Into::into),
                order_by_last_active: true,
                ..RichListOptions::default()
            }),
            expected,
            "{n}: {id_query:?} {search_query:?}"
        );
    }
    s.set_session_archived("work_1", true).unwrap();
    assert_eq!(listed(&list(RichListOptions::default())).len(), 3, "{n}");
    assert_eq!(
        by(RichListOptions {
            archived_only: true,
            ..RichListOptions::default()
        }),
        "work_1",
        "{n}"
    );
    assert_eq!(
        listed(&list(RichListOptions {
            include_archived: true,
            ..RichListOptions::default()
        }))
        .len(),
        4,
        "{n}"
    );

    // Compact rows leave the system prompt out.
    s.update_system_prompt("main", "secret prompt").unwrap();
    let full = list(RichListOptions::default());
    let compact = list(RichListOptions {
        compact_rows: true,
        ..RichListOptions::default()
    });
    assert_eq!(
        full[1].session.system_prompt.as_deref(),
        Some("secret prompt"),
        "{n}"
    );
    assert_eq!(compact[1].session.system_prompt, None, "{n}");
    let json = serde_json::to_value(&compact[1]).unwrap();
    assert!(json.get("system_prompt").is_none(), "{n}");
    assert_eq!(json["id"], "main", "{n}");
    let json = serde_json::to_value(&full[1]).unwrap();
    assert_eq!(json["system_prompt"], "secret prompt", "{n}");
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys[keys.len() - 2..], ["last_active", "preview"], "{n}");
}
