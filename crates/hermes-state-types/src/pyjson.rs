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
//! Such values are written as the float they became.

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
                    out.push_str("\\u");
                    for shift in [12, 8, 4, 0] {
                        out.push(char::from(HEX[usize::from((*unit >> shift) & 0xf)]));
                    }
                }
            }
        }
    }
    out.push('"');
}
