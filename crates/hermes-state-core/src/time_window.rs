//! A span of time, and the sessions that started in one.
//!
//! The contract's listings take no time bound (the original's have none,
//! `api.md` §10.2), so a caller that wants "the sessions of last week" reads
//! [`Listings::recent_sessions`] newest start first and keeps the rows in
//! the window, stopping at the first row that started before it
//! ([`crate::paging`]). Written once here so the command line's `sessions
//! list`, `export` and `stats` and any other client read a window alike on
//! either backend.

use crate::error::Result;
use crate::listing::{DEFAULT_LIST_LIMIT, ListFilter, SessionListing};
use crate::paging::{Verdict, filtered_page};
use crate::store::Listings;
use hermes_state_types::Session;

/// A span of time in Unix seconds: from `since` (inclusive) to `until`
/// (exclusive), either end open when `None`, so `since: D, until: D + 1
/// day` is exactly day D.
///
/// ```
/// use hermes_state_core::time_window::TimeWindow;
///
/// let window = TimeWindow { since: Some(10.0), until: Some(20.0) };
/// assert!(window.contains(10.0) && !window.contains(20.0));
/// assert!(window.is_after(9.0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimeWindow {
    /// The first time in the window.
    pub since: Option<f64>,
    /// The first time after the window.
    pub until: Option<f64>,
}

impl TimeWindow {
    /// Whether a bound was given.
    pub fn is_set(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// Whether the time lies in the window (`since <= t < until`).
    pub fn contains(&self, t: f64) -> bool {
        self.since.is_none_or(|since| t >= since) && self.until.is_none_or(|until| t < until)
    }

    /// Whether `t`, and so every earlier time, lies before the window: a
    /// listing ordered newest first can stop there.
    pub fn is_after(&self, t: f64) -> bool {
        self.since.is_some_and(|since| t < since)
    }

    /// Where a row started at `t` stands in a listing ordered newest first.
    fn judge_newest_first(&self, t: f64) -> Verdict {
        if self.contains(t) {
            Verdict::Keep
        } else if self.is_after(t) {
            Verdict::Stop
        } else {
            Verdict::Skip
        }
    }
}

/// [`Listings::recent_sessions`] of the sessions that started in `window`:
/// `filter.offset` and `filter.limit` (default [`DEFAULT_LIST_LIMIT`]) count
/// those sessions only. Without a bound, the listing itself.
pub fn recent_sessions_in<S: Listings + ?Sized>(
    store: &S,
    filter: &ListFilter,
    window: TimeWindow,
) -> Result<Vec<SessionListing>> {
    if !window.is_set() {
        return store.recent_sessions(filter);
    }
    let limit = filter.limit.unwrap_or(DEFAULT_LIST_LIMIT);
    read_newest_first(
        store,
        filter.source.as_deref(),
        window,
        filter.offset,
        limit,
    )
}

/// Every session (of `source`, when given) that started in `window`, newest
/// first.
pub fn sessions_started_in<S: Listings + ?Sized>(
    store: &S,
    source: Option<&str>,
    window: TimeWindow,
) -> Result<Vec<Session>> {
    let rows = read_newest_first(store, source, window, 0, u32::MAX)?;
    Ok(rows.into_iter().map(|row| row.session).collect())
}

fn read_newest_first<S: Listings + ?Sized>(
    store: &S,
    source: Option<&str>,
    window: TimeWindow,
    offset: u32,
    limit: u32,
) -> Result<Vec<SessionListing>> {
    let fetch = |offset, limit| {
        store.recent_sessions(&ListFilter {
            source: source.map(str::to_owned),
            limit: Some(limit),
            offset,
        })
    };
    filtered_page(limit, offset, fetch, |row| {
        window.judge_newest_first(row.session.started_at)
    })
}
