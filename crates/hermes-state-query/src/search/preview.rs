//! The text of a context entry straight from its stored value: what
//! `context_preview(decode_content(value))` gives, without decoding more than
//! the 200 characters kept. Every search builds up to three of these per hit,
//! so their cost is part of every search's (`docs/PERFORMANCE.md`, "Facade
//! overhead").

use rusqlite::types::ValueRef;

use super::context_preview;
use crate::rows::decode_content;

/// Characters a context entry keeps (`api.md` §8.5).
const PREVIEW_CHARS: usize = 200;

/// Bytes of a plain text that are decoded. The 200 characters kept come from
/// at most 800 bytes, and lossy UTF-8 decoding decides each character from at
/// most 4 bytes ahead, so these first bytes give the same 200 characters as
/// the whole text.
const PREVIEW_HEAD: usize = 1024;

/// `context_preview(decode_content(value))`. Text with the structured
/// content prefix, and every other type, take that path; plain text is cut
/// from its first [`PREVIEW_HEAD`] bytes.
pub(super) fn stored_preview(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Text(bytes)
            if !bytes.starts_with(hermes_state_types::stored::CONTENT_JSON_PREFIX.as_bytes()) =>
        {
            plain_preview(bytes)
        }
        other => context_preview(decode_content(other)),
    }
}

/// The first 200 characters of `String::from_utf8_lossy(bytes)`. Lossy
/// decoding starts with the longest valid prefix as it is, so when that
/// prefix holds 200 characters (or is the whole text) it is the answer, found
/// by the standard library's fast validation; only text with a bad byte among
/// its first 200 characters is decoded lossily.
fn plain_preview(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(PREVIEW_HEAD)];
    let valid = match std::str::from_utf8(head) {
        Ok(text) => text,
        // Up to `valid_up_to` the bytes are valid, so this never falls back.
        Err(error) => std::str::from_utf8(&head[..error.valid_up_to()]).unwrap_or_default(),
    };
    if let Some(end) = end_of_first_200_chars(valid) {
        return valid[..end].to_owned();
    }
    if valid.len() == bytes.len() {
        return valid.to_owned();
    }
    cut_at_200_chars(String::from_utf8_lossy(head).into_owned())
}

/// The byte index where the 201st character of `text` starts, if it has one.
/// Characters are counted as the bytes that start one (not `10xxxxxx`), 32
/// bytes at a time (a loop the compiler vectorizes), then one byte at a time
/// inside the block where the count passes 200.
fn end_of_first_200_chars(text: &str) -> Option<usize> {
    const BLOCK: usize = 32;
    let bytes = text.as_bytes();
    let starts_char = |byte: &&u8| (**byte & 0xC0) != 0x80;
    let mut chars = 0;
    let mut block_start = 0;
    for block in bytes.chunks(BLOCK) {
        let in_block = block.iter().filter(starts_char).count();
        if chars + in_block > PREVIEW_CHARS {
            break;
        }
        chars += in_block;
        block_start += block.len();
    }
    for (offset, byte) in bytes[block_start..].iter().enumerate() {
        if starts_char(&byte) {
            if chars == PREVIEW_CHARS {
                return Some(block_start + offset);
            }
            chars += 1;
        }
    }
    None
}

/// The first 200 characters of `text`.
pub(super) fn cut_at_200_chars(mut text: String) -> String {
    if let Some(end) = end_of_first_200_chars(&text) {
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Text made of pieces that stress the cut: ASCII runs, multi-byte
    /// characters, bytes that are not UTF-8 (lone continuation bytes, a
    /// character's first byte without the rest), and the structured prefix.
    fn stored_bytes() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            "[a-z ]{1,300}".prop_map(String::into_bytes),
            "[é数据😀]{1,80}".prop_map(String::into_bytes),
            proptest::collection::vec(any::<u8>(), 1..6),
            Just(vec![0x80]),
            Just(vec![0xE6, 0x95]),
            Just(
                hermes_state_types::stored::CONTENT_JSON_PREFIX
                    .as_bytes()
                    .to_vec()
            ),
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        #[test]
        fn preview_equals_decoding_the_whole_value(bytes in stored_bytes()) {
            let fast = stored_preview(ValueRef::Text(&bytes));
            // The reference decodes everything and counts characters one by
            // one, sharing no code with the cut above.
            let whole: String = match decode_content(ValueRef::Text(&bytes)) {
                Some(hermes_state_types::Content::Text(text)) => text.chars().take(200).collect(),
                other => context_preview(other),
            };
            prop_assert_eq!(fast, whole);
        }
    }

    #[test]
    fn the_cut_falls_on_the_200th_character() {
        let cases: [(String, usize); 5] = [
            ("a".repeat(199), 199),
            ("a".repeat(200), 200),
            ("a".repeat(201), 200),
            ("数".repeat(300), 600),
            (format!("{}数{}", "a".repeat(199), "b".repeat(50)), 202),
        ];
        for (text, kept_bytes) in cases {
            let preview = stored_preview(ValueRef::Text(text.as_bytes()));
            assert_eq!(preview.len(), kept_bytes, "{text:?}");
            assert_eq!(preview.chars().count(), text.chars().count().min(200));
        }
    }

    #[test]
    fn a_bad_byte_among_the_first_200_characters_is_replaced() {
        let mut bytes = b"abc".to_vec();
        bytes.push(0xFF);
        bytes.extend(std::iter::repeat_n(b'x', 2_000));
        let preview = stored_preview(ValueRef::Text(&bytes));
        assert!(preview.starts_with("abc\u{FFFD}x"));
        assert_eq!(preview.chars().count(), 200);
    }
}
