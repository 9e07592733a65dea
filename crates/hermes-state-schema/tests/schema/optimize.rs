//! The legacy → v23 FTS conversion and the gated background rebuild
//! (`migrations.md` §3.3, `schema-v23.md` §6.2): complete runs, runs
//! interrupted at every stage and resumed from a new connection, and writes
//! by other connections while a backfill is pending.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hermes_state_schema::optimize::{self, FtsIndex, OptimizeProgress, Refusal};
use hermes_state_schema::rusqlite::{self, Connection, OptionalExtension, params};
use hermes_state_schema::{FtsLayout, connection, ddl, detect, fts, open_writable};
use tempfile::TempDir;

/// Messages in the seeded stores: three backfill chunks of 500 ids.
const SEEDED: i64 = 1200;

/// A word unique to one message, matched whole by unicode61 and as a
/// substring by trigram.
fn token(key: i64) -> String {
    format!("k{key:05}z")
}

/// What the test expects to find in the index: message id → (token key, role, CJK content).
#[derive(Default)]
struct Model {
    rows: BTreeMap<i64, (i64, String, bool)>,
    next_key: i64,
}

/// One message row of the seed: every fifth a tool result (token in
/// `tool_name`), every fifth an assistant call (token in `tool_calls` only),
/// every fifth CJK text, the rest plain text.
fn row_for(
    key: i64,
) -> (
    &'static str,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
) {
    let tok = token(key);
    match key % 5 {
        0 => (
            "tool",
            Some("tool output".to_owned()),
            Some(format!("probe_{tok}")),
            None,
            false,
        ),
        1 => (
            "assistant",
            None,
            None,
            Some(format!(
                "[{{\"id\": \"c{key}\", \"type\": \"function\", \"function\": {{\"name\": \"fn_{tok}\", \"arguments\": \"{{}}\"}}}}]"
            )),
            false,
        ),
        2 => (
            "user",
            Some(format!("数据库迁移 {tok} 会话存储")),
            None,
            None,
            true,
        ),
        _ => (
            "assistant",
            Some(format!("plain words {tok} and more")),
            None,
            None,
            false,
        ),
    }
}

impl Model {
    fn insert(&mut self, conn: &Connection) -> i64 {
        self.next_key += 1;
        let key = self.next_key;
        let (role, content, tool_name, tool_calls, cjk) = row_for(key);
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![if key % 2 == 0 { "s1" } else { "s2" }, role, content, tool_name, tool_calls, 1000.0 + key as f64],
        )
        .expect("insert message");
        let id = conn.last_insert_rowid();
        self.rows.insert(id, (key, role.to_owned(), cjk));
        id
    }

    fn delete(&mut self, conn: &Connection, id: i64) {
        conn.execute("DELETE FROM messages WHERE id = ?1", [id])
            .expect("delete message");
        self.rows.remove(&id);
    }

    /// Gives message `id` the text of a new key (a plain-text row).
    fn rewrite(&mut self, conn: &Connection, id: i64) {
        self.next_key += 1;
        let key = self.next_key;
        conn.execute(
            "UPDATE messages SET content = ?1, role = 'user', tool_name = NULL, tool_calls = NULL WHERE id = ?2",
            params![format!("rewritten {}", token(key)), id],
        )
        .expect("update message");
        self.rows.insert(id, (key, "user".to_owned(), false));
    }
}

/// A connection like another process's: the tokenizers registered, no open
/// algorithm run.
fn plain(path: &Path) -> Connection {
    connection::open_read_write(path).expect("open connection")
}

/// A generation-B (v11–v22 inline) store of [`SEEDED`] messages, stamped 22
/// with `fts_optimize_available = '1'`, as a v23 open leaves such a file.
fn legacy_store() -> (TempDir, PathBuf, Model) {
    legacy_store_with(false)
}

/// [`legacy_store`], optionally keeping the v23 CJK index beside the legacy tables.
fn legacy_store_with(keep_cjk: bool) -> (TempDir, PathBuf, Model) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    drop(open_writable(&path).expect("create store"));
    let conn = plain(&path);
    for name in ddl::FTS_TRIGGER_NAMES {
        conn.execute_batch(&format!("DROP TRIGGER {name}"))
            .expect("drop trigger");
    }
    conn.execute_batch(
        "DROP VIEW messages_fts_trigram_src;
         DROP TABLE messages_fts_trigram;
         DROP TABLE messages_fts;",
    )
    .expect("drop v23 FTS");
    if !keep_cjk {
        for name in ddl::CJK_TRIGGER_NAMES {
            conn.execute_batch(&format!("DROP TRIGGER {name}"))
                .expect("drop trigger");
        }
        conn.execute_batch("DROP TABLE messages_fts_cjk; DROP VIEW messages_fts_cjk_src;")
            .expect("drop CJK index");
    }
    for statement in ddl::LEGACY_FTS_BASE.iter().chain(&ddl::LEGACY_FTS_TRIGRAM) {
        conn.execute_batch(statement).expect("legacy DDL");
    }
    conn.execute_batch(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1000.0), ('s2', 'telegram', 1000.5);",
    )
    .expect("sessions");
    let mut model = Model::default();
    conn.execute_batch("BEGIN").expect("begin");
    for _ in 0..SEEDED {
        model.insert(&conn);
    }
    conn.execute_batch(
        "UPDATE schema_version SET version = 22;
         INSERT INTO state_meta (key, value) VALUES ('fts_optimize_available', '1');
         DELETE FROM state_meta WHERE key = 'fts_storage_version';
         COMMIT;",
    )
    .expect("stamp 22");
    assert_eq!(
        detect::fts_layout(&conn).expect("layout"),
        FtsLayout::LegacyInline
    );
    (dir, path, model)
}

/// A fresh v23 store (with the built-in CJK index) holding [`SEEDED`] messages.
fn v23_store() -> (TempDir, PathBuf, Model) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    drop(open_writable(&path).expect("create store"));
    let conn = plain(&path);
    conn.execute_batch(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1000.0), ('s2', 'telegram', 1000.5);",
    )
    .expect("sessions");
    let mut model = Model::default();
    conn.execute_batch("BEGIN").expect("begin");
    for _ in 0..SEEDED {
        model.insert(&conn);
    }
    conn.execute_batch("COMMIT").expect("commit");
    (dir, path, model)
}

fn meta(conn: &Connection, key: &str) -> Option<String> {
    conn.query_row("SELECT value FROM state_meta WHERE key = ?1", [key], |r| {
        r.get(0)
    })
    .optional()
    .expect("meta")
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).expect(sql)
}

fn trash_tables(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE name LIKE 'fts\\_v22\\_trash\\_%' ESCAPE '\\' ORDER BY name")
        .expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// FTS5 `integrity-check`; `against_content` compares the index with its
/// content table (`rank = 1`), otherwise only its internal consistency.
fn integrity(conn: &Connection, table: &str, against_content: bool) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "INSERT INTO {table}({table}, rank) VALUES('integrity-check', {})",
        i32::from(against_content)
    ))
}

fn matches(conn: &Connection, table: &str, query: &str) -> Vec<i64> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY rowid"
        ))
        .expect("prepare");
    stmt.query_map([format!("\"{query}\"")], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// Every live message is found exactly where it should be, deleted or
/// rewritten texts are gone, and each index holds each row exactly once.
fn assert_search_complete(conn: &Connection, model: &Model) {
    for (&id, (key, role, _)) in &model.rows {
        let tok = token(*key);
        assert_eq!(
            matches(conn, "messages_fts", &tok),
            vec![id],
            "unicode61 {tok}"
        );
        let expected = if role == "tool" { vec![] } else { vec![id] };
        assert_eq!(
            matches(conn, "messages_fts_trigram", &tok),
            expected,
            "trigram {tok}"
        );
    }
    for key in 1..=model.next_key {
        if !model.rows.values().any(|(k, _, _)| *k == key) {
            assert!(matches(conn, "messages_fts", &token(key)).is_empty());
        }
    }
    let non_tool = model.rows.values().filter(|(_, r, _)| r != "tool").count() as i64;
    assert_eq!(
        count(conn, "SELECT count(*) FROM messages_fts_docsize"),
        model.rows.len() as i64
    );
    assert_eq!(
        count(conn, "SELECT count(*) FROM messages_fts_trigram_docsize"),
        non_tool
    );
    if detect::object_exists(conn, "table", "messages_fts_cjk").expect("schema") {
        let cjk = model.rows.values().filter(|(_, _, c)| *c).count();
        assert_eq!(matches(conn, "messages_fts_cjk", "数据").len(), cjk);
        assert_eq!(
            count(conn, "SELECT count(*) FROM messages_fts_cjk_docsize"),
            non_tool
        );
    }
}

/// The final state of a finished conversion, read through a new connection.
fn assert_converted(path: &Path, model: &Model) {
    let conn = plain(path);
    assert_eq!(
        detect::fts_layout(&conn).expect("layout"),
        FtsLayout::External
    );
    assert_eq!(
        detect::object_sql(&conn, "messages_fts")
            .expect("sql")
            .as_deref(),
        Some(ddl::FTS_BASE[0].replace("IF NOT EXISTS ", "").as_str())
    );
    assert_eq!(fts::count_fts_triggers(&conn).expect("triggers"), 6);
    assert!(trash_tables(&conn).is_empty());
    for key in [
        "fts_rebuild_high_water",
        "fts_rebuild_progress",
        "fts_optimize_available",
        "fts_cjk_rebuild_high_water",
        "fts_cjk_rebuild_progress",
        "fts_cjk_stale",
    ] {
        assert_eq!(meta(&conn, key), None, "{key}");
    }
    assert_eq!(meta(&conn, "fts_storage_version").as_deref(), Some("1"));
    assert_eq!(count(&conn, "SELECT version FROM schema_version"), 23);
    for table in ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"] {
        if detect::object_exists(&conn, "table", table).expect("schema") {
            integrity(&conn, table, true).unwrap_or_else(|e| panic!("{table}: {e}"));
        }
    }
    assert!(fts::cjk_index_healthy(&conn).expect("cjk"));
    let pragma: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(pragma, "ok");
    assert_search_complete(&conn, model);
    assert!(!optimize::optimize_available(&conn).expect("available"));
}

fn run_to_end(path: &Path) -> (optimize::OptimizeReport, Vec<OptimizeProgress>) {
    let conn = plain(path);
    let mut events = Vec::new();
    let report = optimize::optimize_fts_storage(&conn, true, |e| events.push(e)).expect("optimize");
    assert!(report.ok(), "{report:?}");
    (report, events)
}

#[test]
fn converts_a_legacy_store_in_chunks() {
    let (_dir, path, model) = legacy_store();
    {
        let conn = plain(&path);
        assert!(optimize::optimize_available(&conn).expect("available"));
        // Sanity: the legacy inline index answers before the conversion.
        assert_eq!(matches(&conn, "messages_fts", &token(7)), vec![7]);
    }
    let (report, events) = run_to_end(&path);
    assert!(report.demoted);
    assert_eq!(report.base_chunks, 3);
    assert!(report.cjk_reset);
    assert_eq!(report.cjk_chunks, 3);
    assert_eq!(report.trash_dropped.len(), 10, "{:?}", report.trash_dropped);
    assert_eq!(report.vacuumed, Some(true));
    assert!(report.settled);

    assert_eq!(events[0], OptimizeProgress::Demoted { high_water: SEEDED });
    let base: Vec<(i64, bool)> = events
        .iter()
        .filter_map(|e| match e {
            OptimizeProgress::Backfilled(s) if s.index == FtsIndex::Base => {
                Some((s.progress, s.done))
            }
            _ => None,
        })
        .collect();
    assert_eq!(base, vec![(500, false), (1000, false), (1200, true)]);
    assert!(events.contains(&OptimizeProgress::RebuildStarted {
        index: FtsIndex::Cjk,
        high_water: SEEDED
    }));
    assert_eq!(
        events.last(),
        Some(&OptimizeProgress::Settled { stamped: true })
    );
    assert_converted(&path, &model);

    // A second run has nothing to do but settle again.
    let (again, _) = run_to_end(&path);
    assert!(!again.demoted && again.base_chunks == 0 && again.trash_dropped.is_empty());
    assert_converted(&path, &model);
}

#[test]
fn demotion_keeps_every_piece_in_one_transaction() {
    let (_dir, path, _model) = legacy_store();
    let conn = plain(&path);
    assert_eq!(
        optimize::demote_legacy(&conn).expect("demote"),
        Some(SEEDED)
    );
    assert_eq!(
        detect::fts_layout(&conn).expect("layout"),
        FtsLayout::External
    );
    assert_eq!(
        trash_tables(&conn),
        [
            "messages_fts_config",
            "messages_fts_content",
            "messages_fts_data",
            "messages_fts_docsize",
            "messages_fts_idx",
            "messages_fts_trigram_config",
            "messages_fts_trigram_content",
            "messages_fts_trigram_data",
            "messages_fts_trigram_docsize",
            "messages_fts_trigram_idx",
        ]
        .map(|n| format!("fts_v22_trash_{n}"))
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM fts_v22_trash_messages_fts_content"
        ),
        SEEDED
    );
    assert_eq!(
        meta(&conn, "fts_rebuild_high_water").as_deref(),
        Some("1200")
    );
    assert_eq!(meta(&conn, "fts_rebuild_progress").as_deref(), Some("0"));
    assert_eq!(meta(&conn, "fts_optimize_available"), None);
    assert_eq!(count(&conn, "SELECT count(*) FROM messages_fts_docsize"), 0);
    // The new empty index is consistent; a second demote is a no-op.
    integrity(&conn, "messages_fts", false).expect("internal consistency");
    assert_eq!(optimize::demote_legacy(&conn).expect("demote"), None);
    // Unfinished: no stamp.
    assert!(!optimize::settle(&conn).expect("settle"));
    assert_eq!(meta(&conn, "fts_storage_version"), None);
    let pragma: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(pragma, "ok");
}

#[test]
fn demotion_leaves_a_cjk_index_alone() {
    let (_dir, path, model) = legacy_store_with(true);
    let conn = plain(&path);
    let cjk_sql = detect::object_sql(&conn, "messages_fts_cjk").expect("sql");
    optimize::demote_legacy(&conn).expect("demote");
    assert_eq!(
        detect::object_sql(&conn, "messages_fts_cjk").expect("sql"),
        cjk_sql
    );
    assert!(trash_tables(&conn).iter().all(|t| !t.contains("cjk")));
    assert!(fts::cjk_index_healthy(&conn).expect("cjk"));
    let report = optimize::optimize_fts_storage(&conn, false, |_| {}).expect("optimize");
    assert!(!report.demoted && !report.cjk_reset && report.settled);
    drop(conn);
    assert_converted(&path, &model);
}

#[test]
fn resumes_after_demotion_through_a_v23_open() {
    let (_dir, path, mut model) = legacy_store();
    {
        let conn = plain(&path);
        optimize::demote_legacy(&conn).expect("demote");
    }
    // Killed here. The next process is a normal v23 open; it must accept the
    // interrupted state (no stamp, no rebuild of the gated indexes).
    let (conn, report) = open_writable(&path).expect("reopen");
    assert!(!report.fts.rebuilt);
    assert_eq!(meta(&conn, "fts_storage_version"), None);
    assert_eq!(meta(&conn, "fts_rebuild_progress").as_deref(), Some("0"));
    assert!(optimize::optimize_available(&conn).expect("available"));
    // The triggers index new rows (id > H) right away.
    let id = model.insert(&conn);
    assert_eq!(
        matches(&conn, "messages_fts", &token(model.next_key)),
        vec![id]
    );
    let run = optimize::optimize_fts_storage(&conn, false, |_| {}).expect("optimize");
    assert!(!run.demoted && run.base_chunks == 3 && run.vacuumed.is_none());
    drop(conn);
    assert_converted(&path, &model);
}

#[test]
fn resumes_mid_backfill_with_writes_from_other_connections() {
    let (_dir, path, mut model) = legacy_store();
    // A long-lived process that used the legacy index before the demotion.
    let early = plain(&path);
    assert_eq!(matches(&early, "messages_fts", &token(3)), vec![3]);
    {
        let conn = plain(&path);
        optimize::demote_legacy(&conn).expect("demote");
        let step = optimize::backfill_chunk(&conn, optimize::CHUNK_IDS).expect("chunk");
        assert_eq!(
            (step.progress, step.high_water, step.done),
            (500, SEEDED, false)
        );
        assert_eq!(step.rows_indexed, 500);
    }
    // It picks up the new schema: its writes go through the gated v23 triggers.
    let id = model.insert(&early);
    assert_eq!(
        matches(&early, "messages_fts", &token(model.next_key)),
        vec![id]
    );
    assert_eq!(matches(&early, "messages_fts", &token(3)), vec![3]);
    drop(early);
    // Killed after one chunk. Another process writes meanwhile.
    {
        let conn = plain(&path);
        let new_ids: Vec<i64> = (0..3).map(|_| model.insert(&conn)).collect();
        assert_eq!(new_ids, vec![SEEDED + 2, SEEDED + 3, SEEDED + 4]);
        // Indexed by the gated triggers at once, exactly once.
        assert_eq!(
            matches(&conn, "messages_fts", &token(model.next_key)),
            vec![SEEDED + 4]
        );
        model.delete(&conn, 900); // not yet backfilled: the trigger must stay silent
        model.rewrite(&conn, 950); // not yet backfilled: the backfill reads the new text
        model.delete(&conn, 10); // already backfilled: a correct 'delete'
        model.rewrite(&conn, 20); // already backfilled
        model.delete(&conn, SEEDED + 1); // trigger-indexed
        for table in ["messages_fts", "messages_fts_trigram"] {
            integrity(&conn, table, false).unwrap_or_else(|e| panic!("{table}: {e}"));
        }
    }
    {
        let conn = plain(&path);
        let step = optimize::backfill_chunk(&conn, optimize::CHUNK_IDS).expect("chunk");
        assert_eq!((step.progress, step.done), (1000, false));
        // One more writer between chunks.
        model.insert(&conn);
    }
    let (report, _) = run_to_end(&path);
    assert!(!report.demoted);
    assert_eq!(report.base_chunks, 1);
    assert_converted(&path, &model);
}

#[test]
fn resumes_during_teardown() {
    let (_dir, path, model) = legacy_store();
    {
        let conn = plain(&path);
        optimize::demote_legacy(&conn).expect("demote");
        while !optimize::backfill_chunk(&conn, optimize::CHUNK_IDS)
            .expect("chunk")
            .done
        {}
        let mut dropped = 0;
        let mut partial = false;
        for _ in 0..12 {
            let step = optimize::teardown_trash(&conn, 100).expect("teardown");
            assert!(step.table.is_some());
            dropped += usize::from(step.dropped);
            partial |= !step.dropped && step.rows_deleted == 100;
        }
        assert!(
            dropped >= 1 && partial,
            "dropped {dropped}, partial {partial}"
        );
        assert!(!trash_tables(&conn).is_empty());
        assert!(optimize::optimize_available(&conn).expect("available"));
    }
    let (report, _) = run_to_end(&path);
    assert!(!report.demoted && report.base_chunks == 0);
    assert!(!report.trash_dropped.is_empty());
    assert_converted(&path, &model);
}

#[test]
fn background_rebuild_repairs_a_damaged_index() {
    let (_dir, path, model) = v23_store();
    let conn = plain(&path);
    assert_search_complete(&conn, &model);
    // Remove one row from the index behind the triggers' back.
    conn.execute(
        "INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
         SELECT 'delete', id, content, tool_name, tool_calls FROM messages WHERE id = 42",
        [],
    )
    .expect("damage");
    assert!(matches(&conn, "messages_fts", &token(42)).is_empty());
    assert!(integrity(&conn, "messages_fts", true).is_err());

    let mut events = Vec::new();
    let report = optimize::rebuild_in_background(&conn, |e| events.push(e)).expect("rebuild");
    assert!(report.refused.is_none() && report.started);
    assert_eq!((report.base_chunks, report.cjk_chunks), (3, 3));
    assert_eq!(
        events[0],
        OptimizeProgress::RebuildStarted {
            index: FtsIndex::Base,
            high_water: SEEDED
        }
    );
    for table in ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"] {
        integrity(&conn, table, true).unwrap_or_else(|e| panic!("{table}: {e}"));
    }
    assert_eq!(meta(&conn, "fts_rebuild_high_water"), None);
    assert!(fts::cjk_index_healthy(&conn).expect("cjk"));
    assert_search_complete(&conn, &model);
}

#[test]
fn background_rebuild_resumes_after_a_kill() {
    let (_dir, path, mut model) = v23_store();
    {
        let conn = plain(&path);
        assert_eq!(
            optimize::begin_background_rebuild(&conn).expect("begin"),
            Some(SEEDED)
        );
        optimize::backfill_chunk(&conn, optimize::CHUNK_IDS).expect("chunk");
        // Search while pending: backfilled and new rows are found, the rest not yet.
        model.insert(&conn);
        assert_eq!(matches(&conn, "messages_fts", &token(3)), vec![3]);
        assert!(matches(&conn, "messages_fts", &token(700)).is_empty());
        model.delete(&conn, 700);
        model.rewrite(&conn, 800);
    }
    let conn = plain(&path);
    let report = optimize::rebuild_in_background(&conn, |_| {}).expect("resume");
    assert!(
        !report.started,
        "a pending rebuild is resumed, not restarted"
    );
    assert_eq!(report.base_chunks, 2);
    for table in ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"] {
        integrity(&conn, table, true).unwrap_or_else(|e| panic!("{table}: {e}"));
    }
    assert_search_complete(&conn, &model);
}

#[test]
fn a_high_water_without_progress_restarts_the_backfill() {
    let (_dir, path, model) = v23_store();
    let conn = plain(&path);
    conn.execute_batch(
        "INSERT INTO state_meta (key, value) VALUES ('fts_rebuild_high_water', '600')",
    )
    .expect("stray key");
    let step = optimize::backfill_chunk(&conn, optimize::CHUNK_IDS).expect("chunk");
    assert!(step.was_pending);
    assert_eq!((step.progress, step.high_water), (500, SEEDED));
    while !optimize::backfill_chunk(&conn, optimize::CHUNK_IDS)
        .expect("chunk")
        .done
    {}
    for table in ["messages_fts", "messages_fts_trigram"] {
        integrity(&conn, table, true).unwrap_or_else(|e| panic!("{table}: {e}"));
    }
    assert_search_complete(&conn, &model);
}

#[test]
fn resets_a_stale_cjk_index() {
    let (_dir, path, mut model) = v23_store();
    {
        // A process without the tokenizer: it drops the CJK triggers, marks
        // the index stale (schema-v23.md §6.6) and writes on.
        let conn = Connection::open(&path).expect("open");
        conn.execute_batch(
            "INSERT INTO state_meta (key, value) VALUES ('fts_cjk_stale', '1');
             DROP TRIGGER messages_fts_cjk_insert;
             DROP TRIGGER messages_fts_cjk_delete;
             DROP TRIGGER messages_fts_cjk_update;",
        )
        .expect("mark stale");
        model.insert(&conn);
        model.insert(&conn);
        model.insert(&conn);
        model.delete(&conn, 5);
    }
    let conn = plain(&path);
    assert!(optimize::optimize_available(&conn).expect("available"));
    let report = optimize::optimize_fts_storage(&conn, false, |_| {}).expect("optimize");
    assert!(report.cjk_reset && !report.demoted && report.settled);
    drop(conn);
    assert_converted(&path, &model);
}

#[test]
fn refuses_a_read_only_connection() {
    let (_dir, path, _model) = legacy_store();
    let conn = hermes_state_schema::open_read_only(&path).expect("open read-only");
    assert!(!optimize::optimize_available(&conn).expect("available"));
    let report = optimize::optimize_fts_storage(&conn, true, |_| {}).expect("optimize");
    assert_eq!(report.refused, Some(Refusal::ReadOnly));
    assert_eq!(Refusal::ReadOnly.reason(), "read_only");
    let rebuild = optimize::rebuild_in_background(&conn, |_| {}).expect("rebuild");
    assert_eq!(rebuild.refused, Some(Refusal::ReadOnly));
}

#[test]
fn background_rebuild_refuses_the_legacy_layout() {
    let (_dir, path, _model) = legacy_store();
    let conn = plain(&path);
    let report = optimize::rebuild_in_background(&conn, |_| {}).expect("rebuild");
    assert_eq!(report.refused, Some(Refusal::LegacyLayout));
    assert_eq!(
        detect::fts_layout(&conn).expect("layout"),
        FtsLayout::LegacyInline
    );
}

#[test]
fn pause_follows_the_duty_cycle() {
    use std::time::Duration;
    assert_eq!(
        optimize::pause_after(Duration::from_millis(10)),
        Duration::from_millis(200)
    );
    assert_eq!(
        optimize::pause_after(Duration::from_millis(100)),
        Duration::from_millis(400)
    );
}
