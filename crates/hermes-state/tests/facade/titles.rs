//! The title index on the file (`api.md` §6.2): a partial unique index
//! that refuses a duplicate written around the API and lets untitled
//! sessions coexist. The title rules themselves (normalisation,
//! uniqueness, the move from a compression ancestor, clearing, the length
//! limit, automatic titles) are the conformance suite's `titles` cases, on
//! every backend.

use hermes_state::rusqlite::{self, Connection};

use crate::common::Store;
use hermes_state_core::store::Titles;

#[test]
fn the_unique_title_index_refuses_a_raw_duplicate_and_not_null_titles() {
    let store = Store::new();
    store.session("a");
    store.session("b");
    assert!(store.db.set_session_title("a", Some("a  b")).expect("set"));
    let index: String = store
        .db
        .read(|conn| {
            Ok(conn
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'idx_sessions_title_unique'",
                    [],
                    |r| r.get(0),
                )
                .expect("the unique title index exists"))
        })
        .expect("read");
    assert_eq!(
        index,
        "CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL"
    );
    // Bypassing the API, SQLite refuses the duplicate ...
    let raw = Connection::open(&store.path).expect("raw connection");
    let refused = raw
        .execute("UPDATE sessions SET title = 'a b' WHERE id = 'b'", [])
        .expect_err("the unique index refuses a duplicate title");
    assert!(
        matches!(
            refused,
            rusqlite::Error::SqliteFailure(ref e, _)
                if e.code == rusqlite::ErrorCode::ConstraintViolation
        ),
        "{refused}"
    );
    assert!(refused.to_string().contains("UNIQUE"), "{refused}");
    // ... while any number of untitled sessions coexist.
    raw.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('c', 'cli', 1.0), ('d', 'cli', 2.0)",
        [],
    )
    .expect("NULL titles are not unique-checked");
    assert_eq!(store.db.get_session_title("b").expect("read"), None);
}
