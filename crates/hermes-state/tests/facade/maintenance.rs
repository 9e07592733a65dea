//! Pruning, vacuum, FTS upkeep and online backups.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use hermes_state::rusqlite::Connection;
use hermes_state::{ErrorKind, NewMessage, NewSession, PruneOptions, SessionDb, TokenUpdate};
use serde_json::json;

use crate::common::{Store, count, setup_connection, unix_now};
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;
use hermes_state_testkit::build::say_now;

fn ids(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT id FROM sessions ORDER BY id")
        .expect("prepare");
    stmt.query_map([], |row| row.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("ids")
}

fn prune(db: &SessionDb, days: Option<f64>, source: Option<&str>) -> Vec<String> {
    let report = db
        .prune_sessions(&PruneOptions {
            older_than_days: days,
            source: source.map(str::to_owned),
            ..PruneOptions::default()
        })
        .expect("prune");
    assert_eq!(report.count, report.ids.len());
    report.ids
}

/// The measured example of `api.md` §11.3.
fn measured_example() -> Store {
    let s = Store::new();
    let db = &s.db;
    db.create_session(&NewSession::new("parent", "cli"))
        .expect("parent");
    db.create_session(&NewSession::new("child", "cli").parent_session_id("parent"))
        .expect("live child");
    db.create_session(
        &NewSession::new("delegate", "cli")
            .parent_session_id("parent")
            .model_config(json!({"_delegate_from": "parent"})),
    )
    .expect("delegate");
    db.create_session(&NewSession::new("live_old", "cli"))
        .expect("live old");
    db.create_session(&NewSession::new("tg", "telegram"))
        .expect("telegram");
    db.create_session(&NewSession::new("new", "cli"))
        .expect("new");
    for id in ["parent", "child", "delegate", "live_old", "tg", "new"] {
        say_now(db, id, format!("zebra words of {id}"));
    }
    db.update_token_counts(
        "parent",
        &TokenUpdate {
            input_tokens: 10,
            model: Some("m".to_owned()),
            ..TokenUpdate::default()
        },
    )
    .expect("usage row");
    for id in ["parent", "delegate", "tg", "new"] {
        db.end_session(id, "user_exit").expect("end");
    }
    setup_connection(&s.path)
        .execute(
            "UPDATE sessions SET started_at = ?1 WHERE id IN ('parent', 'child', 'delegate', 'live_old', 'tg')",
            [unix_now() - 100.0 * 86_400.0],
        )
        .expect("backdate");
    s
}

#[test]
fn prune_follows_the_measured_example() {
    let s = measured_example();
    let conn = setup_connection(&s.path);
    let zebra = "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'zebra'";
    let trigram =
        "SELECT count(*) FROM messages_fts_trigram WHERE messages_fts_trigram MATCH 'zebra'";
    assert_eq!(count(&conn, zebra), 6);

    assert_eq!(prune(&s.db, Some(90.0), Some("telegram")), ["tg"]);
    assert_eq!(
        prune(&s.db, Some(90.0), None),
        ["delegate", "parent"],
        "the parent and its ended delegate child (same start: by id)"
    );
    assert_eq!(ids(&conn), ["child", "live_old", "new"]);
    let child = s.db.get_session("child").expect("get").expect("child");
    assert_eq!(child.parent_session_id, None, "the live child is orphaned");
    assert_eq!(
        count(&conn, "SELECT count(*) FROM session_model_usage"),
        0,
        "usage rows cascade"
    );
    assert_eq!(count(&conn, "SELECT count(*) FROM messages"), 3);
    assert_eq!(
        count(&conn, zebra),
        3,
        "FTS rows of pruned messages are gone"
    );
    assert_eq!(count(&conn, trigram), 3);

    assert_eq!(
        prune(&s.db, Some(0.0), None),
        ["new"],
        "every ended session"
    );
    assert_eq!(ids(&conn), ["child", "live_old"]);
    for table in ["messages_fts", "messages_fts_trigram"] {
        conn.execute_batch(&format!(
            "INSERT INTO {table}({table}) VALUES('integrity-check')"
        ))
        .expect("fts integrity");
    }
}

#[test]
fn prune_never_deletes_children_that_are_not_candidates() {
    let s = measured_example();
    // A live delegate child of the parent: orphaned, not deleted.
    s.db.create_session(
        &NewSession::new("live_delegate", "cli")
            .parent_session_id("parent")
            .model_config(json!({"_delegate_from": "parent"})),
    )
    .expect("live delegate");
    assert_eq!(
        prune(&s.db, None, None),
        ["delegate", "parent", "tg", "new"]
    );
    let conn = setup_connection(&s.path);
    assert_eq!(ids(&conn), ["child", "live_delegate", "live_old"]);
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM sessions WHERE parent_session_id IS NOT NULL"
        ),
        0
    );
}

#[test]
fn dry_run_lists_and_writes_nothing() {
    let s = measured_example();
    let conn = setup_connection(&s.path);
    let data_version = || count(&conn, "PRAGMA data_version");
    let version = data_version();
    let report =
        s.db.prune_sessions(&PruneOptions {
            dry_run: true,
            ..PruneOptions::default()
        })
        .expect("dry run");
    assert_eq!(report.ids, ["delegate", "parent", "tg"]);
    assert_eq!(report.count, 3);
    assert_eq!(data_version(), version, "no other connection wrote");
    assert_eq!(ids(&conn).len(), 6);
}

#[test]
fn prune_removes_transcripts_and_refuses_nonsense_ages() {
    let s = measured_example();
    let sessions_dir = s.dir.path().join("sessions");
    std::fs::create_dir(&sessions_dir).expect("dir");
    let files = [
        "tg.json",
        "tg.jsonl",
        "request_dump_tg_1.json",
        "request_dump_tgx_1.json",
        "new.json",
        "notes.txt",
    ];
    for name in files {
        std::fs::write(sessions_dir.join(name), "{}").expect("file");
    }
    let report =
        s.db.prune_sessions(&PruneOptions {
            source: Some("telegram".to_owned()),
            sessions_dir: Some(sessions_dir.clone()),
            ..PruneOptions::default()
        })
        .expect("prune");
    assert_eq!(report.ids, ["tg"]);
    let mut left: Vec<String> = std::fs::read_dir(&sessions_dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("name"))
        .collect();
    left.sort();
    assert_eq!(left, ["new.json", "notes.txt", "request_dump_tgx_1.json"]);

    for days in [f64::NAN, f64::INFINITY] {
        let error =
            s.db.prune_sessions(&PruneOptions {
                older_than_days: Some(days),
                ..PruneOptions::default()
            })
            .expect_err("non-finite");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
    }
}

fn file_bytes(path: &Path) -> u64 {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(path).map_or(0, |m| m.len())
        + std::fs::metadata(PathBuf::from(wal)).map_or(0, |m| m.len())
}

#[test]
fn vacuum_after_a_prune_gives_the_space_back() {
    let s = Store::new();
    s.db.create_session(&NewSession::new("old", "cli"))
        .expect("old");
    s.db.create_session(&NewSession::new("keep", "cli"))
        .expect("keep");
    let text = "the quick brown fox jumps over the lazy dog ".repeat(25);
    for chunk in 0..4 {
        let batch: Vec<NewMessage> = (0..1000)
            .map(|i| NewMessage::new("old", "user").content(format!("{chunk} {i} {text}")))
            .collect();
        s.db.append_messages(&batch).expect("append");
    }
    say_now(&s.db, "keep", "kept message");
    s.db.end_session("old", "user_exit").expect("end");
    assert_eq!(prune(&s.db, None, None), ["old"]);

    let conn = setup_connection(&s.path);
    let fts_tables = count(
        &conn,
        "SELECT count(*) FROM sqlite_master WHERE name IN ('messages_fts', 'messages_fts_trigram', 'messages_fts_cjk')",
    );
    drop(conn);
    let before = file_bytes(&s.path);
    assert_eq!(s.db.vacuum().expect("vacuum"), fts_tables as usize);
    let after = file_bytes(&s.path);
    assert!(
        after * 4 < before,
        "vacuum shrinks the store: {before} → {after} bytes"
    );
    let conn = setup_connection(&s.path);
    assert_eq!(count(&conn, "PRAGMA freelist_count"), 0);
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'kept'"
        ),
        1
    );
    conn.execute_batch("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')")
        .expect("fts integrity");
    // The store keeps working after the vacuum.
    say_now(&s.db, "keep", "after vacuum");
    assert_eq!(s.db.message_count(Some("keep")).expect("count"), 2);

    assert_eq!(s.db.optimize_fts().expect("optimize"), fts_tables as usize);
    assert_eq!(s.db.rebuild_fts().expect("rebuild"), fts_tables as usize);

    let read_only = SessionDb::open_read_only(&s.path).expect("read-only");
    assert_eq!(
        read_only.vacuum().expect_err("read-only").kind(),
        ErrorKind::ReadOnly
    );
}

#[test]
fn backup_is_a_consistent_copy_while_another_writer_appends() {
    let s = Store::new();
    for id in ["a", "b"] {
        s.db.create_session(&NewSession::new(id, "cli"))
            .expect("create");
        for i in 0..200 {
            say_now(&s.db, id, format!("{id} seed message {i} 会话"));
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let (path, stop, written) = (s.path.clone(), stop.clone(), written.clone());
        std::thread::spawn(move || {
            let db = SessionDb::open(&path).expect("second handle");
            let mut i = 0_u64;
            while !stop.load(Ordering::Relaxed) {
                let session = if i.is_multiple_of(2) { "a" } else { "b" };
                db.append_messages(&[
                    NewMessage::new(session, "user").content(format!("live {i} question")),
                    NewMessage::new(session, "assistant")
                        .content(format!("live {i} answer"))
                        .tool_calls(json!([{"id": format!("c{i}")}])),
                ])
                .expect("append while backing up");
                i += 1;
                written.store(i, Ordering::Relaxed);
            }
        })
    };
    while written.load(Ordering::Relaxed) < 20 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let target = s.dir.path().join("backup.db");
    s.db.backup_to(&target).expect("backup");
    // The handle is still usable while the writer continues.
    say_now(&s.db, "a", "after backup");
    while written.load(Ordering::Relaxed) < 60 {
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("writer");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&target)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let copy = setup_connection(&target);
    let integrity: String = copy
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("integrity");
    assert_eq!(integrity, "ok");
    for table in ["messages_fts", "messages_fts_trigram"] {
        copy.execute_batch(&format!(
            "INSERT INTO {table}({table}) VALUES('integrity-check')"
        ))
        .expect("fts integrity");
    }
    // Every session's counters match its rows: one snapshot, no torn write.
    assert_eq!(
        count(
            &copy,
            "SELECT count(*) FROM sessions s WHERE message_count <> (SELECT count(*) FROM messages m WHERE m.session_id = s.id)"
        ),
        0
    );
    // A prefix of the live store: every row up to its newest id, no more.
    let live = setup_connection(&s.path);
    let copied = count(&copy, "SELECT count(*) FROM messages");
    let newest = count(&copy, "SELECT max(id) FROM messages");
    assert!(copied >= 400 + 40, "the copy holds the writer's first rows");
    assert!(
        copied < count(&live, "SELECT count(*) FROM messages"),
        "the writer went on"
    );
    assert_eq!(
        copied,
        count(
            &live,
            &format!("SELECT count(*) FROM messages WHERE id <= {newest}")
        )
    );
    drop(copy);
    // The copy opens as a store.
    let reopened = SessionDb::open(&target).expect("open the backup");
    assert_eq!(
        reopened.message_count(None).expect("count"),
        copied,
        "same rows"
    );
}

#[test]
fn backup_refuses_an_existing_target() {
    let s = Store::new();
    let target = s.dir.path().join("exists.db");
    std::fs::write(&target, b"precious").expect("file");
    let error = s.db.backup_to(&target).expect_err("exists");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(std::fs::read(&target).expect("read"), b"precious");
    // Onto the live file itself: refused too.
    let error = s.db.backup_to(&s.path).expect_err("live file");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
}

/// Segments of each base FTS index (FTS5's `%_idx` holds one row per
/// segment and leaf-page term prefix).
fn fts_segments(db: &SessionDb) -> Vec<i64> {
    db.read(|conn| {
        Ok(["messages_fts", "messages_fts_trigram"]
            .iter()
            .map(|table| {
                conn.query_row(
                    &format!("SELECT count(DISTINCT segid) FROM {table}_idx"),
                    [],
                    |row| row.get(0),
                )
                .expect("count segments")
            })
            .collect())
    })
    .expect("segments")
}

/// Every `FTS_MERGE_EVERY`th write runs the bounded merge of the FTS
/// indexes after its commit: the segments of each index drop at that write
/// and not at the one before.
#[test]
fn the_every_thousandth_write_merges_every_fts_index() {
    // In memory where the machine offers it: a thousand fsynced commits on
    // a disk take seconds; the durability settings are the same.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).expect("tempdir")
    } else {
        tempfile::tempdir().expect("tempdir")
    };
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    db.create_session(&NewSession::new("s", "cli"))
        .expect("session");
    let say = |i: u64| {
        db.append_message(
            &NewMessage::new("s", "user").content(format!("message {i} about kubernetes and 東京")),
        )
        .expect("append");
    };
    // The session's creation was write 1.
    for i in 2..hermes_state::FTS_MERGE_EVERY {
        say(i);
    }
    let before = fts_segments(&db);
    say(hermes_state::FTS_MERGE_EVERY);
    let after = fts_segments(&db);
    for ((table, before), after) in ["messages_fts", "messages_fts_trigram"]
        .iter()
        .zip(&before)
        .zip(&after)
    {
        assert!(
            after < before,
            "{table}: {before} segments before the merge, {after} after"
        );
    }
}
