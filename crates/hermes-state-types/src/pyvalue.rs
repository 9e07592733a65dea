//! Python's built-in conversions — `str()`, `float()`, `int()` — of a value
//! `json.loads` produced, where the original coerces its input with them
//! (`import_sessions` reads ids, timestamps and counters this way).
//!
//! Text is converted as CPython 3.11 converts it: any Unicode decimal digit
//! counts as its ASCII digit, Python's whitespace around the number is
//! ignored, a single `_` may stand between two digits (`1_000`), and
//! `float()` also takes `inf`, `infinity` and `nan` in any case.

use serde_json::{Map, Number, Value};

use crate::pyjson;
use crate::text::is_python_whitespace;

/// What Python's `int()` gives for a value, as a SQLite column can take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int {
    /// An integer SQLite can hold.
    Value(i64),
    /// An integer beyond SQLite's 64 bits: Python holds it, and binding it
    /// to a statement raises `OverflowError`.
    TooLarge,
    /// `int()` raises `ValueError` or `TypeError` (not a number, a float
    /// text, a list, more than 4300 digits, ...).
    Invalid,
}

/// CPython 3.11 refuses to convert decimal text of more digits than this
/// (`sys.get_int_max_str_digits()`).
const MAX_INT_DIGITS: usize = 4300;

/// Python `str(value)`: a string as it is, `None`/`True`/`False`, an int's
/// digits, a float's `repr`, and a list or dict as Python's `repr` writes
/// it (`[1, 'a']`, `{'k': None}`).
///
/// `repr` escapes the characters Python deems unprintable; this takes
/// control characters, separators other than the space, format characters
/// and private-use characters for those, and every other character as
/// printable (Python also escapes unassigned code points).
pub fn to_str(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => {
            let mut out = String::new();
            write_repr(&mut out, other);
            out
        }
    }
}

/// Python `float(value)`, `None` where it raises `TypeError` or
/// `ValueError` (`None`, a list, a dict, text that is not a number).
pub fn to_float(value: &Value) -> Option<f64> {
    match value {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => n.as_f64(),
        Value::String(text) => float_from_text(text),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// Python `int(value)`: a bool as 0/1, a float truncated toward zero, text
/// of an integer in base 10.
pub fn to_int(value: &Value) -> Int {
    match value {
        Value::Bool(b) => Int::Value(i64::from(*b)),
        Value::Number(n) => int_from_number(n),
        Value::String(text) => int_from_text(text),
        Value::Null | Value::Array(_) | Value::Object(_) => Int::Invalid,
    }
}

fn int_from_number(n: &Number) -> Int {
    if let Some(i) = n.as_i64() {
        return Int::Value(i);
    }
    if n.is_u64() {
        return Int::TooLarge;
    }
    let Some(f) = n.as_f64() else {
        return Int::Invalid;
    };
    if f.is_nan() {
        return Int::Invalid;
    }
    let truncated = f.trunc();
    // -2^63 ..< 2^63: the i64 range, both bounds exact doubles.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&truncated) {
        Int::Value(truncated as i64)
    } else {
        Int::TooLarge
    }
}

/// Python's first step for both `int(text)` and `float(text)`: whitespace
/// becomes a space, a decimal digit of any script its ASCII digit; any
/// other non-ASCII character makes the text invalid. The result is stripped.
fn ascii_number_text(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else if is_python_whitespace(c) {
            out.push(' ');
        } else {
            out.push(char::from(b'0' + decimal_digit(c)?));
        }
    }
    Some(
        out.trim_matches(|c: char| c.is_ascii_whitespace())
            .to_owned(),
    )
}

/// Removes the `_` that stand between two ASCII digits; `None` when any
/// other `_` is present (Python's rule for numeric text).
fn without_digit_separators(text: &str) -> Option<String> {
    if !text.contains('_') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    for (at, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            let after = bytes.get(at + 1).copied();
            if !(before.is_some_and(|c| c.is_ascii_digit())
                && after.is_some_and(|c| c.is_ascii_digit()))
            {
                return None;
            }
        } else {
            out.push(char::from(b));
        }
    }
    Some(out)
}

/// Python `float(text)` of text: `None` where it raises `ValueError`.
pub fn float_from_text(text: &str) -> Option<f64> {
    let ascii = ascii_number_text(text)?;
    let plain = without_digit_separators(&ascii)?;
    // Rust's grammar is Python's: sign, digits with an optional point and
    // exponent, or inf / infinity / nan in any case. Neither takes hex.
    plain.parse::<f64>().ok()
}

fn int_from_text(text: &str) -> Int {
    let Some(ascii) = ascii_number_text(text) else {
        return Int::Invalid;
    };
    let (negative, digits) = match ascii.as_bytes().first() {
        Some(b'-') => (true, &ascii[1..]),
        Some(b'+') => (false, &ascii[1..]),
        _ => (false, ascii.as_str()),
    };
    let Some(digits) = without_digit_separators(digits) else {
        return Int::Invalid;
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Int::Invalid;
    }
    if digits.len() > MAX_INT_DIGITS {
        return Int::Invalid;
    }
    let mut magnitude: i128 = 0;
    for b in digits.bytes() {
        magnitude = magnitude * 10 + i128::from(b - b'0');
        if magnitude > i128::from(i64::MAX) + 1 {
            return Int::TooLarge;
        }
    }
    let signed = if negative { -magnitude } else { magnitude };
    i64::try_from(signed).map_or(Int::TooLarge, Int::Value)
}

/// The first code point of each run of ten decimal digits (Unicode
/// category Nd, Unicode 14.0 as in CPython 3.11): `0x0660` is ARABIC-INDIC
/// DIGIT ZERO, `0x0661` ONE, and so on.
const DIGIT_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The value of a decimal digit of any script (`unicodedata.decimal`).
fn decimal_digit(c: char) -> Option<u8> {
    let code = u32::from(c);
    let at = DIGIT_ZEROS
        .partition_point(|&zero| zero <= code)
        .checked_sub(1)?;
    let offset = code - DIGIT_ZEROS[at];
    // `offset` < 10 here, so the cast is lossless.
    (offset < 10).then_some(offset as u8)
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(u)) => out.push_str(&u.to_string()),
            _ => out.push_str(&float_repr(n.as_f64().unwrap_or_default())),
        },
        Value::String(text) => write_str_repr(out, text),
        Value::Array(items) => {
            out.push('[');
            for (at, item) in items.iter().enumerate() {
                if at > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_dict_repr(out, map),
    }
}

fn write_dict_repr(out: &mut String, map: &Map<String, Value>) {
    out.push('{');
    for (at, (key, item)) in map.iter().enumerate() {
        if at > 0 {
            out.push_str(", ");
        }
        write_str_repr(out, key);
        out.push_str(": ");
        write_repr(out, item);
    }
    out.push('}');
}

/// Python `repr(float)`: as in JSON, but `inf`/`nan` spelled Python's way.
fn float_repr(f: f64) -> String {
    if f.is_nan() {
        "nan".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        pyjson::float_repr(f)
    }
}

/// Python `repr(str)`: the crate's one [`crate::pyrepr::str_repr`].
fn write_str_repr(out: &mut String, text: &str) {
    out.push_str(&crate::pyrepr::str_repr(text));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn decimal_digits_of_every_script_are_digits() {
        assert_eq!(decimal_digit('7'), Some(7));
        assert_eq!(decimal_digit('\u{669}'), Some(9));
        assert_eq!(decimal_digit('\u{1FBF9}'), Some(9));
        assert_eq!(decimal_digit('\u{1FBFA}'), None);
        assert_eq!(decimal_digit('a'), None);
        assert_eq!(
            decimal_digit('\u{2155}'),
            None,
            "a vulgar fraction is no digit"
        );
    }

    #[test]
    fn float_matches_python() {
        // python3 -c "print(float(' 1_000 '), float('\u0661\u0662.5'), float('1.'))"
        let cases: [(Value, Option<f64>); 16] = [
            (json!("12.5"), Some(12.5)),
            (json!(" 1_000 "), Some(1000.0)),
            (json!("\u{661}\u{662}.5"), Some(12.5)),
            (json!("\u{a0}7\u{2003}"), Some(7.0)),
            (json!("-Infinity"), Some(f64::NEG_INFINITY)),
            (json!("1e3"), Some(1000.0)),
            (json!("1."), Some(1.0)),
            (json!(".5"), Some(0.5)),
            (json!(true), Some(1.0)),
            (json!(12), Some(12.0)),
            (json!("1__0"), None),
            (json!("_1"), None),
            (json!("0x10"), None),
            (json!("5 5"), None),
            (json!([]), None),
            (json!(null), None),
        ];
        for (value, want) in cases {
            assert_eq!(to_float(&value), want, "{value}");
        }
        assert!(to_float(&json!("nan")).is_some_and(f64::is_nan));
    }

    #[test]
    fn int_matches_python() {
        let cases: [(Value, Int); 17] = [
            (json!("40"), Int::Value(40)),
            (json!(" +3 "), Int::Value(3)),
            (json!("-0"), Int::Value(0)),
            (json!("4_0"), Int::Value(40)),
            (json!("\u{661}\u{662}"), Int::Value(12)),
            (json!(40.7), Int::Value(40)),
            (json!(-2.9), Int::Value(-2)),
            (json!(true), Int::Value(1)),
            (json!("-9223372036854775808"), Int::Value(i64::MIN)),
            (json!("9223372036854775808"), Int::TooLarge),
            (json!(18_446_744_073_709_551_615u64), Int::TooLarge),
            (json!(1e19), Int::TooLarge),
            (json!("1e3"), Int::Invalid),
            (json!("3.5"), Int::Invalid),
            (json!("0x10"), Int::Invalid),
            (json!("1".repeat(4301)), Int::Invalid),
            (json!({}), Int::Invalid),
        ];
        for (value, want) in cases {
            assert_eq!(to_int(&value), want, "{value}");
        }
    }

    #[test]
    fn repr_matches_python() {
        // python3 -c "print(str([None, True, 1.5, 'it\\'s', 'a\"b', 'é\\x00']))"
        assert_eq!(
            to_str(&json!([null, true, 1.5, "it's", "a\"b", "é\u{0}", {"k": 1e16}])),
            r#"[None, True, 1.5, "it's", 'a"b', 'é\x00', {'k': 1e+16}]"#
        );
        assert_eq!(to_str(&json!(5)), "5");
        assert_eq!(to_str(&json!(false)), "False");
        assert_eq!(to_str(&json!("x y")), "x y");
    }
}
