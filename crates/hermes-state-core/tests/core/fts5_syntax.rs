//! The FTS5 syntax checker's answers that need no FTS5 table to state; its
//! error texts against SQLite's own are the query crate's tests.

use hermes_state_core::fts5_syntax::{Fts5SyntaxError, check_fts5_syntax};

#[test]
fn reading_stops_at_the_first_nul_as_sqlite_does() {
    assert_eq!(check_fts5_syntax("docker\0%"), Ok(()));
    assert_eq!(
        check_fts5_syntax("50%\0docker"),
        Err(Fts5SyntaxError::SyntaxErrorNear("%".into()))
    );
}
