//! Python's definitions of text classes, where the original's behaviour
//! depends on them (title normalisation, the FTS sanitizer, conversation
//! cleaning). Rust's `char::is_whitespace` differs: it excludes U+001C–U+001F.

/// Python's `str.isspace()`: ASCII whitespace, U+001C–U+001F, U+0085,
/// U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
/// (U+200B ZERO WIDTH SPACE is not whitespace.)
pub fn is_python_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1c}'..='\u{20}'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// `str.strip()` with Python's whitespace.
pub fn python_strip(text: &str) -> &str {
    text.trim_matches(is_python_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_matches_python() {
        // python3 -c "print([hex(c) for c in range(0x110000) if chr(c).isspace()])"
        let python = [
            0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000,
            0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
            0x2029, 0x202f, 0x205f, 0x3000,
        ];
        let ours: Vec<u32> = (0..=0x10ffffu32)
            .filter_map(char::from_u32)
            .filter(|c| is_python_whitespace(*c))
            .map(u32::from)
            .collect();
        assert_eq!(ours, python);
    }

    #[test]
    fn floats_parse_as_python_parses_them() {
        for (text, expected) in [
            ("1795980826.6917138", Some(1_795_980_826.691_713_8)),
            (" 12.5\n", Some(12.5)),
            ("1_000.5", Some(1000.5)),
            ("1e3", Some(1000.0)),
            ("-inf", Some(f64::NEG_INFINITY)),
            ("Infinity", Some(f64::INFINITY)),
            ("1__0", None),
            ("_1", None),
            ("1_", None),
            ("1_.5", None),
            ("", None),
            ("abc", None),
            ("0x10", None),
        ] {
            assert_eq!(crate::pyvalue::float_from_text(text), expected, "{text:?}");
        }
        assert!(crate::pyvalue::float_from_text("nan").is_some_and(f64::is_nan));
    }
}
