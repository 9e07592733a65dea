//! One input of the `cjk_unicode61` tokenizer under hostile text: shared, as
//! source, by the fuzz target `fuzz/fuzz_targets/cjk_tokenizer.rs` and the
//! corpus replay in `cjk_hostile`, so both check exactly the same thing.
//!
//! The first byte picks the tokenizer's arguments (one choice is refused by
//! `unicode61`, which must be a typed error); the rest is the text, any
//! bytes, UTF-8 or not. The text goes through SQLite's tokenizer API twice:
//!
//! * directly (`fts5_api.xFindTokenizer` → `xCreate` → `xTokenize`, in all
//!   four tokenize modes, [`cjk::debug_tokens_of_bytes`]): every token has
//!   `0 ≤ start ≤ end ≤ len(text)`, starts never go back, and the output is
//!   the same in every mode;
//! * through an FTS5 table using the tokenizer: the text inserted as TEXT
//!   byte for byte (`CAST(?1 AS TEXT)` of a BLOB, so invalid UTF-8 reaches
//!   the tokenizer), the index passes FTS5's `integrity-check` (which
//!   re-tokenizes the row and compares), every term `fts5vocab` lists can
//!   be queried with `MATCH` without error, `highlight()` (which cuts the
//!   text at the tokenizer's offsets) gives text without NUL bytes back
//!   unchanged with empty markers, and deleting the row (tokenized again) empties the index.
//!
//! A panic in a callback is caught by the tokenizer and reported to SQLite
//! as an error, so "never panics" is asserted as "no SQLite error" where
//! none is allowed.

use hermes_state_schema::cjk::{self, TokenizeMode};
use hermes_state_schema::rusqlite::{Connection, params};

/// The argument lists the first byte picks from; the last is refused.
pub const ARGUMENTS: [&[&str]; 8] = [
    &[],
    &["remove_diacritics", "0"],
    &["remove_diacritics", "2"],
    &["tokenchars", "-_."],
    &["separators", "xy數"],
    &["categories", "L* N* Co Mn"],
    &["remove_diacritics", "1", "tokenchars", "数"],
    &["no_such_option", "1"],
];

const MODES: [TokenizeMode; 4] = [
    TokenizeMode::Document,
    TokenizeMode::Query,
    TokenizeMode::Prefix,
    TokenizeMode::Aux,
];

/// A connection with the tokenizer registered, reused across inputs.
pub struct TokenizerTarget {
    conn: Connection,
}

impl Default for TokenizerTarget {
    fn default() -> Self {
        TokenizerTarget::new()
    }
}

impl TokenizerTarget {
    /// An in-memory connection with `cjk_unicode61` registered.
    pub fn new() -> TokenizerTarget {
        let conn = Connection::open_in_memory().expect("an in-memory database");
        cjk::register(&conn).expect("register cjk_unicode61");
        TokenizerTarget { conn }
    }

    /// Checks one input; panics on a violation (see the module docs).
    pub fn run(&self, data: &[u8]) {
        let Some((&choice, text)) = data.split_first() else {
            return;
        };
        let args = ARGUMENTS[usize::from(choice) % ARGUMENTS.len()];
        let refused = args.first() == Some(&"no_such_option");
        self.direct(args, text, refused);
        self.through_a_table(args, text, refused);
    }

    fn direct(&self, args: &[&str], text: &[u8], refused: bool) {
        let mut first: Option<Vec<(Vec<u8>, i32, i32)>> = None;
        for mode in MODES {
            let tokens = match cjk::debug_tokens_of_bytes(&self.conn, args, text, mode) {
                Ok(tokens) => tokens,
                Err(error) => {
                    assert!(refused, "{mode:?} tokenization of {text:?} failed: {error}");
                    continue;
                }
            };
            assert!(!refused, "arguments {args:?} were accepted");
            let len = i32::try_from(text.len()).expect("a fuzz input fits an i32");
            let mut last_start = 0;
            for (token, start, end) in &tokens {
                // Tokens may be empty: `unicode61` itself emits one when
                // folding removes every character of a token (`categories`
                // with `Mn` and diacritics removed: "\u{301}" → ""), and
                // such a token has no CJK, so it passes through unchanged.
                assert!(
                    0 <= *start && start <= end && *end <= len,
                    "token {token:?} at {start}..{end} outside the text of {len} bytes"
                );
                assert!(
                    *start >= last_start,
                    "token {token:?} starts at {start}, before {last_start}"
                );
                last_start = *start;
            }
            match &first {
                None => first = Some(tokens),
                Some(document) => assert_eq!(
                    document, &tokens,
                    "{mode:?} tokens differ from the document's for {text:?}"
                ),
            }
        }
    }

    fn through_a_table(&self, args: &[&str], text: &[u8], refused: bool) {
        let conn = &self.conn;
        let tokenize: String = std::iter::once("cjk_unicode61".to_owned())
            .chain(args.iter().map(|a| format!("'{a}'")))
            .collect::<Vec<_>>()
            .join(" ");
        let created = conn.execute_batch(&format!(
            "DROP TABLE IF EXISTS temp.t;
             DROP TABLE IF EXISTS temp.v;
             CREATE VIRTUAL TABLE temp.t USING fts5(x, tokenize = \"{tokenize}\");"
        ));
        if refused {
            assert!(created.is_err(), "arguments {args:?} were accepted");
            return;
        }
        created.unwrap_or_else(|e| panic!("creating the table with {tokenize}: {e}"));
        conn.execute_batch("CREATE VIRTUAL TABLE temp.v USING fts5vocab(temp, t, row);")
            .expect("the vocabulary table");
        conn.execute(
            "INSERT INTO temp.t(rowid, x) VALUES (1, CAST(?1 AS TEXT))",
            [text],
        )
        .unwrap_or_else(|e| panic!("indexing {text:?}: {e}"));
        integrity_check(conn, text);

        let terms: Vec<Vec<u8>> = conn
            .prepare("SELECT CAST(term AS BLOB) FROM temp.v")
            .and_then(|mut stmt| {
                // An empty term (see `direct`) reads as NULL.
                stmt.query_map([], |row| {
                    Ok(row.get::<_, Option<Vec<u8>>>(0)?.unwrap_or_default())
                })?
                .collect::<Result<_, _>>()
            })
            .expect("the vocabulary");
        for term in &terms {
            let mut query = b"\"".to_vec();
            for &byte in term {
                if byte == b'"' {
                    query.push(b'"');
                }
                query.push(byte);
            }
            query.push(b'"');
            conn.query_row(
                "SELECT count(*) FROM temp.t WHERE t MATCH CAST(?1 AS TEXT)",
                [&query],
                |row| row.get::<_, i64>(0),
            )
            .unwrap_or_else(|e| panic!("querying the term {term:?} of {text:?}: {e}"));
        }
        if let Some(term) = terms.first() {
            let mut query = b"\"".to_vec();
            query.extend(
                term.iter()
                    .flat_map(|&b| if b == b'"' { vec![b, b] } else { vec![b] }),
            );
            query.push(b'"');
            let highlighted: Option<Vec<u8>> = conn
                .query_row(
                    "SELECT CAST(highlight(t, 0, '', '') AS BLOB) FROM temp.t
                     WHERE t MATCH CAST(?1 AS TEXT)",
                    [&query],
                    |row| row.get(0),
                )
                .map(Some)
                .or_else(|e| match e {
                    hermes_state_schema::rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    other => Err(other),
                })
                .unwrap_or_else(|e| panic!("highlighting {text:?}: {e}"));
            // FTS5's highlight() appends the text with `%.*s`, which stops
            // at a NUL byte: only text without NUL comes back whole.
            if let Some(highlighted) = highlighted.filter(|_| !text.contains(&0)) {
                assert_eq!(
                    highlighted, text,
                    "highlight() with empty markers changed the text"
                );
            }
        }

        conn.execute("DELETE FROM temp.t WHERE rowid = ?1", params![1])
            .unwrap_or_else(|e| panic!("deleting {text:?}: {e}"));
        integrity_check(conn, text);
        let left: i64 = conn
            .query_row("SELECT count(*) FROM temp.v", [], |row| row.get(0))
            .expect("the vocabulary");
        assert_eq!(left, 0, "terms left after deleting {text:?}");
    }
}

fn integrity_check(conn: &Connection, text: &[u8]) {
    conn.execute_batch("INSERT INTO temp.t(t, rank) VALUES ('integrity-check', 1)")
        .unwrap_or_else(|e| panic!("integrity-check after indexing {text:?}: {e}"));
}
