//! Cleanup beyond `delete_session` (`api.md` §11.3–11.6): the prune
//! filters, batch and conditional deletes, the automatic prune and archive
//! runs, and the Telegram topic opt-in (§12.4). `import_sessions` (§11.2)
//! is in `export::import_sessions`.

use std::path::Path;
use std::sync::Arc;

use hermes_state::{
    ArchiveSelection, AutoArchiveOptions, AutoPruneOptions, Clock, ErrorKind, FixedClock,
    NewSession, PruneFilters, PruneOptions, SessionDb, StoreOptions, TokenUpdate,
};
use serde_json::json;

use crate::common::{NULL, assert_kind, t};
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;
use hermes_state_testkit::build::say_now;

const T0: f64 = 1_795_980_826.691_713_8;
const DAY: f64 = 86_400.0;

/// A store whose clock the test sets.
struct Clocked {
    db: SessionDb,
    clock: Arc<FixedClock>,
    dir: tempfile::TempDir,
}

impl Clocked {
    fn new() -> Clocked {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = FixedClock::new(T0);
        let options = StoreOptions {
            clock: Some(Arc::clone(&clock) as Arc<dyn Clock>),
            ..StoreOptions::default()
        };
        let db = SessionDb::open_with(dir.path().join("state.db"), &options).expect("open");
        Clocked { db, clock, dir }
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("state.db")
    }

    /// A session started `days_ago` days before T0, ended when `ended`.
    fn session(&self, session: NewSession, days_ago: f64, ended: bool) {
        let id = session.id.clone();
        self.clock.set(T0 - days_ago * DAY);
        self.db.create_session(&session).expect("create");
        if ended {
            self.db.end_session(&id, "user_exit").expect("end");
        }
        self.clock.set(T0);
    }

    fn exec(&self, sql: &str) {
        self.db
            .write_raw(|conn| {
                conn.execute_batch(sql)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                Ok(())
            })
            .expect("setup");
    }

    fn ids(&self) -> Vec<String> {
        self.strings("SELECT id FROM sessions ORDER BY id")
    }

    fn strings(&self, sql: &str) -> Vec<String> {
        self.db
            .read(|conn| {
                let mut stmt = conn.prepare(sql).expect("prepare");
                Ok(stmt
                    .query_map([], |row| row.get(0))
                    .expect("query")
                    .collect::<Result<_, _>>()
                    .expect("rows"))
            })
            .expect("read")
    }

    fn value(&self, sql: &str) -> hermes_state::rusqlite::types::Value {
        self.db
            .read(|conn| Ok(conn.query_row(sql, [], |row| row.get(0)).expect(sql)))
            .expect("read")
    }

    fn count(&self, sql: &str) -> i64 {
        match self.value(sql) {
            hermes_state::rusqlite::types::Value::Integer(n) => n,
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn read_only(&self) -> SessionDb {
        SessionDb::open_read_only(self.path()).expect("read-only open")
    }

    fn prune(&self, filters: PruneFilters) -> Vec<String> {
        self.db
            .prune_sessions(&PruneOptions {
                older_than_days: None,
                filters,
                dry_run: true,
                ..PruneOptions::default()
            })
            .expect("prune")
            .ids
    }
}

fn touch(dir: &Path, names: &[&str]) {
    for name in names {
        std::fs::write(dir.join(name), b"{}").expect("write transcript");
    }
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------- prune filters

/// Five ended sessions that differ in one column each, and a live one.
fn filter_fixture() -> Clocked {
    let s = Clocked::new();
    s.session(
        NewSession::new("a", "cli")
            .model("gpt-4o")
            .user_id("u1")
            .chat_id("c1")
            .chat_type("dm")
            .cwd("/work/proj"),
        10.0,
        true,
    );
    s.session(
        NewSession::new("b", "telegram")
            .model("claude-sonnet")
            .user_id("u2")
            .chat_id("c2")
            .chat_type("group")
            .cwd("/work/project2"),
        20.0,
        true,
    );
    s.session(
        NewSession::new("c", "cli").cwd("/work/proj/sub"),
        30.0,
        true,
    );
    s.session(
        NewSession::new("d", "cli").cwd("C:\\work\\proj\\x"),
        40.0,
        true,
    );
    s.session(NewSession::new("e", "cli"), 50.0, true);
    s.session(NewSession::new("live", "cli").model("gpt-4o"), 60.0, false);
    s.exec(
        "UPDATE sessions SET title = 'Fix 100% of bugs', git_branch = 'feature/x', end_reason = 'compression',
                message_count = 5, tool_call_count = 2, input_tokens = 100, output_tokens = 50,
                estimated_cost_usd = 0.5, billing_provider = 'openai', archived = 1
         WHERE id = 'a';
         UPDATE sessions SET title = 'Plain', git_branch = 'main', message_count = 1,
                input_tokens = 1000, actual_cost_usd = 2.0, estimated_cost_usd = 0.1,
                billing_provider = 'anthropic', tool_call_count = 9
         WHERE id = 'b';
         UPDATE sessions SET cwd = 'C:\\work\\proj\\x' WHERE id = 'd';",
    );
    s
}

#[test]
fn prune_filters_each_select_what_they_name() {
    let s = filter_fixture();
    let f = PruneFilters::default;
    assert_eq!(
        s.prune(f()),
        ["e", "d", "c", "b", "a"],
        "ended only, oldest first"
    );
    assert_eq!(
        s.prune(PruneFilters {
            started_before: Some(T0 - 30.0 * DAY),
            ..f()
        }),
        ["e", "d"],
        "strictly before"
    );
    assert_eq!(
        s.prune(PruneFilters {
            started_after: Some(T0 - 20.0 * DAY),
            ..f()
        }),
        ["b", "a"],
        "at or after (the original's `started_at >= ?`)"
    );
    assert_eq!(
        s.prune(PruneFilters {
            title_like: Some("100%".into()),
            ..f()
        }),
        ["a"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            title_like: Some("fix".into()),
            ..f()
        }),
        ["a"],
        "case-insensitive substring"
    );
    assert_eq!(
        s.prune(PruneFilters {
            title_like: Some("1_0".into()),
            ..f()
        }),
        ["a"],
        "`_` is a wildcard, as in the original's LIKE"
    );
    assert_eq!(
        s.prune(PruneFilters {
            end_reason: Some("compression".into()),
            ..f()
        }),
        ["a"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            cwd_prefix: Some("/work/proj/".into()),
            ..f()
        }),
        ["c", "a"],
        "the folder and inside it, not /work/project2"
    );
    assert_eq!(
        s.prune(PruneFilters {
            cwd_prefix: Some("C:\\work\\proj".into()),
            ..f()
        }),
        ["d"],
        "Windows separators"
    );
    assert_eq!(
        s.prune(PruneFilters {
            min_messages: Some(1),
            ..f()
        }),
        ["b", "a"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            max_messages: Some(1),
            ..f()
        }),
        ["e", "d", "c", "b"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            archived: Some(true),
            ..f()
        }),
        ["a"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            archived: Some(false),
            ..f()
        }),
        ["e", "d", "c", "b"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            model_like: Some("GPT".into()),
            ..f()
        }),
        ["a"],
        "the live gpt session is never a candidate"
    );
    assert_eq!(
        s.prune(PruneFilters {
            provider: Some("AnThropic".into()),
            ..f()
        }),
        ["b"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            user_id: Some("u1".into()),
            ..f()
        }),
        ["a"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            chat_id: Some("c2".into()),
            ..f()
        }),
        ["b"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            chat_type: Some("dm".into()),
            ..f()
        }),
        ["a"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            branch_like: Some("feature/".into()),
            ..f()
        }),
        ["a"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            min_tokens: Some(150),
            ..f()
        }),
        ["b", "a"],
        "input + output, inclusive"
    );
    assert_eq!(
        s.prune(PruneFilters {
            max_tokens: Some(150),
            ..f()
        }),
        ["e", "d", "c", "a"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            min_cost: Some(1.0),
            ..f()
        }),
        ["b"],
        "actual cost first"
    );
    assert_eq!(
        s.prune(PruneFilters {
            max_cost: Some(0.5),
            ..f()
        }),
        ["e", "d", "c", "a"],
        "no cost counts as 0"
    );
    assert_eq!(
        s.prune(PruneFilters {
            min_tool_calls: Some(3),
            ..f()
        }),
        ["b"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            max_tool_calls: Some(2),
            ..f()
        }),
        ["e", "d", "c", "a"]
    );
    assert_eq!(
        s.prune(PruneFilters {
            user_id: Some(String::new()),
            title_like: Some(String::new()),
            ..f()
        })
        .len(),
        5,
        "empty text filters are no filter"
    );
    assert_eq!(
        s.prune(PruneFilters {
            min_messages: Some(1),
            archived: Some(false),
            ..f()
        }),
        ["b"],
        "filters combine"
    );
    assert_eq!(s.ids().len(), 6, "dry runs write nothing");
}

#[test]
fn started_before_replaces_the_age_bound_and_source_still_applies() {
    let s = filter_fixture();
    let report =
        s.db.prune_sessions(&PruneOptions {
            older_than_days: Some(45.0),
            filters: PruneFilters {
                started_before: Some(T0 - 15.0 * DAY),
                ..PruneFilters::default()
            },
            dry_run: true,
            ..PruneOptions::default()
        })
        .expect("prune");
    assert_eq!(report.ids, ["e", "d", "c", "b"]);
    let report =
        s.db.prune_sessions(&PruneOptions {
            older_than_days: Some(5.0),
            source: Some("telegram".into()),
            ..PruneOptions::default()
        })
        .expect("prune");
    assert_eq!(report.ids, ["b"]);
    assert_eq!(s.ids(), ["a", "c", "d", "e", "live"]);
}

#[test]
fn non_finite_prune_bounds_are_invalid_input() {
    let s = filter_fixture();
    for filters in [
        PruneFilters {
            started_before: Some(f64::NAN),
            ..PruneFilters::default()
        },
        PruneFilters {
            started_after: Some(f64::INFINITY),
            ..PruneFilters::default()
        },
        PruneFilters {
            min_cost: Some(f64::NAN),
            ..PruneFilters::default()
        },
        PruneFilters {
            max_cost: Some(f64::NEG_INFINITY),
            ..PruneFilters::default()
        },
    ] {
        assert_kind(
            s.db.prune_sessions(&PruneOptions {
                filters,
                ..PruneOptions::default()
            }),
            ErrorKind::InvalidInput,
        );
    }
    assert_eq!(s.ids().len(), 6);
}

#[test]
fn prune_removes_the_transcripts_of_pruned_sessions_only() {
    let s = filter_fixture();
    let transcripts = tempfile::tempdir().expect("tempdir");
    touch(
        transcripts.path(),
        &[
            "a.json",
            "a.jsonl",
            "request_dump_a_1.json",
            "request_dump_a_2.json",
            "request_dump_ab_1.json",
            "b.json",
            "live.json",
            "a.txt",
        ],
    );
    let report =
        s.db.prune_sessions(&PruneOptions {
            older_than_days: None,
            filters: PruneFilters {
                user_id: Some("u1".into()),
                ..PruneFilters::default()
            },
            sessions_dir: Some(transcripts.path().to_owned()),
            ..PruneOptions::default()
        })
        .expect("prune");
    assert_eq!(report.ids, ["a"]);
    assert_eq!(
        files(transcripts.path()),
        ["a.txt", "b.json", "live.json", "request_dump_ab_1.json"]
    );
    // A dry run leaves the files.
    s.db.prune_sessions(&PruneOptions {
        older_than_days: None,
        dry_run: true,
        sessions_dir: Some(transcripts.path().to_owned()),
        ..PruneOptions::default()
    })
    .expect("dry run");
    assert!(files(transcripts.path()).contains(&"b.json".to_owned()));
}

#[test]
fn prune_on_a_read_only_handle_is_refused_but_a_dry_run_reads() {
    let s = filter_fixture();
    let ro = s.read_only();
    assert_kind(
        ro.prune_sessions(&PruneOptions::default()),
        ErrorKind::ReadOnly,
    );
    let report = ro
        .prune_sessions(&PruneOptions {
            dry_run: true,
            older_than_days: None,
            ..PruneOptions::default()
        })
        .expect("dry run");
    assert_eq!(report.count, 5);
}

/// A copy of the store (one read snapshot, `backup_to`) on a handle whose
/// clock stands at T0, as the original's.
fn copy_of(s: &Clocked, name: &str) -> SessionDb {
    let path = s.dir.path().join(name);
    s.db.backup_to(&path).expect("backup");
    let options = StoreOptions {
        clock: Some(FixedClock::new(T0) as Arc<dyn Clock>),
        ..StoreOptions::default()
    };
    SessionDb::open_with(path, &options).expect("open the copy")
}

fn column(db: &SessionDb, sql: &str) -> Vec<String> {
    db.read(|conn| {
        let mut stmt = conn.prepare(sql).expect("prepare");
        Ok(stmt
            .query_map([], |row| row.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows"))
    })
    .expect("read")
}

#[test]
fn prune_candidates_archive_and_prune_select_the_same_sessions() {
    let s = filter_fixture();
    // A live child of a candidate: orphaned by a prune, never selected.
    s.session(
        NewSession::new("kid", "cli").parent_session_id("b"),
        5.0,
        false,
    );
    let f = PruneFilters::default;
    let cases = [
        PruneOptions::default(),
        PruneOptions {
            older_than_days: None,
            ..PruneOptions::default()
        },
        PruneOptions {
            older_than_days: Some(25.0),
            ..PruneOptions::default()
        },
        PruneOptions {
            older_than_days: Some(0.0),
            source: Some("telegram".into()),
            ..PruneOptions::default()
        },
        PruneOptions {
            older_than_days: Some(1000.0),
            filters: PruneFilters {
                started_before: Some(T0 - 30.0 * DAY),
                ..f()
            },
            ..PruneOptions::default()
        },
        PruneOptions {
            older_than_days: None,
            filters: PruneFilters {
                archived: Some(false),
                cwd_prefix: Some("/work/proj".into()),
                ..f()
            },
            ..PruneOptions::default()
        },
        PruneOptions {
            older_than_days: None,
            filters: PruneFilters {
                min_tokens: Some(100),
                max_cost: Some(1.0),
                title_like: Some("FIX".into()),
                ..f()
            },
            ..PruneOptions::default()
        },
        PruneOptions {
            older_than_days: None,
            filters: PruneFilters {
                max_messages: Some(1),
                min_tool_calls: Some(0),
                ..f()
            },
            ..PruneOptions::default()
        },
    ];
    let all = "SELECT id FROM sessions ORDER BY id";
    let archived = "SELECT id FROM sessions WHERE archived = 1 ORDER BY id";
    let mut selected_something = 0;
    for (n, options) in cases.iter().enumerate() {
        let candidates: Vec<String> =
            s.db.list_prune_candidates(&options.selection())
                .expect("candidates")
                .into_iter()
                .map(|row| row.id)
                .collect();
        selected_something += usize::from(!candidates.is_empty());
        let mut sorted = candidates.clone();
        sorted.sort();

        let dry = s.db.prune_sessions(&PruneOptions {
            dry_run: true,
            ..options.clone()
        });
        assert_eq!(dry.expect("dry run").ids, candidates, "case {n}: dry run");

        let pruned = copy_of(&s, &format!("pruned{n}.db"));
        let before = column(&pruned, all);
        let report = pruned.prune_sessions(options).expect("prune");
        assert_eq!(report.ids, candidates, "case {n}: prune reports");
        let after = column(&pruned, all);
        let gone: Vec<String> = before
            .into_iter()
            .filter(|id| !after.contains(id))
            .collect();
        assert_eq!(gone, sorted, "case {n}: prune deletes the candidates");

        let archiving = copy_of(&s, &format!("archived{n}.db"));
        let was = column(&archiving, archived);
        let selection = ArchiveSelection {
            older_than_days: options.older_than_days,
            source: options.source.clone(),
            filters: options.filters.clone(),
        };
        // The original's count: the sessions selected, archived or not.
        assert_eq!(
            archiving.archive_sessions(&selection).expect("archive"),
            candidates.len(),
            "case {n}: archive count"
        );
        let mut expected: Vec<String> = was.clone();
        expected.extend(candidates.iter().filter(|id| !was.contains(id)).cloned());
        expected.sort();
        assert_eq!(
            column(&archiving, archived),
            expected,
            "case {n}: archive archives the candidates"
        );
    }
    assert!(selected_something >= 6, "the cases select sessions");
}

// ---------------------------------------------------------------- deletes

/// The measured example of `api.md` §11.6, as a batch.
#[test]
fn delete_sessions_follows_the_measured_example_with_transcripts() {
    let s = Clocked::new();
    s.session(NewSession::new("d_par", "cli"), 1.0, false);
    s.session(
        NewSession::new("branch", "cli").parent_session_id("d_par"),
        1.0,
        false,
    );
    s.session(
        NewSession::new("plain", "cli").parent_session_id("d_par"),
        1.0,
        false,
    );
    s.session(
        NewSession::new("d_sub", "cli")
            .parent_session_id("d_par")
            .model_config(json!({"_delegate_from": "d_par"})),
        1.0,
        false,
    );
    s.session(
        NewSession::new("d_grand", "cli")
            .parent_session_id("d_sub")
            .model_config(json!({"_delegate_from": "d_sub"})),
        1.0,
        false,
    );
    s.session(NewSession::new("other", "cli"), 1.0, false);
    for id in ["d_par", "d_sub", "d_grand", "other"] {
        say_now(&s.db, id, "hello");
    }
    let transcripts = tempfile::tempdir().expect("tempdir");
    touch(
        transcripts.path(),
        &[
            "d_par.json",
            "request_dump_d_par_1.json",
            "d_sub.jsonl",
            "branch.json",
            "other.json",
        ],
    );
    let deleted =
        s.db.delete_sessions(
            ["d_par", "", "nope", "other", "d_par"],
            Some(transcripts.path()),
        )
        .expect("delete");
    assert_eq!(
        deleted, 2,
        "unknown, empty and repeated ids are not counted"
    );
    assert_eq!(s.ids(), ["branch", "plain"]);
    assert_eq!(
        s.count("SELECT count(*) FROM sessions WHERE parent_session_id IS NULL"),
        2,
        "branch and plain children are orphaned"
    );
    assert_eq!(s.count("SELECT count(*) FROM messages"), 0);
    assert_eq!(
        s.count("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'hello'"),
        0
    );
    assert_eq!(files(transcripts.path()), ["branch.json"]);
}

#[test]
fn delete_sessions_of_nothing_and_on_a_read_only_handle() {
    let s = Clocked::new();
    s.session(NewSession::new("x", "cli"), 0.0, false);
    let none: [&str; 0] = [];
    assert_eq!(s.db.delete_sessions(none, None).expect("empty"), 0);
    assert_eq!(s.db.delete_sessions([""], None).expect("empty id"), 0);
    assert_eq!(
        s.db.delete_sessions(vec!["missing".to_owned()], None)
            .expect("unknown"),
        0
    );
    assert_kind(
        s.read_only().delete_sessions(["x"], None),
        ErrorKind::ReadOnly,
    );
    assert_eq!(s.ids(), ["x"]);
}

#[test]
fn delete_session_if_empty_needs_no_title_no_messages_no_children() {
    let s = Clocked::new();
    for id in ["empty", "titled", "talked", "parent", "inactive"] {
        s.session(NewSession::new(id, "cli"), 0.0, false);
    }
    s.session(
        NewSession::new("child", "cli").parent_session_id("parent"),
        0.0,
        false,
    );
    s.db.set_session_title("titled", Some("A title"))
        .expect("title");
    say_now(&s.db, "talked", "hi");
    say_now(&s.db, "inactive", "gone");
    s.exec("UPDATE messages SET active = 0 WHERE session_id = 'inactive'; UPDATE sessions SET message_count = 0 WHERE id = 'inactive'");
    s.db.update_token_counts(
        "empty",
        &TokenUpdate {
            input_tokens: 3,
            model: Some("m".into()),
            ..TokenUpdate::default()
        },
    )
    .expect("usage");
    let ro = s.read_only();
    assert_kind(ro.delete_session_if_empty("empty"), ErrorKind::ReadOnly);

    assert!(s.db.delete_session_if_empty("empty").expect("empty"));
    assert_eq!(
        s.count("SELECT count(*) FROM session_model_usage"),
        0,
        "usage rows cascade"
    );
    for id in ["titled", "talked", "parent", "inactive"] {
        assert!(!s.db.delete_session_if_empty(id).expect(id), "{id} is kept");
    }
    assert!(!s.db.delete_session_if_empty("empty").expect("again"));
    assert!(!s.db.delete_session_if_empty("").expect("empty id"));
    assert!(!s.db.delete_session_if_empty("nope").expect("unknown"));
    assert_eq!(s.ids(), ["child", "inactive", "parent", "talked", "titled"]);
}

#[test]
fn delete_empty_sessions_takes_ended_unarchived_sessions_without_messages() {
    let s = Clocked::new();
    s.session(NewSession::new("ended_empty", "cli"), 1.0, true);
    s.session(NewSession::new("live_empty", "cli"), 1.0, false);
    s.session(NewSession::new("archived_empty", "cli"), 1.0, true);
    s.session(NewSession::new("ended_full", "cli"), 1.0, false);
    say_now(&s.db, "ended_full", "words");
    s.db.end_session("ended_full", "user_exit").expect("end");
    s.session(
        NewSession::new("child", "cli").parent_session_id("ended_empty"),
        0.0,
        false,
    );
    s.exec("UPDATE sessions SET archived = 1 WHERE id = 'archived_empty'");

    assert_kind(s.read_only().delete_empty_sessions(), ErrorKind::ReadOnly);
    assert_eq!(s.db.delete_empty_sessions().expect("delete"), 1);
    assert_eq!(
        s.ids(),
        ["archived_empty", "child", "ended_full", "live_empty"]
    );
    assert_eq!(
        s.value("SELECT parent_session_id FROM sessions WHERE id = 'child'"),
        NULL,
        "children are orphaned, never deleted"
    );
    assert_eq!(s.db.delete_empty_sessions().expect("again"), 0);
}

#[test]
fn count_and_delete_empty_sessions_share_one_definition() {
    let s = Clocked::new();
    s.session(NewSession::new("empty", "cli"), 1.0, true);
    s.session(NewSession::new("null_count", "cli"), 1.0, true);
    s.session(NewSession::new("live", "cli"), 1.0, false);
    s.session(NewSession::new("archived", "cli"), 1.0, true);
    s.session(NewSession::new("full", "cli"), 1.0, false);
    say_now(&s.db, "full", "words");
    s.db.end_session("full", "user_exit").expect("end");
    // A NULL counter is not 0 (the original's `message_count = 0`).
    s.exec(
        "UPDATE sessions SET message_count = NULL WHERE id = 'null_count';
         UPDATE sessions SET archived = 1 WHERE id = 'archived';",
    );
    assert_eq!(s.db.count_empty_sessions().expect("count"), 1);
    assert_eq!(s.db.delete_empty_sessions().expect("delete"), 1);
    assert_eq!(s.ids(), ["archived", "full", "live", "null_count"]);
    assert_eq!(s.db.count_empty_sessions().expect("count again"), 0);
}

// ---------------------------------------------------------------- automatic runs

#[test]
fn auto_prune_runs_once_per_interval_and_stores_the_time_as_float_text() {
    let s = Clocked::new();
    s.session(NewSession::new("old", "cli"), 100.0, true);
    s.session(NewSession::new("new", "cli"), 1.0, true);
    let transcripts = tempfile::tempdir().expect("tempdir");
    touch(transcripts.path(), &["old.json", "new.json"]);
    let options = AutoPruneOptions {
        sessions_dir: Some(transcripts.path().to_owned()),
        ..AutoPruneOptions::default()
    };
    let report = s.db.maybe_auto_prune_and_vacuum(&options);
    assert_eq!(
        (report.skipped, report.pruned, report.vacuumed),
        (false, 1, true)
    );
    assert_eq!(report.error, None);
    assert_eq!(
        serde_json::to_value(&report).expect("json"),
        json!({"skipped": false, "pruned": 1, "vacuumed": true})
    );
    assert_eq!(s.ids(), ["new"]);
    assert_eq!(files(transcripts.path()), ["new.json"]);
    assert_eq!(
        s.db.get_meta("last_auto_prune").expect("meta").as_deref(),
        Some("1795980826.6917138")
    );

    s.clock.advance(23.0 * 3600.0);
    let report = s.db.maybe_auto_prune_and_vacuum(&options);
    assert!(report.skipped);
    assert_eq!((report.pruned, report.vacuumed), (0, false));
    assert_eq!(
        s.db.get_meta("last_auto_prune").expect("meta").as_deref(),
        Some("1795980826.6917138")
    );

    s.clock.advance(3600.0);
    let report = s.db.maybe_auto_prune_and_vacuum(&options);
    assert_eq!(
        (report.skipped, report.pruned, report.vacuumed),
        (false, 0, false),
        "nothing pruned: no VACUUM"
    );
    assert_eq!(
        s.db.get_meta("last_auto_prune").expect("meta").as_deref(),
        Some("1796067226.6917138")
    );
}

#[test]
fn auto_prune_treats_an_unparsable_stamp_as_never_ran_and_never_raises() {
    let s = Clocked::new();
    s.session(NewSession::new("old", "cli"), 10.0, true);
    s.db.set_meta("last_auto_prune", "yesterday").expect("meta");
    let report = s.db.maybe_auto_prune_and_vacuum(&AutoPruneOptions {
        retention_days: 5.0,
        vacuum: false,
        ..AutoPruneOptions::default()
    });
    assert_eq!(
        (report.skipped, report.pruned, report.vacuumed),
        (false, 1, false)
    );

    let report = s
        .read_only()
        .maybe_auto_prune_and_vacuum(&AutoPruneOptions::default());
    assert_eq!(report.error_kind, Some(ErrorKind::ReadOnly));
    assert!(report.error.is_some());
    let report = s.db.maybe_auto_prune_and_vacuum(&AutoPruneOptions {
        retention_days: f64::NAN,
        min_interval_hours: 0.0,
        ..AutoPruneOptions::default()
    });
    assert_eq!(report.error_kind, Some(ErrorKind::InvalidInput));
    assert!(
        serde_json::to_value(&report)
            .expect("json")
            .get("error")
            .is_some()
    );
}

#[test]
fn auto_archive_archives_idle_unpinned_sessions_once_per_interval() {
    let s = Clocked::new();
    s.session(NewSession::new("idle", "cli"), 5.0, false);
    s.session(NewSession::new("pinned", "cli"), 5.0, true);
    s.session(NewSession::new("busy", "cli"), 5.0, false);
    s.session(NewSession::new("fresh", "cli"), 1.0, false);
    s.clock.set(T0 - DAY);
    say_now(&s.db, "busy", "recent activity");
    s.clock.set(T0);
    s.exec("UPDATE sessions SET pinned = 1 WHERE id = 'pinned'");

    assert!(
        s.read_only()
            .maybe_auto_archive(&AutoArchiveOptions::default())
            .error_kind
            == Some(ErrorKind::ReadOnly)
    );
    let report = s.db.maybe_auto_archive(&AutoArchiveOptions::default());
    assert_eq!(
        (report.skipped, report.archived, report.error.as_deref()),
        (false, 1, None)
    );
    assert_eq!(
        serde_json::to_value(&report).expect("json"),
        json!({"skipped": false, "archived": 1})
    );
    assert_eq!(
        s.strings("SELECT id FROM sessions WHERE archived = 1"),
        ["idle"]
    );
    assert_eq!(
        s.db.get_meta("last_auto_archive").expect("meta").as_deref(),
        Some("1795980826.6917138")
    );

    let report = s.db.maybe_auto_archive(&AutoArchiveOptions {
        exclude_pinned: false,
        ..AutoArchiveOptions::default()
    });
    assert!(report.skipped, "within the interval");
    s.clock.advance(24.0 * 3600.0);
    let report = s.db.maybe_auto_archive(&AutoArchiveOptions {
        exclude_pinned: false,
        ..AutoArchiveOptions::default()
    });
    assert_eq!(
        (report.skipped, report.archived),
        (false, 1),
        "the pinned one; busy is idle for 2 days only"
    );
    assert_eq!(
        s.strings("SELECT id FROM sessions WHERE archived = 1 ORDER BY id"),
        ["idle", "pinned"]
    );
    s.clock.advance(24.0 * 3600.0 + 1.0);
    let report = s.db.maybe_auto_archive(&AutoArchiveOptions::default());
    assert_eq!(
        (report.skipped, report.archived),
        (false, 2),
        "busy and fresh, idle for 3 days and a second"
    );
}

#[test]
fn auto_archive_archives_what_archive_stale_sessions_archives() {
    let s = Clocked::new();
    s.session(NewSession::new("idle", "cli"), 5.0, false);
    s.session(NewSession::new("idle_ended", "cli"), 4.0, true);
    s.session(NewSession::new("pinned", "cli"), 5.0, true);
    s.session(NewSession::new("busy", "cli"), 5.0, false);
    s.session(NewSession::new("fresh", "cli"), 1.0, false);
    s.session(NewSession::new("done", "cli"), 9.0, true);
    s.clock.set(T0 - DAY);
    say_now(&s.db, "busy", "recent activity");
    s.clock.set(T0);
    s.exec(
        "UPDATE sessions SET pinned = 1 WHERE id = 'pinned';
         UPDATE sessions SET archived = 1 WHERE id = 'done';",
    );
    let archived = "SELECT id FROM sessions WHERE archived = 1 ORDER BY id";
    for (n, exclude_pinned) in [true, false].into_iter().enumerate() {
        for idle_days in [0.5, 3.0, 4.5, 30.0] {
            let direct = copy_of(&s, &format!("direct{n}_{idle_days}.db"));
            let auto = copy_of(&s, &format!("auto{n}_{idle_days}.db"));
            let count = direct
                .archive_stale_sessions(idle_days, exclude_pinned)
                .expect("archive_stale_sessions");
            let report = auto.maybe_auto_archive(&AutoArchiveOptions {
                idle_days,
                exclude_pinned,
                ..AutoArchiveOptions::default()
            });
            assert_eq!(report.error, None);
            assert_eq!(report.archived, count, "{exclude_pinned} {idle_days}");
            assert_eq!(
                column(&auto, archived),
                column(&direct, archived),
                "{exclude_pinned} {idle_days}"
            );
        }
    }
}

// ---------------------------------------------------------------- telegram topics

#[test]
fn telegram_topic_migration_creates_the_opt_in_tables_only_on_request() {
    let s = Clocked::new();
    let tables = "SELECT count(*) FROM sqlite_master WHERE name LIKE 'telegram_dm_topic%' OR name LIKE 'idx_telegram_dm_topic%'";
    assert_eq!(s.count(tables), 0, "not created on open");
    assert_kind(
        s.read_only().apply_telegram_topic_migration(),
        ErrorKind::ReadOnly,
    );
    s.db.apply_telegram_topic_migration().expect("migrate");
    s.db.apply_telegram_topic_migration().expect("idempotent");
    assert_eq!(s.count(tables), 4);
    assert_eq!(
        s.db.get_meta("telegram_dm_topic_schema_version")
            .expect("meta")
            .as_deref(),
        Some("2")
    );
    assert_eq!(
        s.strings("SELECT name FROM pragma_table_info('telegram_dm_topic_mode')"),
        [
            "chat_id",
            "user_id",
            "enabled",
            "activated_at",
            "updated_at",
            "has_topics_enabled",
            "allows_users_to_create_topics",
            "capability_checked_at",
            "intro_message_id",
            "pinned_message_id"
        ]
    );
    assert_eq!(
        s.strings("SELECT name FROM pragma_table_info('telegram_dm_topic_bindings')"),
        [
            "chat_id",
            "thread_id",
            "user_id",
            "session_key",
            "session_id",
            "managed_mode",
            "linked_at",
            "updated_at"
        ]
    );
    assert_eq!(
        s.strings("SELECT name FROM pragma_index_list('telegram_dm_topic_bindings') WHERE \"unique\" = 1 AND origin = 'c'"),
        ["idx_telegram_dm_topic_bindings_session"]
    );
    // A binding goes with its session.
    s.session(NewSession::new("bound", "telegram"), 0.0, false);
    s.exec("INSERT INTO telegram_dm_topic_bindings (chat_id, thread_id, user_id, session_key, session_id, linked_at, updated_at) VALUES ('c', 't', 'u', 'k', 'bound', 1.0, 1.0)");
    assert_eq!(
        s.value("SELECT managed_mode FROM telegram_dm_topic_bindings"),
        t("auto")
    );
    assert_eq!(s.db.delete_sessions(["bound"], None).expect("delete"), 1);
    assert_eq!(
        s.count("SELECT count(*) FROM telegram_dm_topic_bindings"),
        0
    );
}
