//! Wrapping a line of text to a width in terminal columns (CJK characters
//! take two), at spaces where it can, so the conversation view scrolls by
//! screen rows.

use unicode_width::UnicodeWidthChar;

/// `text` cut into rows of at most `width` columns, the rows after the
/// first indented by `hang` spaces (a wrapped line keeps its indentation);
/// words longer than a row are cut where the row ends. An empty text is one
/// empty row.
pub fn wrap(text: &str, width: usize, hang: usize) -> Vec<String> {
    let width = width.max(1);
    let hang = hang.min(width / 2);
    let indent = " ".repeat(hang);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    // Where the row may break: the byte after its last space, and the
    // columns used up to there.
    let mut last_space: Option<(usize, usize)> = None;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width && !row.trim().is_empty() {
            if c == ' ' {
                // The row ends at the space, which goes with it.
                rows.push(std::mem::replace(&mut row, indent.clone()));
                used = hang;
                last_space = None;
                continue;
            }
            match last_space {
                // A break after indentation alone would leave an empty row.
                Some((at, cols)) if at < row.len() && !row[..at].trim().is_empty() => {
                    let rest = row.split_off(at);
                    rows.push(row.trim_end().to_owned());
                    row = format!("{indent}{rest}");
                    used = used - cols + hang;
                }
                _ => {
                    rows.push(std::mem::replace(&mut row, indent.clone()));
                    used = hang;
                }
            }
            last_space = None;
        }
        row.push(c);
        used += w;
        if c == ' ' {
            last_space = Some((row.len(), used));
        }
    }
    rows.push(row);
    rows
}

/// The spaces a line starts with, as a hanging indent for its wrapped rows.
pub fn indentation(text: &str) -> usize {
    text.len() - text.trim_start_matches(' ').len()
}

#[cfg(test)]
mod tests {
    use super::{indentation, wrap};

    #[test]
    fn breaks_at_spaces_within_the_width() {
        assert_eq!(
            wrap("the bike shop is open", 10, 0),
            ["the bike", "shop is", "open"]
        );
        assert_eq!(wrap("", 10, 0), [""]);
        assert_eq!(wrap("short", 10, 0), ["short"]);
    }

    #[test]
    fn cuts_a_word_longer_than_a_row() {
        assert_eq!(wrap("abcdefghij kl", 4, 0), ["abcd", "efgh", "ij", "kl"]);
        assert_eq!(wrap("abcd efgh", 4, 0), ["abcd", "efgh"]);
        assert_eq!(wrap("  abcdefgh", 4, 0), ["  ab", "cdef", "gh"]);
    }

    #[test]
    fn counts_wide_characters_as_two_columns() {
        assert_eq!(wrap("自転車の修理", 4, 0), ["自転", "車の", "修理"]);
    }

    #[test]
    fn wrapped_rows_keep_the_line_s_indentation() {
        let line = "    → edit_file(a long list of arguments)";
        assert_eq!(indentation(line), 4);
        assert_eq!(
            wrap(line, 24, indentation(line)),
            ["    → edit_file(a long", "    list of arguments)"]
        );
        assert_eq!(wrap("  abcdefgh", 4, 2), ["  ab", "  cd", "  ef", "  gh"]);
    }
}
