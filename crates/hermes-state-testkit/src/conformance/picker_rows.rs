//! The picker's rows (`list_sessions_rich`, `api.md` §10.3) through the
//! seam: the preview, which children show, every filter, a compressed
//! root shown as its tip, and the forward compression chain the
//! last-activity order follows.

use hermes_state_core::rich_listing::{RichListOptions, RichSession};
use hermes_state_types::Content;
use hermes_state_types::NewSession;
use serde_json::json;

use super::{Backend, TestStore};
use crate::build::{child, child_from, say, say_as};

fn listed(b: &TestStore, options: RichListOptions) -> Vec<RichSession> {
    b.store.list_sessions_rich(&options).unwrap()
}

fn ids(rows: &[RichSession]) -> Vec<&str> {
    rows.iter().map(|row| row.session.id.as_str()).collect()
}

fn by_activity() -> RichListOptions {
    RichListOptions {
        order_by_last_active: true,
        ..RichListOptions::default()
    }
}

/// The first user message, on one line, cut after 60 characters; the
/// last activity is the newest message.
pub fn a_preview_is_the_first_user_message_on_one_line_of_sixty_characters_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let n = b.name();
    let long =
        "  first line\nsecond line with a lot more words to exceed sixty characters total ok  ";
    let cases = [
        (
            "p1",
            long.to_owned(),
            "first line second line with a lot more words to exceed sixty".to_owned(),
        ),
        ("p2", "x".repeat(60), "x".repeat(60)),
        ("p3", "y".repeat(61), format!("{}...", "y".repeat(60))),
        ("p4", "a\r\nb".to_owned(), "a  b".to_owned()),
    ];
    for (i, (id, text, _)) in cases.iter().enumerate() {
        b.add(NewSession::new(*id, "cli"), i as f64);
        say_as(&*b, id, "assistant", "not me", 0.5);
        say(&*b, id, text.as_str(), 1.0);
        say(&*b, id, "later", 2.0);
    }
    b.add(NewSession::new("none", "cli"), 9.0);
    say_as(&*b, "none", "assistant", "only the assistant", 1.0);
    b.add(NewSession::new("mm", "cli"), 10.0);
    let parts = Content::Structured(json!([{"type": "text", "text": "hi"}]));
    say(&*b, "mm", parts, 1.0);
    let rows = listed(&b, RichListOptions::default());
    let row = |id: &str| rows.iter().find(|row| row.session.id == id).unwrap();
    for (id, _, preview) in &cases {
        assert_eq!(&row(id).preview, preview, "{n}: {id}");
        assert_eq!(row(id).last_active, 2.0, "{n}: {id}");
    }
    assert_eq!(row("none").preview, "", "{n}");
    assert_eq!(
        (rows[0].session.id.as_str(), rows[0].preview.as_str()),
        ("mm", ""),
        "{n}"
    );
}

/// Children show only when asked, except branches: a child with a branch
/// marker, or started after its parent ended by branching. A delegate
/// without a parent is hidden too.
pub fn children_show_only_when_asked_except_branches_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    let marked =
        |id: &str, key: &str, value: &str| child(id, "root").model_config(json!({ key: value }));
    b.add(NewSession::new("root", "cli"), 1.0);
    b.exec("UPDATE sessions SET end_reason = 'branched', ended_at = 5.0 WHERE id = 'root'");
    b.add(marked("branch_marker", "_branched_from", "root"), 2.0);
    b.add(child("branch_late", "root"), 6.0);
    b.add(child("early_child", "root"), 3.0);
    b.add(marked("delegate", "_delegate_from", "root"), 7.0);
    let mut delegate_root = NewSession::new("delegate_root", "cli");
    delegate_root.model_config = Some(json!({"_delegate_from": "x"}));
    b.add(delegate_root, 8.0);
    assert_eq!(
        ids(&listed(&b, RichListOptions::default())),
        ["branch_late", "branch_marker", "root"],
        "{n}"
    );
    let all = RichListOptions {
        include_children: true,
        ..RichListOptions::default()
    };
    assert_eq!(
        ids(&listed(&b, all)),
        [
            "delegate_root",
            "delegate",
            "branch_late",
            "early_child",
            "branch_marker",
            "root"
        ],
        "{n}"
    );
}

pub fn the_picker_filters_by_source_folder_count_archive_and_ids_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    for (i, (id, source, cwd)) in [
        ("w", "cli", Some("/w")),
        ("w_sub", "telegram", Some("/w/sub")),
        ("w_win", "cron", Some("/w\\win")),
        ("wx", "cli", Some("/wx")),
        ("arch", "cli", None),
    ]
    .into_iter()
    .enumerate()
    {
        let mut session = NewSession::new(id, source);
        session.cwd = cwd.map(Into::into);
        b.add(session, 1.0 + i as f64);
    }
    s.set_session_archived("arch", true).unwrap();
    say(&*b, "w", "needle in here", 1.5);
    say_as(&*b, "w", "assistant", "two", 1.6);
    s.set_session_title("wx", Some("Needle title")).unwrap();
    let list = |options: RichListOptions| -> Vec<String> {
        listed(&b, options)
            .into_iter()
            .map(|row| row.session.id)
            .collect()
    };
    let d = RichListOptions::default;
    let every = ["wx", "w_win", "w_sub", "w"];
    assert_eq!(list(d()), every, "{n}");
    let cases: Vec<(RichListOptions, &[&str])> = vec![
        (
            RichListOptions {
                source: Some("cli".into()),
                ..d()
            },
            &["wx", "w"],
        ),
        (
            RichListOptions {
                exclude_sources: vec!["cli".into(), "cron".into()],
                ..d()
            },
            &["w_sub"],
        ),
        (
            RichListOptions {
                min_message_count: 2,
                ..d()
            },
            &["w"],
        ),
        (
            RichListOptions {
                archived_only: true,
                ..d()
            },
            &["arch"],
        ),
        (
            RichListOptions {
                include_archived: true,
                limit: 2,
                offset: 0,
                ..d()
            },
            &["arch", "wx"],
        ),
        (
            RichListOptions {
                limit: 2,
                offset: 3,
                ..d()
            },
            &["w"],
        ),
        // The id and search filters apply only in the last-activity
        // order; elsewhere they are ignored.
        (
            RichListOptions {
                id_query: Some("W_".into()),
                ..d()
            },
            &every,
        ),
        (
            RichListOptions {
                search_query: Some("NEEDLE".into()),
                ..d()
            },
            &every,
        ),
        (
            RichListOptions {
                id_query: Some(" W_ ".into()),
                ..by_activity()
            },
            &["w_win", "w_sub"],
        ),
        // Titles and ids, never message text.
        (
            RichListOptions {
                search_query: Some("NEEDLE".into()),
                ..by_activity()
            },
            &["wx"],
        ),
    ];
    for prefix in ["/w", "/w/", "/w//"] {
        let options = RichListOptions {
            cwd_prefix: Some(prefix.into()),
            ..d()
        };
        assert_eq!(list(options), ["w_win", "w_sub", "w"], "{n}: {prefix}");
    }
    for (options, want) in cases {
        assert_eq!(list(options.clone()), want, "{n}: {options:?}");
    }
}

/// A compressed root is listed as its tip, keeping the root's start; its
/// last activity is the chain's newest message.
pub fn a_compressed_root_is_listed_as_its_tip_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    b.add(NewSession::new("root", "cli"), 100.0);
    say(&*b, "root", "root question", 101.0);
    b.add(child("tip", "root"), 160.0);
    say(&*b, "tip", "tip question", 170.0);
    b.add(NewSession::new("other", "cli"), 120.0);
    b.exec(
        "UPDATE sessions SET title = 'Base', model = 'm1', end_reason = 'compression', \
         ended_at = 150.0 WHERE id = 'root'; \
         UPDATE sessions SET title = 'Base #2', model = 'm2', cwd = '/tip' WHERE id = 'tip'",
    );
    let rows = listed(&b, RichListOptions::default());
    assert_eq!(ids(&rows), ["other", "tip"], "{n}");
    let tip = &rows[1];
    let session = &tip.session;
    assert_eq!(session.started_at, 100.0, "{n}: the root's start is kept");
    assert_eq!(
        (
            session.title.as_deref(),
            session.model.as_deref(),
            session.cwd.as_deref()
        ),
        (Some("Base #2"), Some("m2"), Some("/tip")),
        "{n}"
    );
    assert_eq!(
        (
            session.end_reason.as_deref(),
            session.ended_at,
            session.message_count
        ),
        (None, None, Some(1)),
        "{n}"
    );
    assert_eq!(
        (tip.preview.as_str(), tip.last_active),
        ("tip question", 170.0),
        "{n}"
    );
    assert_eq!(tip.lineage_root_id.as_deref(), Some("root"), "{n}");
    let json = serde_json::to_value(tip).unwrap();
    let last = json.as_object().unwrap().iter().next_back().unwrap();
    assert_eq!(
        last,
        (&"_lineage_root_id".to_owned(), &json!("root")),
        "{n}"
    );
    // Without projection the root is listed as it is.
    let plain = listed(
        &b,
        RichListOptions {
            project_compression_tips: false,
            ..RichListOptions::default()
        },
    );
    assert_eq!(ids(&plain), ["other", "root"], "{n}");
    assert_eq!(plain[1].lineage_root_id, None, "{n}");
    let json = serde_json::to_value(&plain[1]).unwrap();
    assert!(json.get("_lineage_root_id").is_none(), "{n}");
    assert_eq!(ids(&listed(&b, by_activity())), ["tip", "other"], "{n}");
    say(&*b, "other", "newer", 200.0);
    assert_eq!(ids(&listed(&b, by_activity())), ["other", "tip"], "{n}");
}

/// The forward compression chain of the last-activity order (and of
/// `id_query` / `search_query`) leaves out branch, delegate and `tool`
/// children, as the original's. Measured on the original.
pub fn the_chain_leaves_tool_and_branch_children_out_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    for (session, at, said) in [
        (NewSession::new("root", "cli"), 100.0, ("root q", 101.0)),
        (child("cont", "root"), 103.0, ("cont q", 110.0)),
        (
            child_from("toolkid", "tool", "cont"),
            112.0,
            ("tool q", 900.0),
        ),
        (child("tip", "cont"), 113.0, ("tip q", 120.0)),
        (
            child("branchy", "cont").model_config(json!({"_branched_from": "cont"})),
            114.0,
            ("b", 800.0),
        ),
        (NewSession::new("other", "cli"), 200.0, ("other q", 300.0)),
    ] {
        let id = session.id.clone();
        b.add(session, at);
        say(&*b, &id, said.0, said.1);
    }
    b.add(child("stale_kid", "other"), 50.0);
    b.exec(
        "UPDATE sessions SET end_reason = 'compression', ended_at = 102.0 WHERE id = 'root'; \
         UPDATE sessions SET end_reason = 'compression', ended_at = 111.0 WHERE id = 'cont'",
    );
    type Row = (String, Option<String>, f64, String);
    let row = |id: &str, root: Option<&str>, at: f64, preview: &str| -> Row {
        (id.into(), root.map(Into::into), at, preview.into())
    };
    let tip = row("tip", Some("root"), 120.0, "tip q");
    let branchy = row("branchy", None, 800.0, "b");
    let other = row("other", None, 300.0, "other q");
    let cases: Vec<(RichListOptions, Vec<Row>)> = vec![
        (
            by_activity(),
            vec![branchy.clone(), other.clone(), tip.clone()],
        ),
        (
            RichListOptions {
                id_query: Some("toolkid".into()),
                ..by_activity()
            },
            vec![],
        ),
        (
            RichListOptions {
                id_query: Some("TIP".into()),
                ..by_activity()
            },
            vec![tip.clone()],
        ),
        (
            RichListOptions {
                search_query: Some("branchy".into()),
                ..by_activity()
            },
            vec![branchy.clone()],
        ),
        (
            RichListOptions {
                source: Some("cli".into()),
                id_query: Some("tip".into()),
                ..by_activity()
            },
            vec![tip],
        ),
        (
            RichListOptions {
                include_children: true,
                project_compression_tips: false,
                limit: 3,
                ..by_activity()
            },
            vec![row("toolkid", None, 900.0, "tool q"), branchy, other],
        ),
    ];
    for (i, (options, want)) in cases.into_iter().enumerate() {
        let got: Vec<Row> = listed(&b, options)
            .into_iter()
            .map(|r| (r.session.id, r.lineage_root_id, r.last_active, r.preview))
            .collect();
        assert_eq!(got, want, "{n}: case {i}");
    }
}
