//! `sanitize_fts5_query` against `api.md` §7 (all 85 measured examples, the
//! 2048-code-point truncation, Python's character classes). Whether FTS5
//! accepts its outputs is the query crate's test, against a real FTS5 table.

mod examples;

use examples::SPEC_EXAMPLES;
use hermes_state_core::sanitize::{
    MAX_QUERY_CHARS, is_python_whitespace, is_python_word_char, sanitize_fts5_query,
};

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
