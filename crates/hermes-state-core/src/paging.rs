//! Reading an operation page by page and keeping the rows a rule keeps,
//! where the contract has no such filter (a time window, a set of
//! sessions): pages are read until `offset` + `limit` kept rows are found,
//! so offset and limit count kept rows only, as they would if the store
//! filtered. [`crate::time_window`] and [`crate::search_scope`] are written
//! over it.

/// Rows read per page.
pub const PAGE: u32 = 500;

/// What to do with a row read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It matches.
    Keep,
    /// It does not match.
    Skip,
    /// It does not match, and no later row will (the rows are ordered).
    Stop,
}

/// The matches `offset .. offset + limit` of the rows `fetch(offset, limit)`
/// returns, judged by `judge`.
///
/// ```
/// use hermes_state_core::paging::{Verdict, filtered_page};
///
/// let numbers = |offset: u32, limit: u32| Ok::<_, ()>((offset..2_000.min(offset + limit)).collect::<Vec<_>>());
/// let even = |n: &u32| if n % 2 == 0 { Verdict::Keep } else { Verdict::Skip };
/// assert_eq!(filtered_page(3, 300, numbers, even), Ok(vec![600, 602, 604]));
/// ```
pub fn filtered_page<T, E>(
    limit: u32,
    offset: u32,
    mut fetch: impl FnMut(u32, u32) -> Result<Vec<T>, E>,
    judge: impl Fn(&T) -> Verdict,
) -> Result<Vec<T>, E> {
    let wanted = limit as usize;
    let mut to_skip = offset as usize;
    let mut rows = Vec::new();
    let mut at = 0u32;
    while rows.len() < wanted {
        let page = fetch(at, PAGE)?;
        let fetched = page.len();
        for row in page {
            match judge(&row) {
                Verdict::Stop => return Ok(rows),
                Verdict::Skip => {}
                Verdict::Keep if to_skip > 0 => to_skip -= 1,
                Verdict::Keep if rows.len() < wanted => rows.push(row),
                Verdict::Keep => return Ok(rows),
            }
        }
        if fetched < PAGE as usize {
            break;
        }
        at = at.saturating_add(PAGE);
    }
    Ok(rows)
}
