//! JSON text exactly as Python's `json.dumps(value)` writes it.
//!
//! The original store writes every JSON column (message content, tool calls,
//! model configuration, ...) with Python's default encoder. Rows written by this
//! port sit in the same database as rows written by the original, are compared
//! and searched as text, and are read back by Python code, so "equivalent JSON"
//! is not enough: to be byte-compatible we must produce the same text. That text
//! differs from `serde_json::to_string` in three ways (`api.md` §0.3):
//!
//! * separators: `", "` between items and `": "` after a key;
//! * strings are ASCII-only (`ensure_ascii=True`): every character below
//!   U+0020 or from U+007F on is a `\uXXXX` escape (lowercase hex, UTF-16
//!   surrogate pairs above U+FFFF), `/` is left alone;
//! * floats use Python's `repr(float)`: shortest round-trip digits, always a
//!   fractional part or an exponent (`100.0`, `1e-05`, `1e+16`).
//!
//! Object keys are written in the map's iteration order, which is insertion
//! order (serde_json's `preserve_order`), as Python's dicts are.
//!
//! A [`serde_json::Value`] cannot tell everything Python's `json.loads` keeps:
//! serde_json reads `-0` as the float `-0.0` (Python: the integer `0`) and an
//! integer beyond the `i64`/`u64` range as a float (Python: an exact integer).
//! Such values are written as the float they became. Where the original
//! parses JSON *text* and writes it back (`json.dumps(json.loads(text))`),
//! [`reserialize`] goes from text to text without a [`Value`] in between, and
//! so keeps all of that.

use std::collections::HashMap;

use serde_json::{Number, Value};

/// Python `json.dumps(value)` text.
///
/// Use it wherever the original store would call `json.dumps` with default
/// arguments, so that the stored text is the same byte for byte.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// Python `repr(float)` / json float text: shortest round-trip digits, at least one fractional digit or an exponent.
///
/// Python's `json` module writes a float as its `repr`, except that non-finite
/// values become the JavaScript literals `NaN`, `Infinity` and `-Infinity`
/// (where `repr` gives `nan`, `inf`, `-inf`); this function follows `json`.
/// A [`serde_json::Value`] never holds a non-finite number, but a caller
/// formatting a bare `f64` may pass one.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }

    let Some((digits, exponent)) = shortest_digits(f.abs()) else {
        // Unreachable: `{:e}` always has this shape.
        return format!("{f:e}");
    };
    let sign = if f.is_sign_negative() { "-" } else { "" };

    let mut out = String::with_capacity(digits.len() + 8);
    out.push_str(sign);
    if (-4..16).contains(&exponent) {
        // Positional notation, as Python's repr uses for 1e-4 <= |f| < 1e16.
        if exponent < 0 {
            out.push_str("0.");
            for _ in 0..(-exponent - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            // `exponent` is in 0..16 here, so the cast is lossless.
            let int_len = exponent.unsigned_abs() as usize + 1;
            if digits.len() > int_len {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            } else {
                out.push_str(&digits);
                for _ in digits.len()..int_len {
                    out.push('0');
                }
                out.push_str(".0");
            }
        }
    } else {
        // Exponent notation: `d[.ddd]e±XX`, no `.0` on a one-digit mantissa.
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        out.push_str(&magnitude.to_string());
    }
    out
}

/// The shortest decimal digits that read back as `f` (finite, not negative),
/// and the decimal exponent of the first digit: `f ≈ d1.d2d3… × 10^exponent`.
///
/// Rust's `{:e}` and Python's repr agree on the shortest length and on the
/// nearest candidate, but not when `f` lies exactly halfway between two
/// candidates of that length (`570724280910275.25`): Rust rounds half up
/// (`…275.3`), Python rounds half to even (`…275.2`). Such a tie is detected
/// from `f`'s exact expansion and resolved the Python way.
fn shortest_digits(f: f64) -> Option<(String, i32)> {
    let (digits, exponent) = split_scientific(&format!("{f:e}"))?;
    let n = digits.len();

    // A tie needs `f` to be exactly the n+1 digit number `lower 5`. The first
    // look at 20 more digits rules out almost every value cheaply; the exact
    // decimal expansion of a double has at most 767 significant digits.
    let is_tie = |precision: usize| {
        split_scientific(&format!("{f:.precision$e}")).is_some_and(|(wide, wide_exponent)| {
            wide_exponent == exponent
                && wide.as_bytes().get(n) == Some(&b'5')
                && wide.bytes().skip(n + 1).all(|b| b == b'0')
        })
    };
    if !is_tie(n + 20) || !is_tie(800) {
        return Some((digits, exponent));
    }
    let (wider, _) = split_scientific(&format!("{f:.n$e}"))?;
    let lower = wider.get(..n)?;
    let last = *lower.as_bytes().last()?;
    if last == b'9' {
        // The upper candidate would end in 0, i.e. be shorter: no tie at this length.
        return Some((digits, exponent));
    }
    let even = if (last - b'0').is_multiple_of(2) {
        lower.to_owned()
    } else {
        let mut upper = lower[..n - 1].to_owned();
        upper.push(char::from(last + 1));
        upper
    };
    if even != digits && format!("{even}e{}", exponent - (n as i32 - 1)).parse::<f64>() == Ok(f) {
        return Some((even, exponent));
    }
    Some((digits, exponent))
}

/// Splits Rust's `d.ddde±x` text (no sign) into its digits and exponent.
fn split_scientific(text: &str) -> Option<(String, i32)> {
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent = exponent.parse().ok()?;
    Some((mantissa.chars().filter(|c| *c != '.').collect(), exponent))
}

/// The length in bytes of `json.dumps(value, ensure_ascii=False,
/// separators=(",", ":")).encode("utf-8")`: Python's compact JSON with
/// characters from U+007F on written as themselves (the size the original
/// measures an import by).
pub fn compact_utf8_len(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => {
            let mut text = String::new();
            write_number(&mut text, n);
            text.len()
        }
        Value::String(s) => string_utf8_len(s),
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(compact_utf8_len).sum::<usize>()
        }
        Value::Object(map) => {
            2 + map.len().saturating_sub(1)
                + map
                    .iter()
                    .map(|(key, item)| string_utf8_len(key) + 1 + compact_utf8_len(item))
                    .sum::<usize>()
        }
    }
}

/// A JSON string's length with `ensure_ascii=False`: quotes, two-byte
/// escapes for `"`, `\\` and `\b\f\n\r\t`, `\u00XX` for the other control
/// characters, every other character as its UTF-8 bytes.
fn string_utf8_len(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            '\u{0}'..='\u{1f}' => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

/// Whether Python would consider the value "truthy" (null, false, 0, 0.0, "", [], {} are falsy).
///
/// Ports of the original's `if value:` / `value or default` checks must give
/// Python's answer, which differs from "is not null" (an empty list or `0.0`
/// is falsy); this answers for the value `json.loads` would have produced.
pub fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => number_is_nonzero(n),
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

fn number_is_nonzero(n: &Number) -> bool {
    if let Some(u) = n.as_u64() {
        u != 0
    } else if let Some(i) = n.as_i64() {
        i != 0
    } else {
        // NaN is truthy in Python; `!= 0.0` agrees.
        n.as_f64().is_none_or(|f| f != 0.0)
    }
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, key);
                out.push_str(": ");
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// Integers stay integers; a number serde_json holds as a float is written as a
/// Python float even when its value is integral (`1e2` → `100.0`), because
/// `json.loads` gives a float for it too.
fn write_number(out: &mut String, n: &Number) {
    if let Some(u) = n.as_u64() {
        out.push_str(&u.to_string());
    } else if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(f) = n.as_f64() {
        out.push_str(&float_repr(f));
    } else {
        // Only reachable with serde_json's `arbitrary_precision`; its text is
        // the number as written.
        out.push_str(&n.to_string());
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    push_unicode_escape(out, *unit);
                }
            }
        }
    }
    out.push('"');
}

/// What `json.loads` produced, re-serialised by `json.dumps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reserialized {
    /// `json.dumps(json.loads(text))`.
    pub text: String,
    /// The type of the value `json.loads` produced.
    pub kind: TopLevel,
    /// Python's `bool()` of that value (see [`is_truthy`]): false for `null`,
    /// `false`, `0`, `0.0`, `-0.0`, `""`, `[]` and `{}`; `NaN` is truthy.
    pub truthy: bool,
}

/// The type of the top-level value `json.loads` produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopLevel {
    /// `None`.
    Null,
    /// `True` or `False`.
    Bool,
    /// An `int` or a `float` (`NaN` and the infinities included).
    Number,
    /// A `str`.
    String,
    /// A `list` of `len` items.
    Array {
        /// The number of items.
        len: usize,
    },
    /// A `dict`.
    Object,
}

/// How deeply arrays and objects may nest before [`reserialize`] gives up.
///
/// CPython's decoder recurses once per container and raises `RecursionError`
/// when the interpreter's recursion limit (1000 frames, the caller's frames
/// included) runs out, so its real bound is somewhat below 1000.
const MAX_DEPTH: usize = 1000;

/// CPython 3.11 refuses to convert decimal text of more digits than this to an
/// `int` (`sys.get_int_max_str_digits()`): `json.loads` raises `ValueError`.
const MAX_INT_DIGITS: usize = 4300;

/// Python's `json.dumps(json.loads(text))` (default arguments, CPython 3.11),
/// from text to text; `None` where `json.loads` raises.
///
/// Unlike a round trip through [`Value`], this keeps what Python's parser
/// keeps: integers of any size stay exact (`-0` becomes `0`); `NaN`,
/// `Infinity` and `-Infinity` are accepted and written back literally, as is
/// a float literal that overflows (`1e400` → `Infinity`); escaped lone
/// surrogates (`"\ud83d"`) survive as the same escapes. A duplicated object
/// key keeps its first position and its last value, as in a Python `dict`.
///
/// `json.loads` raises, and this returns `None`, for text that is not JSON
/// (with the three literals above as the only extension): whitespace other
/// than space, tab, newline and carriage return around tokens, a leading
/// byte-order mark, trailing data, raw control characters inside strings,
/// invalid escapes, an integer of more than 4300 digits (Python's
/// `int_max_str_digits`) and nesting deeper than about 1000 containers
/// (Python's `RecursionError`; this function allows exactly 1000).
pub fn reserialize(text: &str) -> Option<Reserialized> {
    if text.starts_with('\u{feff}') {
        // "Unexpected UTF-8 BOM (decode using utf-8-sig)".
        return None;
    }
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        nodes: Vec::new(),
    };
    parser.skip_whitespace();
    let root = parser.parse_document()?;
    parser.skip_whitespace();
    if parser.pos != text.len() {
        // "Extra data".
        return None;
    }
    let (kind, truthy) = match &parser.nodes[root] {
        Node::Null => (TopLevel::Null, false),
        Node::Bool(b) => (TopLevel::Bool, *b),
        Node::Number { nonzero, .. } => (TopLevel::Number, *nonzero),
        Node::Str(units) => (TopLevel::String, !units.is_empty()),
        Node::Array(items) => (TopLevel::Array { len: items.len() }, !items.is_empty()),
        Node::Object(entries) => (TopLevel::Object, !entries.is_empty()),
    };
    Some(Reserialized {
        text: write_nodes(&parser.nodes, root),
        kind,
        truthy,
    })
}

/// A parsed value; containers refer to their children by index into the
/// parser's node list.
enum Node {
    Null,
    Bool(bool),
    /// The number as `json.dumps` writes it.
    Number {
        text: String,
        nonzero: bool,
    },
    /// UTF-16 code units, so that lone surrogates survive.
    Str(Vec<u16>),
    Array(Vec<usize>),
    Object(Vec<(Vec<u16>, usize)>),
}

/// A container being parsed.
enum Frame {
    Array(Vec<usize>),
    Object {
        entries: Vec<(Vec<u16>, usize)>,
        /// Where each key sits in `entries`.
        positions: HashMap<Vec<u16>, usize>,
        /// The key whose value is being parsed.
        key: Vec<u16>,
    },
}

/// A port of CPython's C scanner (`Modules/_json.c`, `strict=True`).
struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    nodes: Vec<Node>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn next_byte(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn peek_digit(&self, offset: usize) -> bool {
        self.bytes
            .get(self.pos + offset)
            .is_some_and(u8::is_ascii_digit)
    }

    fn skip_digits(&mut self) {
        while self.peek_digit(0) {
            self.pos += 1;
        }
    }

    /// Python's `WHITESPACE`: `[ \t\n\r]*`.
    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// Consumes `word` if the text continues with it.
    fn eat(&mut self, word: &str) -> bool {
        let found = self.text[self.pos..].starts_with(word);
        if found {
            self.pos += word.len();
        }
        found
    }

    /// Parses one value (and everything nested in it) without recursion;
    /// returns its node index.
    fn parse_document(&mut self) -> Option<usize> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            // A value starts at `self.pos` (whitespace already skipped).
            let mut done = match self.peek()? {
                open @ (b'[' | b'{') => {
                    if stack.len() >= MAX_DEPTH {
                        // RecursionError.
                        return None;
                    }
                    self.pos += 1;
                    self.skip_whitespace();
                    if open == b'[' {
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            self.push(Node::Array(Vec::new()))
                        } else {
                            stack.push(Frame::Array(Vec::new()));
                            continue 'value;
                        }
                    } else if self.peek() == Some(b'}') {
                        self.pos += 1;
                        self.push(Node::Object(Vec::new()))
                    } else {
                        let key = self.parse_key()?;
                        stack.push(Frame::Object {
                            entries: Vec::new(),
                            positions: HashMap::new(),
                            key,
                        });
                        continue 'value;
                    }
                }
                b'"' => {
                    self.pos += 1;
                    let units = self.parse_string()?;
                    self.push(Node::Str(units))
                }
                _ => {
                    let node = self.parse_scalar()?;
                    self.push(node)
                }
            };
            // `done` is complete: hand it to the enclosing container, and
            // close every container that ends right after it.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Some(done);
                };
                self.skip_whitespace();
                let delimiter = self.next_byte()?;
                match frame {
                    Frame::Array(items) => {
                        items.push(done);
                        match delimiter {
                            b',' => {
                                self.skip_whitespace();
                                continue 'value;
                            }
                            b']' => {}
                            // "Expecting ',' delimiter".
                            _ => return None,
                        }
                    }
                    Frame::Object {
                        entries,
                        positions,
                        key,
                    } => {
                        let finished = std::mem::take(key);
                        // A Python dict: a repeated key keeps its first
                        // position and takes the new value.
                        if let Some(&at) = positions.get(&finished) {
                            entries[at].1 = done;
                        } else {
                            positions.insert(finished.clone(), entries.len());
                            entries.push((finished, done));
                        }
                        match delimiter {
                            b',' => {
                                self.skip_whitespace();
                                *key = self.parse_key()?;
                                continue 'value;
                            }
                            b'}' => {}
                            // "Expecting ',' delimiter".
                            _ => return None,
                        }
                    }
                }
                // The container just closed.
                let node = match stack.pop()? {
                    Frame::Array(items) => Node::Array(items),
                    Frame::Object { entries, .. } => Node::Object(entries),
                };
                done = self.push(node);
            }
        }
    }

    /// `"key"` and the `:` after it, and the whitespace around the colon.
    fn parse_key(&mut self) -> Option<Vec<u16>> {
        if self.next_byte()? != b'"' {
            // "Expecting property name enclosed in double quotes".
            return None;
        }
        let key = self.parse_string()?;
        self.skip_whitespace();
        if self.next_byte()? != b':' {
            // "Expecting ':' delimiter".
            return None;
        }
        self.skip_whitespace();
        Some(key)
    }

    /// The rest of a string whose opening quote has been consumed, as UTF-16
    /// code units.
    ///
    /// Python joins a high surrogate escape and a low surrogate escape that
    /// follows it into one code point, and keeps any other surrogate escape as
    /// a lone surrogate; as code units both are just the escaped units, which
    /// is also what `json.dumps` writes back.
    fn parse_string(&mut self) -> Option<Vec<u16>> {
        let mut units = Vec::new();
        loop {
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(units);
                }
                b'\\' => {
                    self.pos += 1;
                    let unit = match self.next_byte()? {
                        b'"' => 0x22,
                        b'\\' => 0x5c,
                        b'/' => 0x2f,
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => 0x0a,
                        b'r' => 0x0d,
                        b't' => 0x09,
                        b'u' => self.parse_hex4()?,
                        // "Invalid \escape".
                        _ => return None,
                    };
                    units.push(unit);
                }
                // "Invalid control character at" (strict=True).
                0x00..=0x1f => return None,
                b @ 0x20..=0x7f => {
                    self.pos += 1;
                    units.push(u16::from(b));
                }
                _ => {
                    let c = self.text[self.pos..].chars().next()?;
                    self.pos += c.len_utf8();
                    let mut buffer = [0u16; 2];
                    units.extend_from_slice(c.encode_utf16(&mut buffer));
                }
            }
        }
    }

    /// The four hex digits of a `\uXXXX` escape ("Invalid \uXXXX escape").
    fn parse_hex4(&mut self) -> Option<u16> {
        let digits = self.bytes.get(self.pos..self.pos + 4)?;
        let mut unit = 0u16;
        for &digit in digits {
            let value = char::from(digit).to_digit(16)?;
            unit = (unit << 4) | u16::try_from(value).ok()?;
        }
        self.pos += 4;
        Some(unit)
    }

    /// `null`, `true`, `false`, `NaN`, `Infinity`, `-Infinity` or a number
    /// ("Expecting value" for anything else).
    fn parse_scalar(&mut self) -> Option<Node> {
        let constant = |text: &str| Node::Number {
            text: text.to_owned(),
            nonzero: true,
        };
        if self.eat("null") {
            Some(Node::Null)
        } else if self.eat("true") {
            Some(Node::Bool(true))
        } else if self.eat("false") {
            Some(Node::Bool(false))
        } else if self.eat("NaN") {
            Some(constant("NaN"))
        } else if self.eat("Infinity") {
            Some(constant("Infinity"))
        } else if self.eat("-Infinity") {
            Some(constant("-Infinity"))
        } else {
            self.parse_number()
        }
    }

    /// A JSON number: an `int` when it has neither a fraction nor an
    /// exponent, else a `float`.
    ///
    /// Like CPython, a `.` or an exponent marker not followed by a digit ends
    /// the number before it; what is left is then a syntax error wherever the
    /// number stands.
    fn parse_number(&mut self) -> Option<Node> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let integer_start = self.pos;
        match self.peek()? {
            b'0' => self.pos += 1,
            b'1'..=b'9' => self.skip_digits(),
            _ => return None,
        }
        let integer_digits = self.pos - integer_start;
        let mut is_float = false;
        if self.peek() == Some(b'.') && self.peek_digit(1) {
            is_float = true;
            self.pos += 1;
            self.skip_digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let exponent_start = self.pos;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.peek_digit(0) {
                is_float = true;
                self.skip_digits();
            } else {
                self.pos = exponent_start;
            }
        }
        let literal = &self.text[start..self.pos];
        if is_float {
            // Python's `float(literal)`: correctly rounded, ±inf on overflow,
            // ±0.0 on underflow. Rust's parser agrees.
            let f: f64 = literal.parse().ok()?;
            Some(Node::Number {
                text: float_repr(f),
                nonzero: f != 0.0,
            })
        } else if integer_digits > MAX_INT_DIGITS {
            // ValueError: Exceeds the limit (4300 digits) for integer string conversion.
            None
        } else {
            // Only a leading `0` may be followed by nothing, so the literal is
            // already `str(int)`, except that the int 0 has no sign.
            let zero = &literal[integer_start - start..] == "0";
            Some(Node::Number {
                text: if zero { "0" } else { literal }.to_owned(),
                nonzero: !zero,
            })
        }
    }
}

/// Something left to write.
enum Task<'a> {
    Node(usize),
    Raw(&'static str),
    /// An object key and the `": "` after it.
    Key(&'a [u16]),
}

/// `json.dumps` of the node tree rooted at `root`, without recursion.
fn write_nodes(nodes: &[Node], root: usize) -> String {
    let mut out = String::new();
    let mut tasks = vec![Task::Node(root)];
    while let Some(task) = tasks.pop() {
        match task {
            Task::Raw(text) => out.push_str(text),
            Task::Key(units) => {
                write_units(&mut out, units);
                out.push_str(": ");
            }
            Task::Node(index) => match &nodes[index] {
                Node::Null => out.push_str("null"),
                Node::Bool(true) => out.push_str("true"),
                Node::Bool(false) => out.push_str("false"),
                Node::Number { text, .. } => out.push_str(text),
                Node::Str(units) => write_units(&mut out, units),
                Node::Array(items) => {
                    out.push('[');
                    tasks.push(Task::Raw("]"));
                    for (i, &item) in items.iter().enumerate().rev() {
                        tasks.push(Task::Node(item));
                        if i > 0 {
                            tasks.push(Task::Raw(", "));
                        }
                    }
                }
                Node::Object(entries) => {
                    out.push('{');
                    tasks.push(Task::Raw("}"));
                    for (i, (key, item)) in entries.iter().enumerate().rev() {
                        tasks.push(Task::Node(*item));
                        tasks.push(Task::Key(key));
                        if i > 0 {
                            tasks.push(Task::Raw(", "));
                        }
                    }
                }
            },
        }
    }
    out
}

/// [`write_string`] for UTF-16 code units, lone surrogates included.
fn write_units(out: &mut String, units: &[u16]) {
    out.push('"');
    for &unit in units {
        match unit {
            0x22 => out.push_str("\\\""),
            0x5c => out.push_str("\\\\"),
            0x0a => out.push_str("\\n"),
            0x0d => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            // Printable ASCII: the cast is lossless.
            0x20..=0x7e => out.push(char::from(unit as u8)),
            _ => push_unicode_escape(out, unit),
        }
    }
    out.push('"');
}

fn push_unicode_escape(out: &mut String, unit: u16) {
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(char::from(HEX[usize::from((unit >> shift) & 0xf)]));
    }
}
