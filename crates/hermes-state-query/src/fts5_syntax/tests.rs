//! The checker's error texts against SQLite's own, on the `messages_fts`
//! table of a v23 store (written by the fixtures, so this crate issues no
//! DDL). The accept/reject verdict itself is property-tested in
//! `tests/sanitize.rs` and fuzzed in `fuzz/`.

use rusqlite::Connection;
use xtask::fixtures::{Shape, write_fixture};

use super::{Fts5SyntaxError, check_fts5_syntax};

/// What FTS5 says about `query` on `messages_fts`: `None` when the MATCH runs, else its message.
pub(crate) fn sqlite_says(conn: &Connection, query: &str) -> Option<String> {
    let result = conn.query_row(
        "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1",
        [query],
        |row| row.get::<_, i64>(0),
    );
    match result {
        Ok(_) => None,
        Err(rusqlite::Error::SqliteFailure(_, Some(message))) => Some(message),
        Err(other) => panic!("{query:?}: not an FTS5 query error: {other}"),
    }
}

pub(crate) fn v23_store() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("state.db");
    write_fixture(&path, Shape::EraEnd(23)).expect("v23 fixture");
    let conn = Connection::open(&path).expect("open the fixture");
    (dir, conn)
}

#[test]
fn error_texts_are_sqlites() {
    use Fts5SyntaxError::*;
    let deep_parens = format!("{}a{}", "(".repeat(120), ")".repeat(120));
    let deep_not = format!("a{}", " NOT a".repeat(257));
    let cases: Vec<(&str, Option<Fts5SyntaxError>)> = vec![
        ("docker deployment", None),
        ("\"chat-send\"*", None),
        ("content:docker", None),
        ("NEAR(a b, 5)", None),
        ("*reads", None),
        ("50%", Some(SyntaxErrorNear("%".into()))),
        ("don't", Some(SyntaxErrorNear("'".into()))),
        ("a..b", Some(SyntaxErrorNear(".".into()))),
        ("a--b", Some(SyntaxErrorNear("-".into()))),
        ("-foo", Some(NoSuchColumn("foo".into()))),
        ("foo-", Some(SyntaxErrorNear("".into()))),
        ("NOT x", Some(SyntaxErrorNear("NOT".into()))),
        ("a AND OR b", Some(SyntaxErrorNear("OR".into()))),
        // `a (` reads as a NEAR group named `a`.
        ("a (b)", Some(SyntaxErrorNear("a".into()))),
        ("near(a b)", Some(SyntaxErrorNear("near".into()))),
        ("\"unterminated", Some(UnterminatedString)),
        ("a \"b", Some(UnterminatedString)),
        ("nope:x", Some(NoSuchColumn("nope".into()))),
        (
            "{content \"Tool\"\"s\"}: x",
            Some(NoSuchColumn("Tool\"s".into())),
        ),
        ("NEAR(a b, 5x)", Some(ExpectedInteger("5x".into()))),
        ("*foo bar", Some(UnknownSpecialQuery("foo".into()))),
        (&deep_parens, Some(ParserStackOverflow)),
        (&deep_not, Some(TooDeep { max_depth: 256 })),
    ];
    let (_dir, conn) = v23_store();
    let mut wrong = Vec::new();
    for (query, expected) in cases {
        let checked = check_fts5_syntax(query).err();
        let text = checked.as_ref().map(ToString::to_string);
        let sqlite = sqlite_says(&conn, query);
        if checked != expected || text != sqlite {
            wrong.push(format!(
                "{query:?}: checker {checked:?} ({text:?}), expected {expected:?}, SQLite {sqlite:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn reading_stops_at_the_first_nul_as_sqlite_does() {
    assert_eq!(check_fts5_syntax("docker\0%"), Ok(()));
    assert_eq!(
        check_fts5_syntax("50%\0docker"),
        Err(Fts5SyntaxError::SyntaxErrorNear("%".into()))
    );
}
