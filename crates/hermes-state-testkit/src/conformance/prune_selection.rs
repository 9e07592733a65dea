//! Which sessions the cleanups select (`api.md` §10.4, §11.3, §11.4):
//! every prune filter, the same selection for the candidates, a dry run,
//! a prune and an archive, the measured store of §11.3, the original's
//! `LIKE` on a folder prefix, and the idle sessions `archive_stale_sessions`
//! and the automatic archive take.

use hermes_state_core::SessionStore;
use hermes_state_core::cleanup::AutoArchiveOptions;
use hermes_state_core::prune::{ArchiveSelection, PruneFilters, PruneOptions, PruneSelection};
use hermes_state_core::rich_listing::RichListOptions;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewSession;
use serde_json::json;

use super::{Backend, TestStore};
use crate::build::{child, say};

const T0: f64 = 1_795_980_826.691_713_8;
const DAY: f64 = 86_400.0;

fn with(set: impl FnOnce(&mut PruneFilters)) -> PruneFilters {
    let mut filters = PruneFilters::default();
    set(&mut filters);
    filters
}

fn some(text: &str) -> Option<String> {
    Some(text.to_owned())
}

fn ids(s: &dyn SessionStore) -> Vec<String> {
    let mut ids: Vec<String> = s
        .search_sessions(None, 1000, 0)
        .unwrap()
        .into_iter()
        .map(|row| row.session.id)
        .collect();
    ids.sort();
    ids
}

fn archived(s: &dyn SessionStore) -> Vec<String> {
    ids(s)
        .into_iter()
        .filter(|id| s.get_session(id).unwrap().unwrap().archived == 1)
        .collect()
}

/// The candidates and the dry run's ids, asserted equal.
fn selected(s: &dyn SessionStore, options: &PruneOptions, what: &str) -> Vec<String> {
    let candidates: Vec<String> = s
        .list_prune_candidates(&options.selection())
        .unwrap()
        .into_iter()
        .map(|row| row.id)
        .collect();
    let dry = PruneOptions {
        dry_run: true,
        ..options.clone()
    };
    assert_eq!(s.prune_sessions(&dry).unwrap().ids, candidates, "{what}");
    candidates
}

/// Sessions (with their days before T0) on a store whose clock stands at
/// T0; ended ones end when they start.
fn at_t0(backend: &dyn Backend, sessions: Vec<(NewSession, f64, bool)>) -> TestStore {
    let b = backend.open_at(T0);
    for (session, days, ended) in sessions {
        let id = session.id.clone();
        b.add(session, T0 - days * DAY);
        if ended {
            b.store.end_session(&id, "user_exit").unwrap();
        }
    }
    b.exec("UPDATE sessions SET ended_at = started_at WHERE ended_at IS NOT NULL");
    b
}

/// Five ended sessions that differ in one column each, a live one, and
/// with `kid` a live child of `b`.
fn filter_store(backend: &dyn Backend, kid: bool) -> TestStore {
    let mut sessions = vec![
        (
            NewSession::new("a", "cli")
                .model("gpt-4o")
                .user_id("u1")
                .chat_id("c1")
                .chat_type("dm")
                .cwd("/work/proj"),
            10.0,
            true,
        ),
        (
            NewSession::new("b", "telegram")
                .model("claude-sonnet")
                .user_id("u2")
                .chat_id("c2")
                .chat_type("group")
                .cwd("/work/project2"),
            20.0,
            true,
        ),
        (
            NewSession::new("c", "cli").cwd("/work/proj/sub"),
            30.0,
            true,
        ),
        (
            NewSession::new("d", "cli").cwd("C:\\work\\proj\\x"),
            40.0,
            true,
        ),
        (NewSession::new("e", "cli"), 50.0, true),
        (NewSession::new("live", "cli").model("gpt-4o"), 60.0, false),
    ];
    if kid {
        sessions.push((child("kid", "b"), 5.0, false));
    }
    let b = at_t0(backend, sessions);
    b.exec(
        "UPDATE sessions SET title = 'Fix 100% of bugs', git_branch = 'feature/x', \
         end_reason = 'compression', message_count = 5, tool_call_count = 2, \
         input_tokens = 100, output_tokens = 50, estimated_cost_usd = 0.5, \
         billing_provider = 'openai', archived = 1 WHERE id = 'a'; \
         UPDATE sessions SET title = 'Plain', git_branch = 'main', message_count = 1, \
         input_tokens = 1000, actual_cost_usd = 2.0, estimated_cost_usd = 0.1, \
         billing_provider = 'anthropic', tool_call_count = 9 WHERE id = 'b'",
    );
    b
}

pub fn every_prune_filter_selects_what_it_names_alike(backend: &dyn Backend) {
    let b = filter_store(backend, false);
    let s = &*b.store;
    let n = b.name();
    let before = |days: f64| Some(T0 - days * DAY);
    let rest = ["e", "d", "c", "b"];
    let cheap = ["e", "d", "c", "a"];
    let cases: Vec<(PruneFilters, &[&str])> = vec![
        (PruneFilters::default(), &["e", "d", "c", "b", "a"]),
        (with(|f| f.started_before = before(30.0)), &["e", "d"]),
        (with(|f| f.started_after = before(20.0)), &["b", "a"]),
        (with(|f| f.title_like = some("100%")), &["a"]),
        (with(|f| f.title_like = some("fix")), &["a"]),
        (with(|f| f.title_like = some("1_0")), &["a"]),
        (with(|f| f.end_reason = some("compression")), &["a"]),
        (with(|f| f.cwd_prefix = some("/work/proj/")), &["c", "a"]),
        (with(|f| f.cwd_prefix = some("C:\\work\\proj")), &["d"]),
        (with(|f| f.min_messages = Some(1)), &["b", "a"]),
        (with(|f| f.max_messages = Some(1)), &rest),
        (with(|f| f.archived = Some(true)), &["a"]),
        (with(|f| f.archived = Some(false)), &rest),
        (with(|f| f.model_like = some("GPT")), &["a"]),
        (with(|f| f.provider = some("AnThropic")), &["b"]),
        (with(|f| f.user_id = some("u1")), &["a"]),
        (with(|f| f.chat_id = some("c2")), &["b"]),
        (with(|f| f.chat_type = some("dm")), &["a"]),
        (with(|f| f.branch_like = some("feature/")), &["a"]),
        (with(|f| f.min_tokens = Some(150)), &["b", "a"]),
        (with(|f| f.max_tokens = Some(150)), &cheap),
        (with(|f| f.min_cost = Some(1.0)), &["b"]),
        (with(|f| f.max_cost = Some(0.5)), &cheap),
        (with(|f| f.min_tool_calls = Some(3)), &["b"]),
        (with(|f| f.max_tool_calls = Some(2)), &cheap),
        (
            with(|f| (f.user_id, f.title_like) = (some(""), some(""))),
            &["e", "d", "c", "b", "a"],
        ),
        (
            with(|f| (f.min_messages, f.archived) = (Some(1), Some(false))),
            &["b"],
        ),
    ];
    for (filters, want) in cases {
        let options = PruneOptions {
            older_than_days: None,
            filters: filters.clone(),
            ..PruneOptions::default()
        };
        assert_eq!(selected(s, &options, n), want, "{n}: {filters:?}");
    }
    assert_eq!(ids(s).len(), 6, "{n}: dry runs write nothing");

    // Non-finite bounds are refused.
    for filters in [
        with(|f| f.started_before = Some(f64::NAN)),
        with(|f| f.started_after = Some(f64::INFINITY)),
        with(|f| f.min_cost = Some(f64::NAN)),
        with(|f| f.max_cost = Some(f64::NEG_INFINITY)),
    ] {
        let options = PruneOptions {
            filters: filters.clone(),
            ..PruneOptions::default()
        };
        let error = s.prune_sessions(&options).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{n}: {filters:?}");
        let error = s.list_prune_candidates(&options.selection()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{n}: {filters:?}");
    }
    // A reader may run a dry run only.
    let reader = b.read_only();
    let error = reader.prune_sessions(&PruneOptions::default()).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ReadOnly, "{n}");
    let dry = PruneOptions {
        dry_run: true,
        older_than_days: None,
        ..PruneOptions::default()
    };
    assert_eq!(reader.prune_sessions(&dry).unwrap().count, 5, "{n}");
    // `started_before` replaces the age bound; the source still applies.
    let replaced = PruneOptions {
        older_than_days: Some(45.0),
        filters: with(|f| f.started_before = before(15.0)),
        ..PruneOptions::default()
    };
    assert_eq!(selected(s, &replaced, n), rest, "{n}");
    let telegram = PruneOptions {
        older_than_days: Some(5.0),
        source: some("telegram"),
        ..PruneOptions::default()
    };
    assert_eq!(s.prune_sessions(&telegram).unwrap().ids, ["b"], "{n}");
    assert_eq!(ids(s), ["a", "c", "d", "e", "live"], "{n}");

    // Each filter alone narrows two ended sessions to one.
    let b = backend.open();
    let s = &*b.store;
    for (id, at) in [("a", 10.0), ("b", 11.0)] {
        b.add(NewSession::new(id, "cli"), at);
        s.end_session(id, "user_exit").unwrap();
    }
    b.exec(
        "UPDATE sessions SET title = 'Fix 100%', end_reason = 'compression', cwd = '/w/x', \
         message_count = 5, archived = 1, model = 'gpt-5', billing_provider = 'openai', \
         user_id = 'u', chat_id = 'c', chat_type = 'dm', git_branch = 'feature/x', \
         input_tokens = 70, output_tokens = 30, estimated_cost_usd = 0.5, \
         actual_cost_usd = 2.0, tool_call_count = 3 WHERE id = 'a'",
    );
    let only = |id: &str, filters: PruneFilters| {
        let options = PruneOptions {
            older_than_days: None,
            filters: filters.clone(),
            ..PruneOptions::default()
        };
        assert_eq!(selected(s, &options, n), [id], "{n}: {filters:?}");
    };
    for filters in [
        with(|f| f.started_before = Some(10.5)),
        with(|f| (f.started_after, f.started_before) = (Some(5.0), Some(11.0))),
        with(|f| f.title_like = some("fix 100%")),
        with(|f| f.end_reason = some("compression")),
        with(|f| f.cwd_prefix = some("/w")),
        with(|f| f.min_messages = Some(5)),
        with(|f| f.archived = Some(true)),
        with(|f| f.model_like = some("GPT")),
        with(|f| f.provider = some("openai")),
        with(|f| f.user_id = some("u")),
        with(|f| f.chat_id = some("c")),
        with(|f| f.chat_type = some("dm")),
        with(|f| f.branch_like = some("feature")),
        with(|f| f.min_tokens = Some(100)),
        with(|f| f.min_cost = Some(1.5)),
        with(|f| f.min_tool_calls = Some(3)),
    ] {
        only("a", filters);
    }
    for filters in [
        with(|f| f.max_messages = Some(4)),
        with(|f| f.archived = Some(false)),
        with(|f| f.max_tokens = Some(99)),
        with(|f| f.max_cost = Some(1.9)),
        with(|f| f.started_after = Some(10.5)),
    ] {
        only("b", filters);
    }
    // A NULL tool call count is 0, as the original's `COALESCE`.
    b.exec("UPDATE sessions SET tool_call_count = NULL WHERE id = 'b'");
    only("b", with(|f| f.max_tool_calls = Some(2)));
}

/// For each selection the candidates are what a dry run reports, what a
/// prune deletes (children orphaned) and what an archive archives,
/// counting the sessions selected, archived or not.
pub fn candidates_dry_runs_prunes_and_archives_select_the_same_sessions_alike(
    backend: &dyn Backend,
) {
    let n = backend.name();
    let f = PruneFilters::default;
    let no_age = |filters: PruneFilters| PruneOptions {
        older_than_days: None,
        filters,
        ..PruneOptions::default()
    };
    let cases = [
        PruneOptions::default(),
        no_age(f()),
        PruneOptions {
            older_than_days: Some(25.0),
            ..PruneOptions::default()
        },
        PruneOptions {
            older_than_days: Some(0.0),
            source: some("telegram"),
            ..PruneOptions::default()
        },
        PruneOptions {
            older_than_days: Some(1000.0),
            ..no_age(with(|f| f.started_before = Some(T0 - 30.0 * DAY)))
        },
        no_age(with(|f| {
            (f.archived, f.cwd_prefix) = (Some(false), some("/work/proj"));
        })),
        no_age(with(|f| {
            (f.min_tokens, f.max_cost, f.title_like) = (Some(100), Some(1.0), some("FIX"));
        })),
        no_age(with(|f| {
            (f.max_messages, f.min_tool_calls) = (Some(1), Some(0));
        })),
    ];
    let b = filter_store(backend, true);
    let mut selected_something = 0;
    for (i, options) in cases.iter().enumerate() {
        let candidates = selected(&*b.store, options, n);
        selected_something += usize::from(!candidates.is_empty());
        let mut sorted = candidates.clone();
        sorted.sort();

        let pruned = filter_store(backend, true);
        let all = ids(&*pruned.store);
        let report = pruned.store.prune_sessions(options).unwrap();
        assert_eq!(report.ids, candidates, "{n}: case {i}: prune reports");
        let left = ids(&*pruned.store);
        let gone: Vec<String> = all.into_iter().filter(|id| !left.contains(id)).collect();
        assert_eq!(gone, sorted, "{n}: case {i}: prune deletes the candidates");
        if sorted.contains(&"b".to_owned()) {
            let kid = pruned.store.get_session("kid").unwrap().unwrap();
            assert_eq!(kid.parent_session_id, None, "{n}: case {i}");
        }

        let archiving = filter_store(backend, true);
        let was = archived(&*archiving.store);
        let selection = ArchiveSelection {
            older_than_days: options.older_than_days,
            source: options.source.clone(),
            filters: options.filters.clone(),
        };
        assert_eq!(
            archiving.store.archive_sessions(&selection).unwrap(),
            candidates.len(),
            "{n}: case {i}: archive count"
        );
        let mut expected = was.clone();
        expected.extend(candidates.iter().filter(|id| !was.contains(id)).cloned());
        expected.sort();
        assert_eq!(archived(&*archiving.store), expected, "{n}: case {i}");
    }
    assert!(selected_something >= 6, "{n}: the cases select sessions");
}

/// `api.md` §11.3's measured store, by the real clock: the candidates,
/// archiving them, and every listing on a read-only handle.
pub fn the_measured_prune_store_lists_archives_and_reads_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let old = now - 100.0 * DAY;
    let delegate = child("delegate", "parent").model_config(json!({"_delegate_from": "parent"}));
    for (session, at, ended) in [
        (NewSession::new("parent", "cli"), old, true),
        (child("live_child", "parent"), old + 2.0, false),
        (delegate, old + 3.0, true),
        (NewSession::new("live_old", "cli"), old + 5.0, false),
        (NewSession::new("telegram_old", "telegram"), old + 6.0, true),
        (NewSession::new("new", "cli"), now, true),
    ] {
        let id = session.id.clone();
        b.add(session, at);
        if ended {
            s.end_session(&id, "user_exit").unwrap();
        }
    }

    let reader = b.read_only();
    assert_eq!(reader.search_sessions(None, 20, 0).unwrap().len(), 6, "{n}");
    let rich = reader.list_sessions_rich(&RichListOptions::default());
    assert!(!rich.unwrap().is_empty(), "{n}");
    let all = PruneSelection::default();
    assert_eq!(reader.list_prune_candidates(&all).unwrap().len(), 4, "{n}");
    assert!(
        reader.list_cron_job_runs("x", 20, 0).unwrap().is_empty(),
        "{n}"
    );
    let by_id = reader.search_sessions_by_id("parent", 20, true).unwrap();
    assert_eq!(by_id.len(), 1, "{n}");
    assert!(
        reader.distinct_session_cwds(true).unwrap().is_empty(),
        "{n}"
    );
    assert_eq!(reader.count_empty_sessions().unwrap(), 4, "{n}");
    let refused = [
        reader
            .archive_sessions(&ArchiveSelection::default())
            .unwrap_err(),
        reader.archive_stale_sessions(3.0, true).unwrap_err(),
    ];
    for error in refused {
        assert_eq!(error.kind(), ErrorKind::ReadOnly, "{n}: {error}");
    }

    let listed = |selection: PruneSelection| -> Vec<String> {
        let rows = s.list_prune_candidates(&selection).unwrap();
        rows.into_iter().map(|row| row.id).collect()
    };
    let days = |days: f64, source: Option<&str>, filters: PruneFilters| PruneSelection {
        older_than_days: Some(days),
        source: source.map(Into::into),
        filters,
    };
    let f = PruneFilters::default;
    assert_eq!(
        listed(days(90.0, Some("telegram"), f())),
        ["telegram_old"],
        "{n}"
    );
    let measured = ["parent", "delegate", "telegram_old"];
    assert_eq!(listed(days(90.0, None, f())), measured, "{n}");
    assert_eq!(listed(days(0.0, None, f())).len(), 4, "{n}");
    assert_eq!(
        listed(PruneSelection::default()).len(),
        4,
        "{n}: no age bound"
    );
    let before = with(|f| f.started_before = Some(old + 2.0));
    assert_eq!(
        listed(days(90.0, None, before)),
        ["parent"],
        "{n}: an explicit start bound wins"
    );
    for bad in [
        days(f64::NAN, None, f()),
        PruneSelection {
            filters: with(|f| f.max_cost = Some(f64::INFINITY)),
            ..PruneSelection::default()
        },
    ] {
        let error = s.list_prune_candidates(&bad).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{n}");
    }

    let days_90 = ArchiveSelection {
        older_than_days: Some(90.0),
        ..ArchiveSelection::default()
    };
    assert_eq!(s.archive_sessions(&days_90).unwrap(), 3, "{n}");
    assert_eq!(archived(s), ["delegate", "parent", "telegram_old"], "{n}");
    assert_eq!(ids(s).len(), 6, "{n}: nothing deleted");
    assert_eq!(s.archive_sessions(&days_90).unwrap(), 0, "{n}");
    // The original's default: no age bound, unarchived sessions only.
    let default = ArchiveSelection::default();
    assert_eq!(s.archive_sessions(&default).unwrap(), 1, "{n}");
    assert_eq!(s.archive_sessions(&default).unwrap(), 0, "{n}");
}

/// The original's `cwd_prefix` clause has no `ESCAPE`: `%` and `_` in the
/// folder are wildcards, ASCII letters match either case in the `LIKE`s
/// (not in the `=`), and `/` alone stays `/`. Rows measured on the original.
pub fn a_folder_prefix_is_the_originals_like_in_listings_and_prunes_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    for (i, (id, cwd)) in [
        ("mine", "/w/my_app"),
        ("mine_sub", "/w/my_app/src"),
        ("other", "/w/myXapp/src"),
        ("percent", "/w/100%/x"),
        ("percent_other", "/w/100abc/x"),
    ]
    .into_iter()
    .enumerate()
    {
        b.add(NewSession::new(id, "cli").cwd(cwd), 1.0 + i as f64);
        s.end_session(id, "user_exit").unwrap();
    }
    for (prefix, want) in [
        ("/w/my_app", vec!["mine", "mine_sub", "other"]),
        ("/w/100%", vec!["percent", "percent_other"]),
        ("/w/MY_APP/", vec!["mine_sub", "other"]),
        ("/", vec![]),
    ] {
        let options = RichListOptions {
            cwd_prefix: some(prefix),
            ..RichListOptions::default()
        };
        let mut listed: Vec<String> = s
            .list_sessions_rich(&options)
            .unwrap()
            .into_iter()
            .map(|row| row.session.id)
            .collect();
        listed.sort();
        assert_eq!(listed, want, "{n}: listed under {prefix}");
        let prune = PruneOptions {
            older_than_days: None,
            ..PruneOptions::default()
        };
        let prune = PruneOptions {
            filters: with(|f| f.cwd_prefix = some(prefix)),
            ..prune
        };
        assert_eq!(
            selected(s, &prune, n),
            want,
            "{n}: candidates under {prefix}"
        );
    }
}

/// The original's `archive_stale_sessions`: idle by the newest message,
/// else the start (an end is no activity); compression-ended sessions are
/// no candidates, a candidate takes its compression chain along; children
/// count; the result is the number of candidates. Measured on the
/// original. The automatic archive archives the same sessions.
pub fn idle_tips_are_archived_with_their_chains_as_the_automatic_archive_does_alike(
    backend: &dyn Backend,
) {
    let now = 1_800_000_000.0;
    let ago = |days: f64| now - days * DAY;
    let b = backend.open_at(now);
    let s = &*b.store;
    let n = b.name();
    for (session, days) in [
        (NewSession::new("root", "cli"), 30.0),
        (child("tip", "root"), 29.0),
        (NewSession::new("root2", "cli"), 30.0),
        (child("tip2", "root2"), 29.0),
        (NewSession::new("parent", "cli"), 2.0),
        (child("kid", "parent"), 10.0),
        (NewSession::new("pinned", "cli"), 10.0),
        (NewSession::new("gone", "cli"), 10.0),
        (NewSession::new("live_old", "cli"), 10.0),
        (NewSession::new("ended_recently", "cli"), 10.0),
    ] {
        b.add(session, ago(days));
    }
    say(&*b, "tip", "old words", ago(20.0));
    say(&*b, "tip2", "new words", ago(1.0));
    s.set_session_pinned("pinned", true).unwrap();
    s.set_session_archived("gone", true).unwrap();
    for (id, reason, days) in [
        ("root", "compression", 29.0),
        ("root2", "compression", 29.0),
        ("ended_recently", "user_exit", 1.0),
    ] {
        b.exec(&format!(
            "UPDATE sessions SET end_reason = '{reason}', ended_at = {:?} WHERE id = '{id}'",
            ago(days)
        ));
    }
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
    for (i, (days, exclude_pinned, count, want)) in cases.into_iter().enumerate() {
        assert_eq!(
            s.archive_stale_sessions(days, exclude_pinned).unwrap(),
            count,
            "{n}: case {i}"
        );
        assert_eq!(archived(s), want, "{n}: case {i}");
    }

    // The automatic archive takes what `archive_stale_sessions` takes.
    let sessions = || {
        vec![
            (NewSession::new("idle", "cli"), 5.0, false),
            (NewSession::new("idle_ended", "cli"), 4.0, true),
            (NewSession::new("pinned", "cli"), 5.0, true),
            (NewSession::new("busy", "cli"), 5.0, false),
            (NewSession::new("fresh", "cli"), 1.0, false),
            (NewSession::new("done", "cli"), 9.0, true),
        ]
    };
    let store = || {
        let b = at_t0(backend, sessions());
        say(&*b, "busy", "recent activity", T0 - DAY);
        b.store.set_session_pinned("pinned", true).unwrap();
        b.store.set_session_archived("done", true).unwrap();
        b
    };
    for exclude_pinned in [true, false] {
        for idle_days in [0.5, 3.0, 4.5, 30.0] {
            let (direct, auto) = (store(), store());
            let count = direct
                .store
                .archive_stale_sessions(idle_days, exclude_pinned)
                .unwrap();
            let report = auto.store.maybe_auto_archive(&AutoArchiveOptions {
                idle_days,
                exclude_pinned,
                ..AutoArchiveOptions::default()
            });
            let what = format!("{n}: {exclude_pinned} {idle_days}");
            assert_eq!(report.error, None, "{what}");
            assert_eq!(report.archived, count, "{what}");
            assert_eq!(archived(&*auto.store), archived(&*direct.store), "{what}");
        }
    }
}
