//! The end-of-life sweeps through the seam (`api.md` §2.5, §11.4):
//! promoting an end to a session reset, finalizing orphaned compressions,
//! deleting ghost sessions, archiving idle sessions (by hand and by the
//! automatic run), and the automatic archive and prune runs with
//! their `state_meta` time stamps. Times are relative to the real clock.
//! One declared difference: PostgreSQL never vacuums (`vacuumed` stays
//! `false`; docs/DECISIONS.md).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state_core::SessionStore;
use hermes_state_core::cleanup::AutoArchiveOptions;
use hermes_state_core::cleanup::AutoPruneOptions;
use hermes_state_core::clock::{Clock, FixedClock};
use hermes_state_types::ErrorKind;
use hermes_state_types::NewSession;
use hermes_state_types::TokenUpdate;

use super::Backend;
use crate::build::child_from;
use crate::build::say;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn days_ago(days: f64) -> f64 {
    now() - days * 86_400.0
}

fn end_of(s: &dyn SessionStore, id: &str) -> (Option<f64>, Option<String>) {
    let row = s.get_session(id).unwrap().unwrap();
    (row.ended_at, row.end_reason)
}

fn exists(s: &dyn SessionStore, id: &str) -> bool {
    s.get_session(id).unwrap().is_some()
}

/// A `state_meta` time stamp, checked to lie in `[from, to]`.
fn stamp_between(s: &dyn SessionStore, key: &str, from: f64, to: f64) -> bool {
    let text = s.get_meta(key).unwrap().expect("a time stamp");
    let at: f64 = text.parse().expect("a number");
    from <= at && at <= to
}

pub fn an_end_is_promoted_to_a_session_reset_only_from_live_or_a_cleanup_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    for (id, reason) in [
        ("live", None),
        ("closed", Some("agent_close")),
        ("reaped", Some("ws_orphan_reap")),
        ("exited", Some("user_exit")),
    ] {
        b.add(NewSession::new(id, "telegram"), 1.0);
        if let Some(reason) = reason {
            s.end_session(id, reason).unwrap();
        }
    }
    let exited = end_of(s, "exited");
    let before = now();
    assert!(s.promote_to_session_reset("live", "session_reset"), "{n}");
    assert!(s.promote_to_session_reset("closed", "idle_timeout"), "{n}");
    assert!(s.promote_to_session_reset("reaped", "session_reset"), "{n}");
    assert!(
        !s.promote_to_session_reset("exited", "session_reset"),
        "{n}"
    );
    for nobody in ["nobody", ""] {
        assert!(!s.promote_to_session_reset(nobody, "session_reset"), "{n}");
    }
    let after = now();
    for (id, reason) in [
        ("live", "session_reset"),
        ("closed", "idle_timeout"),
        ("reaped", "session_reset"),
    ] {
        let (ended_at, end_reason) = end_of(s, id);
        assert_eq!(end_reason.as_deref(), Some(reason), "{n}: {id}");
        let ended_at = ended_at.unwrap();
        assert!(before <= ended_at && ended_at <= after, "{n}: {id}");
    }
    assert_eq!(end_of(s, "exited"), exited, "{n}: a user's end stays");
    // A reset is not promoted again: it is neither live nor a cleanup's end.
    assert!(!s.promote_to_session_reset("live", "other"), "{n}");
    // Never fails: a read-only handle says `false` and writes nothing.
    let reader = b.read_only();
    b.add(NewSession::new("later", "telegram"), 2.0);
    assert!(
        !reader.promote_to_session_reset("later", "session_reset"),
        "{n}"
    );
    assert_eq!(end_of(s, "later"), (None, None), "{n}");
}

pub fn only_week_old_silent_compression_continuations_with_messages_are_finalized_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    b.add(NewSession::new("root", "cli"), days_ago(10.0));
    s.end_session("root", "compression").unwrap();
    b.add(NewSession::new("plain", "cli"), days_ago(10.0));
    s.end_session("plain", "user_exit").unwrap();
    b.add(NewSession::new("root_live", "cli"), days_ago(30.0));
    for (id, parent, age) in [
        ("orphan", "root", 8.0),
        ("orphan2", "root", 30.0),
        ("young", "root", 6.0),
        ("called", "root", 8.0),
        ("silent", "root", 8.0),
        ("ended", "root", 8.0),
        ("plain_kid", "plain", 8.0),
    ] {
        b.add(child_from(id, "cli", parent), days_ago(age));
        if id != "silent" {
            say(&*b, id, "continued", days_ago(age) + 1.0);
        }
    }
    let called = TokenUpdate {
        api_call_count: 1,
        ..TokenUpdate::default()
    };
    s.update_token_counts("called", &called).unwrap();
    s.end_session("ended", "user_exit").unwrap();
    let ended = end_of(s, "ended");

    let before = now();
    assert_eq!(
        s.finalize_orphaned_compression_sessions().unwrap(),
        2,
        "{n}"
    );
    let after = now();
    for id in ["orphan", "orphan2"] {
        assert!(b.columns(id, &["ended_at"])[0].is_f64(), "{n}: a REAL");
        let (ended_at, reason) = end_of(s, id);
        assert_eq!(reason.as_deref(), Some("orphaned_compression"), "{n}");
        let ended_at = ended_at.unwrap();
        assert!(before <= ended_at && ended_at <= after, "{n}");
    }
    for id in ["young", "called", "silent", "plain_kid", "root_live"] {
        assert_eq!(end_of(s, id), (None, None), "{n}: {id} stays live");
    }
    assert_eq!(end_of(s, "ended"), ended, "{n}");
    assert_eq!(
        s.finalize_orphaned_compression_sessions().unwrap(),
        0,
        "{n}"
    );
}

pub fn ghost_tui_sessions_go_with_their_transcripts_children_orphaned_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    let old = days_ago(2.0);
    for (id, source, started) in [
        ("ghost", "tui", old),
        ("ghost_parent", "tui", days_ago(40.0)),
        ("recent", "tui", days_ago(0.5)),
        ("titled", "tui", old),
        ("talked", "tui", old),
        ("open", "tui", old),
        ("cli_ghost", "cli", old),
    ] {
        b.add(NewSession::new(id, source), started);
        if id != "open" {
            s.end_session(id, "user_exit").unwrap();
        }
    }
    s.set_session_title("titled", Some("Named")).unwrap();
    say(&*b, "talked", "hi", old + 1.0);
    b.add(child_from("kid", "cli", "ghost_parent"), old + 2.0);
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "ghost.json",
        "ghost.jsonl",
        "ghost_parent.jsonl",
        "recent.json",
        "titled.json",
        "request_dump_ghost_1.json",
        "request_dump_ghostly_1.json",
    ] {
        std::fs::write(dir.path().join(name), "{}").unwrap();
    }

    assert_eq!(
        s.prune_empty_ghost_sessions(Some(dir.path())).unwrap(),
        2,
        "{n}"
    );
    assert!(!exists(s, "ghost") && !exists(s, "ghost_parent"), "{n}");
    for id in ["recent", "titled", "talked", "open", "cli_ghost", "kid"] {
        assert!(exists(s, id), "{n}: {id} kept");
    }
    assert_eq!(
        s.get_session("kid").unwrap().unwrap().parent_session_id,
        None,
        "{n}: orphaned"
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["recent.json", "request_dump_ghostly_1.json", "titled.json"],
        "{n}"
    );
    assert_eq!(s.prune_empty_ghost_sessions(None).unwrap(), 0, "{n}");
}

pub fn the_automatic_archive_runs_once_per_interval_and_reports_errors_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    b.add(NewSession::new("idle", "cli"), days_ago(10.0));
    b.add(NewSession::new("pinned", "cli"), days_ago(10.0));
    s.set_session_pinned("pinned", true).unwrap();
    b.add(NewSession::new("fresh", "cli"), days_ago(1.0));
    // An idle compressed conversation: the root is no candidate, its tip
    // is, and archiving the tip archives the root too.
    b.add(NewSession::new("root", "cli"), days_ago(12.0));
    s.end_session("root", "compression").unwrap();
    b.add(child_from("tip", "cli", "root"), days_ago(11.0));
    let ids = ["idle", "pinned", "fresh", "root", "tip"];
    let archived = || -> Vec<&str> {
        ids.into_iter()
            .filter(|id| s.get_session(id).unwrap().unwrap().archived == 1)
            .collect()
    };
    let options = AutoArchiveOptions::default();

    let before = now();
    let report = s.maybe_auto_archive(&options);
    let after = now();
    assert_eq!(
        (report.skipped, report.archived, report.error_kind),
        (false, 2, None),
        "{n}: {report:?}"
    );
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        serde_json::json!({"skipped": false, "archived": 2}),
        "{n}"
    );
    assert_eq!(archived(), ["idle", "root", "tip"], "{n}");
    assert!(stamp_between(s, "last_auto_archive", before, after), "{n}");

    // Within the interval: skipped, even with other options.
    let all = AutoArchiveOptions {
        exclude_pinned: false,
        ..AutoArchiveOptions::default()
    };
    let report = s.maybe_auto_archive(&all);
    assert_eq!((report.skipped, report.archived), (true, 0), "{n}");
    // An infinite interval always finds the last run recent.
    let forever = AutoArchiveOptions {
        min_interval_hours: f64::INFINITY,
        ..all.clone()
    };
    assert!(s.maybe_auto_archive(&forever).skipped, "{n}");

    // A stamp that is not a number counts as "never ran"; one Python's
    // `float()` reads counts.
    s.set_meta("last_auto_archive", " inf ").unwrap();
    assert!(s.maybe_auto_archive(&all).skipped, "{n}");
    s.set_meta("last_auto_archive", "yesterday").unwrap();
    let report = s.maybe_auto_archive(&all);
    assert_eq!((report.skipped, report.archived), (false, 1), "{n}");
    assert_eq!(archived(), ["idle", "pinned", "root", "tip"], "{n}");

    // A due run with a NaN or negative idle age archives nothing and
    // records the run, as the original.
    b.exec("UPDATE sessions SET archived = 0");
    for idle_days in [f64::NAN, -1.0] {
        s.set_meta("last_auto_archive", "1_000").unwrap();
        let report = s.maybe_auto_archive(&AutoArchiveOptions {
            idle_days,
            ..all.clone()
        });
        assert_eq!(
            (report.skipped, report.archived, report.error_kind),
            (false, 0, None),
            "{n}: {idle_days}"
        );
        assert_ne!(
            s.get_meta("last_auto_archive").unwrap().as_deref(),
            Some("1_000"),
            "{n}"
        );
    }
    assert_eq!(archived(), Vec::<&str>::new(), "{n}");

    // A read-only handle skips as a writer would, else reports, never
    // fails, and writes nothing.
    let reader = b.read_only();
    let report = reader.maybe_auto_archive(&options);
    assert_eq!((report.skipped, report.error_kind), (true, None), "{n}");
    s.set_meta("last_auto_archive", "0").unwrap();
    let report = reader.maybe_auto_archive(&options);
    assert_eq!(report.error_kind, Some(ErrorKind::ReadOnly), "{n}");
    assert_eq!(
        s.get_meta("last_auto_archive").unwrap().as_deref(),
        Some("0"),
        "{n}"
    );
    assert_eq!(archived(), Vec::<&str>::new(), "{n}");
}

pub fn the_automatic_prune_runs_once_per_interval_postgresql_without_vacuum(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    let old = days_ago(100.0);
    b.add(NewSession::new("old", "cli"), old);
    say(&*b, "old", "long ago", old + 1.0);
    s.end_session("old", "user_exit").unwrap();
    b.add(NewSession::new("old_parent", "cli"), old);
    s.end_session("old_parent", "compression").unwrap();
    b.add(child_from("live_kid", "cli", "old_parent"), old + 2.0);
    b.add(NewSession::new("old_live", "cli"), old);
    b.add(NewSession::new("new", "cli"), days_ago(1.0));
    s.end_session("new", "user_exit").unwrap();
    let dir = tempfile::tempdir().unwrap();
    for name in ["old.json", "new.json"] {
        std::fs::write(dir.path().join(name), "{}").unwrap();
    }
    let options = AutoPruneOptions {
        sessions_dir: Some(dir.path().to_path_buf()),
        ..AutoPruneOptions::default()
    };

    let before = now();
    let report = s.maybe_auto_prune_and_vacuum(&options);
    let after = now();
    assert_eq!(
        (report.skipped, report.pruned, report.error_kind),
        (false, 2, None),
        "{n}: {report:?}"
    );
    // The declared difference: only SQLite vacuums.
    assert_eq!(report.vacuumed, n == "sqlite", "{n}");
    assert!(!exists(s, "old") && !exists(s, "old_parent"), "{n}");
    for id in ["live_kid", "old_live", "new"] {
        assert!(exists(s, id), "{n}: {id}");
    }
    assert_eq!(
        s.get_session("live_kid")
            .unwrap()
            .unwrap()
            .parent_session_id,
        None,
        "{n}"
    );
    assert_eq!(s.message_count(None).unwrap(), 0, "{n}");
    assert!(!dir.path().join("old.json").exists(), "{n}");
    assert!(dir.path().join("new.json").exists(), "{n}");
    assert!(stamp_between(s, "last_auto_prune", before, after), "{n}");

    let report = s.maybe_auto_prune_and_vacuum(&options);
    assert_eq!(
        (report.skipped, report.pruned, report.vacuumed),
        (true, 0, false),
        "{n}"
    );

    // Due again with nothing to prune: ran, nothing pruned, no vacuum.
    let every_time = AutoPruneOptions {
        min_interval_hours: 0.0,
        ..AutoPruneOptions::default()
    };
    let report = s.maybe_auto_prune_and_vacuum(&every_time);
    assert_eq!(
        (report.skipped, report.pruned, report.vacuumed),
        (false, 0, false),
        "{n}"
    );
    let bad = AutoPruneOptions {
        retention_days: f64::NAN,
        ..every_time
    };
    let report = s.maybe_auto_prune_and_vacuum(&bad);
    assert_eq!(report.error_kind, Some(ErrorKind::InvalidInput), "{n}");
    let reader = b.read_only();
    // The last run is recent: a read-only handle skips as a writer would.
    let report = reader.maybe_auto_prune_and_vacuum(&AutoPruneOptions::default());
    assert_eq!((report.skipped, report.error_kind), (true, None), "{n}");
    s.set_meta("last_auto_prune", "0").unwrap();
    let report = reader.maybe_auto_prune_and_vacuum(&AutoPruneOptions::default());
    assert_eq!(report.error_kind, Some(ErrorKind::ReadOnly), "{n}");
    assert!(exists(s, "new"), "{n}");
}

/// The automatic runs by the store's clock: the last run's time is kept
/// as the original's float text, a run is due once the interval has
/// passed, an archive run takes the sessions idle by then.
pub fn the_automatic_runs_keep_the_originals_float_text_and_wait_out_the_interval_alike(
    backend: &dyn Backend,
) {
    const T0: f64 = 1_795_980_826.691_713_8;
    const HOUR: f64 = 3600.0;
    let clock = FixedClock::new(T0);
    let b = backend.open_clocked(Arc::clone(&clock));
    let s = &*b.store;
    let n = b.name();
    let add = |id: &str, days: f64, ended: bool| {
        b.add(NewSession::new(id, "cli"), clock.now() - days * 86_400.0);
        if ended {
            s.end_session(id, "user_exit").unwrap();
        }
    };
    add("old", 100.0, true);
    add("new", 1.0, true);
    let dir = tempfile::tempdir().unwrap();
    for name in ["old.json", "new.json"] {
        std::fs::write(dir.path().join(name), "{}").unwrap();
    }
    let options = AutoPruneOptions {
        sessions_dir: Some(dir.path().to_path_buf()),
        ..AutoPruneOptions::default()
    };
    let report = s.maybe_auto_prune_and_vacuum(&options);
    assert_eq!(
        (report.skipped, report.pruned, report.error.as_deref()),
        (false, 1, None),
        "{n}"
    );
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        serde_json::json!({"skipped": false, "pruned": 1, "vacuumed": n == "sqlite"}),
        "{n}"
    );
    assert!(!exists(s, "old") && exists(s, "new"), "{n}");
    assert!(!dir.path().join("old.json").exists(), "{n}");
    assert!(dir.path().join("new.json").exists(), "{n}");
    let first = Some("1795980826.6917138".to_owned());
    assert_eq!(stamp_of(s, "last_auto_prune"), first, "{n}");
    clock.advance(23.0 * HOUR);
    let report = s.maybe_auto_prune_and_vacuum(&options);
    assert_eq!(
        (report.skipped, report.pruned, report.vacuumed),
        (true, 0, false),
        "{n}"
    );
    assert_eq!(stamp_of(s, "last_auto_prune"), first, "{n}");
    clock.advance(HOUR);
    let report = s.maybe_auto_prune_and_vacuum(&options);
    assert_eq!(
        (report.skipped, report.pruned, report.vacuumed),
        (false, 0, false),
        "{n}"
    );
    assert_eq!(
        stamp_of(s, "last_auto_prune").as_deref(),
        Some("1796067226.6917138"),
        "{n}"
    );
    // A stamp that is not a number is "never ran".
    add("stale", 10.0, true);
    s.set_meta("last_auto_prune", "yesterday").unwrap();
    let fewer_days = AutoPruneOptions {
        retention_days: 5.0,
        vacuum: false,
        ..AutoPruneOptions::default()
    };
    let report = s.maybe_auto_prune_and_vacuum(&fewer_days);
    assert_eq!(
        (report.skipped, report.pruned, report.vacuumed),
        (false, 1, false),
        "{n}"
    );
    let bad = AutoPruneOptions {
        retention_days: f64::NAN,
        min_interval_hours: 0.0,
        ..AutoPruneOptions::default()
    };
    let report = serde_json::to_value(s.maybe_auto_prune_and_vacuum(&bad)).unwrap();
    assert!(report.get("error").is_some(), "{n}: {report}");
    s.set_meta("last_auto_prune", "0").unwrap();
    let report = b
        .read_only()
        .maybe_auto_prune_and_vacuum(&AutoPruneOptions::default());
    assert_eq!(report.error_kind, Some(ErrorKind::ReadOnly), "{n}");
    assert!(report.error.is_some(), "{n}");

    let clock = FixedClock::new(T0);
    let b = backend.open_clocked(Arc::clone(&clock));
    let s = &*b.store;
    for (id, days) in [
        ("idle", 5.0),
        ("pinned", 5.0),
        ("busy", 5.0),
        ("fresh", 1.0),
    ] {
        b.add(NewSession::new(id, "cli"), T0 - days * 86_400.0);
    }
    s.end_session("pinned", "user_exit").unwrap();
    s.set_session_pinned("pinned", true).unwrap();
    say(&*b, "busy", "recent activity", T0 - 86_400.0);
    let archived = || -> Vec<&str> {
        ["busy", "fresh", "idle", "pinned"]
            .into_iter()
            .filter(|id| s.get_session(id).unwrap().unwrap().archived == 1)
            .collect()
    };
    let report = s.maybe_auto_archive(&AutoArchiveOptions::default());
    assert_eq!(
        (report.skipped, report.archived, report.error.as_deref()),
        (false, 1, None),
        "{n}"
    );
    assert_eq!(archived(), ["idle"], "{n}");
    assert_eq!(stamp_of(s, "last_auto_archive"), first, "{n}");
    let all = AutoArchiveOptions {
        exclude_pinned: false,
        ..AutoArchiveOptions::default()
    };
    assert!(
        s.maybe_auto_archive(&all).skipped,
        "{n}: within the interval"
    );
    clock.advance(24.0 * HOUR);
    let report = s.maybe_auto_archive(&all);
    assert_eq!((report.skipped, report.archived), (false, 1), "{n}");
    assert_eq!(
        archived(),
        ["idle", "pinned"],
        "{n}: busy is idle for 2 days only"
    );
    clock.advance(24.0 * HOUR + 1.0);
    let report = s.maybe_auto_archive(&AutoArchiveOptions::default());
    assert_eq!((report.skipped, report.archived), (false, 2), "{n}");
    assert_eq!(archived(), ["busy", "fresh", "idle", "pinned"], "{n}");
}

fn stamp_of(s: &dyn SessionStore, key: &str) -> Option<String> {
    s.get_meta(key).unwrap()
}

pub fn idle_sessions_are_archived_pinned_ones_only_when_asked_alike(backend: &dyn Backend) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let days_ago = |days: f64| now - days * 86_400.0;
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("idle", "cli"), days_ago(10.0));
    b.add(NewSession::new("idle-pinned", "cli"), days_ago(10.0));
    assert!(s.set_session_pinned("idle-pinned", true).unwrap(), "{n}");
    b.add(NewSession::new("talked", "cli"), days_ago(10.0));
    say(&*b, "talked", "recent", days_ago(1.0));
    b.add(NewSession::new("fresh", "cli"), days_ago(2.0));
    b.add(NewSession::new("gone", "cli"), days_ago(20.0));
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
    // The original never fails on the age: NaN, negative and infinite
    // ages archive nothing.
    assert!(s.set_session_archived("idle", false).unwrap(), "{n}");
    for odd in [f64::NAN, -1.0, f64::INFINITY] {
        assert_eq!(s.archive_stale_sessions(odd, true).unwrap(), 0, "{n}");
    }
    assert_eq!(s.archive_stale_sessions(0.0, true).unwrap(), 3, "{n}");
}
