//! Python's `repr()` of a string, for the original's error texts that show
//! a value with `!r` (e.g. `rewind target must be a 'user' message (got
//! role='assistant', id=3)`).

/// `repr(text)` as Python 3 writes it: in single quotes, or in double
/// quotes when the text holds a `'` and no `"`; `\\`, the quote, `\t`,
/// `\n`, `\r` escaped; other characters Python does not print as
/// `\xhh`, `\uhhhh` or `\Uhhhhhhhh`.
///
/// Python's "not printable" is a Unicode property (categories `Cc`, `Cf`,
/// `Cs`, `Co`, `Cn`, `Zl`, `Zp` and `Zs` but the space). This covers the
/// control, separator, private-use and format characters by table;
/// unassigned code points (`Cn`), which need the whole Unicode database,
/// are written as they are.
pub fn str_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let code = u32::from(c);
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code < 0x10000 {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Whether Python prints `c` as it is in a `repr` (see [`str_repr`]).
fn is_printable(c: char) -> bool {
    !matches!(
        u32::from(c),
        // Cc
        0x00..=0x1f | 0x7f..=0x9f
        // Zs (but the space), Zl, Zp
        | 0xa0 | 0x1680 | 0x2000..=0x200a | 0x2028 | 0x2029 | 0x202f | 0x205f | 0x3000
        // Cf
        | 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x890..=0x891 | 0x8e2 | 0x180e
        | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x2064 | 0x2066..=0x206f
        | 0xfeff | 0xfff9..=0xfffb | 0x110bd | 0x110cd | 0x13430..=0x1343f
        | 0x1bca0..=0x1bca3 | 0x1d173..=0x1d17a | 0xe0001 | 0xe0020..=0xe007f
        // Co
        | 0xe000..=0xf8ff | 0xf0000..=0xffffd | 0x100000..=0x10fffd
        // Cn that needs no database: the noncharacters at the ends of the planes
        | 0xfffe..=0xffff | 0xffffe..=0xfffff | 0x10fffe..=0x10ffff
    )
}

#[cfg(test)]
mod tests {
    use super::str_repr;

    #[test]
    fn strings_are_written_as_python_writes_their_repr() {
        // (text, Python's repr(text)), measured with CPython 3.11
        let cases = [
            ("assistant", "'assistant'"),
            ("", "''"),
            ("it's", "\"it's\""),
            ("say \"hi\"", "'say \"hi\"'"),
            ("both ' and \"", "'both \\' and \"'"),
            ("a\\b", "'a\\\\b'"),
            ("tab\tnl\ncr\r", "'tab\\tnl\\ncr\\r'"),
            ("\u{0}\u{7f}\u{85}", "'\\x00\\x7f\\x85'"),
            ("nb\u{a0}sp zw\u{200b}", "'nb\\xa0sp zw\\u200b'"),
            ("é 漢字 😀", "'é 漢字 😀'"),
            ("\u{e000}\u{f0000}", "'\\ue000\\U000f0000'"),
        ];
        for (text, want) in cases {
            assert_eq!(str_repr(text), want, "{text:?}");
        }
    }
}
