//! Living beside a running original: a second connection plays a Hermes
//! process that does NOT have the `cjk_unicode61` tokenizer (as almost every
//! install). It opens the file first, applies the original's open rules
//! (`schema-v23.md` §2 and the tokenizer-absent rule of §6.6), and keeps
//! writing before, between and after our reads and our writes. Every one of
//! its writes must succeed, whichever of the two created the file.

use std::path::Path;

use hermes_state::prelude::Exchange;
use hermes_state::rusqlite::{Connection, OptionalExtension, params};
use hermes_state::{NewMessage, NewSession, SearchOptions, SessionDb};
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Listings;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;
use xtask::fixtures::{Shape, write_fixture};

/// A Hermes process without the CJK tokenizer, holding its connection open.
struct Original {
    conn: Connection,
    messages_written: i64,
}

impl Original {
    /// Opens as the v23 original does on a fixed SQLite: busy timeout 1 s,
    /// WAL unless the file is already WAL (it never downgrades), foreign keys,
    /// then the tokenizer-absent rule: live CJK triggers are dropped after
    /// `fts_cjk_stale` is set.
    fn open(path: &Path) -> Original {
        // rusqlite's bundled SQLite has no `cjk_unicode61`: nothing registers it here.
        let conn = Connection::open(path).expect("the original opens");
        conn.busy_timeout(std::time::Duration::from_millis(1000))
            .expect("busy timeout");
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .expect("journal mode");
        if mode != "wal" {
            let _: String = conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
                .expect("wal");
        }
        conn.pragma_update(None, "foreign_keys", "ON")
            .expect("foreign keys");
        let live_cjk_triggers: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages\\_fts\\_cjk\\_%' ESCAPE '\\'",
                [],
                |r| r.get(0),
            )
            .expect("triggers");
        let has_cjk_table: bool = conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages_fts_cjk')",
                [],
                |r| r.get(0),
            )
            .expect("table");
        if has_cjk_table && live_cjk_triggers > 0 {
            conn.execute_batch(
                "INSERT INTO state_meta(key, value) VALUES('fts_cjk_stale', '1')
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value;
                 DROP TRIGGER IF EXISTS messages_fts_cjk_insert;
                 DROP TRIGGER IF EXISTS messages_fts_cjk_delete;
                 DROP TRIGGER IF EXISTS messages_fts_cjk_update;",
            )
            .expect("the tokenizer-absent rule");
        }
        Original {
            conn,
            messages_written: 0,
        }
    }

    /// `create_session` + `append_message`, as the original writes them, each
    /// in its own `BEGIN IMMEDIATE` transaction. Panics if any write fails:
    /// that is the failure this file tests for.
    fn keeps_writing(&mut self, session: &str, text: &str) {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .expect("the original takes the write lock");
        self.conn
            .execute(
                "INSERT OR IGNORE INTO sessions (id, source, started_at) VALUES (?1, 'telegram', 1795000000.0)",
                [session],
            )
            .expect("the original creates its session");
        self.conn.execute_batch("COMMIT").expect("commit");
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .expect("the original takes the write lock");
        let inserted = self.conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, 'user', ?2, 1795000001.0)",
            params![session, text],
        );
        if let Err(error) = inserted {
            let _ = self.conn.execute_batch("ROLLBACK");
            panic!("the running original could not record a message: {error}");
        }
        self.conn
            .execute(
                "UPDATE sessions SET message_count = message_count + 1 WHERE id = ?1",
                [session],
            )
            .expect("the original counts it");
        self.conn.execute_batch("COMMIT").expect("commit");
        self.messages_written += 1;
    }
}

fn journal_mode(path: &Path) -> String {
    let conn = Connection::open_with_flags(
        path,
        hermes_state::rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("inspect");
    conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("journal mode")
}

fn schema_objects(path: &Path) -> Vec<String> {
    let conn = Connection::open_with_flags(
        path,
        hermes_state::rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("inspect");
    let mut stmt = conn
        .prepare("SELECT type || ' ' || name FROM sqlite_master ORDER BY rowid")
        .expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// Our reads, each between two writes of the original.
fn our_reads_between_its_writes(path: &Path, original: &mut Original, word: &str) {
    let db = SessionDb::open(path).expect("we open the live file");
    original.keeps_writing("orig", &format!("{word} before our first read"));
    let listed = db.recent_sessions(&Default::default()).expect("list");
    assert!(listed.iter().any(|s| s.session.id == "orig"), "{listed:?}");
    original.keeps_writing("orig", &format!("{word} after our listing"));
    let hits = db
        .search_messages(word, &SearchOptions::default())
        .expect("search");
    assert!(!hits.is_empty(), "our search finds the original's messages");
    original.keeps_writing("orig", &format!("{word} after our search"));
    let messages = db.get_messages("orig").expect("messages");
    assert!(!messages.is_empty());
    original.keeps_writing("orig", &format!("{word} after our message read"));
    db.model_totals().expect("stats");
    db.export_session("orig").expect("export");
    original.keeps_writing("orig", &format!("{word} after our export"));
    db.close().expect("close");
}

/// Our writes, each between two writes of the original.
fn our_writes_between_its_writes(path: &Path, original: &mut Original) {
    let db = SessionDb::open(path).expect("we open the live file for writing");
    db.create_session(&NewSession::new("ours", "cli"))
        .expect("we create a session");
    original.keeps_writing("orig", "after our first write");
    db.append_message(&NewMessage::new("ours", "user").content("我们的独角兽乐园项目"))
        .expect("we append");
    original.keeps_writing("orig", "after our append");
    db.set_session_title("ours", Some("our title"))
        .expect("title");
    original.keeps_writing("orig", "after our title");
    db.close().expect("close");
    // A second handle of ours (a later command) must not bring the triggers back either.
    let again = SessionDb::open(path).expect("reopen");
    again
        .append_message(&NewMessage::new("ours", "assistant").content("再来一次"))
        .expect("we append again");
    original.keeps_writing("orig", "after our second handle wrote");
    again.close().expect("close");
}

fn cjk_triggers(path: &Path) -> usize {
    schema_objects(path)
        .iter()
        .filter(|o| o.starts_with("trigger messages_fts_cjk"))
        .count()
}

#[test]
fn the_original_keeps_writing_on_a_file_it_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    write_fixture(&path, Shape::V23).expect("a v23 file as the original leaves it");
    let mut original = Original::open(&path);
    original.keeps_writing("orig", "zebra written before we start");
    let objects_before = schema_objects(&path);
    let mode_before = journal_mode(&path);

    our_reads_between_its_writes(&path, &mut original, "zebra");
    assert_eq!(
        schema_objects(&path),
        objects_before,
        "reading created or dropped nothing"
    );
    our_writes_between_its_writes(&path, &mut original);
    assert_eq!(
        cjk_triggers(&path),
        0,
        "no CJK triggers handed to the original"
    );
    assert!(
        !schema_objects(&path).contains(&"table messages_fts_cjk".to_owned()),
        "no CJK index created on an existing file"
    );
    assert_eq!(journal_mode(&path), mode_before);
    original.keeps_writing("orig", "zebra after everything");
    assert_eq!(original.messages_written, 11);

    let db = SessionDb::open_read_only(&path).expect("read back");
    let ours: Vec<i64> = db
        .search_messages("独角兽", &SearchOptions::default())
        .expect("search")
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(
        ours.len(),
        1,
        "our CJK message is found without the CJK index"
    );
    let counted: i64 = db
        .read(|conn| {
            Ok(conn
                .query_row(
                    "SELECT message_count FROM sessions WHERE id = 'orig'",
                    [],
                    |r| r.get(0),
                )
                .expect("count"))
        })
        .expect("read");
    assert_eq!(counted, original.messages_written);
}

#[test]
fn the_original_keeps_writing_on_a_file_we_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    {
        let db = SessionDb::open(&path).expect("we create the store");
        db.create_session(&NewSession::new("first", "cli"))
            .expect("session");
        db.append_message(&NewMessage::new("first", "user").content("zebra crossing 斑马线"))
            .expect("append");
        db.close().expect("close");
    }
    assert_eq!(
        cjk_triggers(&path),
        3,
        "a store we create carries the CJK index"
    );
    let mut original = Original::open(&path);
    assert_eq!(
        cjk_triggers(&path),
        0,
        "the original dropped the CJK triggers"
    );
    let stale: Option<String> = original
        .conn
        .query_row(
            "SELECT value FROM state_meta WHERE key = 'fts_cjk_stale'",
            [],
            |r| r.get(0),
        )
        .optional()
        .expect("meta");
    assert_eq!(stale.as_deref(), Some("1"));
    original.keeps_writing("orig", "zebra written before we start");

    our_reads_between_its_writes(&path, &mut original, "zebra");
    our_writes_between_its_writes(&path, &mut original);
    assert_eq!(
        cjk_triggers(&path),
        0,
        "neither our reads nor our writes recreated the CJK triggers"
    );
    original.keeps_writing("orig", "zebra after everything");
    assert_eq!(original.messages_written, 11);
}

#[test]
fn reading_leaves_the_file_byte_for_byte_unchanged_and_delete_mode_stays() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    write_fixture(&path, Shape::V23).expect("fixture");
    {
        // The owner keeps this file in DELETE mode (their Hermes links a SQLite with the WAL-reset bug).
        let conn = Connection::open(&path).expect("owner");
        let mode: String = conn
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
            .expect("delete");
        assert_eq!(mode, "delete");
    }
    let bytes = std::fs::read(&path).expect("bytes");
    let files = |dir: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let listing = files(dir.path());
    let db = SessionDb::open(&path).expect("open");
    db.recent_sessions(&Default::default()).expect("list");
    db.search_messages("docker", &SearchOptions::default())
        .expect("search");
    db.model_totals().expect("stats");
    db.close().expect("close");
    let read_only = SessionDb::open_read_only(&path).expect("read-only handle");
    read_only.doctor().expect("doctor");
    read_only.close().expect("close");
    assert_eq!(
        std::fs::read(&path).expect("bytes"),
        bytes,
        "file unchanged"
    );
    assert_eq!(files(dir.path()), listing, "no sidecar created or left");

    let db = SessionDb::open(&path).expect("open for a write");
    db.create_session(&NewSession::new("w", "cli"))
        .expect("write");
    assert_eq!(
        db.journal_mode(),
        Some(hermes_state::JournalMode::Delete),
        "our write keeps DELETE"
    );
    db.close().expect("close");
    assert_eq!(journal_mode(&path), "delete");
}

/// The original holds its write lock (an open `BEGIN IMMEDIATE` with an
/// uncommitted insert) for longer than our whole retry budget: our open and
/// our reads must not wait for it (WAL readers do not block on a writer);
/// a read that tried to migrate would fail here with `Busy` after ~16 s.
#[test]
fn reads_do_not_wait_for_the_originals_write_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    write_fixture(&path, Shape::Fresh(22)).expect("an older file the original has open");
    let original = Original::open(&path);
    original
        .conn
        .execute_batch(
            "BEGIN IMMEDIATE;
             INSERT INTO sessions (id, source, started_at) VALUES ('pending', 'cli', 1.0);",
        )
        .expect("the original holds the write lock");

    let db = SessionDb::open(&path).expect("open while the lock is held");
    let listed = db.recent_sessions(&Default::default()).expect("list");
    assert!(!listed.is_empty());
    assert!(
        listed.iter().all(|s| s.session.id != "pending"),
        "an uncommitted session is not seen"
    );
    db.search_messages("docker", &SearchOptions::default())
        .expect("search while the lock is held");
    db.close().expect("close");
    original.conn.execute_batch("COMMIT").expect("commit");
}
