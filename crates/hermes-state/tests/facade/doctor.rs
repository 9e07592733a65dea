//! `SessionDb::doctor` and `SessionDb::repair`: a healthy store reports
//! healthy; each kind of damage is found, repaired, and the store is healthy
//! again with every message row byte-identical.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use hermes_state::rusqlite::{Connection, types::Value};
use hermes_state::{
    BrokenLink, ClearedTitle, DanglingParent, FtsCheck, FtsNote, FtsRebuild, NewMessage,
    NewSession, RepairOptions, SessionDb,
};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;
use serde_json::json;
use tempfile::TempDir;

/// Three sessions (`root`, its child `child`, and `other`) with text, tool
/// calls (a list of two, a lone object), a tool result, CJK text, and one
/// message holding the word `needle`.
fn store() -> (TempDir, PathBuf, SessionDb) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let db = SessionDb::open(&path).expect("open");
    db.create_session(&NewSession::new("root", "cli").model("gpt"))
        .expect("root");
    db.create_session(&NewSession::new("child", "cli").parent_session_id("root"))
        .expect("child");
    db.create_session(&NewSession::new("other", "telegram"))
        .expect("other");
    let rows = vec![
        NewMessage::new("root", "user").content("How do I fix the docker build?"),
        NewMessage::new("root", "assistant").tool_calls(json!([
            {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        ])),
        NewMessage::new("root", "tool")
            .content("results")
            .tool_result("web_search", "c1"),
        NewMessage::new("child", "assistant").tool_calls(json!({"id": "solo"})),
        NewMessage::new("child", "user").content("the needle is in this haystack"),
        NewMessage::new("other", "user").content("数据库迁移 会话存储"),
        NewMessage::new("other", "assistant").content("plain answer"),
    ];
    for (i, row) in rows.into_iter().enumerate() {
        db.append_message(&row.timestamp(1000.0 + i as f64))
            .expect("append");
    }
    (dir, path, db)
}

/// Another process's connection (tokenizer registered, no open algorithm).
fn plain(path: &Path) -> Connection {
    hermes_state::schema::connection::open_read_write(path).expect("plain connection")
}

/// A digest of every column of every message row.
fn messages_digest(db: &SessionDb) -> u64 {
    db.read(|conn| {
        let mut stmt = conn
            .prepare("SELECT * FROM messages ORDER BY id")
            .expect("prepare");
        let columns = stmt.column_count();
        let mut rows = stmt.query([]).expect("query");
        let mut hasher = DefaultHasher::new();
        while let Some(row) = rows.next().expect("row") {
            for i in 0..columns {
                format!("{:?}", row.get::<_, Value>(i).expect("value")).hash(&mut hasher);
            }
        }
        Ok(hasher.finish())
    })
    .expect("digest")
}

fn needle_id(db: &SessionDb) -> i64 {
    db.read(|conn| {
        Ok(conn
            .query_row(
                "SELECT id FROM messages WHERE content LIKE '%needle%'",
                [],
                |r| r.get(0),
            )
            .expect("needle"))
    })
    .expect("read")
}

fn fts_match(db: &SessionDb, word: &str) -> Vec<i64> {
    db.read(|conn| {
        let mut stmt = conn
            .prepare("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rowid")
            .expect("prepare");
        Ok(stmt
            .query_map([word], |r| r.get(0))
            .expect("query")
            .collect::<Result<Vec<i64>, _>>()
            .expect("rows"))
    })
    .expect("read")
}

/// Deletes one message from `messages_fts` behind the triggers' back.
fn delete_fts_row(path: &Path, id: i64) {
    plain(path)
        .execute(
            "INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
             SELECT 'delete', id, content, tool_name, tool_calls FROM messages WHERE id = ?1",
            [id],
        )
        .expect("damage FTS");
}

fn fts_check<'a>(report: &'a hermes_state::DoctorReport, table: &str) -> &'a FtsCheck {
    &report
        .fts
        .iter()
        .find(|c| c.table == table)
        .unwrap_or_else(|| panic!("{table} not checked"))
        .check
}

#[test]
fn a_healthy_store_is_healthy() {
    let (_dir, _path, db) = store();
    let report = db.doctor().expect("doctor");
    assert!(report.is_healthy(), "{report:?}");
    assert_eq!(report.integrity, ["ok"]);
    let tables: Vec<&str> = report.fts.iter().map(|c| c.table.as_str()).collect();
    assert_eq!(
        tables,
        ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"]
    );
    assert!(
        report.fts.iter().all(|c| c.check == FtsCheck::Ok),
        "{report:?}"
    );
    assert!(report.notes.is_empty());
    assert_eq!(report.problem_count(), 0);
    // The counters the writers kept agree with the doctor's reading of the rows.
    let root = db.get_session("root").expect("get").expect("root");
    assert_eq!(
        (root.message_count, root.tool_call_count),
        (Some(3), Some(2))
    );
    let child = db.get_session("child").expect("get").expect("child");
    assert_eq!(
        (child.message_count, child.tool_call_count),
        (Some(2), Some(1))
    );
}

#[test]
fn finds_and_repairs_a_damaged_counter() {
    let (_dir, path, db) = store();
    let before = messages_digest(&db);
    plain(&path)
        .execute(
            "UPDATE sessions SET message_count = 99 WHERE id = 'root'",
            [],
        )
        .expect("damage");
    let report = db.doctor().expect("doctor");
    assert!(!report.is_healthy());
    assert_eq!(report.counters.len(), 1, "{report:?}");
    let c = &report.counters[0];
    assert_eq!(
        (c.session_id.as_str(), c.message_count, c.real_message_count),
        ("root", Some(99), 3)
    );

    let repair = db.repair().expect("repair");
    assert_eq!(repair.counters_fixed, report.counters);
    assert!(repair.after.is_healthy(), "{:?}", repair.after);
    let root = db.get_session("root").expect("get").expect("root");
    assert_eq!(
        (root.message_count, root.tool_call_count),
        (Some(3), Some(2))
    );
    assert_eq!(messages_digest(&db), before);
}

#[test]
fn finds_and_repairs_a_deleted_fts_row() {
    let (_dir, path, db) = store();
    let before = messages_digest(&db);
    let id = needle_id(&db);
    assert_eq!(fts_match(&db, "needle"), vec![id]);
    delete_fts_row(&path, id);
    assert!(fts_match(&db, "needle").is_empty());

    let report = db.doctor().expect("doctor");
    assert!(!report.is_healthy());
    assert!(
        matches!(fts_check(&report, "messages_fts"), FtsCheck::Failed(m) if m.contains("malformed")),
        "{report:?}"
    );
    assert_eq!(fts_check(&report, "messages_fts_trigram"), &FtsCheck::Ok);

    let repair = db.repair().expect("repair");
    assert_eq!(repair.fts_mode, FtsRebuild::OneShot);
    assert_eq!(
        repair.fts_rebuilt,
        ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"]
    );
    assert!(repair.after.is_healthy(), "{:?}", repair.after);
    assert_eq!(fts_match(&db, "needle"), vec![id]);
    let hits = db
        .search_messages("needle", &Default::default())
        .expect("search");
    assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), vec![id]);
    assert_eq!(messages_digest(&db), before);
}

#[test]
fn finds_and_repairs_a_dangling_parent() {
    let (_dir, path, db) = store();
    let before = messages_digest(&db);
    let conn = plain(&path);
    conn.execute_batch(
        "PRAGMA foreign_keys=OFF;
         INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES ('orphan', 'cli', 2000.0, 'ghost');",
    )
    .expect("damage");
    let report = db.doctor().expect("doctor");
    let dangling = vec![DanglingParent {
        session_id: "orphan".to_owned(),
        missing_parent: "ghost".to_owned(),
    }];
    assert_eq!(report.dangling_parents, dangling);
    assert!(!report.is_healthy());

    let repair = db.repair().expect("repair");
    assert_eq!(repair.parents_cleared, dangling);
    assert!(repair.after.is_healthy(), "{:?}", repair.after);
    let orphan = db.get_session("orphan").expect("get").expect("orphan");
    assert_eq!(orphan.parent_session_id, None);
    let child = db.get_session("child").expect("get").expect("child");
    assert_eq!(child.parent_session_id.as_deref(), Some("root"));
    assert_eq!(messages_digest(&db), before);
}

#[test]
fn finds_and_breaks_a_lineage_cycle() {
    let (_dir, path, db) = store();
    let before = messages_digest(&db);
    plain(&path)
        .execute_batch(
            "UPDATE sessions SET started_at = 100.0 WHERE id = 'root';
             UPDATE sessions SET started_at = 200.0 WHERE id = 'child';
             UPDATE sessions SET parent_session_id = 'child' WHERE id = 'root';",
        )
        .expect("damage");
    let report = db.doctor().expect("doctor");
    assert_eq!(report.cycles.len(), 1, "{report:?}");
    let cycle = &report.cycles[0];
    assert_eq!(cycle.sessions, ["root", "child"]);
    assert_eq!(cycle.closing, "root", "the oldest session's link is cut");

    let repair = db.repair().expect("repair");
    assert_eq!(
        repair.cycles_broken,
        [BrokenLink {
            session_id: "root".to_owned(),
            former_parent: "child".to_owned(),
        }]
    );
    assert!(repair.after.is_healthy(), "{:?}", repair.after);
    let root = db.get_session("root").expect("get").expect("root");
    assert_eq!(root.parent_session_id, None);
    let child = db.get_session("child").expect("get").expect("child");
    assert_eq!(child.parent_session_id.as_deref(), Some("root"));
    assert_eq!(messages_digest(&db), before);
}

#[test]
fn finds_and_repairs_duplicate_titles() {
    let (_dir, path, db) = store();
    let before = messages_digest(&db);
    plain(&path)
        .execute_batch(
            "DROP INDEX idx_sessions_title_unique;
             UPDATE sessions SET title = 'Same' WHERE id IN ('root', 'other');",
        )
        .expect("damage");
    let report = db.doctor().expect("doctor");
    assert!(report.title_index_missing);
    assert_eq!(report.duplicate_titles.len(), 1);
    assert_eq!(report.duplicate_titles[0].holders, ["root", "other"]);

    let repair = db.repair().expect("repair");
    assert_eq!(
        repair.titles_cleared,
        [ClearedTitle {
            session_id: "root".to_owned(),
            title: "Same".to_owned(),
        }]
    );
    assert!(repair.title_index_restored);
    assert!(repair.after.is_healthy(), "{:?}", repair.after);
    assert_eq!(db.get_session_title("root").expect("title"), None);
    assert_eq!(
        db.get_session_title("other").expect("title").as_deref(),
        Some("Same")
    );
    assert_eq!(messages_digest(&db), before);
}

#[test]
fn repairs_everything_at_once_without_touching_messages() {
    let (_dir, path, db) = store();
    let before = messages_digest(&db);
    let id = needle_id(&db);
    delete_fts_row(&path, id);
    plain(&path)
        .execute_batch(
            "PRAGMA foreign_keys=OFF;
             UPDATE sessions SET message_count = 99, tool_call_count = 0 WHERE id = 'root';
             INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES ('orphan', 'cli', 2000.0, 'ghost');
             INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES ('x', 'cli', 10.0, 'y');
             INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES ('y', 'cli', 20.0, 'x');
             DROP INDEX idx_sessions_title_unique;
             UPDATE sessions SET title = 'Same' WHERE id IN ('child', 'other');",
        )
        .expect("damage");
    let report = db.doctor().expect("doctor");
    assert_eq!(report.problem_count(), 6, "{report:?}");

    let repair = db.repair().expect("repair");
    assert!(repair.after.is_healthy(), "{repair:?}");
    assert_eq!(repair.counters_fixed.len(), 1);
    assert_eq!(repair.parents_cleared.len(), 1);
    assert_eq!(repair.cycles_broken[0].session_id, "x");
    assert_eq!(repair.titles_cleared[0].session_id, "child");
    assert_eq!(fts_match(&db, "needle"), vec![id]);
    assert_eq!(messages_digest(&db), before);
    // (How the CLI words each repair is tested with its renderer.)
}

#[test]
fn large_stores_are_rebuilt_in_gated_chunks() {
    let (_dir, path, db) = store();
    let before = messages_digest(&db);
    let id = needle_id(&db);
    delete_fts_row(&path, id);
    let options = RepairOptions {
        background_rebuild_above: 0,
        pause_between_chunks: false,
    };
    let repair = db.repair_with(&options).expect("repair");
    assert_eq!(repair.fts_mode, FtsRebuild::Background);
    assert!(repair.after.is_healthy(), "{:?}", repair.after);
    assert!(repair.after.notes.is_empty(), "markers cleared");
    assert_eq!(fts_match(&db, "needle"), vec![id]);
    assert_eq!(messages_digest(&db), before);
}

#[test]
fn compacted_rows_are_not_counted_but_rewound_ones_are() {
    let (_dir, path, db) = store();
    // As archive_and_compact leaves a session: the old rows archived, the
    // counters set to the new rows; and a rewound row (counters unchanged).
    let conn = plain(&path);
    conn.execute_batch(
        "UPDATE messages SET active = 0, compacted = 1 WHERE session_id = 'root';
         UPDATE sessions SET message_count = 1, tool_call_count = 0 WHERE id = 'root';
         UPDATE messages SET active = 0 WHERE session_id = 'other' AND role = 'assistant';",
    )
    .expect("setup");
    db.append_message(&NewMessage::new("root", "user").content("summary of the past"))
        .expect("append");
    conn.execute(
        "UPDATE sessions SET message_count = message_count - 1 WHERE id = 'root'",
        [],
    )
    .expect("setup");
    let report = db.doctor().expect("doctor");
    assert!(report.is_healthy(), "{report:?}");
}

#[test]
fn doctor_works_on_a_read_only_handle() {
    let (_dir, path, db) = store();
    db.close().expect("close");
    let ro = SessionDb::open_read_only(&path).expect("open read-only");
    let report = ro.doctor().expect("doctor");
    assert!(report.is_healthy(), "{report:?}");
    assert!(
        report
            .fts
            .iter()
            .all(|c| matches!(c.check, FtsCheck::IndexOnly(_))),
        "{report:?}"
    );
}

#[test]
fn a_pending_backfill_is_a_note_not_a_failure() {
    let (_dir, path, db) = store();
    let conn = plain(&path);
    hermes_state::schema::optimize::begin_background_rebuild(&conn).expect("begin");
    let report = db.doctor().expect("doctor");
    assert!(report.is_healthy(), "{report:?}");
    assert!(matches!(
        fts_check(&report, "messages_fts"),
        FtsCheck::IndexOnly(_)
    ));
    assert!(
        report.notes.contains(&FtsNote::RebuildPending {
            progress: Some(0),
            high_water: 7
        }),
        "{report:?}"
    );
    let repair = db.repair().expect("repair");
    assert!(
        repair.after.is_healthy() && repair.after.notes.is_empty(),
        "{repair:?}"
    );
    assert_eq!(fts_match(&db, "needle"), vec![needle_id(&db)]);
}

#[test]
fn a_legacy_layout_is_checked_and_rebuilt_in_place() {
    use hermes_state::schema::ddl;
    let (_dir, path, db) = store();
    let before = messages_digest(&db);
    let conn = plain(&path);
    for name in ddl::FTS_TRIGGER_NAMES.iter().chain(&ddl::CJK_TRIGGER_NAMES) {
        conn.execute_batch(&format!("DROP TRIGGER {name}"))
            .expect("drop trigger");
    }
    conn.execute_batch(
        "DROP VIEW messages_fts_trigram_src; DROP TABLE messages_fts_trigram; DROP TABLE messages_fts;
         DROP TABLE messages_fts_cjk; DROP VIEW messages_fts_cjk_src;",
    )
    .expect("drop v23 FTS");
    for statement in ddl::LEGACY_FTS_BASE.iter().chain(&ddl::LEGACY_FTS_TRIGRAM) {
        conn.execute_batch(statement).expect("legacy DDL");
    }
    for table in ["messages_fts", "messages_fts_trigram"] {
        conn.execute_batch(&format!(
            "INSERT INTO {table}(rowid, content) SELECT id, COALESCE(content, '') || ' ' || COALESCE(tool_name, '') || ' ' || COALESCE(tool_calls, '') FROM messages"
        ))
        .expect("fill legacy index");
    }
    let report = db.doctor().expect("doctor");
    assert!(report.is_healthy(), "{report:?}");
    assert_eq!(report.notes, [hermes_state::FtsNote::LegacyLayout]);
    assert_eq!(report.fts.len(), 2);
    assert!(
        report.fts.iter().all(|c| c.check == FtsCheck::Ok),
        "{report:?}"
    );

    let repair = db.repair().expect("repair");
    assert_eq!(repair.fts_rebuilt, ["messages_fts", "messages_fts_trigram"]);
    assert!(repair.after.is_healthy(), "{:?}", repair.after);
    assert_eq!(repair.after.notes, [hermes_state::FtsNote::LegacyLayout]);
    assert_eq!(fts_match(&db, "needle"), vec![needle_id(&db)]);
    assert_eq!(messages_digest(&db), before);
}

/// The trigram objects v10 added (`migrations.md` §1.5).
const TRIGRAM_OBJECTS: [&str; 4] = [
    "table messages_fts_trigram",
    "trigger messages_fts_trigram_insert",
    "trigger messages_fts_trigram_delete",
    "trigger messages_fts_trigram_update",
];

/// A historical file read as it is: the objects its version predates are
/// awaited (its upgrade adds them), not missing, and the file is healthy.
#[test]
fn an_older_file_read_as_it_is_awaits_the_objects_of_later_versions() {
    use xtask::fixtures::all_shapes;
    use xtask::fixtures::{Shape, write_fixture};
    let title_index = "index idx_sessions_title_unique";
    let cases = all_shapes()
        .into_iter()
        .filter(|s| s.schema_version() <= 23);
    let cases: Vec<(Shape, Vec<&str>)> = cases
        .map(|shape| {
            // A fork's v3 (§4.2) has titles but not their index: the same rule.
            let version = shape.schema_version();
            let mut awaited = Vec::new();
            if version < 10 {
                awaited.extend(TRIGRAM_OBJECTS);
            }
            if version < 4 {
                awaited.push(title_index);
            }
            (shape, awaited)
        })
        .collect();
    assert!(cases.len() > 23, "every historical shape: {}", cases.len());
    let dir = tempfile::tempdir().expect("tempdir");
    for (n, (shape, awaited)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("{n}.db"));
        write_fixture(&path, shape).expect("fixture");
        let report = SessionDb::open_read_only(&path)
            .expect("open read-only")
            .doctor()
            .expect("doctor");
        assert!(report.is_healthy(), "{shape:?}: {report:?}");
        assert_eq!(report.awaited, awaited, "{shape:?}");
        assert!(report.fts_missing.is_empty(), "{shape:?}: {report:?}");
    }
}

/// What a version has by design is still checked: a v9 file without a base
/// trigger and a v4 file without its title index are damaged.
#[test]
fn an_older_file_still_misses_what_its_own_version_has() {
    use xtask::fixtures::{Shape, write_fixture};
    let dir = tempfile::tempdir().expect("tempdir");
    let v9 = dir.path().join("v9.db");
    write_fixture(&v9, Shape::Fresh(9)).expect("fixture");
    plain(&v9)
        .execute_batch("DROP TRIGGER messages_fts_insert")
        .expect("damage");
    let report = SessionDb::open_read_only(&v9)
        .expect("open")
        .doctor()
        .expect("doctor");
    assert_eq!(report.fts_missing, vec!["trigger messages_fts_insert"]);
    assert_eq!(report.awaited, TRIGRAM_OBJECTS);
    assert_eq!(report.problem_count(), 1, "{report:?}");

    let v4 = dir.path().join("v4.db");
    write_fixture(&v4, Shape::Fresh(4)).expect("fixture");
    plain(&v4)
        .execute_batch("DROP INDEX idx_sessions_title_unique")
        .expect("damage");
    let report = SessionDb::open_read_only(&v4)
        .expect("open")
        .doctor()
        .expect("doctor");
    assert!(report.title_index_missing, "{report:?}");
    assert_eq!(report.problem_count(), 1, "{report:?}");
}
