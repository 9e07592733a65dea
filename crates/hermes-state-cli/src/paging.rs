//! Paging over rows the CLI filters itself: where the library has no such
//! filter (a time window, a set of session ids), rows are read page by page
//! and filtered until `offset` + `limit` matches are found, so `--offset`
//! and `--limit` count matching rows only.

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

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(n: u32) -> impl FnMut(u32, u32) -> Result<Vec<u32>, ()> {
        move |offset, limit| Ok((offset..n.min(offset + limit)).collect())
    }

    #[test]
    fn offset_and_limit_count_matches_across_pages() {
        let even = |x: &u32| {
            if x.is_multiple_of(2) {
                Verdict::Keep
            } else {
                Verdict::Skip
            }
        };
        let rows = filtered_page(3, 300, numbers(2_000), even).unwrap();
        assert_eq!(rows, vec![600, 602, 604]);
        let rows = filtered_page(5, 998, numbers(2_000), even).unwrap();
        assert_eq!(rows, vec![1_996, 1_998]);
    }

    #[test]
    fn stop_ends_the_reading() {
        let below = |x: &u32| {
            if *x < 10 {
                Verdict::Keep
            } else {
                Verdict::Stop
            }
        };
        let rows = filtered_page(20, 2, numbers(2_000), below).unwrap();
        assert_eq!(rows, (2..10).collect::<Vec<_>>());
    }
}
