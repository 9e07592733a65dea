//! Finding sessions (`api.md` §2.4, §6.2, §9.2, §12.2): the rules every
//! backend applies alike — the walk bounds, the recoverable end reasons,
//! the branch and delegate markers of `model_config`, which sessions are
//! listable — and the types the look-ups give.

use hermes_state_types::Session;
use serde::Serialize;

pub use crate::titles::escape_like;

/// How many child steps `resolve_resume_session_id` walks below the
/// compression tip (`api.md` §9.2).
pub const MAX_RESUME_STEPS: usize = 32;

/// The end reasons after which a gateway session may still be recovered for
/// its peer (`api.md` §12.2): ended by a cleanup, not by the user.
pub const RECOVERABLE_END_REASONS: [&str; 2] = ["agent_close", "ws_orphan_reap"];

/// Whether a session is listable (`api.md` §9.2: a root or a branch child,
/// and no delegate child), for a backend without SQLite's JSON functions:
/// from the session's `model_config`, whether it has a parent, and whether
/// it started after its parent ended `branched`.
pub fn is_listable(model_config: Option<&str>, has_parent: bool, after_branch: bool) -> bool {
    (!has_parent || has_marker(model_config, "_branched_from") || after_branch)
        && !has_marker(model_config, "_delegate_from")
}

/// Whether a `model_config` text carries the `key` marker (`_branched_from`,
/// `_delegate_from`): what SQLite's `json_extract(model_config, '$.<key>')` reads as
/// non-NULL (the SQLite read crate's `marker` expression), for a backend
/// without SQLite's JSON functions. Text that is not valid JSON, a value
/// that is not an object, a missing key and a JSON `null` carry none.
pub fn has_marker(model_config: Option<&str>, key: &str) -> bool {
    model_config
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
        .and_then(|value| value.get(key).map(|v| !v.is_null()))
        .unwrap_or(false)
}

/// A session row with its last activity: all session columns, then
/// `last_active` (the newest message's timestamp, else `started_at`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionActivity {
    /// The session row.
    #[serde(flatten)]
    pub session: Session,
    /// The newest message's timestamp, else `started_at`.
    pub last_active: f64,
}

/// Who a gateway session belongs to, for
/// `find_latest_gateway_session_for_peer` (`api.md` §12.2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerLookup {
    /// The platform (`sessions.source`, exact).
    pub source: String,
    /// The gateway's routing key; nothing is found without one.
    pub session_key: Option<String>,
    /// The platform user.
    pub user_id: Option<String>,
    /// The chat.
    pub chat_id: Option<String>,
    /// The chat type (`dm`, `group`, …).
    pub chat_type: Option<String>,
    /// The thread.
    pub thread_id: Option<String>,
}

/// Which live gateway session an origin names (`find_session_by_origin`,
/// `api.md` §12.2), from the candidates as `(id, user_id)` newest first:
/// with a user, that user's newest session, else the newest only when it is
/// the one candidate; without one, the newest unless the candidates belong
/// to more than one (non-empty) user. `None` when nothing qualifies.
///
/// ```
/// use hermes_state_core::lookups::origin_session;
///
/// let newest_first = [("s2".to_owned(), "bob".to_owned()), ("s1".to_owned(), "ann".to_owned())];
/// assert_eq!(origin_session(&newest_first, Some("ann")).as_deref(), Some("s1"));
/// // Two users share the chat and none is named: no session is guessed.
/// assert_eq!(origin_session(&newest_first, None), None);
/// ```
pub fn origin_session(candidates: &[(String, String)], user_id: Option<&str>) -> Option<String> {
    let (newest, _) = candidates.first()?;
    match user_id.filter(|u| !u.is_empty()) {
        Some(user) => {
            if let Some((id, _)) = candidates.iter().find(|(_, u)| u == user) {
                return Some(id.clone());
            }
            if candidates.len() > 1 {
                return None;
            }
        }
        None => {
            let users: std::collections::HashSet<&str> = candidates
                .iter()
                .map(|(_, u)| u.trim())
                .filter(|u| !u.is_empty())
                .collect();
            if users.len() > 1 {
                return None;
            }
        }
    }
    Some(newest.clone())
}
