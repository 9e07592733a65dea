//! Session titles (`api.md` §6): normalisation, lineage numbering
//! ("Title", "Title #2", "Title #3", …) and the `LIKE` escaping the title
//! look-ups use, written once for every backend.

use hermes_state_types::text::is_python_whitespace;

use crate::original::OriginalError;

/// The longest title accepted, in code points (after normalisation).
pub const MAX_TITLE_CHARS: usize = 100;

/// Why a title was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TitleError {
    /// Longer than [`MAX_TITLE_CHARS`] after normalisation.
    #[error("Title too long ({chars} chars, max {MAX_TITLE_CHARS})")]
    TooLong {
        /// Code points after normalisation.
        chars: usize,
    },
}

impl TitleError {
    /// The original's exception for this refusal.
    pub fn original_class(&self) -> Option<OriginalError> {
        match self {
            TitleError::TooLong { .. } => Some(OriginalError::TitleTooLong),
        }
    }
}

/// Normalises a title as the original (`api.md` §6.1): control and invisible
/// formatting characters removed, whitespace runs collapsed to one space,
/// trimmed; empty → `None`; more than 100 code points → [`TitleError::TooLong`].
pub fn sanitize_title(title: Option<&str>) -> Result<Option<String>, TitleError> {
    let Some(title) = title.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let mut cleaned = String::with_capacity(title.len());
    let mut pending_space = false;
    for c in title.chars().filter(|c| !is_removed_from_titles(*c)) {
        if is_python_whitespace(c) {
            pending_space = true;
            continue;
        }
        if pending_space && !cleaned.is_empty() {
            cleaned.push(' ');
        }
        pending_space = false;
        cleaned.push(c);
    }
    if cleaned.is_empty() {
        return Ok(None);
    }
    let chars = cleaned.chars().count();
    if chars > MAX_TITLE_CHARS {
        return Err(TitleError::TooLong { chars });
    }
    Ok(Some(cleaned))
}

/// Characters deleted before whitespace is collapsed: ASCII controls other
/// than tab, LF and CR; zero-width and bidirectional formatting characters;
/// the BOM; interlinear annotation and object replacement characters.
fn is_removed_from_titles(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{8}'
            | '\u{b}'
            | '\u{c}'
            | '\u{e}'..='\u{1f}'
            | '\u{7f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffc}'
    )
}

/// Escapes `\`, `%` and `_` for a `LIKE … ESCAPE '\'` pattern.
pub fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Steps 3–4 of `get_next_title_in_lineage` (`api.md` §6.4), shared by the
/// backends: given the base (already without its ` #N`) and the titles
/// found for it, the base itself when there are none, else the base
/// numbered one more than the highest ` #N` among them (at least 2).
///
/// ```
/// use hermes_state_core::titles::next_numbered_title;
///
/// assert_eq!(next_numbered_title("Paris", &[]), "Paris");
/// let taken = ["Paris".to_owned(), "Paris #3".to_owned()];
/// assert_eq!(next_numbered_title("Paris", &taken), "Paris #4");
/// ```
pub fn next_numbered_title(base: &str, existing: &[String]) -> String {
    if existing.is_empty() {
        return base.to_owned();
    }
    let mut highest = String::from("1");
    for title in existing {
        if let Some((_, digits)) = split_numbered(title) {
            let number = decimal_value(digits);
            if (number.len(), number.as_str()) > (highest.len(), highest.as_str()) {
                highest = number;
            }
        }
    }
    format!("{base} #{}", increment(&highest))
}

/// Splits `"<base> #<digits>"` as Python's `^(.*?) #(\d+)$` does: the base may
/// not contain a newline, the digits are Unicode decimal digits, and `$` also
/// accepts one trailing newline. Returns the base and the digits.
///
/// ```
/// use hermes_state_core::titles::split_numbered;
///
/// assert_eq!(split_numbered("Trip #12"), Some(("Trip", "12")));
/// assert_eq!(split_numbered("Trip #"), None);
/// ```
pub fn split_numbered(title: &str) -> Option<(&str, &str)> {
    let body = title.strip_suffix('\n').unwrap_or(title);
    let at = body.rfind(" #")?;
    let (base, digits) = (&body[..at], &body[at + 2..]);
    if digits.is_empty()
        || !digits.chars().all(|c| decimal_digit(c).is_some())
        || base.contains('\n')
    {
        return None;
    }
    Some((base, digits))
}

/// Code points of the zero of every block of decimal digits (Unicode
/// category Nd) as Python 3.11 knows them (Unicode 14). Generated with
/// `[c for c in range(0x110000) if unicodedata.category(chr(c)) == 'Nd' and unicodedata.digit(chr(c)) == 0]`;
/// every Nd character is `zero + value` for one of these.
const DECIMAL_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66,
    0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90,
    0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
    0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650,
    0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50,
    0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0,
];

/// The value of a Unicode decimal digit (Python's `\d`), if `c` is one.
pub fn decimal_digit(c: char) -> Option<u32> {
    let code = u32::from(c);
    DECIMAL_ZEROS
        .iter()
        .find(|zero| (**zero..**zero + 10).contains(&code))
        .map(|zero| code - zero)
}

/// Decimal text of a run of Unicode digits, without leading zeros (Python's `int()`).
fn decimal_value(digits: &str) -> String {
    let ascii: String = digits
        .chars()
        .filter_map(decimal_digit)
        .filter_map(|d| char::from_digit(d, 10))
        .collect();
    let trimmed = ascii.trim_start_matches('0');
    if trimmed.is_empty() {
        "0".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Adds one to a decimal number of any length.
fn increment(number: &str) -> String {
    let mut digits: Vec<u8> = number.bytes().collect();
    for digit in digits.iter_mut().rev() {
        if *digit == b'9' {
            *digit = b'0';
        } else {
            *digit += 1;
            return String::from_utf8_lossy(&digits).into_owned();
        }
    }
    format!("1{}", String::from_utf8_lossy(&digits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_of_any_size_increment() {
        assert_eq!(increment("1"), "2");
        assert_eq!(increment("9"), "10");
        assert_eq!(increment("199"), "200");
        assert_eq!(decimal_value("007"), "7");
        assert_eq!(decimal_value("\u{663}\u{660}"), "30");
        assert_eq!(
            increment(&decimal_value("99999999999999999999999999")),
            "100000000000000000000000000"
        );
    }
}
