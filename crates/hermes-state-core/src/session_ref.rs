//! Which session an argument names: what a person types for a session (a
//! command line's argument, a chat command's) resolves the same way on
//! either backend.
//!
//! An argument is, in this order:
//! 1. an exact session id;
//! 2. [`LATEST`]: the session that started last (of a source, when given);
//! 3. a session title ([`Titles::resolve_session_by_title`], `api.md` §6.3:
//!    the newest numbered continuation `X #n`, else the holder of `X`);
//! 4. a unique prefix of an id ([`Sessions::resolve_session_id`], `api.md`
//!    §2.4; ASCII case-insensitive). A prefix several ids share names none:
//!    the answer lists them.
//!
//! Titles come before prefixes because a title is a name the user chose,
//! while a prefix is a shorthand: a title such as `2026` names its session
//! even when ids start with `2026`.

use crate::error::Result;
use crate::listing::ListFilter;
use crate::rich_listing::RichListOptions;
use crate::store::{Listings, Sessions, Titles};

/// The word that names the newest session.
pub const LATEST: &str = "latest";

/// How many candidates an ambiguous prefix lists ([`SessionRef::Ambiguous`]
/// holds one more when there are more, so a caller can say "…").
pub const MAX_CANDIDATES: usize = 10;

/// What an argument names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRef {
    /// This session (its full id).
    Found(String),
    /// No session has this id, title or id prefix.
    Unknown,
    /// Several ids start with the argument: at most [`MAX_CANDIDATES`] + 1,
    /// most recently active first.
    Ambiguous(Vec<String>),
    /// [`LATEST`], but there is no session (of the source).
    NoSessions,
}

/// The session `arg` names; `latest_source` narrows [`LATEST`] to one
/// source. A store failure is an error; naming nothing is an answer.
///
/// ```no_run
/// # fn demo(store: &dyn hermes_state_core::SessionStore) -> hermes_state_core::Result<()> {
/// use hermes_state_core::session_ref::{SessionRef, resolve};
///
/// if let SessionRef::Found(id) = resolve(store, "latest", Some("telegram"))? {
///     println!("the newest Telegram session is {id}");
/// }
/// # Ok(()) }
/// ```
pub fn resolve<S>(store: &S, arg: &str, latest_source: Option<&str>) -> Result<SessionRef>
where
    S: Sessions + Titles + Listings + ?Sized,
{
    if store.get_session(arg)?.is_some() {
        return Ok(SessionRef::Found(arg.to_owned()));
    }
    if arg == LATEST {
        let filter = ListFilter {
            source: latest_source.map(str::to_owned),
            limit: Some(1),
            offset: 0,
        };
        let newest = store.recent_sessions(&filter)?.pop();
        return Ok(newest.map_or(SessionRef::NoSessions, |row| {
            SessionRef::Found(row.session.id)
        }));
    }
    if !arg.is_empty()
        && let Some(id) = store.resolve_session_by_title(arg)?
    {
        return Ok(SessionRef::Found(id));
    }
    if let Some(id) = store.resolve_session_id(arg)? {
        return Ok(SessionRef::Found(id));
    }
    let candidates = prefix_candidates(store, arg)?;
    if candidates.len() > 1 {
        return Ok(SessionRef::Ambiguous(candidates));
    }
    Ok(SessionRef::Unknown)
}

/// Ids starting with `prefix` (ASCII case-insensitive), most recently
/// active first, at most [`MAX_CANDIDATES`] + 1 (the extra one says
/// "more"). Every session counts, children and archived ones included (the
/// picker's id search, `search_sessions_by_id`, lists conversations only).
fn prefix_candidates<S: Listings + ?Sized>(store: &S, prefix: &str) -> Result<Vec<String>> {
    if prefix.is_empty() {
        return Ok(Vec::new());
    }
    let lower = prefix.to_ascii_lowercase();
    let options = RichListOptions {
        limit: 500,
        include_children: true,
        include_archived: true,
        order_by_last_active: true,
        id_query: Some(prefix.to_owned()),
        compact_rows: true,
        ..RichListOptions::default()
    };
    Ok(store
        .list_sessions_rich(&options)?
        .into_iter()
        .map(|row| row.session.id)
        .filter(|id| id.to_ascii_lowercase().starts_with(&lower))
        .take(MAX_CANDIDATES + 1)
        .collect())
}
