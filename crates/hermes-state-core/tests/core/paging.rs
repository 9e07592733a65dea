//! Reading pages and keeping what a rule keeps: offset and limit count kept
//! rows, and `Stop` ends the reading.

use hermes_state_core::paging::{PAGE, Verdict, filtered_page};

/// An operation listing `0..n`, page by page, counting the pages read.
fn numbers(n: u32, pages: &mut u32) -> impl FnMut(u32, u32) -> Result<Vec<u32>, ()> + '_ {
    move |offset, limit| {
        *pages += 1;
        Ok((offset..n.min(offset + limit)).collect())
    }
}

fn even(x: &u32) -> Verdict {
    if x.is_multiple_of(2) {
        Verdict::Keep
    } else {
        Verdict::Skip
    }
}

#[test]
fn offset_and_limit_count_matches_across_pages() {
    let mut pages = 0;
    let rows = filtered_page(3, 300, numbers(2_000, &mut pages), even).unwrap();
    assert_eq!(rows, vec![600, 602, 604]);
    assert_eq!(pages, 2, "reading stops once the page is filled");
    let rows = filtered_page(5, 998, numbers(2_000, &mut 0), even).unwrap();
    assert_eq!(rows, vec![1_996, 1_998], "the last page is short");
    let rows = filtered_page(5, 1_000, numbers(2_000, &mut 0), even).unwrap();
    assert!(rows.is_empty(), "past the last match");
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
    let mut pages = 0;
    let rows = filtered_page(20, 2, numbers(2_000, &mut pages), below).unwrap();
    assert_eq!(rows, (2..10).collect::<Vec<_>>());
    assert_eq!(pages, 1);
}

#[test]
fn a_full_last_page_is_followed_by_one_more_read() {
    let mut pages = 0;
    let rows = filtered_page(u32::MAX, 0, numbers(PAGE, &mut pages), even).unwrap();
    assert_eq!(rows.len(), PAGE as usize / 2);
    assert_eq!(pages, 2, "a full page may not be the last");
}

#[test]
fn a_failed_read_is_the_error() {
    let failing = |offset: u32, _| {
        if offset == 0 {
            Ok(vec![1, 3])
        } else {
            Err("down")
        }
    };
    let fail_later = |offset: u32, limit: u32| {
        if offset >= PAGE {
            Err("down")
        } else {
            Ok((offset..offset + limit).collect::<Vec<u32>>())
        }
    };
    assert_eq!(filtered_page(5, 0, failing, even), Ok(vec![]));
    assert_eq!(filtered_page(PAGE, 0, fail_later, even), Err("down"));
}
