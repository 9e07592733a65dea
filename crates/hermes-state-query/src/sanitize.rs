//! The FTS5 query sanitizer of the v23 store (`api.md` §7), and a pure-Rust
//! prediction of whether SQLite's FTS5 accepts a query.
//!
//! [`sanitize_fts5_query`] is a byte-exact port: it keeps the original's
//! gaps on purpose. `50%`, `don't`, `alice@example.com`, `-foo`,
//! `NOT NOT x` or `a AND OR b` come out in a form FTS5 rejects with a syntax
//! error, which search turns into `[]` (§8.4). Changing that would change
//! which rows a search returns, so the sanitizer does not; instead
//! [`is_valid_fts5_syntax`] tells a caller, without a round trip to SQLite,
//! whether FTS5 will accept a sanitized (or any other) query, so search can
//! skip a query that can only fail and tests can state exactly which outputs
//! fail.
//!
//! Two traps for a port, both handled here with explicit character classes
//! instead of the `regex` crate:
//!
//! * The original runs Python regexes. Python's `\w` is `str.isalnum()` or
//!   `_`, and `\s` / `str.strip()` is `str.isspace()`. Rust's regex `\w`
//!   also matches combining marks and connector punctuation, and Rust's
//!   `char::is_whitespace` lacks U+001C–U+001F, so neither may be used.
//! * FTS5 reads the MATCH argument as a C string and has its own tiny
//!   notion of whitespace (`' '`, tab, CR, LF) and of bareword characters;
//!   those are *not* Python's.

use std::cmp::Ordering;

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

/// Whether `c` lies in one of the sorted, disjoint, inclusive `ranges`.
fn in_ranges(ranges: &[(u32, u32)], c: char) -> bool {
    let u = u32::from(c);
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < u {
                Ordering::Less
            } else if lo > u {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })
        .is_ok()
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
// FTS5 query validity
// ---------------------------------------------------------------------------

/// Whether SQLite's FTS5 accepts `query` as the right-hand side of `MATCH`
/// on the store's `messages_fts` table, i.e. whether
/// `SELECT … WHERE messages_fts MATCH ?` runs instead of failing with
/// `fts5: syntax error near …`, `unterminated string`, `no such column: …`,
/// `expected integer, got …`, `fts5: parser stack overflow`, `fts5
/// expression tree is too large (maximum depth 256)` or `unknown special
/// query: …`.
///
/// A pure-Rust replica of the query front end of the bundled SQLite
/// (3.54.1): FTS5's tokenizer (`fts5ExprGetToken`: whitespace is only
/// space, tab, CR and LF; barewords are runs of non-ASCII bytes, ASCII
/// letters, digits, `_` and U+001A; `"…"` strings with `""` escapes;
/// `AND`/`OR`/`NOT` are operators only in upper case), its LALR(1) parser
/// (the lemon tables of `fts5parse.y`, with its fixed 100-entry stack), and
/// the checks its reduce actions make: `NEAR` spelled exactly so, the `NEAR`
/// distance all digits, column filters naming `content`, `tool_name` or
/// `tool_calls` (ASCII case-insensitive), and the expression depth limit,
/// which needs to know which phrases the `unicode61` tokenizer turns into
/// no token at all (a generated table, `UNICODE61_TOKEN_CHARS`). Like SQLite it stops at the
/// first NUL (the MATCH text is read as a C string), and a query starting
/// with `*` is one of FTS5's special commands (`*reads`, `*id`).
///
/// Phrase tokenisation never fails in `unicode61`, and query-time errors
/// (I/O, corruption) are not syntax, so they are out of scope. The
/// property tests check this function against a real FTS5 table on
/// arbitrary strings and on every sanitizer output.
pub fn is_valid_fts5_syntax(query: &str) -> bool {
    let query = match query.find('\0') {
        Some(nul) => &query[..nul],
        None => query,
    };
    match query.strip_prefix('*') {
        Some(command) => is_special_query(command),
        None => fts5::parse(query).is_ok(),
    }
}

/// `fts5SpecialMatch`: `MATCH '*reads'` / `'* id'` return internal counters
/// instead of searching; anything else after a leading `*` is
/// `unknown special query`.
fn is_special_query(command: &str) -> bool {
    let command = command.trim_start_matches(' ');
    let name = command.split(' ').next().unwrap_or_default();
    name.eq_ignore_ascii_case("reads") || name.eq_ignore_ascii_case("id")
}

/// The FTS5 expression parser, reduced to what decides acceptance.
mod fts5 {
    use super::{UNICODE61_TOKEN_CHARS, in_ranges};

    /// The query is rejected (the reason does not matter to callers).
    #[derive(Debug)]
    pub(super) struct Rejected;

    type Result<T> = std::result::Result<T, Rejected>;

    /// The columns of `messages_fts`, for column filters.
    const COLUMNS: [&str; 3] = ["content", "tool_name", "tool_calls"];
    /// `SQLITE_FTS5_MAX_EXPR_DEPTH`.
    const MAX_EXPR_DEPTH: u32 = 256;

    // Terminal codes of fts5parse.y (`FTS5_*` in sqlite3.c).
    const EOF: u8 = 0;
    const OR: u8 = 1;
    const AND: u8 = 2;
    const NOT: u8 = 3;
    const COLON: u8 = 5;
    const MINUS: u8 = 6;
    const LCP: u8 = 7;
    const RCP: u8 = 8;
    const STRING: u8 = 9;
    const LP: u8 = 10;
    const RP: u8 = 11;
    const CARET: u8 = 12;
    const COMMA: u8 = 13;
    const PLUS: u8 = 14;
    const STAR: u8 = 15;

    // The lemon parser tables of fts5parse.y, copied verbatim from the
    // bundled sqlite3.c 3.54.1 (`fts5yy_action` … `fts5yyRuleInfoNRhs`).
    // Copying them, rather than writing a parser by hand, reproduces
    // lemon's conflict resolution and stack use exactly.
    #[rustfmt::skip]
    const YY_ACTION: [u8; 105] = [
        81, 20, 96, 6, 28, 99, 98, 26, 26, 18, 96, 6, 28, 17, 98, 56, 26, 19, 96, 6,
        28, 14, 98, 14, 26, 31, 92, 96, 6, 28, 108, 98, 25, 26, 21, 96, 6, 28, 78, 98,
        58, 26, 29, 96, 6, 28, 107, 98, 22, 26, 24, 16, 12, 11, 1, 13, 13, 24, 16, 23,
        11, 33, 34, 13, 97, 8, 27, 32, 98, 7, 26, 3, 4, 5, 3, 4, 5, 3, 83, 4,
        5, 3, 63, 5, 3, 62, 12, 2, 86, 13, 9, 30, 10, 10, 54, 57, 75, 78, 78, 53,
        57, 15, 82, 82, 71,
    ];
    #[rustfmt::skip]
    const YY_LOOKAHEAD: [u8; 121] = [
        16, 17, 18, 19, 20, 22, 22, 24, 24, 17, 18, 19, 20, 7, 22, 9, 24, 17, 18, 19,
        20, 9, 22, 9, 24, 13, 17, 18, 19, 20, 26, 22, 24, 24, 17, 18, 19, 20, 15, 22,
        9, 24, 17, 18, 19, 20, 26, 22, 21, 24, 6, 7, 9, 9, 10, 12, 12, 6, 7, 21,
        9, 24, 25, 12, 18, 5, 20, 14, 22, 5, 24, 3, 1, 2, 3, 1, 2, 3, 0, 1,
        2, 3, 11, 2, 3, 11, 9, 10, 5, 12, 23, 24, 10, 10, 8, 9, 9, 15, 15, 8,
        9, 9, 27, 27, 11, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27,
        27,
    ];
    #[rustfmt::skip]
    const YY_SHIFT_OFST: [u8; 35] = [
        44, 44, 44, 44, 44, 44, 51, 77, 43, 12, 14, 83, 82, 14, 23, 23, 31, 31, 71, 74,
        78, 81, 86, 91, 6, 53, 53, 60, 64, 68, 53, 87, 92, 53, 93,
    ];
    #[rustfmt::skip]
    const YY_REDUCE_OFST: [i8; 18] = [
        -16, -8, 0, 9, 17, 25, 46, -17, -17, 37, 67, 4, 4, 8, 4, 20, 27, 38,
    ];
    #[rustfmt::skip]
    const YY_DEFAULT: [u8; 35] = [
        80, 80, 80, 80, 80, 80, 95, 80, 80, 105, 80, 110, 110, 80, 110, 110, 80, 80, 80, 80,
        80, 91, 80, 80, 80, 101, 100, 80, 80, 90, 103, 80, 80, 104, 80,
    ];
    /// Left-hand-side symbol of each rule.
    #[rustfmt::skip]
    const RULE_LHS: [u8; 28] = [
        16, 20, 20, 20, 20, 21, 21, 17, 17, 17, 17, 17, 17, 19, 19, 18, 18, 22, 22, 22,
        23, 23, 25, 25, 24, 24, 26, 26,
    ];
    /// Number of right-hand-side symbols of each rule.
    #[rustfmt::skip]
    const RULE_NRHS: [u8; 28] = [
        1, 4, 3, 1, 2, 2, 1, 3, 3, 3, 5, 3, 1, 1, 2, 1, 3, 1, 2, 5,
        1, 2, 0, 2, 4, 2, 1, 0,
    ];
    const MAX_SHIFT: u8 = 34;
    const MIN_SHIFTREDUCE: u8 = 52;
    const MAX_SHIFTREDUCE: u8 = 79;
    const ACCEPT_ACTION: u8 = 81;
    const MIN_REDUCE: u8 = 83;
    /// `fts5YYSTACKDEPTH`; the stack does not grow (`fts5YYDYNSTACK 0`).
    const STACK_DEPTH: usize = 100;

    /// An expression node, as far as acceptance depends on it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        /// A phrase or NEAR group (`FTS5_STRING`/`FTS5_TERM`); `eof` when it
        /// holds an empty phrase, which FTS5 turns into `FTS5_EOF`.
        Leaf {
            eof: bool,
        },
        And,
        Or,
        Not,
    }

    #[derive(Debug, Clone, Copy)]
    struct Node {
        kind: Kind,
        /// `Fts5ExprNode.iHeight`.
        height: u32,
        /// For `And`: whether its last child is an empty leaf
        /// (`sqlite3Fts5ParseImplicitAnd` looks at it).
        last_child_eof: bool,
    }

    impl Node {
        fn leaf(eof: bool) -> Self {
            Node {
                kind: Kind::Leaf { eof },
                height: 0,
                last_child_eof: false,
            }
        }

        fn is_eof(&self) -> bool {
            self.kind == Kind::Leaf { eof: true }
        }
    }

    /// Semantic values on the parser stack.
    #[derive(Debug)]
    enum Value<'a> {
        None,
        Token(&'a str),
        Colset,
        Expr(Node),
        /// A NEAR group: whether each of its phrases is empty.
        Nearset(Vec<bool>),
        /// A phrase: whether it is empty (no token at all).
        Phrase(bool),
    }

    impl<'a> Value<'a> {
        fn token(self) -> Result<&'a str> {
            match self {
                Value::Token(text) => Ok(text),
                _ => Err(Rejected),
            }
        }

        fn expr(self) -> Result<Node> {
            match self {
                Value::Expr(node) => Ok(node),
                _ => Err(Rejected),
            }
        }

        fn nearset(self) -> Result<Vec<bool>> {
            match self {
                Value::Nearset(phrases) => Ok(phrases),
                _ => Err(Rejected),
            }
        }

        fn phrase(self) -> Result<bool> {
            match self {
                Value::Phrase(empty) => Ok(empty),
                _ => Err(Rejected),
            }
        }
    }

    /// Parses a NUL-free query that does not start with `*`.
    pub(super) fn parse(query: &str) -> Result<()> {
        let mut parser = Parser {
            stack: vec![(0, Value::None)],
        };
        let mut rest = query;
        loop {
            let (major, text) = next_token(&mut rest)?;
            if parser.feed(major, text)? {
                return Ok(());
            }
            if major == EOF {
                return Err(Rejected);
            }
        }
    }

    /// `fts5ExprGetToken`: the next token and its text.
    fn next_token<'a>(rest: &mut &'a str) -> Result<(u8, &'a str)> {
        let text = rest.trim_start_matches([' ', '\t', '\n', '\r']);
        let bytes = text.as_bytes();
        let Some(&first) = bytes.first() else {
            *rest = text;
            return Ok((EOF, text));
        };
        let (major, len) = match first {
            b'(' => (LP, 1),
            b')' => (RP, 1),
            b'{' => (LCP, 1),
            b'}' => (RCP, 1),
            b':' => (COLON, 1),
            b',' => (COMMA, 1),
            b'+' => (PLUS, 1),
            b'*' => (STAR, 1),
            b'-' => (MINUS, 1),
            b'^' => (CARET, 1),
            b'"' => {
                // `""` inside a string is an escaped quote.
                let mut i = 1;
                loop {
                    match bytes.get(i) {
                        None => return Err(Rejected), // unterminated string
                        Some(b'"') if bytes.get(i + 1) == Some(&b'"') => i += 2,
                        Some(b'"') => break (STRING, i + 1),
                        Some(_) => i += 1,
                    }
                }
            }
            _ if is_bareword_byte(first) => {
                let len = bytes.iter().take_while(|&&b| is_bareword_byte(b)).count();
                let major = match &bytes[..len] {
                    b"OR" => OR,
                    b"NOT" => NOT,
                    b"AND" => AND,
                    _ => STRING,
                };
                (major, len)
            }
            _ => return Err(Rejected), // syntax error near one character
        };
        // Every token ends before an ASCII byte or at the end: a char boundary.
        let (token, after) = text.split_at_checked(len).ok_or(Rejected)?;
        *rest = after;
        Ok((major, token))
    }

    /// `sqlite3Fts5IsBareword`: non-ASCII bytes, ASCII letters and digits,
    /// `_` and U+001A.
    fn is_bareword_byte(b: u8) -> bool {
        b >= 0x80 || b.is_ascii_alphanumeric() || b == b'_' || b == 0x1a
    }

    /// The lemon driver (`sqlite3Fts5Parser` with `fts5YYNOERRORRECOVERY`).
    struct Parser<'a> {
        /// `(state or pending reduce action, semantic value)`.
        stack: Vec<(u8, Value<'a>)>,
    }

    impl<'a> Parser<'a> {
        /// Feeds one token; `Ok(true)` once the input is accepted.
        fn feed(&mut self, major: u8, text: &'a str) -> Result<bool> {
            let mut action = self.stack.last().ok_or(Rejected)?.0;
            loop {
                action = find_shift_action(major, action)?;
                if action >= MIN_REDUCE {
                    let rule = usize::from(action - MIN_REDUCE);
                    let empty_rule = *RULE_NRHS.get(rule).ok_or(Rejected)? == 0;
                    if empty_rule && self.stack.len() >= STACK_DEPTH {
                        return Err(Rejected); // parser stack overflow
                    }
                    action = self.reduce(rule)?;
                } else if action <= MAX_SHIFTREDUCE {
                    if self.stack.len() >= STACK_DEPTH {
                        return Err(Rejected); // parser stack overflow
                    }
                    let state = if action > MAX_SHIFT {
                        action + (MIN_REDUCE - MIN_SHIFTREDUCE)
                    } else {
                        action
                    };
                    self.stack.push((state, Value::Token(text)));
                    return Ok(false);
                } else if action == ACCEPT_ACTION {
                    return Ok(true);
                } else {
                    return Err(Rejected); // syntax error
                }
            }
        }

        /// `fts5yy_reduce`: pops the rule's right-hand side, runs the checks
        /// of its action and pushes the left-hand side.
        fn reduce(&mut self, rule: usize) -> Result<u8> {
            let n = usize::from(*RULE_NRHS.get(rule).ok_or(Rejected)?);
            let base = self.stack.len().checked_sub(n).ok_or(Rejected)?;
            let rhs: Vec<Value<'a>> = self.stack.drain(base..).map(|(_, value)| value).collect();
            let value = reduce_action(rule, rhs)?;
            let below = self.stack.last().ok_or(Rejected)?.0;
            let lhs = *RULE_LHS.get(rule).ok_or(Rejected)?;
            let action = find_reduce_action(below, lhs)?;
            self.stack.push((action, value));
            Ok(action)
        }
    }

    /// `fts5yy_find_shift_action`.
    fn find_shift_action(lookahead: u8, state: u8) -> Result<u8> {
        if state > MAX_SHIFT {
            return Ok(state);
        }
        let offset = *YY_SHIFT_OFST.get(usize::from(state)).ok_or(Rejected)?;
        let i = usize::from(offset) + usize::from(lookahead);
        if YY_LOOKAHEAD.get(i) == Some(&lookahead) {
            YY_ACTION.get(i).copied().ok_or(Rejected)
        } else {
            YY_DEFAULT.get(usize::from(state)).copied().ok_or(Rejected)
        }
    }

    /// `fts5yy_find_reduce_action`.
    fn find_reduce_action(state: u8, lhs: u8) -> Result<u8> {
        let offset = *YY_REDUCE_OFST.get(usize::from(state)).ok_or(Rejected)?;
        let i = usize::try_from(i16::from(offset) + i16::from(lhs)).map_err(|_| Rejected)?;
        YY_ACTION.get(i).copied().ok_or(Rejected)
    }

    /// The reduce actions of fts5parse.y, keeping only what can fail.
    fn reduce_action<'a>(rule: usize, rhs: Vec<Value<'a>>) -> Result<Value<'a>> {
        let mut rhs = rhs.into_iter();
        let mut next = || rhs.next().ok_or(Rejected);
        Ok(match rule {
            // input ::= expr
            0 => Value::None,
            // colset ::= MINUS LCP colsetlist RCP | LCP colsetlist RCP
            1 | 2 => Value::Colset,
            // colset ::= STRING | MINUS STRING ; colsetlist ::= colsetlist STRING | STRING
            3..=6 => {
                if rule == 4 || rule == 5 {
                    next()?;
                }
                check_column(next()?.token()?)?;
                Value::Colset
            }
            // expr ::= expr AND|OR|NOT expr
            7..=9 => {
                let left = next()?.expr()?;
                next()?;
                let right = next()?.expr()?;
                let kind = match rule {
                    7 => Kind::And,
                    8 => Kind::Or,
                    _ => Kind::Not,
                };
                Value::Expr(combine(kind, left, right)?)
            }
            // expr ::= colset COLON LP expr RP
            10 => {
                next()?;
                next()?;
                next()?;
                Value::Expr(next()?.expr()?)
            }
            // expr ::= LP expr RP
            11 => {
                next()?;
                Value::Expr(next()?.expr()?)
            }
            // expr ::= exprlist ; exprlist ::= cnearset
            12 | 13 => Value::Expr(next()?.expr()?),
            // exprlist ::= exprlist cnearset
            14 => {
                let left = next()?.expr()?;
                let right = next()?.expr()?;
                Value::Expr(implicit_and(left, right)?)
            }
            // cnearset ::= nearset | colset COLON nearset
            15 | 16 => {
                if rule == 16 {
                    next()?;
                    next()?;
                }
                let phrases = next()?.nearset()?;
                Value::Expr(Node::leaf(phrases.iter().any(|&empty| empty)))
            }
            // nearset ::= phrase | CARET phrase ; nearphrases ::= phrase
            17 | 18 | 20 => {
                if rule == 18 {
                    next()?;
                }
                Value::Nearset(vec![next()?.phrase()?])
            }
            // nearset ::= STRING LP nearphrases neardist_opt RP
            19 => {
                if next()?.token()? != "NEAR" {
                    return Err(Rejected);
                }
                next()?;
                let phrases = next()?.nearset()?;
                let distance = next()?.token()?;
                if !distance.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(Rejected); // expected integer
                }
                Value::Nearset(phrases)
            }
            // nearphrases ::= nearphrases phrase
            21 => {
                let mut phrases = next()?.nearset()?;
                let empty = next()?.phrase()?;
                add_phrase(&mut phrases, empty);
                Value::Nearset(phrases)
            }
            // neardist_opt ::= (empty)
            22 => Value::Token(""),
            // neardist_opt ::= COMMA STRING
            23 => {
                next()?;
                Value::Token(next()?.token()?)
            }
            // phrase ::= phrase PLUS STRING star_opt
            24 => {
                let empty = next()?.phrase()?;
                next()?;
                let text = next()?.token()?;
                Value::Phrase(empty && !has_token_char(text))
            }
            // phrase ::= STRING star_opt
            25 => Value::Phrase(!has_token_char(next()?.token()?)),
            // star_opt ::= STAR | (empty)
            26 | 27 => Value::None,
            _ => return Err(Rejected),
        })
    }

    /// `sqlite3Fts5ParseColset`: the (dequoted) name must be a column.
    fn check_column(token: &str) -> Result<()> {
        let name = dequote(token);
        if COLUMNS
            .iter()
            .any(|column| column.eq_ignore_ascii_case(&name))
        {
            Ok(())
        } else {
            Err(Rejected) // no such column
        }
    }

    /// `sqlite3Fts5Dequote` for FTS5 tokens: only `"…"` strings are quoted.
    fn dequote(token: &str) -> String {
        match token.strip_prefix('"') {
            Some(inner) => inner
                .strip_suffix('"')
                .unwrap_or(inner)
                .replace("\"\"", "\""),
            None => token.to_owned(),
        }
    }

    /// `sqlite3Fts5ParseNearset` adding a phrase to a group: an empty
    /// phrase after another is dropped, and an empty last phrase is
    /// replaced by a non-empty one.
    fn add_phrase(phrases: &mut Vec<bool>, empty: bool) {
        match phrases.last_mut() {
            Some(_) if empty => {}
            Some(last) if *last => *last = false,
            _ => phrases.push(empty),
        }
    }

    /// `sqlite3Fts5ParseNode` for AND/OR/NOT: AND and OR absorb children of
    /// their own kind, NOT never does; deeper than
    /// [`MAX_EXPR_DEPTH`] is an error.
    fn combine(kind: Kind, left: Node, right: Node) -> Result<Node> {
        let merges = |child: &Node| kind != Kind::Not && child.kind == kind;
        let contribution = |child: &Node| {
            if merges(child) {
                child.height
            } else {
                child.height.saturating_add(1)
            }
        };
        let height = contribution(&left).max(contribution(&right));
        if height > MAX_EXPR_DEPTH {
            return Err(Rejected);
        }
        let last_child_eof = if merges(&right) {
            right.last_child_eof
        } else {
            right.is_eof()
        };
        Ok(Node {
            kind,
            height,
            last_child_eof,
        })
    }

    /// `sqlite3Fts5ParseImplicitAnd` (`a b`): an empty right phrase is
    /// dropped, an empty left one is replaced, otherwise an AND node.
    fn implicit_and(left: Node, right: Node) -> Result<Node> {
        let previous_eof = match left.kind {
            Kind::And => left.last_child_eof,
            _ => left.is_eof(),
        };
        if right.is_eof() {
            Ok(left)
        } else if previous_eof {
            if left.kind == Kind::And {
                Ok(Node {
                    last_child_eof: right.is_eof(),
                    ..left
                })
            } else {
                Ok(right)
            }
        } else {
            combine(Kind::And, left, right)
        }
    }

    /// Whether the `unicode61` tokenizer (default options) finds at least
    /// one token in `text`: ASCII letters and digits, and non-ASCII
    /// characters of its token categories. U+FFFE and U+FFFF are read as
    /// U+FFFD, a separator; combining marks only continue a token.
    fn has_token_char(text: &str) -> bool {
        text.chars().any(|c| {
            if c.is_ascii() {
                c.is_ascii_alphanumeric()
            } else {
                !matches!(c, '\u{fffe}' | '\u{ffff}') && in_ranges(UNICODE61_TOKEN_CHARS, c)
            }
        })
    }
}

// ---------------------------------------------------------------------------
// Generated tables
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

/// The non-ASCII characters the default `unicode61` tokenizer of the
/// bundled SQLite 3.54.1 treats as token characters (its categories
/// `L* N* Co`, plus code points its table leaves unclassified, which
/// `sqlite3Fts5UnicodeCatParse` always counts as token characters), as
/// sorted inclusive ranges.
///
/// Generated by evaluating `sqlite3Fts5UnicodeCategory` from the arrays
/// `aFts5UnicodeBlock`, `aFts5UnicodeMap` and `aFts5UnicodeData` of that
/// `sqlite3.c` for every code point from U+0080 (ASCII is handled in code),
/// keeping categories {0, 5–9, 13–15, 30, 31}. Only phrase emptiness, and
/// through it the expression depth limit, depends on it.
#[rustfmt::skip]
const UNICODE61_TOKEN_CHARS: &[(u32, u32)] = &[
    (0x00AA, 0x00AA), (0x00B2, 0x00B3), (0x00B5, 0x00B5), (0x00B9, 0x00BA), (0x00BC, 0x00BE),
    (0x00C0, 0x00D6), (0x00D8, 0x00F6), (0x00F8, 0x02C1), (0x02C6, 0x02D1), (0x02E0, 0x02E4),
    (0x02EC, 0x02EC), (0x02EE, 0x02EE), (0x0370, 0x0374), (0x0376, 0x037D), (0x037F, 0x0383),
    (0x0386, 0x0386), (0x0388, 0x03F5), (0x03F7, 0x0481), (0x048A, 0x0559), (0x0560, 0x0588),
    (0x058B, 0x058E), (0x0590, 0x0590), (0x05C8, 0x05F2), (0x05F5, 0x05FF), (0x0605, 0x0605),
    (0x061C, 0x061D), (0x0620, 0x064A), (0x0660, 0x0669), (0x066E, 0x066F), (0x0671, 0x06D3),
    (0x06D5, 0x06D5), (0x06E5, 0x06E6), (0x06EE, 0x06FC), (0x06FF, 0x06FF), (0x070E, 0x070E),
    (0x0710, 0x0710), (0x0712, 0x072F), (0x074B, 0x07A5), (0x07B1, 0x07EA), (0x07F4, 0x07F5),
    (0x07FA, 0x0815), (0x081A, 0x081A), (0x0824, 0x0824), (0x0828, 0x0828), (0x082E, 0x082F),
    (0x083F, 0x0858), (0x085C, 0x085D), (0x085F, 0x08E3), (0x08FF, 0x08FF), (0x0904, 0x0939),
    (0x093D, 0x093D), (0x0950, 0x0950), (0x0958, 0x0961), (0x0966, 0x096F), (0x0971, 0x0980),
    (0x0984, 0x09BB), (0x09BD, 0x09BD), (0x09C5, 0x09C6), (0x09C9, 0x09CA), (0x09CE, 0x09D6),
    (0x09D8, 0x09E1), (0x09E4, 0x09F1), (0x09F4, 0x09F9), (0x09FC, 0x0A00), (0x0A04, 0x0A3B),
    (0x0A3D, 0x0A3D), (0x0A43, 0x0A46), (0x0A49, 0x0A4A), (0x0A4E, 0x0A50), (0x0A52, 0x0A6F),
    (0x0A72, 0x0A74), (0x0A76, 0x0A80), (0x0A84, 0x0ABB), (0x0ABD, 0x0ABD), (0x0AC6, 0x0AC6),
    (0x0ACA, 0x0ACA), (0x0ACE, 0x0AE1), (0x0AE4, 0x0AEF), (0x0AF2, 0x0B00), (0x0B04, 0x0B3B),
    (0x0B3D, 0x0B3D), (0x0B45, 0x0B46), (0x0B49, 0x0B4A), (0x0B4E, 0x0B55), (0x0B58, 0x0B61),
    (0x0B64, 0x0B6F), (0x0B71, 0x0B81), (0x0B83, 0x0BBD), (0x0BC3, 0x0BC5), (0x0BC9, 0x0BC9),
    (0x0BCE, 0x0BD6), (0x0BD8, 0x0BF2), (0x0BFB, 0x0C00), (0x0C04, 0x0C3D), (0x0C45, 0x0C45),
    (0x0C49, 0x0C49), (0x0C4E, 0x0C54), (0x0C57, 0x0C61), (0x0C64, 0x0C7E), (0x0C80, 0x0C81),
    (0x0C84, 0x0CBB), (0x0CBD, 0x0CBD), (0x0CC5, 0x0CC5), (0x0CC9, 0x0CC9), (0x0CCE, 0x0CD4),
    (0x0CD7, 0x0CE1), (0x0CE4, 0x0D01), (0x0D04, 0x0D3D), (0x0D45, 0x0D45), (0x0D49, 0x0D49),
    (0x0D4E, 0x0D56), (0x0D58, 0x0D61), (0x0D64, 0x0D78), (0x0D7A, 0x0D81), (0x0D84, 0x0DC9),
    (0x0DCB, 0x0DCE), (0x0DD5, 0x0DD5), (0x0DD7, 0x0DD7), (0x0DE0, 0x0DF1), (0x0DF5, 0x0E30),
    (0x0E32, 0x0E33), (0x0E3B, 0x0E3E), (0x0E40, 0x0E46), (0x0E50, 0x0E59), (0x0E5C, 0x0EB0),
    (0x0EB2, 0x0EB3), (0x0EBA, 0x0EBA), (0x0EBD, 0x0EC7), (0x0ECE, 0x0F00), (0x0F20, 0x0F33),
    (0x0F40, 0x0F70), (0x0F88, 0x0F8C), (0x0F98, 0x0F98), (0x0FBD, 0x0FBD), (0x0FCD, 0x0FCD),
    (0x0FDB, 0x102A), (0x103F, 0x1049), (0x1050, 0x1055), (0x105A, 0x105D), (0x1061, 0x1061),
    (0x1065, 0x1066), (0x106E, 0x1070), (0x1075, 0x1081), (0x108E, 0x108E), (0x1090, 0x1099),
    (0x10A0, 0x10FA), (0x10FC, 0x135C), (0x1369, 0x138F), (0x139A, 0x13FF), (0x1401, 0x166C),
    (0x166F, 0x167F), (0x1681, 0x169A), (0x169D, 0x16EA), (0x16EE, 0x1711), (0x1715, 0x1731),
    (0x1737, 0x1751), (0x1754, 0x1771), (0x1774, 0x17B3), (0x17D7, 0x17D7), (0x17DC, 0x17DC),
    (0x17DE, 0x17FF), (0x180F, 0x18A8), (0x18AA, 0x191F), (0x192C, 0x192F), (0x193C, 0x193F),
    (0x1941, 0x1943), (0x1946, 0x19AF), (0x19C1, 0x19C7), (0x19CA, 0x19DD), (0x1A00, 0x1A16),
    (0x1A1C, 0x1A1D), (0x1A20, 0x1A54), (0x1A5F, 0x1A5F), (0x1A7D, 0x1A7E), (0x1A80, 0x1A9F),
    (0x1AA7, 0x1AA7), (0x1AAE, 0x1AFF), (0x1B05, 0x1B33), (0x1B45, 0x1B59), (0x1B7D, 0x1B7F),
    (0x1B83, 0x1BA0), (0x1BAE, 0x1BE5), (0x1BF4, 0x1BFB), (0x1C00, 0x1C23), (0x1C38, 0x1C3A),
    (0x1C40, 0x1C7D), (0x1C80, 0x1CBF), (0x1CC8, 0x1CCF), (0x1CE9, 0x1CEC), (0x1CEE, 0x1CF1),
    (0x1CF5, 0x1DBF), (0x1DE7, 0x1DFB), (0x1E00, 0x1FBC), (0x1FBE, 0x1FBE), (0x1FC2, 0x1FCC),
    (0x1FD0, 0x1FDC), (0x1FE0, 0x1FEC), (0x1FF0, 0x1FFC), (0x1FFF, 0x1FFF), (0x2065, 0x2069),
    (0x2070, 0x2079), (0x207F, 0x2089), (0x208F, 0x209F), (0x20BA, 0x20CF), (0x20F1, 0x20FF),
    (0x2102, 0x2102), (0x2107, 0x2107), (0x210A, 0x2113), (0x2115, 0x2115), (0x2119, 0x211D),
    (0x2124, 0x2124), (0x2126, 0x2126), (0x2128, 0x2128), (0x212A, 0x212D), (0x212F, 0x2139),
    (0x213C, 0x213F), (0x2145, 0x2149), (0x214E, 0x214E), (0x2150, 0x218F), (0x23F4, 0x23FF),
    (0x2427, 0x243F), (0x244B, 0x249B), (0x24EA, 0x24FF), (0x2700, 0x2700), (0x2776, 0x2793),
    (0x2B4D, 0x2B4F), (0x2B5A, 0x2CE4), (0x2CEB, 0x2CEE), (0x2CF2, 0x2CF8), (0x2CFD, 0x2CFD),
    (0x2D00, 0x2D6F), (0x2D71, 0x2D7E), (0x2D80, 0x2DDF), (0x2E2F, 0x2E2F), (0x2E3C, 0x2E7F),
    (0x2E9A, 0x2E9A), (0x2EF4, 0x2EFF), (0x2FD6, 0x2FEF), (0x2FFC, 0x2FFF), (0x3005, 0x3007),
    (0x3021, 0x3029), (0x3031, 0x3035), (0x3038, 0x303C), (0x3040, 0x3098), (0x309D, 0x309F),
    (0x30A1, 0x30FA), (0x30FC, 0x318F), (0x3192, 0x3195), (0x31A0, 0x31BF), (0x31E4, 0x31FF),
    (0x321F, 0x3229), (0x3248, 0x324F), (0x3251, 0x325F), (0x3280, 0x3289), (0x32B1, 0x32BF),
    (0x32FF, 0x32FF), (0x3400, 0x4DBF), (0x4E00, 0xA48F), (0xA4C7, 0xA4FD), (0xA500, 0xA60C),
    (0xA610, 0xA66E), (0xA67F, 0xA69E), (0xA6A0, 0xA6EF), (0xA6F8, 0xA6FF), (0xA717, 0xA71F),
    (0xA722, 0xA788), (0xA78B, 0xA801), (0xA803, 0xA805), (0xA807, 0xA80A), (0xA80C, 0xA822),
    (0xA82C, 0xA835), (0xA83A, 0xA873), (0xA878, 0xA87F), (0xA882, 0xA8B3), (0xA8C5, 0xA8CD),
    (0xA8D0, 0xA8DF), (0xA8F2, 0xA8F7), (0xA8FB, 0xA925), (0xA930, 0xA946), (0xA954, 0xA95E),
    (0xA960, 0xA97F), (0xA984, 0xA9B2), (0xA9CE, 0xA9DD), (0xA9E0, 0xAA28), (0xAA37, 0xAA42),
    (0xAA44, 0xAA4B), (0xAA4E, 0xAA5B), (0xAA60, 0xAA76), (0xAA7A, 0xAA7A), (0xAA7C, 0xAAAF),
    (0xAAB1, 0xAAB1), (0xAAB5, 0xAAB6), (0xAAB9, 0xAABD), (0xAAC0, 0xAAC0), (0xAAC2, 0xAADD),
    (0xAAE0, 0xAAEA), (0xAAF2, 0xAAF4), (0xAAF7, 0xABE2), (0xABEE, 0xD7FF), (0xE000, 0xFB1D),
    (0xFB1F, 0xFB28), (0xFB2A, 0xFBB1), (0xFBC2, 0xFD3D), (0xFD40, 0xFDFB), (0xFDFE, 0xFDFF),
    (0xFE1A, 0xFE1F), (0xFE27, 0xFE2F), (0xFE53, 0xFE53), (0xFE67, 0xFE67), (0xFE6C, 0xFEFE),
    (0xFF00, 0xFF00), (0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A), (0xFF66, 0xFFDF),
    (0xFFE7, 0xFFE7), (0xFFEF, 0xFFF8), (0x10000, 0x100FF), (0x10103, 0x10136), (0x10140, 0x10178),
    (0x1018A, 0x1018F), (0x1019C, 0x101CF), (0x101FE, 0x1039E), (0x103A0, 0x103CF),
    (0x103D1, 0x10856), (0x10858, 0x1091E), (0x10920, 0x1093E), (0x10940, 0x10A00),
    (0x10A04, 0x10A04), (0x10A07, 0x10A0B), (0x10A10, 0x10A37), (0x10A3B, 0x10A3E),
    (0x10A40, 0x10A4F), (0x10A59, 0x10A7E), (0x10A80, 0x10B38), (0x10B40, 0x10FFF),
    (0x11003, 0x11037), (0x1104E, 0x1107F), (0x11083, 0x110AF), (0x110C2, 0x110FF),
    (0x11103, 0x11126), (0x11135, 0x1113F), (0x11144, 0x1117F), (0x11183, 0x111B2),
    (0x111C1, 0x111C4), (0x111C9, 0x116AA), (0x116B8, 0x1246F), (0x12474, 0x16F50),
    (0x16F7F, 0x16F8E), (0x16F93, 0x1CFFF), (0x1D0F6, 0x1D0FF), (0x1D127, 0x1D128),
    (0x1D1DE, 0x1D1FF), (0x1D246, 0x1D2FF), (0x1D357, 0x1D6C0), (0x1D6C2, 0x1D6DA),
    (0x1D6DC, 0x1D6FA), (0x1D6FC, 0x1D714), (0x1D716, 0x1D734), (0x1D736, 0x1D74E),
    (0x1D750, 0x1D76E), (0x1D770, 0x1D788), (0x1D78A, 0x1D7A8), (0x1D7AA, 0x1D7C2),
    (0x1D7C4, 0x1EEEF), (0x1EEF2, 0x1EFFF), (0x1F02C, 0x1F02F), (0x1F094, 0x1F09F),
    (0x1F0AF, 0x1F0B0), (0x1F0BF, 0x1F0C0), (0x1F0D0, 0x1F0D0), (0x1F0E0, 0x1F10F),
    (0x1F12F, 0x1F12F), (0x1F16C, 0x1F16F), (0x1F19B, 0x1F1E5), (0x1F203, 0x1F20F),
    (0x1F23B, 0x1F23F), (0x1F249, 0x1F24F), (0x1F252, 0x1F2FF), (0x1F321, 0x1F32F),
    (0x1F336, 0x1F336), (0x1F37D, 0x1F37F), (0x1F394, 0x1F39F), (0x1F3C5, 0x1F3C5),
    (0x1F3CB, 0x1F3DF), (0x1F3F1, 0x1F3FF), (0x1F43F, 0x1F43F), (0x1F441, 0x1F441),
    (0x1F4F8, 0x1F4F8), (0x1F4FD, 0x1F4FF), (0x1F53E, 0x1F53F), (0x1F544, 0x1F54F),
    (0x1F568, 0x1F5FA), (0x1F641, 0x1F644), (0x1F650, 0x1F67F), (0x1F6C6, 0x1F6FF),
    (0x1F774, 0xE0000), (0xE0002, 0xE001F), (0xE0080, 0xE00FF), (0xE01F0, 0x10FFFF),
];
