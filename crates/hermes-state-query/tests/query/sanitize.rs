//! `sanitize_fts5_query` against `api.md` §7 (all 85 measured examples, the
//! 2048-code-point truncation, Python's character classes), and
//! `is_valid_fts5_syntax` against a real FTS5 table: hand-picked edge cases
//! and property tests over arbitrary text, raw and sanitized.
//!
//! The property the brief asked for first — "the sanitized query is empty
//! or FTS5 accepts it" — does not hold for a byte-exact port: 15 of the
//! spec's own 85 example outputs are non-empty and rejected
//! (`example_outputs_fts5_rejects`).
//! What is asserted instead is that `is_valid_fts5_syntax` predicts FTS5's
//! verdict exactly, for every sanitizer output and for arbitrary strings.

use hermes_state_query::sanitize::{
    MAX_QUERY_CHARS, is_python_whitespace, is_python_word_char, is_valid_fts5_syntax,
    sanitize_fts5_query,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rusqlite::Connection;

/// `api.md` §7, measured on the v23 sanitizer: `(input, output)`.
const SPEC_EXAMPLES: &[(&str, &str)] = &[
    ("docker deployment", "docker deployment"),
    ("\"exact phrase\"", "\"exact phrase\""),
    ("docker OR kubernetes", "docker OR kubernetes"),
    ("python NOT java", "python NOT java"),
    ("deploy*", "deploy*"),
    ("chat-send", "\"chat-send\""),
    ("docker-compose", "\"docker-compose\""),
    ("P2.2", "\"P2.2\""),
    ("my-app.config.ts", "\"my-app.config.ts\""),
    ("v1.2.3-beta", "\"v1.2.3-beta\""),
    ("3.14", "\"3.14\""),
    ("1-2", "\"1-2\""),
    ("snake_case_name", "\"snake_case_name\""),
    ("__init__", "\"__init__\""),
    ("_private", "_private"),
    ("x_", "x_"),
    ("a._b", "\"a._b\""),
    ("a--b", "a--b"),
    ("a..b", "a..b"),
    ("foo-", "foo-"),
    ("-foo", "-foo"),
    ("e-mail address", "\"e-mail\" address"),
    ("naïve-café", "\"naïve-café\""),
    ("日本-語", "\"日本-語\""),
    ("hello AND", "hello"),
    ("OR hello", "hello"),
    ("hello and", "hello"),
    ("or world", "world"),
    ("AND", ""),
    ("OR", ""),
    ("NOT", ""),
    ("  AND  ", ""),
    ("NOT NOT x", "NOT x"),
    ("AND x AND", "x"),
    ("a AND OR b", "a AND OR b"),
    ("hello AND world OR", "hello AND world"),
    ("hello OR", "hello"),
    ("a OR", "a"),
    ("C++", "C"),
    ("a+b", "a b"),
    ("(problem", "problem"),
    ("{test}", "test"),
    ("NEAR(a b)", "NEAR a b"),
    ("TODO: fix", "TODO  fix"),
    ("col:term", "col term"),
    ("x:y:z", "x y z"),
    ("a^b", "a b"),
    ("\"unterminated", "unterminated"),
    ("\"a\" \"b", "\"a\"  b"),
    ("say \"hi there\" now", "say \"hi there\" now"),
    ("he said \"x-y\" and z-w", "he said \"x-y\" and \"z-w\""),
    ("\"foo-bar\" baz-qux", "\"foo-bar\" \"baz-qux\""),
    ("foo.bar baz-qux", "\"foo.bar\" \"baz-qux\""),
    ("\"AND\"", "\"AND\""),
    ("\"x\" AND", "\"x\""),
    ("\"a\"\"b\"", "\"a\"\"b\""),
    ("a\"b\"c", "a\"b\"c"),
    ("\"\"", "\"\""),
    ("***", ""),
    ("*", ""),
    ("* *", ""),
    ("***foo", "foo"),
    ("foo***", "foo*"),
    ("foo*bar", "foo*bar"),
    ("*a-b", "\"a-b\""),
    ("a-b*", "\"a-b\"*"),
    ("chat-send*", "\"chat-send\"*"),
    ("kubernetes*", "kubernetes*"),
    ("don't", "don't"),
    ("50%", "50%"),
    ("alice@example.com", "alice@\"example.com\""),
    ("src/main.py", "src/\"main.py\""),
    ("#123", "#123"),
    ("$5", "$5"),
    ("a,b", "a,b"),
    ("ok?", "ok?"),
    ("'single quotes'", "'single quotes'"),
    ("hello   world  ", "hello   world"),
    ("\u{3000}AND x", "x"),
    ("x\u{a0}AND", "x"),
    ("hello\tAND", "hello"),
    ("foo\u{200b}bar-baz", "foo\u{200b}\"bar-baz\""),
    ("大别山项目", "大别山项目"),
    ("修改youer服务端", "修改youer服务端"),
    ("广西 OR 桂林 OR 漓江", "广西 OR 桂林 OR 漓江"),
];

/// Inputs aimed at the places where Python's `\w`, `\s`, `(?i)` and
/// `str.replace` differ from the obvious Rust spelling. Expected outputs
/// come from CPython 3.11 running the eight steps of §7 as the original's
/// regexes (`re.sub(r"\b(\w+(?:[._-]\w+)+)\b", …)` etc.).
const PYTHON_SEMANTICS: &[(&str, &str)] = &[
    ("a\u{301}-b", "a\u{301}-b"),
    ("x\u{203f}y-z", "x\u{203f}\"y-z\""),
    ("²-³", "\"²-³\""),
    ("\u{24b6}-b", "\u{24b6}-b"),
    ("\u{345}-x", "\u{345}-x"),
    ("क\u{93f}-x", "क\u{93f}-x"),
    ("٠.١", "\"٠.١\""),
    ("日本\u{3099}-語", "日本\u{3099}-語"),
    ("AND_x", "\"AND_x\""),
    ("ANDROID", "ANDROID"),
    ("AND-x", "-x"),
    ("AND\u{301} x", "\u{301} x"),
    ("OR-", "-"),
    ("a__", "\"a__\""),
    ("a-b.c_d e", "\"a-b.c_d\" e"),
    ("\u{31350}-x", "\u{31350}-x"),
    ("x-\u{31350}", "x-\u{31350}"),
    ("x\u{1f}AND", "x"),
    ("x\u{1c}OR", "x"),
    ("x\u{1680}OR", "x"),
    ("not\u{3000}x", "x"),
    ("NOT\u{a0}OR", "OR"),
    ("x NOT\u{a0}", "x"),
    ("x\u{200b}AND", "x\u{200b}AND"),
    ("*\u{a0}*foo", "foo"),
    ("foo \u{2003}*bar", "foo \u{2003}bar"),
    ("a\u{0}b-c", "a\u{0}\"b-c\""),
    ("\"a\" \"b\"Q0\"c\"", "\"a\" \u{0}Q1\"a\"Q2\u{0}"),
    ("\"a\"Q0\"b\"Q1\"c\"", "\"a\"Q0\"b\"Q1\"c\""),
    ("\u{0}Q0\u{0} \"x\"", "\"x\" \"x\""),
    ("\"\u{0}Q1\u{0}\" \"y\"", "\"\"y\"\" \"y\""),
];

#[test]
fn spec_examples() {
    assert_eq!(SPEC_EXAMPLES.len(), 85);
    for &(input, expected) in SPEC_EXAMPLES {
        assert_eq!(sanitize_fts5_query(input), expected, "input {input:?}");
    }
}

#[test]
fn python_semantics() {
    for &(input, expected) in PYTHON_SEMANTICS {
        assert_eq!(sanitize_fts5_query(input), expected, "input {input:?}");
    }
}

#[test]
fn truncates_to_2048_code_points_then_trims() {
    let query = "a ".repeat(5000);
    let sanitized = sanitize_fts5_query(&query);
    assert_eq!(sanitized.chars().count(), 2047);
    assert_eq!(sanitized, "a ".repeat(1024).trim_end());

    // Code points, not bytes: 2049 four-byte characters keep 2048.
    let emoji = "😀".repeat(MAX_QUERY_CHARS + 1);
    assert_eq!(sanitize_fts5_query(&emoji).chars().count(), MAX_QUERY_CHARS);

    // A quote pair cut in half by the truncation is a lone quote.
    let cut = format!("{}\"x\"", "b".repeat(MAX_QUERY_CHARS - 2));
    assert_eq!(
        sanitize_fts5_query(&cut),
        format!("{} x", "b".repeat(MAX_QUERY_CHARS - 2))
    );
}

#[test]
fn placeholder_bomb_is_cut_off() {
    // Each quoted span spells the next placeholder four times: the
    // original's restore loop multiplies the text by four per span (5 GB
    // for 15 spans, then MemoryError). The port gives up at 2 MiB instead.
    let bomb: Vec<String> = (1..=40)
        .map(|i| format!("\"{}\"", format!("\0Q{i}\0").repeat(4)))
        .collect();
    let query = format!("{} \"z\"", bomb.join(" "));
    assert_eq!(sanitize_fts5_query(&query), "");

    // Small enough cases still follow the original exactly (output of
    // CPython 3.11 running the original steps).
    let small: Vec<String> = (1..=3)
        .map(|i| format!("\"{}\"", format!("\0Q{i}\0").repeat(2)))
        .collect();
    let sanitized = sanitize_fts5_query(&format!("{} \"z\"", small.join(" ")));
    assert_eq!(
        sanitized,
        r#"""""z""z""""z""z""""""z""z""""z""z"""" """z""z""""z""z""" ""z""z"" "z""#
    );
}

#[test]
fn python_whitespace_and_word_classes() {
    for c in [
        '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{1c}', '\u{1f}', ' ', '\u{85}', '\u{a0}',
    ]
    .into_iter()
    .chain([
        '\u{1680}', '\u{2000}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}',
    ])
    .chain(['\u{205f}', '\u{3000}'])
    {
        assert!(is_python_whitespace(c), "{c:?} is whitespace");
    }
    for c in ['\u{200b}', '\u{180e}', '\u{feff}', 'a', '\0'] {
        assert!(!is_python_whitespace(c), "{c:?} is not whitespace");
    }
    for c in [
        'a', 'Z', '0', '_', 'é', 'ß', '日', '一', '²', 'Ⅻ', '٠', 'ª', 'ǅ', 'ʰ',
    ] {
        assert!(is_python_word_char(c), "{c:?} is a word character");
    }
    for c in [
        '\u{301}', '\u{3099}', '\u{345}', '\u{93f}', 'Ⓐ', '‿', '-', '.', '\0', '😀',
    ] {
        assert!(!is_python_word_char(c), "{c:?} is not a word character");
    }
    // Letters assigned after Unicode 14.0 (CPython 3.11): CJK extension H.
    assert!(!is_python_word_char('\u{31350}'));
}

/// An in-memory FTS5 table shaped like `messages_fts`, with two rows.
fn fts5_table() -> Connection {
    let conn = Connection::open_in_memory().expect("in-memory database");
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(content, tool_name, tool_calls);
         INSERT INTO t VALUES ('docker deployment with chat-send', 'terminal', '[]');
         INSERT INTO t VALUES ('修改youer服务端 P2.2 naïve café', NULL, 'x');",
    )
    .expect("FTS5 table");
    conn
}

/// Whether FTS5 runs `MATCH query` without an error.
fn fts5_accepts(conn: &Connection, query: &str) -> bool {
    conn.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [query], |row| {
        row.get::<_, i64>(0)
    })
    .is_ok()
}

#[test]
fn example_outputs_fts5_rejects() {
    let conn = fts5_table();
    let rejected: Vec<&str> = SPEC_EXAMPLES
        .iter()
        .map(|&(_, output)| output)
        .filter(|output| !output.is_empty())
        .filter(|output| {
            let accepted = fts5_accepts(&conn, output);
            assert_eq!(is_valid_fts5_syntax(output), accepted, "output {output:?}");
            !accepted
        })
        .collect();
    assert_eq!(
        rejected,
        [
            "a--b",
            "a..b",
            "foo-",
            "-foo",
            "NOT x",
            "a AND OR b",
            "don't",
            "50%",
            "alice@\"example.com\"",
            "src/\"main.py\"",
            "#123",
            "$5",
            "a,b",
            "ok?",
            "'single quotes'",
        ]
    );
}

#[test]
fn checker_edge_cases_match_fts5() {
    let conn = fts5_table();
    let mut cases: Vec<(String, bool)> = [
        ("docker", true),
        ("", false),
        ("   ", false),
        ("a AND", false),
        ("AND a", false),
        ("a OR OR b", false),
        ("and or not", true),
        ("a (b)", false),
        ("(a OR b) c", false),
        ("c (a OR b)", false),
        ("a AND (b OR c) NOT d", true),
        ("x*", true),
        ("\"\"*", true),
        ("a*b", true),
        ("a * b", true),
        ("-a", false),
        ("a:b", false),
        ("content:b", true),
        ("CONTENT : b", true),
        ("\"tool_name\":x", true),
        ("-content: x", true),
        ("-{content tool_name tool_calls}: x", true),
        ("{content}:(a OR b)", true),
        ("{content nope}: x", false),
        ("rank:x", false),
        ("^a", true),
        ("a ^b", true),
        ("^a+b", true),
        ("a+^b", false),
        ("NEAR(a b)", true),
        ("NEAR(a b, 5)", true),
        ("NEAR(a b,)", false),
        ("NEAR(a b, \"5\")", false),
        ("NEAR(a b, 5x)", false),
        ("NEAR(a b, 99999999999999)", true),
        ("near(a b)", false),
        ("NEAR a b", true),
        ("NEAR()", false),
        ("a,b", false),
        ("\"a\"\"b\"", true),
        ("\"unterminated", false),
        ("x\u{b}y", false),
        ("x\u{1a}y", true),
        ("x\u{a0}y\u{3000}z\u{200b}", true),
        ("x\0(", true),
        ("\"a\0b\"", false),
        ("\0", false),
        ("*reads", true),
        ("* ID", true),
        ("*id whatever (", true),
        ("*\treads", false),
        ("*foo", false),
        ("*", false),
    ]
    .into_iter()
    .map(|(query, valid)| (query.to_owned(), valid))
    .collect();

    // Expression depth (256): a NOT chain; `a b` adds a level, `a \u{200b}`
    // does not (U+200B is no token, the empty phrase is dropped).
    for (first, limit) in [
        ("a", 256),
        ("a b", 255),
        ("a \u{200b}", 256),
        ("\"\" a", 256),
    ] {
        for n in [limit, limit + 1] {
            cases.push((format!("{first}{}", " NOT x".repeat(n)), n == limit));
        }
    }
    // Parser stack (100 entries): 97 nested parentheses fit, 98 do not.
    for n in [97, 98] {
        cases.push((format!("{}a{}", "(".repeat(n), ")".repeat(n)), n == 97));
    }
    // The sanitizer lets a 256-deep NOT chain through unchanged.
    let deep = format!("a b{}", " NOT x".repeat(256));
    assert_eq!(sanitize_fts5_query(&deep), deep);

    for (query, valid) in &cases {
        assert_eq!(fts5_accepts(&conn, query), *valid, "FTS5 on {query:?}");
        assert_eq!(is_valid_fts5_syntax(query), *valid, "checker on {query:?}");
    }
}

/// Pieces that matter to the sanitizer or to FTS5.
const FRAGMENTS: &[&str] = &[
    " ",
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\u{b}",
    "\u{1c}",
    "\u{85}",
    "\u{a0}",
    "\u{3000}",
    "\u{200b}",
    "\u{2028}",
    "\"",
    "\"",
    "\"\"",
    "(",
    ")",
    "{",
    "}",
    "*",
    "**",
    "^",
    ":",
    "+",
    "-",
    "-",
    ".",
    ".",
    "_",
    "__",
    ",",
    "\0",
    "\0Q0\0",
    "Q0",
    "Q1",
    "😀",
    "👍🏽",
    "日本",
    "語",
    "修改",
    "\u{301}",
    "\u{3099}",
    "\u{345}",
    "²",
    "Ⓐ",
    "é",
    "İ",
    "%",
    "@",
    "/",
    "#",
    "'",
    "?",
    "$",
    "\u{1a}",
    "\u{7f}",
    "a",
    "b",
    "x",
    "foo",
    "snake_case",
    "chat-send",
    "P2.2",
    "3.14",
    "content",
    "tool_name",
    "tool_calls",
    "NEAR(",
    "5",
];

/// One piece of a generated query: a fragment, an operator in any case, a
/// word, or any code point of any plane.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(FRAGMENTS).prop_map(str::to_owned),
        3 => "(?i)(and|or|not|near)",
        2 => "[a-zA-Z0-9]{1,6}",
        1 => any::<char>().prop_map(String::from),
        2 => (0u32..=0x10_FFFF).prop_filter_map("surrogate", char::from_u32).prop_map(String::from),
    ]
}

/// A query of up to 40 fragments; now and then a long one, past the
/// 2048-code-point truncation.
fn query() -> impl Strategy<Value = String> {
    prop_oneof![
        20 => prop::collection::vec(fragment(), 0..40).prop_map(|parts| parts.concat()),
        1 => prop::collection::vec(fragment(), 300..1200).prop_map(|parts| parts.concat()),
    ]
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// For every input, the sanitized query is empty (search answers `[]`
/// without asking FTS5) or `is_valid_fts5_syntax` predicts exactly whether
/// FTS5 accepts it.
fn sanitized_validity_is_predicted(cases: u32) {
    let conn = fts5_table();
    let result = runner(cases).run(&query(), |input| {
        let sanitized = sanitize_fts5_query(&input);
        if !sanitized.is_empty() {
            prop_assert_eq!(
                is_valid_fts5_syntax(&sanitized),
                fts5_accepts(&conn, &sanitized),
                "sanitized {:?}",
                sanitized
            );
        }
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
}

/// `is_valid_fts5_syntax` agrees with FTS5 on arbitrary strings.
fn raw_validity_is_predicted(cases: u32) {
    let conn = fts5_table();
    let result = runner(cases).run(&query(), |input| {
        prop_assert_eq!(is_valid_fts5_syntax(&input), fts5_accepts(&conn, &input));
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
}

#[test]
fn property_sanitized_validity_is_predicted() {
    sanitized_validity_is_predicted(256);
}

#[test]
fn property_raw_validity_is_predicted() {
    raw_validity_is_predicted(256);
}

/// The same with 20,000 cases: `cargo test -p hermes-state-query --test
/// sanitize -- --ignored`.
#[test]
#[ignore = "long: 20,000 cases"]
fn property_sanitized_validity_is_predicted_long() {
    sanitized_validity_is_predicted(20_000);
}

/// The same with 20,000 cases.
#[test]
#[ignore = "long: 20,000 cases"]
fn property_raw_validity_is_predicted_long() {
    raw_validity_is_predicted(20_000);
}
