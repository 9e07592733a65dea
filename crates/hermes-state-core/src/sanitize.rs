//! The FTS5 query sanitizer of the v23 store (`api.md` §7).
//!
//! [`sanitize_fts5_query`] is a byte-exact port: it keeps the original's
//! gaps on purpose. `50%`, `don't`, `alice@example.com`, `-foo`,
//! `NOT NOT x` or `a AND OR b` come out in a form FTS5 rejects with a syntax
//! error, which search turns into `[]` (§8.4). Changing that would change
//! which rows a search returns, so the sanitizer does not; whether FTS5
//! accepts an output is the question of [`crate::fts5_syntax`], and
//! [`crate::search::query_problem`] tells a caller why a query found nothing.
//!
//! One trap for a port, handled here with explicit character classes
//! instead of the `regex` crate: the original runs Python regexes. Python's
//! `\w` is `str.isalnum()` or `_`, and `\s` / `str.strip()` is
//! `str.isspace()`. Rust's regex `\w` also matches combining marks and
//! connector punctuation, and Rust's `char::is_whitespace` lacks
//! U+001C–U+001F, so neither may be used.

use crate::code_point_ranges::in_ranges;

/// Whether SQLite's FTS5 accepts a query; moved to
/// [`crate::fts5_syntax::is_valid_fts5_syntax`] and re-exported here so the
/// path `sanitize::is_valid_fts5_syntax` keeps working.
pub use crate::fts5_syntax::is_valid_fts5_syntax;

/// Step 1 keeps at most this many code points of the query.
pub const MAX_QUERY_CHARS: usize = 2048;

/// Upper bound on the text produced by step 7 (restore).
///
/// The original restores placeholders with one `str.replace` per index, in
/// order. A quoted span may itself contain NUL characters spelling another
/// placeholder (`"\0Q1\0\0Q1\0"`), and then every round can multiply the
/// text: 15 such spans (312 characters) make the original build a 5 GB
/// string, and a few more raise `MemoryError`. Without NULs in the input
/// the restored text stays below about 1.1 MiB (a 1024-character span
/// copied into ~256 look-alike placeholders), so this bound never changes
/// the output for such input; above it the sanitizer returns `""` instead
/// of exhausting memory.
const MAX_RESTORED_BYTES: usize = 2 * 1024 * 1024;

// ---------------------------------------------------------------------------
// Python's character classes
// ---------------------------------------------------------------------------

/// Python's `str.isspace()` (the "whitespace" of `api.md` §6.1 and §7, used
/// by `\s`, `str.strip()` and `str.split()`); it includes U+001C–U+001F and
/// excludes U+200B, which is why `x\u200bAND` keeps its operator.
pub use hermes_state_types::text::is_python_whitespace;

/// Python's regex `\w` for one character: `str.isalnum()` or `_`.
///
/// `str.isalnum()` is "general category `Lu Ll Lt Lm Lo`, or the character
/// has a numeric value" — letters and digits of every script, `²`, `Ⅻ`,
/// CJK numerals — but not combining marks (U+0301, U+3099), not `So`
/// symbols, not connector punctuation other than `_`.
/// [`char::is_alphanumeric`] (the `Alphabetic` property plus `N*`) is the
/// same set except for the `Other_Alphabetic` marks and symbols (U+0345,
/// Devanagari vowel signs, circled letters Ⓐ…) and for characters newer
/// than CPython 3.11's Unicode 14.0; those are listed in a generated
/// table (`PY_ALNUM_EXCEPTIONS`), so this matches CPython 3.11 on every code
/// point.
pub fn is_python_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    c.is_alphanumeric() && !in_ranges(PY_ALNUM_EXCEPTIONS, c)
}

/// `str.strip()` with no argument.
fn py_trim(s: &str) -> &str {
    s.trim_matches(is_python_whitespace)
}

// ---------------------------------------------------------------------------
// The sanitizer
// ---------------------------------------------------------------------------

/// Turns any user text into the FTS5 `MATCH` argument the v23 store uses
/// (`api.md` §7), byte for byte like the original.
///
/// The eight steps, in order: truncate to [`MAX_QUERY_CHARS`] code points;
/// set balanced `"…"` spans aside behind `NUL Q <index> NUL` placeholders
/// (a lone `"` becomes a space); turn `+ { } ( ) : " ^` into spaces;
/// collapse `*` runs and drop a `*` at the start or after whitespace; drop
/// one leading and one trailing `AND`/`OR`/`NOT`; wrap compound terms
/// (`chat-send`, `P2.2`, `snake_case`) in quotes so FTS5 matches them as a
/// phrase; restore the placeholders; trim. "Whitespace" and "word
/// character" are Python's ([`is_python_whitespace`],
/// [`is_python_word_char`]).
///
/// The result may be empty (search then returns `[]` without asking FTS5),
/// and it may still be rejected by FTS5 (`50%`, `-foo`, `NOT NOT x` → `NOT
/// x`); [`is_valid_fts5_syntax`] predicts that. Never panics; linear in the
/// input except for the placeholder restore, which is bounded (see
/// `MAX_RESTORED_BYTES` in the source).
///
/// ```
/// use hermes_state_core::sanitize::sanitize_fts5_query;
///
/// assert_eq!(sanitize_fts5_query("docker-compose up"), "\"docker-compose\" up");
/// assert_eq!(sanitize_fts5_query("(((\""), "");
/// ```
pub fn sanitize_fts5_query(query: &str) -> String {
    let truncated = match query.char_indices().nth(MAX_QUERY_CHARS) {
        Some((end, _)) => &query[..end],
        None => query,
    };
    let (protected, spans) = protect_quoted_spans(truncated);
    let stripped: String = protected
        .chars()
        .map(|c| match c {
            '+' | '{' | '}' | '(' | ')' | ':' | '"' | '^' => ' ',
            other => other,
        })
        .collect();
    let starred = normalise_stars(&stripped);
    let without_operators = drop_dangling_operators(&starred);
    let quoted = quote_compound_terms(without_operators);
    match restore_quoted_spans(quoted, &spans) {
        Some(restored) => py_trim(&restored).to_owned(),
        None => String::new(),
    }
}

/// The placeholder that stands for quoted span `index` during steps 3–6.
///
/// NUL is neither a word character nor a special, so steps 3–6 leave the
/// placeholder alone and never quote across it; the `Q<index>` inside is a
/// word run of its own.
fn placeholder(index: usize) -> String {
    format!("\0Q{index}\0")
}

/// Step 2 (`re.sub(r'"[^"]*"', …)`): every balanced `"…"` span, left to
/// right, is replaced by its placeholder; a `"` without a partner becomes a
/// space (step 3 would do the same).
fn protect_quoted_spans(text: &str) -> (String, Vec<&str>) {
    let mut out = String::with_capacity(text.len() + 8);
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..open]);
        let after_open = &rest[open + 1..];
        match after_open.find('"') {
            Some(close) => {
                let end = open + 1 + close + 1;
                out.push_str(&placeholder(spans.len()));
                spans.push(&rest[open..end]);
                rest = &rest[end..];
            }
            None => {
                out.push(' ');
                rest = after_open;
            }
        }
    }
    out.push_str(rest);
    (out, spans)
}

/// Step 4: `re.sub(r"\*+", "*", s)` then `re.sub(r"(^|\s)\*", r"\1", s)`.
///
/// FTS5 needs at least one character before a prefix `*`; a `*` that
/// starts the query would even make FTS5 read it as a special command.
fn normalise_stars(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // The previous character of the collapsed text, deleted or not.
    let mut previous: Option<char> = None;
    for c in text.chars() {
        if c == '*' {
            if previous == Some('*') {
                continue;
            }
            let at_word_start = previous.is_none_or(is_python_whitespace);
            previous = Some('*');
            if !at_word_start {
                out.push('*');
            }
        } else {
            out.push(c);
            previous = Some(c);
        }
    }
    out
}

/// Step 5: trim; drop one leading `AND`/`OR`/`NOT` (any case) that ends at a
/// word boundary, with the whitespace after it; trim; drop one trailing
/// operator preceded by whitespace, with that whitespace.
///
/// The original's regexes are `(?i)^(AND|OR|NOT)\b\s*` and
/// `(?i)\s+(AND|OR|NOT)\s*$`; Python's `(?i)` folds these six letters to
/// ASCII only, so ASCII case-insensitive comparison is exact.
fn drop_dangling_operators(text: &str) -> &str {
    const OPERATORS: [&str; 3] = ["AND", "OR", "NOT"];
    let mut s = py_trim(text);
    for op in OPERATORS {
        let Some(head) = s.get(..op.len()) else {
            continue;
        };
        if !head.eq_ignore_ascii_case(op) {
            continue;
        }
        let rest = &s[op.len()..];
        if rest.chars().next().is_none_or(|c| !is_python_word_char(c)) {
            s = rest.trim_start_matches(is_python_whitespace);
        }
        // The three operators start with different letters: at most one fits.
        break;
    }
    s = py_trim(s);
    for op in OPERATORS {
        let Some(split) = s.len().checked_sub(op.len()) else {
            continue;
        };
        let (Some(head), Some(tail)) = (s.get(..split), s.get(split..)) else {
            continue;
        };
        if tail.eq_ignore_ascii_case(op) && head.ends_with(is_python_whitespace) {
            return head.trim_end_matches(is_python_whitespace);
        }
    }
    s
}

/// Step 6: wrap every match of `\b(\w+(?:[._-]\w+)+)\b` in double quotes.
///
/// Hand-written rather than a regex because `\w` must be Python's. What
/// Python's backtracking engine does, stated as a scan: at the start of
/// each word run, extend the run over `.`/`-` followed by another word run
/// as often as possible; if that joined at least once, the whole extent is
/// the match. Otherwise the match is the run itself when it contains a `_`
/// with a word character on each side (`\w+` backtracks to use that `_` as
/// the separator: `snake_case`, `__init__`, `a__`), and there is no match
/// when it does not (`_private`, `x_`). Scanning resumes after the match or
/// the run; positions inside a run are never a `\b`.
fn quote_compound_terms(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let word: Vec<bool> = chars.iter().map(|&c| is_python_word_char(c)).collect();
    let n = chars.len();
    let run_end = |from: usize| {
        let mut end = from;
        while end < n && word[end] {
            end += 1;
        }
        end
    };

    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < n {
        let starts_run = word[i] && (i == 0 || !word[i - 1]);
        if !starts_run {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let first_end = run_end(i);
        let mut end = first_end;
        let mut joined = false;
        while end + 1 < n && matches!(chars[end], '.' | '-') && word[end + 1] {
            end = run_end(end + 1);
            joined = true;
        }
        let inner_underscore = chars
            .get(i + 1..first_end.saturating_sub(1))
            .is_some_and(|inner| inner.contains(&'_'));
        let term = &chars[i..end];
        if joined || inner_underscore {
            out.push('"');
            out.extend(term);
            out.push('"');
        } else {
            out.extend(term);
        }
        i = end;
    }
    out
}

/// Step 7, exactly as the original: for index 0, 1, … in order, replace
/// *every* occurrence of that placeholder (`str.replace`, leftmost,
/// non-overlapping) in the current text.
///
/// This is not the same as putting each span back where it came from: the
/// closing NUL of one placeholder, a literal `Q0` typed by the user and the
/// opening NUL of the next one also spell placeholder 0, so `"a" "b"Q0"c"`
/// sanitises to `"a" \0Q1"a"Q2\0` in the original, and here. Returns `None`
/// when the text would grow past [`MAX_RESTORED_BYTES`] (only possible when
/// quoted spans contain NULs).
fn restore_quoted_spans(text: String, spans: &[&str]) -> Option<String> {
    let nul_count = |s: &str| s.bytes().filter(|&b| b == 0).count();
    let mut text = text;
    let mut nuls = nul_count(&text);
    for (index, span) in spans.iter().enumerate() {
        // A placeholder holds two NULs: with fewer left nothing can match.
        if nuls < 2 {
            break;
        }
        let needle = placeholder(index);
        let hits = text.matches(needle.as_str()).count();
        if hits == 0 {
            continue;
        }
        let grown = text
            .len()
            .saturating_sub(hits.saturating_mul(needle.len()))
            .saturating_add(hits.saturating_mul(span.len()));
        if grown > MAX_RESTORED_BYTES {
            return None;
        }
        text = text.replace(needle.as_str(), span);
        nuls = nuls
            .saturating_sub(2 * hits)
            .saturating_add(hits.saturating_mul(nul_count(span)));
    }
    Some(text)
}

// ---------------------------------------------------------------------------
// Generated table
// ---------------------------------------------------------------------------

/// Characters for which [`char::is_alphanumeric`] is true but CPython
/// 3.11's `str.isalnum()` is false, as sorted inclusive ranges: the
/// `Other_Alphabetic` combining marks (`Mn`, `Mc`) and symbols (`So`, e.g.
/// circled letters), and the letters and digits assigned after Unicode 14.0
/// (CPython 3.11's database; Rust 1.95 knows Unicode 17.0), e.g. CJK
/// extensions H–J. No character is alphanumeric for CPython 3.11 but not
/// for Rust.
///
/// Pinned to CPython 3.11 because that is the interpreter the measured
/// examples of `api.md` come from. Generated, with Rust's side dumped by a
/// two-line program, by
///
/// ```text
/// python3.11 -c 'rust = set(<code points where char::is_alphanumeric>)
///   print(ranges(u for u in range(0x110000)
///                if u in rust and not chr(u).isalnum()))'
/// ```
///
/// and checked: with it, [`is_python_word_char`] equals CPython 3.11's
/// `\w` on every code point. For a newer Python, regenerate with that
/// interpreter.
#[rustfmt::skip]
const PY_ALNUM_EXCEPTIONS: &[(u32, u32)] = &[
    (0x0345, 0x0345), (0x0363, 0x036F), (0x05B0, 0x05BD), (0x05BF, 0x05BF), (0x05C1, 0x05C2),
    (0x05C4, 0x05C5), (0x05C7, 0x05C7), (0x0610, 0x061A), (0x064B, 0x0657), (0x0659, 0x065F),
    (0x0670, 0x0670), (0x06D6, 0x06DC), (0x06E1, 0x06E4), (0x06E7, 0x06E8), (0x06ED, 0x06ED),
    (0x0711, 0x0711), (0x0730, 0x073F), (0x07A6, 0x07B0), (0x0816, 0x0817), (0x081B, 0x0823),
    (0x0825, 0x0827), (0x0829, 0x082C), (0x088F, 0x088F), (0x0897, 0x0897), (0x08D4, 0x08DF),
    (0x08E3, 0x08E9), (0x08F0, 0x0903), (0x093A, 0x093B), (0x093E, 0x094C), (0x094E, 0x094F),
    (0x0955, 0x0957), (0x0962, 0x0963), (0x0981, 0x0983), (0x09BE, 0x09C4), (0x09C7, 0x09C8),
    (0x09CB, 0x09CC), (0x09D7, 0x09D7), (0x09E2, 0x09E3), (0x0A01, 0x0A03), (0x0A3E, 0x0A42),
    (0x0A47, 0x0A48), (0x0A4B, 0x0A4C), (0x0A51, 0x0A51), (0x0A70, 0x0A71), (0x0A75, 0x0A75),
    (0x0A81, 0x0A83), (0x0ABE, 0x0AC5), (0x0AC7, 0x0AC9), (0x0ACB, 0x0ACC), (0x0AE2, 0x0AE3),
    (0x0AFA, 0x0AFC), (0x0B01, 0x0B03), (0x0B3E, 0x0B44), (0x0B47, 0x0B48), (0x0B4B, 0x0B4C),
    (0x0B56, 0x0B57), (0x0B62, 0x0B63), (0x0B82, 0x0B82), (0x0BBE, 0x0BC2), (0x0BC6, 0x0BC8),
    (0x0BCA, 0x0BCC), (0x0BD7, 0x0BD7), (0x0C00, 0x0C04), (0x0C3E, 0x0C44), (0x0C46, 0x0C48),
    (0x0C4A, 0x0C4C), (0x0C55, 0x0C56), (0x0C5C, 0x0C5C), (0x0C62, 0x0C63), (0x0C81, 0x0C83),
    (0x0CBE, 0x0CC4), (0x0CC6, 0x0CC8), (0x0CCA, 0x0CCC), (0x0CD5, 0x0CD6), (0x0CDC, 0x0CDC),
    (0x0CE2, 0x0CE3), (0x0CF3, 0x0CF3), (0x0D00, 0x0D03), (0x0D3E, 0x0D44), (0x0D46, 0x0D48),
    (0x0D4A, 0x0D4C), (0x0D57, 0x0D57), (0x0D62, 0x0D63), (0x0D81, 0x0D83), (0x0DCF, 0x0DD4),
    (0x0DD6, 0x0DD6), (0x0DD8, 0x0DDF), (0x0DF2, 0x0DF3), (0x0E31, 0x0E31), (0x0E34, 0x0E3A),
    (0x0E4D, 0x0E4D), (0x0EB1, 0x0EB1), (0x0EB4, 0x0EB9), (0x0EBB, 0x0EBC), (0x0ECD, 0x0ECD),
    (0x0F71, 0x0F83), (0x0F8D, 0x0F97), (0x0F99, 0x0FBC), (0x102B, 0x1036), (0x1038, 0x1038),
    (0x103B, 0x103E), (0x1056, 0x1059), (0x105E, 0x1060), (0x1062, 0x1064), (0x1067, 0x106D),
    (0x1071, 0x1074), (0x1082, 0x108D), (0x108F, 0x108F), (0x109A, 0x109D), (0x1712, 0x1713),
    (0x1732, 0x1733), (0x1752, 0x1753), (0x1772, 0x1773), (0x17B6, 0x17C8), (0x1885, 0x1886),
    (0x18A9, 0x18A9), (0x1920, 0x192B), (0x1930, 0x1938), (0x1A17, 0x1A1B), (0x1A55, 0x1A5E),
    (0x1A61, 0x1A74), (0x1ABF, 0x1AC0), (0x1ACC, 0x1ACE), (0x1B00, 0x1B04), (0x1B35, 0x1B43),
    (0x1B80, 0x1B82), (0x1BA1, 0x1BA9), (0x1BAC, 0x1BAD), (0x1BE7, 0x1BF1), (0x1C24, 0x1C36),
    (0x1C89, 0x1C8A), (0x1DD3, 0x1DF4), (0x24B6, 0x24E9), (0x2DE0, 0x2DFF), (0xA674, 0xA67B),
    (0xA69E, 0xA69F), (0xA7CB, 0xA7CF), (0xA7D2, 0xA7D2), (0xA7D4, 0xA7D4), (0xA7DA, 0xA7DC),
    (0xA7F1, 0xA7F1), (0xA802, 0xA802), (0xA80B, 0xA80B), (0xA823, 0xA827), (0xA880, 0xA881),
    (0xA8B4, 0xA8C3), (0xA8C5, 0xA8C5), (0xA8FF, 0xA8FF), (0xA926, 0xA92A), (0xA947, 0xA952),
    (0xA980, 0xA983), (0xA9B4, 0xA9BF), (0xA9E5, 0xA9E5), (0xAA29, 0xAA36), (0xAA43, 0xAA43),
    (0xAA4C, 0xAA4D), (0xAA7B, 0xAA7D), (0xAAB0, 0xAAB0), (0xAAB2, 0xAAB4), (0xAAB7, 0xAAB8),
    (0xAABE, 0xAABE), (0xAAEB, 0xAAEF), (0xAAF5, 0xAAF5), (0xABE3, 0xABEA), (0xFB1E, 0xFB1E),
    (0x10376, 0x1037A), (0x105C0, 0x105F3), (0x10940, 0x10959), (0x10A01, 0x10A03),
    (0x10A05, 0x10A06), (0x10A0C, 0x10A0F), (0x10D24, 0x10D27), (0x10D40, 0x10D65),
    (0x10D69, 0x10D69), (0x10D6F, 0x10D85), (0x10EAB, 0x10EAC), (0x10EC2, 0x10EC7),
    (0x10EFA, 0x10EFC), (0x11000, 0x11002), (0x11038, 0x11045), (0x11073, 0x11074),
    (0x11080, 0x11082), (0x110B0, 0x110B8), (0x110C2, 0x110C2), (0x11100, 0x11102),
    (0x11127, 0x11132), (0x11145, 0x11146), (0x11180, 0x11182), (0x111B3, 0x111BF),
    (0x111CE, 0x111CF), (0x1122C, 0x11234), (0x11237, 0x11237), (0x1123E, 0x11241),
    (0x112DF, 0x112E8), (0x11300, 0x11303), (0x1133E, 0x11344), (0x11347, 0x11348),
    (0x1134B, 0x1134C), (0x11357, 0x11357), (0x11362, 0x11363), (0x11380, 0x11389),
    (0x1138B, 0x1138B), (0x1138E, 0x1138E), (0x11390, 0x113B5), (0x113B7, 0x113C0),
    (0x113C2, 0x113C2), (0x113C5, 0x113C5), (0x113C7, 0x113CA), (0x113CC, 0x113CD),
    (0x113D1, 0x113D1), (0x113D3, 0x113D3), (0x11435, 0x11441), (0x11443, 0x11445),
    (0x114B0, 0x114C1), (0x115AF, 0x115B5), (0x115B8, 0x115BE), (0x115DC, 0x115DD),
    (0x11630, 0x1163E), (0x11640, 0x11640), (0x116AB, 0x116B5), (0x116D0, 0x116E3),
    (0x1171D, 0x1172A), (0x1182C, 0x11838), (0x11930, 0x11935), (0x11937, 0x11938),
    (0x1193B, 0x1193C), (0x11940, 0x11940), (0x11942, 0x11942), (0x119D1, 0x119D7),
    (0x119DA, 0x119DF), (0x119E4, 0x119E4), (0x11A01, 0x11A0A), (0x11A35, 0x11A39),
    (0x11A3B, 0x11A3E), (0x11A51, 0x11A5B), (0x11A8A, 0x11A97), (0x11B60, 0x11B67),
    (0x11BC0, 0x11BE0), (0x11BF0, 0x11BF9), (0x11C2F, 0x11C36), (0x11C38, 0x11C3E),
    (0x11C92, 0x11CA7), (0x11CA9, 0x11CB6), (0x11D31, 0x11D36), (0x11D3A, 0x11D3A),
    (0x11D3C, 0x11D3D), (0x11D3F, 0x11D41), (0x11D43, 0x11D43), (0x11D47, 0x11D47),
    (0x11D8A, 0x11D8E), (0x11D90, 0x11D91), (0x11D93, 0x11D96), (0x11DB0, 0x11DDB),
    (0x11DE0, 0x11DE9), (0x11EF3, 0x11EF6), (0x11F00, 0x11F10), (0x11F12, 0x11F3A),
    (0x11F3E, 0x11F40), (0x11F50, 0x11F59), (0x1342F, 0x1342F), (0x13441, 0x13446),
    (0x13460, 0x143FA), (0x16100, 0x1612E), (0x16130, 0x16139), (0x16D40, 0x16D6C),
    (0x16D70, 0x16D79), (0x16EA0, 0x16EB8), (0x16EBB, 0x16ED3), (0x16F4F, 0x16F4F),
    (0x16F51, 0x16F87), (0x16F8F, 0x16F92), (0x16FF0, 0x16FF6), (0x187F8, 0x187FF),
    (0x18CFF, 0x18CFF), (0x18D09, 0x18D1E), (0x18D80, 0x18DF2), (0x1B132, 0x1B132),
    (0x1B155, 0x1B155), (0x1BC9E, 0x1BC9E), (0x1CCF0, 0x1CCF9), (0x1D2C0, 0x1D2D3),
    (0x1DF25, 0x1DF2A), (0x1E000, 0x1E006), (0x1E008, 0x1E018), (0x1E01B, 0x1E021),
    (0x1E023, 0x1E024), (0x1E026, 0x1E02A), (0x1E030, 0x1E06D), (0x1E08F, 0x1E08F),
    (0x1E4D0, 0x1E4EB), (0x1E4F0, 0x1E4F9), (0x1E5D0, 0x1E5ED), (0x1E5F0, 0x1E5FA),
    (0x1E6C0, 0x1E6DE), (0x1E6E0, 0x1E6F5), (0x1E6FE, 0x1E6FF), (0x1E947, 0x1E947),
    (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189), (0x2B739, 0x2B73F),
    (0x2CEA2, 0x2CEAD), (0x2EBF0, 0x2EE5D), (0x31350, 0x33479),
];
