//! The other session updates (`api.md` §2.5): prompt, model and billing
//! route, workspace, gateway peer, flags, the compression lineage's archive
//! and pin flags, the end-of-life sweeps, and the compression bookkeeping
//! the agent keeps between turns.
//!
//! Each is one write transaction. An unknown session id is no error: the
//! update changes nothing, as in the original (`api.md` §14).

use std::path::Path;

use hermes_state_query::session_updates as query;
/// The row type of the cooldown read, re-exported by the crate.
pub use hermes_state_query::session_updates::CompressionCooldown;
use rusqlite::named_params;

use crate::db::SessionDb;
use crate::error::{Result, WriteContext};
use crate::maintenance::remove_transcripts;

pub use hermes_state_core::gateway::GatewayPeer;

/// The end reason [`SessionDb::promote_to_session_reset`] writes by default.
pub const SESSION_RESET: &str = "session_reset";

const SET_SYSTEM_PROMPT: &str = "UPDATE sessions SET system_prompt = ?1 WHERE id = ?2";
const SET_MODEL: &str = "UPDATE sessions SET model = ?1 WHERE id = ?2";
const SET_META: &str =
    "UPDATE sessions SET model_config = ?1, model = COALESCE(?2, model) WHERE id = ?3";
const SET_BILLING_ROUTE: &str = "UPDATE sessions SET billing_provider = ?1, billing_base_url = ?2, billing_mode = COALESCE(?3, billing_mode), system_prompt = NULL WHERE id = ?4";
const SET_CWD: &str = "UPDATE sessions SET cwd = :cwd,
    git_branch = COALESCE(:branch, git_branch),
    git_repo_root = COALESCE(:root, git_repo_root)
WHERE id = :id";
const BACKFILL_REPO_ROOT: &str =
    "UPDATE sessions SET git_repo_root = ?1 WHERE cwd = ?2 AND COALESCE(git_repo_root, '') = ''";
const SET_GATEWAY_PEER: &str = "UPDATE sessions SET
    session_key = :session_key, source = :source, user_id = :user_id,
    chat_id = :chat_id, chat_type = :chat_type, thread_id = :thread_id,
    display_name = CASE WHEN :has_display_name THEN :display_name ELSE display_name END,
    origin_json = CASE WHEN :has_origin_json THEN :origin_json ELSE origin_json END
WHERE id = :id";
const SET_EXPIRY_FINALIZED: &str = "UPDATE sessions SET expiry_finalized = ?1 WHERE id = ?2";

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

const PROMOTE_TO_RESET: &str = "UPDATE sessions SET ended_at = ?1, end_reason = ?2
WHERE id = ?3 AND (ended_at IS NULL OR end_reason IN ('agent_close', 'ws_orphan_reap'))";

/// Compression continuations that never made an API call, still live a week
/// after they started, whose parent was ended by compression, and that hold
/// messages: a compression that died half way.
const FINALIZE_ORPHANED_COMPRESSIONS: &str = "UPDATE sessions SET ended_at = ?1, end_reason = 'orphaned_compression'
WHERE api_call_count = 0
  AND ended_at IS NULL
  AND started_at < ?2
  AND EXISTS (SELECT 1 FROM sessions p WHERE p.id = sessions.parent_session_id AND p.end_reason = 'compression')
  AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id)";

/// Ended, untitled TUI sessions older than a day that never got a message.
const GHOST_SESSIONS: &str = "SELECT id FROM sessions
WHERE source = 'tui'
  AND title IS NULL
  AND ended_at IS NOT NULL
  AND started_at < ?1
  AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.session_id = sessions.id)
ORDER BY started_at, id";

const SET_COOLDOWN: &str = "UPDATE sessions SET compression_failure_cooldown_until = ?1, compression_failure_error = ?2 WHERE id = ?3";
const CLEAR_COOLDOWN: &str = "UPDATE sessions SET compression_failure_cooldown_until = NULL, compression_failure_error = NULL WHERE id = ?1";
const SET_FALLBACK_STREAK: &str =
    "UPDATE sessions SET compression_fallback_streak = ?1 WHERE id = ?2";
const SET_INEFFECTIVE_COUNT: &str =
    "UPDATE sessions SET compression_ineffective_count = ?1 WHERE id = ?2";

/// The text trimmed, `None` when nothing is left.
fn trimmed(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// A week, the age after which a half-done compression is finalized.
const ORPHANED_COMPRESSION_AGE: f64 = 7.0 * 86_400.0;
/// A day, the age after which an empty TUI session is a ghost.
const GHOST_AGE: f64 = 86_400.0;

impl SessionDb {
    /// Replaces the session's system prompt snapshot (`api.md` §2.5).
    pub fn update_system_prompt(&self, session_id: &str, system_prompt: &str) -> Result<()> {
        self.update_one(
            "updating the system prompt",
            SET_SYSTEM_PROMPT,
            rusqlite::params![system_prompt, session_id],
        )
    }

    /// Sets the session's model unconditionally; `None` clears it (`api.md` §2.5).
    pub fn update_session_model(&self, session_id: &str, model: Option<&str>) -> Result<()> {
        self.update_one(
            "updating the session model",
            SET_MODEL,
            rusqlite::params![model, session_id],
        )
    }

    /// Stores `model_config_json` as given (no re-encoding; `None` clears it)
    /// and, when `model` is `Some`, the model (`api.md` §2.5).
    pub fn update_session_meta(
        &self,
        session_id: &str,
        model_config_json: Option<&str>,
        model: Option<&str>,
    ) -> Result<()> {
        self.update_one(
            "updating the session meta",
            SET_META,
            rusqlite::params![model_config_json, model, session_id],
        )
    }

    /// Sets the billing provider and base URL (`None` clears them), the
    /// billing mode when `Some`, and clears the system prompt snapshot, which
    /// a new route invalidates (`api.md` §2.5).
    pub fn update_session_billing_route(
        &self,
        session_id: &str,
        provider: Option<&str>,
        base_url: Option<&str>,
        billing_mode: Option<&str>,
    ) -> Result<()> {
        self.update_one(
            "updating the billing route",
            SET_BILLING_ROUTE,
            rusqlite::params![provider, base_url, billing_mode, session_id],
        )
    }

    /// Sets the session's working directory, and its git branch and repository
    /// root when they are non-empty after trimming (the trimmed text is
    /// stored) (`api.md` §2.5). An empty id or `cwd` makes it a no-op.
    pub fn update_session_cwd(
        &self,
        session_id: &str,
        cwd: &str,
        git_branch: Option<&str>,
        git_repo_root: Option<&str>,
    ) -> Result<()> {
        if session_id.is_empty() || cwd.is_empty() {
            return Ok(());
        }
        let (branch, root) = (trimmed(git_branch), trimmed(git_repo_root));
        self.write("updating the session cwd", |conn| {
            conn.execute(
                SET_CWD,
                named_params! {
                    ":cwd": cwd, ":branch": branch, ":root": root, ":id": session_id,
                },
            )
            .context("updating the session cwd")?;
            Ok(())
        })
    }

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

    /// Records who a gateway session talks to (`api.md` §2.5): sets
    /// `session_key`, `source`, `user_id`, `chat_id`, `chat_type` and
    /// `thread_id` (a `None` overwrites with NULL), and `display_name` /
    /// `origin_json` only when given. A no-op unless both the id and the
    /// session key are non-empty.
    pub fn record_gateway_session_peer(&self, session_id: &str, peer: &GatewayPeer) -> Result<()> {
        if session_id.is_empty() || peer.session_key.is_empty() {
            return Ok(());
        }
        self.write("recording a gateway peer", |conn| {
            conn.execute(
                SET_GATEWAY_PEER,
                named_params! {
                    ":session_key": peer.session_key, ":source": peer.source,
                    ":user_id": peer.user_id, ":chat_id": peer.chat_id,
                    ":chat_type": peer.chat_type, ":thread_id": peer.thread_id,
                    ":has_display_name": peer.display_name.is_some(),
                    ":display_name": peer.display_name,
                    ":has_origin_json": peer.origin_json.is_some(),
                    ":origin_json": peer.origin_json,
                    ":id": session_id,
                },
            )
            .context("recording a gateway peer")?;
            Ok(())
        })
    }

    /// Sets the gateway's `expiry_finalized` flag (1 or 0) (`api.md` §2.5);
    /// an empty id is a no-op.
    pub fn set_expiry_finalized(&self, session_id: &str, finalized: bool) -> Result<()> {
        if session_id.is_empty() {
            return Ok(());
        }
        self.update_one(
            "setting expiry_finalized",
            SET_EXPIRY_FINALIZED,
            rusqlite::params![i64::from(finalized), session_id],
        )
    }

    /// Archives (soft-hides) or restores the session's whole compression
    /// lineage (`api.md` §2.5): the session, its ancestors through
    /// compression-ended parents and its descendants through compression-ended
    /// sessions, so that a conversation split by compression hides as one.
    /// Returns whether any row matched (an already archived lineage counts,
    /// as SQLite's change count does); `false` for an unknown id.
    pub fn set_session_archived(&self, session_id: &str, archived: bool) -> Result<bool> {
        self.set_lineage_flag("archiving a session", "archived", session_id, archived)
    }

    /// Pins or unpins the session's whole compression lineage, as
    /// [`SessionDb::set_session_archived`] does for `archived` (`api.md` §2.5).
    pub fn set_session_pinned(&self, session_id: &str, pinned: bool) -> Result<bool> {
        self.set_lineage_flag("pinning a session", "pinned", session_id, pinned)
    }

    fn set_lineage_flag(
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

    /// Ends the session with `reason` ([`SESSION_RESET`] in the original's
    /// default) when it is live or was ended by `agent_close` /
    /// `ws_orphan_reap` (ends a reset may supersede) (`api.md` §2.5). Returns
    /// whether a row changed.
    ///
    /// Never fails: any error (a read-only handle included) gives `false`, as
    /// the original.
    pub fn promote_to_session_reset(&self, session_id: &str, reason: &str) -> bool {
        self.write("promoting to a session reset", |conn| {
            let changed = conn
                .execute(
                    PROMOTE_TO_RESET,
                    rusqlite::params![self.now(), reason, session_id],
                )
                .context("promoting to a session reset")?;
            Ok(changed > 0)
        })
        .unwrap_or(false)
    }

    /// Ends (`orphaned_compression`, now) every compression continuation that
    /// made no API call, is still live more than 7 days after it started,
    /// has messages, and whose parent was ended by compression (`api.md`
    /// §2.5). Returns how many.
    pub fn finalize_orphaned_compression_sessions(&self) -> Result<usize> {
        self.write("finalizing orphaned compressions", |conn| {
            let now = self.now();
            conn.execute(
                FINALIZE_ORPHANED_COMPRESSIONS,
                rusqlite::params![now, now - ORPHANED_COMPRESSION_AGE],
            )
            .context("finalizing orphaned compressions")
            .map_err(Into::into)
        })
    }

    /// Deletes the ghost sessions the TUI leaves behind (`api.md` §2.5):
    /// source `tui`, no title, ended, started more than 24 hours ago, and no
    /// message. Returns how many. With `sessions_dir`, their transcript files
    /// are then removed as for a prune (`api.md` §11.3; errors ignored).
    ///
    /// A ghost that is some session's parent (which the original would fail
    /// on with a foreign-key error) has its children orphaned first
    /// (`parent_session_id = NULL`), as every other deletion does.
    pub fn prune_empty_ghost_sessions(&self, sessions_dir: Option<&Path>) -> Result<usize> {
        let ids = self.write("pruning ghost sessions", |conn| {
            let ids: Vec<String> = conn
                .prepare_cached(GHOST_SESSIONS)
                .and_then(|mut stmt| {
                    stmt.query_map([self.now() - GHOST_AGE], |row| row.get(0))?
                        .collect()
                })
                .context("finding ghost sessions")?;
            for id in &ids {
                conn.prepare_cached(
                    "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
                )
                .and_then(|mut stmt| stmt.execute([id]))
                .context("orphaning children of ghost sessions")?;
            }
            for id in &ids {
                conn.prepare_cached("DELETE FROM sessions WHERE id = ?1")
                    .and_then(|mut stmt| stmt.execute([id]))
                    .context("deleting ghost sessions")?;
            }
            Ok(ids)
        })?;
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &ids);
        }
        Ok(ids.len())
    }

    /// Records that compression of the session failed and must not be retried
    /// before `cooldown_until` (Unix seconds), with the error (`api.md`
    /// §2.5). An empty id is a no-op.
    pub fn record_compression_failure_cooldown(
        &self,
        session_id: &str,
        cooldown_until: f64,
        error: Option<&str>,
    ) -> Result<()> {
        if session_id.is_empty() {
            return Ok(());
        }
        self.update_one(
            "recording a compression cooldown",
            SET_COOLDOWN,
            rusqlite::params![cooldown_until, error, session_id],
        )
    }

    /// The session's compression-failure cooldown while it runs (`api.md`
    /// §2.5); `None` when unset, expired (by the handle's clock), for an
    /// unknown session or an empty id.
    pub fn get_compression_failure_cooldown(
        &self,
        session_id: &str,
    ) -> Result<Option<CompressionCooldown>> {
        if session_id.is_empty() {
            return Ok(None);
        }
        self.read(|conn| {
            Ok(query::compression_failure_cooldown(
                conn,
                session_id,
                self.now(),
            )?)
        })
    }

    /// Clears the session's compression-failure cooldown and its error
    /// (`api.md` §2.5). An empty id is a no-op.
    pub fn clear_compression_failure_cooldown(&self, session_id: &str) -> Result<()> {
        if session_id.is_empty() {
            return Ok(());
        }
        self.update_one(
            "clearing a compression cooldown",
            CLEAR_COOLDOWN,
            [session_id],
        )
    }

    /// How many compressions in a row fell back (`api.md` §2.5); 0 for an
    /// unknown session.
    pub fn get_compression_fallback_streak(&self, session_id: &str) -> Result<i64> {
        self.read(|conn| Ok(query::compression_fallback_streak(conn, session_id)?))
    }

    /// Stores the compression fallback streak, clamped to ≥ 0 (`api.md` §2.5).
    pub fn set_compression_fallback_streak(&self, session_id: &str, streak: i64) -> Result<()> {
        self.update_one(
            "setting a compression fallback streak",
            SET_FALLBACK_STREAK,
            rusqlite::params![streak.max(0), session_id],
        )
    }

    /// How many compactions in a row were ineffective (`api.md` §2.5); 0 for
    /// an unknown session.
    pub fn get_compression_ineffective_count(&self, session_id: &str) -> Result<i64> {
        self.read(|conn| Ok(query::compression_ineffective_count(conn, session_id)?))
    }

    /// Stores the ineffective-compaction count, clamped to ≥ 0 (`api.md` §2.5).
    pub fn set_compression_ineffective_count(&self, session_id: &str, count: i64) -> Result<()> {
        self.update_one(
            "setting a compression ineffective count",
            SET_INEFFECTIVE_COUNT,
            rusqlite::params![count.max(0), session_id],
        )
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
