//! The other session updates (`api.md` §2.5): prompt, model and billing
//! route, workspace, gateway peer, flags, the compression lineage's archive
//! and pin flags, the end-of-life sweeps, and the compression bookkeeping
//! the agent keeps between turns.
//!
//! Each is one write transaction. An unknown session id is no error: the
//! update changes nothing, as in the original (`api.md` §14).

/// The row type of the cooldown read, re-exported by the crate.
pub use hermes_state_query::session_updates::CompressionCooldown;

use crate::db::SessionDb;
use crate::error::{Result, WriteContext};

pub use hermes_state_core::gateway::GatewayPeer;

/// The end reason [`SessionDb::promote_to_session_reset`](hermes_state_core::store::Sessions::promote_to_session_reset) writes by default.
pub const SESSION_RESET: &str = "session_reset";

pub(crate) const SET_SYSTEM_PROMPT: &str = "UPDATE sessions SET system_prompt = ?1 WHERE id = ?2";
pub(crate) const SET_MODEL: &str = "UPDATE sessions SET model = ?1 WHERE id = ?2";
pub(crate) const SET_META: &str =
    "UPDATE sessions SET model_config = ?1, model = COALESCE(?2, model) WHERE id = ?3";
pub(crate) const SET_BILLING_ROUTE: &str = "UPDATE sessions SET billing_provider = ?1, billing_base_url = ?2, billing_mode = COALESCE(?3, billing_mode), system_prompt = NULL WHERE id = ?4";
pub(crate) const SET_CWD: &str = "UPDATE sessions SET cwd = :cwd,
    git_branch = COALESCE(:branch, git_branch),
    git_repo_root = COALESCE(:root, git_repo_root)
WHERE id = :id";
const BACKFILL_REPO_ROOT: &str =
    "UPDATE sessions SET git_repo_root = ?1 WHERE cwd = ?2 AND COALESCE(git_repo_root, '') = ''";
pub(crate) const SET_GATEWAY_PEER: &str = "UPDATE sessions SET
    session_key = :session_key, source = :source, user_id = :user_id,
    chat_id = :chat_id, chat_type = :chat_type, thread_id = :thread_id,
    display_name = CASE WHEN :has_display_name THEN :display_name ELSE display_name END,
    origin_json = CASE WHEN :has_origin_json THEN :origin_json ELSE origin_json END
WHERE id = :id";
pub(crate) const SET_EXPIRY_FINALIZED: &str =
    "UPDATE sessions SET expiry_finalized = ?1 WHERE id = ?2";

/// The compression lineage of `?1`: the session, its ancestors reached
/// through compression-ended parents, and its descendants reached through
/// children of compression-ended sessions. `UNION` stops on cycles.
const COMPRESSION_LINEAGE: &str = "WITH RECURSIVE
up(id) AS (
    SELECT ?1
    UNION
    SELECT p.id FROM up JOIN sessions s ON s.id = up.id
    JOIN sessions p ON p.id = s.parent_session_id
    WHERE p.end_reason = 'compression'
),
down(id) AS (
    SELECT ?1
    UNION
    SELECT c.id FROM down JOIN sessions p ON p.id = down.id
    JOIN sessions c ON c.parent_session_id = p.id
    WHERE p.end_reason = 'compression'
)";

pub(crate) const PROMOTE_TO_RESET: &str = "UPDATE sessions SET ended_at = ?1, end_reason = ?2
WHERE id = ?3 AND (ended_at IS NULL OR end_reason IN ('agent_close', 'ws_orphan_reap'))";

/// Compression continuations that never made an API call, still live a week
/// after they started, whose parent was ended by compression, and that hold
/// messages: a compression that died half way.
pub(crate) const FINALIZE_ORPHANED_COMPRESSIONS: &str = "UPDATE sessions SET ended_at = ?1, end_reason = 'orphaned_compression'
WHERE api_call_count = 0
  AND ended_at IS NULL
  AND started_at < ?2
  AND EXISTS (SELECT 1 FROM sessions p WHERE p.id = sessions.parent_session_id AND p.end_reason = 'compression')
  AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id)";

/// Ended, untitled TUI sessions older than a day that never got a message.
pub(crate) const GHOST_SESSIONS: &str = "SELECT id FROM sessions
WHERE source = 'tui'
  AND title IS NULL
  AND ended_at IS NOT NULL
  AND started_at < ?1
  AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.session_id = sessions.id)
ORDER BY started_at, id";

pub(crate) const SET_COOLDOWN: &str = "UPDATE sessions SET compression_failure_cooldown_until = ?1, compression_failure_error = ?2 WHERE id = ?3";
pub(crate) const CLEAR_COOLDOWN: &str = "UPDATE sessions SET compression_failure_cooldown_until = NULL, compression_failure_error = NULL WHERE id = ?1";
pub(crate) const SET_FALLBACK_STREAK: &str =
    "UPDATE sessions SET compression_fallback_streak = ?1 WHERE id = ?2";
pub(crate) const SET_INEFFECTIVE_COUNT: &str =
    "UPDATE sessions SET compression_ineffective_count = ?1 WHERE id = ?2";

impl SessionDb {
    /// For each `(cwd, root)` pair with both non-empty, sets `git_repo_root =
    /// root` on the sessions of that `cwd` whose root is NULL or empty
    /// (`api.md` §2.5). Roots already known are never overwritten.
    pub fn backfill_repo_roots<C, R>(&self, roots: impl IntoIterator<Item = (C, R)>) -> Result<()>
    where
        C: AsRef<str>,
        R: AsRef<str>,
    {
        let pairs: Vec<(C, R)> = roots
            .into_iter()
            .filter(|(cwd, root)| !cwd.as_ref().is_empty() && !root.as_ref().is_empty())
            .collect();
        if pairs.is_empty() {
            return Ok(());
        }
        self.write("backfilling repository roots", |conn| {
            let mut stmt = conn
                .prepare_cached(BACKFILL_REPO_ROOT)
                .context("backfilling repository roots")?;
            for (cwd, root) in &pairs {
                stmt.execute([root.as_ref(), cwd.as_ref()])
                    .context("backfilling repository roots")?;
            }
            Ok(())
        })
    }

    pub(crate) fn set_lineage_flag(
        &self,
        what: &str,
        column: &str,
        session_id: &str,
        on: bool,
    ) -> Result<bool> {
        self.write(what, |conn| {
            set_lineage_flag_in(conn, what, column, session_id, on)
        })
    }

    /// Runs one UPDATE of one session in its own write transaction.
    pub(crate) fn update_one(
        &self,
        what: &str,
        sql: &str,
        params: impl rusqlite::Params + Clone,
    ) -> Result<()> {
        self.write(what, |conn| {
            conn.prepare_cached(sql)
                .and_then(|mut stmt| stmt.execute(params.clone()))
                .context(what)?;
            Ok(())
        })
    }
}

/// Sets `column` (`archived` or `pinned`, never caller text) to `on` on the
/// compression lineage of `session_id` ([`COMPRESSION_LINEAGE`]) inside the
/// caller's transaction; whether any row matched. The one lineage update of
/// `set_session_archived`, `set_session_pinned` and the archiving sweeps.
pub(crate) fn set_lineage_flag_in(
    conn: &rusqlite::Connection,
    what: &str,
    column: &str,
    session_id: &str,
    on: bool,
) -> Result<bool> {
    let sql = format!(
        "{COMPRESSION_LINEAGE}
UPDATE sessions SET {column} = ?2 WHERE id IN (SELECT id FROM up UNION SELECT id FROM down)"
    );
    let changed = conn
        .prepare_cached(&sql)
        .and_then(|mut stmt| stmt.execute(rusqlite::params![session_id, i64::from(on)]))
        .context(what)?;
    Ok(changed > 0)
}
