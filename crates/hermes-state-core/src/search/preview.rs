//! The text of a context entry (`api.md` §8.5): at most 200 characters of
//! a message's content. Every search builds up to three of these per hit,
//! so their cost is part of every search's (`docs/PERFORMANCE.md`, "Facade
//! overhead"): a plain text stored as bytes is cut from its head without
//! decoding the rest ([`plain_text_preview`]).

use hermes_state_types::Content;
use hermes_state_types::text::is_python_whitespace;
use serde_json::Value;

/// Characters a context entry keeps (`api.md` §8.5).
const PREVIEW_CHARS: usize = 200;

/// Bytes of a plain text that are decoded. The 200 characters kept come from
/// at most 800 bytes, and lossy UTF-8 decoding decides each character from at
/// most 4 bytes ahead, so these first bytes give the same 200 characters as
/// the whole text.
const PREVIEW_HEAD: usize = 1024;

/// The text of a context entry (`api.md` §8.5): strings as they are; a
/// multimodal list as its `text` parts joined by a space (or
/// `[multimodal content]`); anything else empty; cut at 200 characters.
pub fn context_preview(content: Option<Content>) -> String {
    let text = match content {
        Some(Content::Text(text)) => text,
        Some(Content::Structured(Value::Array(parts))) => {
            let joined = parts
                .iter()
                .filter_map(|part| match part {
                    Value::Object(map)
                        if map.get("type").and_then(Value::as_str) == Some("text") =>
                    {
                        map.get("text").and_then(Value::as_str).map(str::to_owned)
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" ");
            let joined = joined.trim_matches(is_python_whitespace).to_owned();
            if joined.is_empty() {
                "[multimodal content]".to_owned()
            } else {
                joined
            }
        }
        Some(Content::Structured(Value::String(text))) => text,
        _ => String::new(),
    };
    cut_at_200_chars(text)
}

/// [`context_preview`] of a plain text given as its stored bytes (decoded
/// lossily, as a reader decodes text that is not UTF-8): the first 200
/// characters of `String::from_utf8_lossy(bytes)`, decoding at most the
/// first 1024 bytes. Lossy decoding starts with the longest
/// valid prefix as it is, so when that prefix holds 200 characters (or is
/// the whole text) it is the answer, found by the standard library's fast
/// validation; only text with a bad byte among its first 200 characters is
/// decoded lossily.
pub fn plain_text_preview(bytes: &[u8]) -> String {
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
fn cut_at_200_chars(mut text: String) -> String {
    if let Some(end) = end_of_first_200_chars(&text) {
        text.truncate(end);
    }
    text
}
