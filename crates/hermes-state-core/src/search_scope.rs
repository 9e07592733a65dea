//! Search hits restricted to a compression lineage and to a time window.
//!
//! [`Search::search_conversations_in`] takes a [`ConversationScope`]; the
//! per-hit [`Search::search_messages`] has no such filter (its options are
//! the original's, `api.md` §8). [`search_messages_in`] applies the same
//! scope to single hits by reading the search page by page and keeping the
//! hits in scope ([`crate::paging`]), so `offset` and `limit` count the
//! kept hits, in the order `sort` asks for; in time order it stops at the
//! first hit past the window.

use std::collections::HashSet;

use crate::cancel::Cancel;
use crate::conversation_search::ConversationScope;
use crate::error::Result;
use crate::paging::{Verdict, filtered_page};
use crate::search::{SearchHit, SearchOptions};
use crate::store::{Lineage, Search};

/// The sessions whose hits count for "search in this session": its whole
/// compression lineage ([`Lineage::get_compression_lineage`]), since a
/// compressed conversation goes on in its continuations, or only the
/// session itself when `segment_only`.
pub fn lineage_scope<S: Lineage + ?Sized>(
    store: &S,
    session_id: &str,
    segment_only: bool,
) -> Result<HashSet<String>> {
    if segment_only {
        return Ok(HashSet::from([session_id.to_owned()]));
    }
    Ok(store
        .get_compression_lineage(session_id)?
        .into_iter()
        .collect())
}

/// [`Search::search_messages`] of the hits `scope` takes: `options.offset`
/// and `options.limit` count those hits only. With the default scope, the
/// search itself.
pub fn search_messages_in<S: Search + ?Sized>(
    store: &S,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
) -> Result<Vec<SearchHit>> {
    if scope.sessions.is_none() && scope.since.is_none() && scope.until.is_none() {
        return store.search_messages(query, options);
    }
    scoped(options, scope, |page| store.search_messages(query, page))
}

/// [`search_messages_in`] through
/// [`Search::search_messages_cancellable`]: every page read stops when
/// `cancel` is raised, and the call returns
/// [`Error::Cancelled`](crate::Error::Cancelled).
pub fn search_messages_in_cancellable<S: Search + ?Sized>(
    store: &S,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
    cancel: &Cancel,
) -> Result<Vec<SearchHit>> {
    if scope.sessions.is_none() && scope.since.is_none() && scope.until.is_none() {
        return store.search_messages_cancellable(query, options, cancel);
    }
    scoped(options, scope, |page| {
        cancel.check()?;
        store.search_messages_cancellable(query, page, cancel)
    })
}

/// The hits `scope` takes, `options.offset` and `options.limit` counting
/// them, from pages `search` reads.
fn scoped(
    options: &SearchOptions,
    scope: &ConversationScope,
    search: impl Fn(&SearchOptions) -> Result<Vec<SearchHit>>,
) -> Result<Vec<SearchHit>> {
    let fetch = |offset, limit| {
        let page = SearchOptions {
            offset,
            limit,
            ..options.clone()
        };
        search(&page)
    };
    let sort = options.sort.as_deref();
    let judge = |hit: &SearchHit| {
        if scope.is_past(hit.timestamp, sort) {
            Verdict::Stop
        } else if scope.takes(&hit.session_id, hit.timestamp) {
            Verdict::Keep
        } else {
            Verdict::Skip
        }
    };
    filtered_page(options.limit, options.offset, fetch, judge)
}
