//! The contract crate's FTS5 syntax checker (`hermes_state_core::fts5_syntax`)
//! and its query problems against SQLite's own error texts, on the
//! `messages_fts` table of a v23 store (written by the fixtures, so this
//! crate issues no DDL). The accept/reject verdict itself is property-tested
//! in `sanitize.rs` and fuzzed in `fuzz/`; the checks that need no SQLite
//! are the contract crate's tests.

use hermes_state_query::fts5_syntax::{Fts5SyntaxError, check_fts5_syntax};
use hermes_state_query::search::{QueryProblem, query_problem};
use rusqlite::Connection;
use xtask::fixtures::{Shape, write_fixture};

/// What FTS5 says about `query` on `messages_fts`: `None` when the MATCH runs, else its message.
fn sqlite_says(conn: &Connection, query: &str) -> Option<String> {
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

fn v23_store() -> (tempfile::TempDir, Connection) {
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

fn near(token: &str) -> Option<Fts5SyntaxError> {
    Some(Fts5SyntaxError::SyntaxErrorNear(token.to_owned()))
}

/// Every input of the sanitizer examples of `api.md` §7 whose output
/// FTS5 rejects, or that leaves nothing to search, and a sample of those
/// that are fine; the error is checked against FTS5 itself.
#[test]
fn query_problems_of_the_spec_examples_are_fts5s() {
    let unparsable: &[(&str, &str, Option<Fts5SyntaxError>)] = &[
        ("a--b", "a--b", near("-")),
        ("a..b", "a..b", near(".")),
        ("foo-", "foo-", near("")),
        (
            "-foo",
            "-foo",
            Some(Fts5SyntaxError::NoSuchColumn("foo".into())),
        ),
        ("NOT NOT x", "NOT x", near("NOT")),
        ("a AND OR b", "a AND OR b", near("OR")),
        ("don't", "don't", near("'")),
        ("50%", "50%", near("%")),
        ("alice@example.com", "alice@\"example.com\"", near("@")),
        ("src/main.py", "src/\"main.py\"", near("/")),
        ("#123", "#123", near("#")),
        ("$5", "$5", near("$")),
        ("a,b", "a,b", near(",")),
        ("ok?", "ok?", near("?")),
        ("'single quotes'", "'single quotes'", near("'")),
    ];
    let (_dir, conn) = v23_store();
    for (input, sanitized, error) in unparsable {
        let error = error.clone().expect("an error");
        assert_eq!(
            sqlite_says(&conn, sanitized),
            Some(error.to_string()),
            "FTS5 on {sanitized:?}"
        );
        assert_eq!(
            query_problem(input),
            Some(QueryProblem::Unparsable {
                sanitized: (*sanitized).to_owned(),
                error,
            }),
            "{input:?}"
        );
    }
    for input in [
        "AND", "OR", "NOT", "  AND  ", "***", "*", "* *", "", "   ", "(+)",
    ] {
        assert_eq!(
            query_problem(input),
            Some(QueryProblem::NothingToSearch),
            "{input:?}"
        );
    }
    for input in [
        "docker deployment",
        "chat-send",
        "\"exact phrase\"",
        "python NOT java",
        "\"unterminated",
        "NEAR(a b)",
        "TODO: fix",
        "foo*bar",
        "a\"b\"c",
        "C++",
        "大别山项目",
        "广西 OR 桂林 OR 漓江",
    ] {
        assert_eq!(query_problem(input), None, "{input:?}");
    }
}
