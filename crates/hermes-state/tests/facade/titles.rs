//! Title writes through the facade (`api.md` §6.2): normalisation, the
//! uniqueness rule and its compression-ancestor transfer, clearing, unknown
//! ids, the length limit, `set_auto_title_if_empty`, and the unique index.

use hermes_state::ErrorKind;
use hermes_state::rusqlite::{self, Connection, OpenFlags};

use crate::common::Store;
use hermes_state_core::store::Lineage;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;
use hermes_state_testkit::build::add_child;

/// Title shorthands on the shared store.
impl Store {
    fn set(&self, id: &str, title: Option<&str>) -> bool {
        self.db
            .set_session_title(id, title)
            .unwrap_or_else(|e| panic!("set_session_title({id:?}, {title:?}): {e}"))
    }

    fn title(&self, id: &str) -> Option<String> {
        self.db.get_session_title(id).expect("get_session_title")
    }

    /// The stored title, read with raw SQL on the store's connection.
    fn stored_title(&self, id: &str) -> Option<String> {
        self.db
            .read(|conn| {
                Ok(conn
                    .query_row("SELECT title FROM sessions WHERE id = ?1", [id], |r| {
                        r.get(0)
                    })
                    .expect("the session exists"))
            })
            .expect("read")
    }

    fn session_rows(&self) -> i64 {
        self.db
            .read(|conn| {
                Ok(conn
                    .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
                    .expect("count"))
            })
            .expect("read")
    }

    /// A second connection on the same file, bypassing the API.
    fn raw(&self) -> Connection {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .expect("raw connection");
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .expect("busy timeout");
        conn
    }
}

/// Asserts a refused title: kind `Constraint`, the original's message.
fn assert_in_use(result: hermes_state::Result<bool>, title: &str, holder: &str) {
    let error = result.expect_err("the title is held by another session");
    assert_eq!(error.kind(), ErrorKind::Constraint, "{error}");
    assert_eq!(
        error.to_string(),
        format!("Title '{title}' is already in use by session {holder}")
    );
}

#[test]
fn set_session_title_normalises_and_stores() {
    let store = Store::new();
    store.session("s");
    assert!(store.set("s", Some("  Hello \t World\u{200b}\n\u{a0}again\x07  ")));
    assert_eq!(
        store.stored_title("s").as_deref(),
        Some("Hello World again")
    );
    assert_eq!(store.title("s").as_deref(), Some("Hello World again"));
    // Setting the same title again is an update of an existing row: true.
    assert!(store.set("s", Some("Hello World again")));
    // A different spelling normalising to the same title: also fine on itself.
    assert!(store.set("s", Some("Hello  World   again")));
    assert_eq!(
        store.stored_title("s").as_deref(),
        Some("Hello World again")
    );
    // 100 code points are accepted as they are.
    let hundred = "😀".repeat(100);
    assert!(store.set("s", Some(&hundred)));
    assert_eq!(store.stored_title("s"), Some(hundred));
}

#[test]
fn duplicate_title_of_an_unrelated_session_is_refused() {
    let store = Store::new();
    store.session("a");
    store.session("b");
    assert!(store.set("a", Some("X")));
    assert_in_use(store.db.set_session_title("b", Some("X")), "X", "a");
    // The message names the normalised title.
    assert_in_use(store.db.set_session_title("b", Some("  X\t")), "X", "a");
    assert_eq!(store.stored_title("b"), None, "nothing written");
    assert_eq!(store.stored_title("a").as_deref(), Some("X"));

    // A titled loser keeps its own title.
    assert!(store.set("b", Some("Y")));
    assert_in_use(store.db.set_session_title("b", Some("X")), "X", "a");
    assert_eq!(store.stored_title("b").as_deref(), Some("Y"));
}

/// §6.2 transfer example.
#[test]
fn title_moves_from_a_compression_ancestor() {
    let store = Store::new();
    store.session("root");
    assert!(store.set("root", Some("Base")));
    store
        .db
        .end_session("root", "compression")
        .expect("end_session");
    add_child(&store.db, "tip", "root");
    assert!(store.set("tip", Some("Base #2")));

    assert!(store.set("tip", Some("Base")));
    assert_eq!(store.stored_title("root"), None);
    assert_eq!(store.stored_title("tip").as_deref(), Some("Base"));

    store.session("other");
    assert_in_use(
        store.db.set_session_title("other", Some("Base")),
        "Base",
        "tip",
    );
    assert_eq!(store.stored_title("other"), None);
    assert_eq!(store.stored_title("tip").as_deref(), Some("Base"));
}

#[test]
fn title_moves_through_a_chain_of_compressions_only() {
    let store = Store::new();
    // root (compression) → mid (compression) → tip: the grandparent's title moves.
    store.session("root");
    assert!(store.set("root", Some("Chain")));
    store.db.end_session("root", "compression").expect("end");
    add_child(&store.db, "mid", "root");
    store.db.end_session("mid", "compression").expect("end");
    add_child(&store.db, "tip", "mid");
    assert!(store.set("tip", Some("Chain")));
    assert_eq!(store.stored_title("root"), None);
    assert_eq!(store.stored_title("tip").as_deref(), Some("Chain"));

    // A parent ended otherwise (branch) keeps its title: the child is refused.
    store.session("fork");
    assert!(store.set("fork", Some("Fork")));
    store.db.end_session("fork", "branched").expect("end");
    add_child(&store.db, "branch", "fork");
    assert_in_use(
        store.db.set_session_title("branch", Some("Fork")),
        "Fork",
        "fork",
    );

    // A live (not ended) parent keeps its title too.
    store.session("live");
    assert!(store.set("live", Some("Live")));
    add_child(&store.db, "live_child", "live");
    assert_in_use(
        store.db.set_session_title("live_child", Some("Live")),
        "Live",
        "live",
    );

    // The walk stops at a parent not ended by compression: g (compression)
    // → p (live) → c; c cannot take g's title.
    store.session("g");
    assert!(store.set("g", Some("Grand")));
    store.db.end_session("g", "compression").expect("end");
    add_child(&store.db, "p", "g");
    add_child(&store.db, "c", "p");
    assert_in_use(store.db.set_session_title("c", Some("Grand")), "Grand", "g");

    // A descendant is not an ancestor: the root cannot take its tip's title back.
    assert_in_use(
        store.db.set_session_title("root", Some("Chain")),
        "Chain",
        "tip",
    );
    assert_eq!(store.stored_title("fork").as_deref(), Some("Fork"));
    assert_eq!(store.stored_title("live").as_deref(), Some("Live"));
    assert_eq!(store.stored_title("g").as_deref(), Some("Grand"));
}

#[test]
fn titles_differing_in_case_coexist() {
    let store = Store::new();
    store.session("upper");
    store.session("lower");
    assert!(store.set("upper", Some("Proj")));
    assert!(store.set("lower", Some("proj")));
    assert_eq!(store.stored_title("upper").as_deref(), Some("Proj"));
    assert_eq!(store.stored_title("lower").as_deref(), Some("proj"));
    assert_eq!(
        store.db.resolve_session_by_title("proj").expect("resolve"),
        Some("lower".to_owned())
    );
}

#[test]
fn clearing_and_unknown_ids() {
    let store = Store::new();
    store.session("s");
    assert!(store.set("s", Some("Gone soon")));
    assert!(store.set("s", None));
    assert_eq!(store.stored_title("s"), None);
    // Clearing an untitled session still updates its row.
    assert!(store.set("s", None));
    // Whitespace-only normalises to None: a clear.
    assert!(store.set("s", Some("Again")));
    assert!(store.set("s", Some(" \t\u{200b} ")));
    assert_eq!(store.stored_title("s"), None);
    // A cleared title is free for another session.
    store.session("t");
    assert!(store.set("s", Some("Free")));
    assert!(store.set("s", None));
    assert!(store.set("t", Some("Free")));

    assert!(!store.set("missing", Some("Anything")));
    assert!(!store.set("missing", None));
    assert_eq!(store.title("missing"), None);
    assert_eq!(store.session_rows(), 2, "no session created");
}

#[test]
fn too_long_title_is_invalid_input_and_writes_nothing() {
    let store = Store::new();
    store.session("s");
    assert!(store.set("s", Some("Keep me")));
    for long in [
        "a".repeat(101),
        "😀".repeat(101),
        format!("  {}  ", "b".repeat(101)),
    ] {
        let error = store
            .db
            .set_session_title("s", Some(&long))
            .expect_err("101 code points");
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
        assert_eq!(error.to_string(), "Title too long (101 chars, max 100)");
        assert_eq!(store.stored_title("s").as_deref(), Some("Keep me"));
    }
    // Checked before anything else: even for an unknown id.
    let error = store
        .db
        .set_session_title("missing", Some(&"c".repeat(101)))
        .expect_err("too long");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);

    store.session("auto");
    let error = store
        .db
        .set_auto_title_if_empty("auto", &"d".repeat(101))
        .expect_err("too long");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(store.stored_title("auto"), None);
}

#[test]
fn auto_title_only_when_empty() {
    let store = Store::new();
    store.session("s");
    assert!(
        store
            .db
            .set_auto_title_if_empty("s", "  First   auto ")
            .expect("auto title")
    );
    assert_eq!(store.stored_title("s").as_deref(), Some("First auto"));
    assert!(
        !store
            .db
            .set_auto_title_if_empty("s", "Second auto")
            .expect("auto title")
    );
    assert_eq!(store.stored_title("s").as_deref(), Some("First auto"));
    assert!(
        !store
            .db
            .set_auto_title_if_empty("missing", "Whatever")
            .expect("auto title")
    );
    assert_eq!(store.title("missing"), None);

    // `api.md` §6: a titled session answers false and no uniqueness check
    // runs; on an untitled one the check still raises.
    store.session("other");
    assert!(store.set("other", Some("Taken")));
    assert!(
        !store
            .db
            .set_auto_title_if_empty("s", "Taken")
            .expect("a titled session is left alone")
    );
    assert_eq!(store.stored_title("s").as_deref(), Some("First auto"));
    store.session("empty");
    assert_in_use(
        store.db.set_auto_title_if_empty("empty", "Taken"),
        "Taken",
        "other",
    );
    assert_eq!(store.stored_title("empty"), None);

    // A compression ancestor's title moves to an untitled continuation.
    store.session("root");
    assert!(store.set("root", Some("Moved")));
    store.db.end_session("root", "compression").expect("end");
    add_child(&store.db, "tip", "root");
    assert!(
        store
            .db
            .set_auto_title_if_empty("tip", "Moved")
            .expect("auto title")
    );
    assert_eq!(store.stored_title("root"), None);
    assert_eq!(store.stored_title("tip").as_deref(), Some("Moved"));
}

#[test]
fn unique_index_holds_across_spellings() {
    let store = Store::new();
    store.session("a");
    store.session("b");
    assert!(store.set("a", Some("a  b")));
    assert_eq!(store.stored_title("a").as_deref(), Some("a b"));
    for spelling in ["a b", "a\tb", " a\u{a0}b ", "a\u{200b} b", "a\n\nb"] {
        assert_in_use(store.db.set_session_title("b", Some(spelling)), "a b", "a");
        assert_eq!(store.stored_title("b"), None);
    }

    // The index itself: partial unique index on title.
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
    let raw = store.raw();
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
    assert_eq!(store.stored_title("b"), None);
}

#[test]
fn lineage_numbering_round_trip() {
    let store = Store::new();
    store.session("root");
    assert_eq!(
        store
            .db
            .get_next_title_in_lineage("Docker fix")
            .expect("next"),
        "Docker fix"
    );
    assert!(store.set("root", Some("Docker fix")));
    store.db.end_session("root", "compression").expect("end");
    add_child(&store.db, "cont", "root");
    let next = store
        .db
        .get_next_title_in_lineage("Docker fix")
        .expect("next");
    assert_eq!(next, "Docker fix #2");
    assert!(store.set("cont", Some(&next)));
    assert_eq!(
        store
            .db
            .resolve_session_by_title("Docker fix")
            .expect("resolve"),
        Some("cont".to_owned())
    );
    assert_eq!(
        store
            .db
            .get_next_title_in_lineage("Docker fix #2")
            .expect("next"),
        "Docker fix #3"
    );
    assert_eq!(store.db.lineage_root("cont").expect("root"), "root");
    assert_eq!(
        store.db.resolve_session_by_title("Nope").expect("resolve"),
        None
    );
}
