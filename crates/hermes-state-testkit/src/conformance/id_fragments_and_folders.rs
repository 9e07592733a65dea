//! Finding sessions by a fragment of their id and counting the working
//! directories (`api.md` §10.4), as the original answers.

use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;
use crate::build::say;

pub fn working_directories_are_counted_with_their_last_activity_in_byte_order_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    for (i, cwd) in [
        Some("/b"),
        Some("/a"),
        Some("/a"),
        Some(""),
        None,
        Some("/B"),
        Some("  "),
    ]
    .into_iter()
    .enumerate()
    {
        let mut session = NewSession::new(format!("s{i}"), "cli");
        session.cwd = cwd.map(String::from);
        b.add(session, i as f64);
    }
    let mut archived = NewSession::new("old", "cli");
    archived.cwd = Some("/z".into());
    b.add(archived, 10.0);
    assert!(s.set_session_archived("old", true).unwrap(), "{n}");
    // The original's rows: each cwd that is not NULL and not only
    // spaces, its session count and newest `COALESCE(ended_at,
    // started_at, 0)`, in byte order.
    let cwds = |archived| {
        s.distinct_session_cwds(archived)
            .unwrap()
            .into_iter()
            .map(|c| (c.cwd, c.sessions, c.last_active))
            .collect::<Vec<_>>()
    };
    let live = vec![
        ("/B".to_owned(), 1, 5.0),
        ("/a".to_owned(), 2, 2.0),
        ("/b".to_owned(), 1, 0.0),
    ];
    assert_eq!(cwds(false), live, "{n}");
    assert_eq!(
        serde_json::to_value(s.distinct_session_cwds(false).unwrap()).unwrap()[0],
        json!({"cwd": "/B", "sessions": 1, "last_active": 5.0}),
        "{n}"
    );
    let mut all = live;
    all.push(("/z".to_owned(), 1, 10.0));
    assert_eq!(cwds(true), all, "{n}");
}

/// The original's `search_sessions_by_id`: the picker's rows by last
/// activity whose chain holds the (trimmed, lower-cased) fragment, ranked
/// exact id, then prefix, then the rest; a projected chain matches by its
/// root too. Expected rows measured on the original.
pub fn sessions_are_found_by_id_fragment_ranked_as_the_original_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    for (id, at) in [
        ("abc-1", 1.0),
        ("xABC-2", 2.0),
        ("x%y", 3.0),
        ("abd", 4.0),
        ("abc-3", 5.0),
        ("abc-10", 6.0),
        ("zabc-1", 20.0),
        ("old-root", 30.0),
        ("zab_x", 0.5),
    ] {
        b.add(NewSession::new(id, "cli"), at);
    }
    say(&*b, "abc-1", "late", 9.0);
    assert!(s.set_session_archived("abc-3", true).unwrap(), "{n}");
    s.end_session("old-root", "compression").unwrap();
    let mut tip = NewSession::new("new-tip", "cli");
    tip.parent_session_id = Some("old-root".into());
    b.add(tip, 32.0);
    say(&*b, "new-tip", "tip words", 40.0);
    type Found = Vec<(String, f64, Option<String>, String)>;
    let found = |query: &str, limit: u32, archived: bool| -> Found {
        s.search_sessions_by_id(query, limit, archived)
            .unwrap()
            .into_iter()
            .map(|row| {
                (
                    row.session.id,
                    row.last_active,
                    row.lineage_root_id,
                    row.preview,
                )
            })
            .collect()
    };
    let row = |id: &str, at: f64| (id.to_owned(), at, None, String::new());
    let abc_1 = ("abc-1".to_owned(), 9.0, None, "late".to_owned());
    let tip_row = (
        "new-tip".to_owned(),
        40.0,
        Some("old-root".to_owned()),
        "tip words".to_owned(),
    );
    let cases: [(&str, u32, bool, Found); 11] = [
        ("ab_", 10, true, vec![row("zab_x", 0.5)]),
        (
            "abc",
            10,
            false,
            vec![
                abc_1.clone(),
                row("abc-10", 6.0),
                row("zabc-1", 20.0),
                row("xABC-2", 2.0),
            ],
        ),
        ("ABC", 2, true, vec![abc_1.clone(), row("abc-10", 6.0)]),
        ("%", 10, true, vec![row("x%y", 3.0)]),
        ("", 10, true, vec![]),
        ("abc", 0, true, vec![]),
        (
            "abc-1",
            10,
            true,
            vec![abc_1.clone(), row("abc-10", 6.0), row("zabc-1", 20.0)],
        ),
        (" ABC-1 ", 2, true, vec![abc_1.clone(), row("abc-10", 6.0)]),
        ("old-root", 10, true, vec![tip_row.clone()]),
        ("tip", 10, true, vec![tip_row.clone()]),
        ("root", 10, true, vec![tip_row.clone()]),
    ];
    for (query, limit, archived, expected) in cases {
        assert_eq!(
            found(query, limit, archived),
            expected,
            "{n}: {query:?} {limit} {archived}"
        );
    }
}
