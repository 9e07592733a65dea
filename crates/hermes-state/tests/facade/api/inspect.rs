//! The inspection reads of the facade: counts, the file's shape, the
//! migration plan (plain data, computed without writing).

use hermes_state::{NewMessage, NewSession, SessionCountOptions, SessionDb};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

#[test]
fn session_count_counts_all_or_one_source() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    assert_eq!(
        db.session_count(&SessionCountOptions::all())
            .expect("count"),
        0
    );
    for (id, source) in [("a", "cli"), ("b", "cli"), ("c", "telegram")] {
        db.create_session(&NewSession::new(id, source))
            .expect("create");
    }
    db.append_message(&NewMessage::new("c", "user").content("hi"))
        .expect("append");
    assert_eq!(
        db.session_count(&SessionCountOptions::all())
            .expect("count"),
        3
    );
    let of = |source: &str| SessionCountOptions {
        source: Some(source.into()),
        ..SessionCountOptions::default()
    };
    assert_eq!(db.session_count(&of("cli")).expect("count"), 2);
    assert_eq!(db.session_count(&of("discord")).expect("count"), 0);
    assert_eq!(db.message_count_of_source("telegram").expect("count"), 1);
    assert_eq!(db.message_count_of_source("cli").expect("count"), 0);
}

#[test]
fn a_fresh_store_is_up_to_date_and_described() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    SessionDb::open(&path)
        .expect("create")
        .close()
        .expect("close");
    let db = SessionDb::open_read_only(&path).expect("open");
    let plan = db.migration_plan().expect("plan").expect("a store");
    assert!(plan.up_to_date, "{plan:?}");
    assert_eq!(plan.to_version, 23);
    let info = db.schema_info().expect("info");
    assert_eq!(info.schema_version, Some(23));
    assert_eq!(info.fts_layout, "external");
    assert!(
        info.tables
            .iter()
            .any(|t| t.name == "sessions" && t.rows == Some(0))
    );
    assert!(info.fts.messages_fts);
}

/// An empty file (0 bytes, or a database without tables) is described as
/// what it is, a new store, by a read-only handle: not as a store missing its
/// tables (kind `Corrupt`, "the file is damaged"), which it read as before.
#[test]
fn an_empty_file_is_an_empty_shape_not_a_damaged_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let zero = dir.path().join("zero.db");
    std::fs::write(&zero, b"").expect("an empty file");
    let tableless = dir.path().join("tableless.db");
    {
        let conn = hermes_state::rusqlite::Connection::open(&tableless).expect("open");
        conn.execute_batch("PRAGMA user_version = 7")
            .expect("a database of one page, no table");
    }
    for path in [&zero, &tableless] {
        let before = std::fs::read(path).expect("read");
        let db = SessionDb::open_read_only(path).expect("open read-only");
        assert_eq!(
            db.store_shape().expect("shape"),
            hermes_state::FileShape::Empty,
            "{}",
            path.display()
        );
        assert_eq!(db.migration_plan().expect("plan"), None);
        let info = db.schema_info().expect("info");
        assert!(info.empty, "{info:?}");
        assert!(info.tables.is_empty(), "{info:?}");
        drop(db);
        assert_eq!(std::fs::read(path).expect("read"), before, "unchanged");
    }
}
