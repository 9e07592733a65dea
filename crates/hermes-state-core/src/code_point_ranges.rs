//! Membership in sorted tables of code point ranges: the form of the
//! generated Unicode tables of the sanitizer (Python's `\w`) and of the
//! FTS5 syntax checker (`unicode61` token characters).

use std::cmp::Ordering;

/// Whether `c` lies in one of the sorted, disjoint, inclusive `ranges`.
pub(crate) fn in_ranges(ranges: &[(u32, u32)], c: char) -> bool {
    let u = u32::from(c);
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < u {
                Ordering::Less
            } else if lo > u {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })
        .is_ok()
}
