//! The text of a context entry straight from its stored value: what
//! `context_preview(decode_content(value))` gives, without decoding more than
//! the 200 characters kept (the cut itself is the contract crate's,
//! `hermes_state_core::search`).

use hermes_state_core::search::plain_text_preview;
use rusqlite::types::ValueRef;

use super::context_preview;
use crate::rows::decode_content;

/// `context_preview(decode_content(value))`. Text with the structured
/// content prefix, and every other type, take that path; plain text is cut
/// from its head ([`plain_text_preview`]).
pub(super) fn stored_preview(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Text(bytes)
            if !bytes.starts_with(hermes_state_types::stored::CONTENT_JSON_PREFIX.as_bytes()) =>
        {
            plain_text_preview(bytes)
        }
        other => context_preview(decode_content(other)),
    }
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
