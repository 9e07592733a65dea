//! Fuzzes the FTS5 query sanitizer and the FTS5 validity checker.
//!
//! For every input (bytes made UTF-8 lossily, so no input is wasted):
//! `sanitize_fts5_query` must not panic, and whenever its output is
//! non-empty, `is_valid_fts5_syntax` must agree with a real FTS5 `MATCH`
//! on a table shaped like `messages_fts`. The raw input is checked the same
//! way, which exercises the checker on text the sanitizer would never emit
//! (parentheses, column filters, `NEAR(…)`).
#![no_main]

use hermes_state_query::fts5_syntax::is_valid_fts5_syntax;
use hermes_state_query::sanitize::sanitize_fts5_query;
use libfuzzer_sys::fuzz_target;
use rusqlite::Connection;

thread_local! {
    /// Opened once per fuzzing thread: creating the table costs far more
    /// than one query.
    static FTS: Connection = open_table();
}

fn open_table() -> Connection {
    let conn = Connection::open_in_memory().expect("in-memory database");
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(content, tool_name, tool_calls);
         INSERT INTO t VALUES ('docker deployment with chat-send', 'terminal', '[]');
         INSERT INTO t VALUES ('修改youer服务端 P2.2 naïve café', NULL, 'x');",
    )
    .expect("FTS5 table");
    conn
}

/// Panics (a finding) when the checker and FTS5 disagree on `query`.
fn assert_prediction(conn: &Connection, query: &str, what: &str) {
    let verdict = conn.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [query], |row| {
        row.get::<_, i64>(0)
    });
    let predicted = is_valid_fts5_syntax(query);
    assert_eq!(
        predicted,
        verdict.is_ok(),
        "{what} {query:?}: checker says {predicted}, FTS5 says {verdict:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    let sanitized = sanitize_fts5_query(&input);
    FTS.with(|conn| {
        if !sanitized.is_empty() {
            assert_prediction(conn, &sanitized, "sanitized");
        }
        assert_prediction(conn, &input, "raw");
    });
});
