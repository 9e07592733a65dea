//! `session_count` with every filter of the original (`api.md` §2.4),
//! through the seam: archived sessions are left out by default, and
//! `exclude_children` counts what the picker lists. The expected counts are
//! the original's answers on the same store.

use hermes_state_core::sessions::SessionCountOptions;
use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;
use crate::build::child_from;
use crate::build::say;

pub fn session_count_takes_the_originals_filters_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("r1", "cli"), 1.0);
    s.update_session_cwd("r1", "/home/ana/src/hermes", None, None)
        .unwrap();
    b.add(NewSession::new("r2", "telegram"), 2.0);
    s.update_session_cwd("r2", "/home/ana/src/hermes/sub", None, None)
        .unwrap();
    b.add(NewSession::new("r3", "cron"), 3.0);
    b.add(NewSession::new("r4", "cli"), 4.0);
    s.update_session_cwd("r4", "/home/ana/src/hermes2", None, None)
        .unwrap();
    say(&*b, "r1", "a", 1.1);
    say(&*b, "r1", "b", 1.2);
    say(&*b, "r2", "c", 2.1);
    s.end_session("r1", "compression").unwrap();
    // A compression continuation (inherits the parent's cwd).
    b.add(child_from("c1", "cli", "r1"), 6.0);
    say(&*b, "c1", "d", 6.1);
    // A branch child by its marker, and one by its parent's end.
    let mut b1 = child_from("b1", "cli", "r3");
    b1.model_config = Some(json!({"_branched_from": "r3"}));
    b.add(b1, 7.0);
    b.add(NewSession::new("p2", "cli"), 8.0);
    s.end_session("p2", "branched").unwrap();
    b.exec("UPDATE sessions SET ended_at = 9.0 WHERE id = 'p2'");
    b.add(child_from("b2", "cli", "p2"), 10.0);
    // A delegate child and a plain child: not listable.
    let mut d1 = child_from("d1", "telegram", "r1");
    d1.model_config = Some(json!({"_delegate_from": "r1"}));
    b.add(d1, 11.0);
    b.add(child_from("x", "cli", "r4"), 12.0);
    b.exec("UPDATE sessions SET archived = 1 WHERE id IN ('r2', 'r4', 'b1')");

    let options = |f: &dyn Fn(&mut SessionCountOptions)| {
        let mut options = SessionCountOptions::default();
        f(&mut options);
        options
    };
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let cases: Vec<(SessionCountOptions, i64)> = vec![
        (SessionCountOptions::default(), 7),
        (SessionCountOptions::all(), 10),
        (options(&|o| o.archived_only = true), 3),
        (
            options(&|o| {
                o.archived_only = true;
                o.exclude_children = true;
            }),
            3,
        ),
        (options(&|o| o.source = Some("cli".into())), 5),
        (
            options(&|o| {
                o.source = Some("telegram".into());
                o.include_archived = true;
                o.exclude_sources = strings(&["cron"]);
            }),
            2,
        ),
        (
            options(&|o| o.exclude_sources = strings(&["cron", "telegram"])),
            5,
        ),
        (
            options(&|o| o.cwd_prefix = Some("/home/ana/src/hermes".into())),
            3,
        ),
        (
            options(&|o| {
                o.cwd_prefix = Some("/home/ana/src/hermes/".into());
                o.include_archived = true;
            }),
            4,
        ),
        (options(&|o| o.min_message_count = 1), 2),
        (
            options(&|o| {
                o.min_message_count = 1;
                o.include_archived = true;
            }),
            3,
        ),
        (options(&|o| o.exclude_children = true), 4),
        (
            options(&|o| {
                o.exclude_children = true;
                o.include_archived = true;
            }),
            7,
        ),
        (
            options(&|o| {
                o.source = Some("cli".into());
                o.cwd_prefix = Some("/home/ana/src/hermes".into());
                o.min_message_count = 1;
                o.exclude_children = true;
                o.exclude_sources = strings(&["cron"]);
            }),
            1,
        ),
        (options(&|o| o.source = Some(String::new())), 7),
        (options(&|o| o.min_message_count = -3), 7),
        (
            options(&|o| {
                o.archived_only = true;
                o.min_message_count = 1;
            }),
            1,
        ),
    ];
    for (options, want) in cases {
        assert_eq!(s.session_count(&options).unwrap(), want, "{n}: {options:?}");
    }
}
