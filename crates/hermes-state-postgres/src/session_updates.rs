//! The other session updates (`api.md` §2.5): prompt, model, billing route,
//! workspace, the gateway's expiry flag, the compression lineage's archive
//! and pin flags, and the compression bookkeeping the agent keeps between
//! turns, with the SQLite backend's rules.
//!
//! Each is one write transaction. An unknown session id is no error: the
//! update changes nothing (`api.md` §14).

use hermes_state_core::session_updates::{CompressionCooldown, active_cooldown};
use postgres::types::ToSql;

use crate::error::{Context, Result};
use crate::{PgStore, WriteScope};

const SET_SYSTEM_PROMPT: &str = "UPDATE sessions SET system_prompt = $1 WHERE id = $2";
const SET_MODEL: &str = "UPDATE sessions SET model = $1::text WHERE id = $2";
const SET_META: &str =
    "UPDATE sessions SET model_config = $1::text, model = COALESCE($2::text, model) WHERE id = $3";
const SET_BILLING_ROUTE: &str = "UPDATE sessions SET billing_provider = $1::text, \
     billing_base_url = $2::text, billing_mode = COALESCE($3::text, billing_mode), \
     system_prompt = NULL WHERE id = $4";
const SET_CWD: &str = "UPDATE sessions SET cwd = $1,
    git_branch = COALESCE($2::text, git_branch),
    git_repo_root = COALESCE($3::text, git_repo_root)
WHERE id = $4";
const SET_EXPIRY_FINALIZED: &str = "UPDATE sessions SET expiry_finalized = $1 WHERE id = $2";
const SET_COOLDOWN: &str = "UPDATE sessions SET compression_failure_cooldown_until = $1, \
     compression_failure_error = $2::text WHERE id = $3";
const CLEAR_COOLDOWN: &str = "UPDATE sessions SET compression_failure_cooldown_until = NULL, \
     compression_failure_error = NULL WHERE id = $1";
const SET_FALLBACK_STREAK: &str =
    "UPDATE sessions SET compression_fallback_streak = $1 WHERE id = $2";
const SET_INEFFECTIVE_COUNT: &str =
    "UPDATE sessions SET compression_ineffective_count = $1 WHERE id = $2";

/// The compression lineage of `$1` (the session, its ancestors through
/// compression-ended parents, its descendants through compression-ended
/// sessions) gets `$2` in the flag column. `UNION` stops on cycles; the
/// seed takes the `C` collation of `sessions.id`.
const COMPRESSION_LINEAGE: &str = "WITH RECURSIVE
up(id) AS (
    SELECT $1::text COLLATE \"C\"
    UNION
    SELECT p.id FROM up JOIN sessions s ON s.id = up.id
    JOIN sessions p ON p.id = s.parent_session_id
    WHERE p.end_reason = 'compression'
),
down(id) AS (
    SELECT $1::text COLLATE \"C\"
    UNION
    SELECT c.id FROM down JOIN sessions p ON p.id = down.id
    JOIN sessions c ON c.parent_session_id = p.id
    WHERE p.end_reason = 'compression'
)";

/// The text trimmed, `None` when nothing is left.
fn trimmed(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// The two flag columns a lineage update may set (never caller text).
#[derive(Clone, Copy)]
enum LineageFlag {
    Archived,
    Pinned,
}

impl PgStore {
    /// Replaces the session's system prompt snapshot (`api.md` §2.5).
    pub fn update_system_prompt(&self, session_id: &str, system_prompt: &str) -> Result<()> {
        self.update_one(
            "updating the system prompt",
            session_id,
            SET_SYSTEM_PROMPT,
            &[&system_prompt, &session_id],
        )
    }

    /// Sets the session's model unconditionally; `None` clears it (`api.md` §2.5).
    pub fn update_session_model(&self, session_id: &str, model: Option<&str>) -> Result<()> {
        self.update_one(
            "updating the session model",
            session_id,
            SET_MODEL,
            &[&model, &session_id],
        )
    }

    /// Stores `model_config_json` as given (`None` clears it) and, when
    /// `model` is `Some`, the model (`api.md` §2.5).
    pub fn update_session_meta(
        &self,
        session_id: &str,
        model_config_json: Option<&str>,
        model: Option<&str>,
    ) -> Result<()> {
        self.update_one(
            "updating the session meta",
            session_id,
            SET_META,
            &[&model_config_json, &model, &session_id],
        )
    }

    /// Sets the billing provider and base URL (`None` clears them), the
    /// billing mode when `Some`, and clears the system prompt snapshot
    /// (`api.md` §2.5).
    pub fn update_session_billing_route(
        &self,
        session_id: &str,
        provider: Option<&str>,
        base_url: Option<&str>,
        billing_mode: Option<&str>,
    ) -> Result<()> {
        self.update_one(
            "updating the billing route",
            session_id,
            SET_BILLING_ROUTE,
            &[&provider, &base_url, &billing_mode, &session_id],
        )
    }

    /// Sets the working directory, and the git branch and repository root
    /// when non-empty after trimming (the trimmed text is stored) (`api.md`
    /// §2.5). An empty id or `cwd` makes it a no-op.
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
        self.update_one(
            "updating the session cwd",
            session_id,
            SET_CWD,
            &[&cwd, &branch, &root, &session_id],
        )
    }

    /// Sets the gateway's `expiry_finalized` flag (1 or 0) (`api.md` §2.5);
    /// an empty id is a no-op.
    pub fn set_expiry_finalized(&self, session_id: &str, finalized: bool) -> Result<()> {
        if session_id.is_empty() {
            return Ok(());
        }
        self.update_one(
            "setting expiry_finalized",
            session_id,
            SET_EXPIRY_FINALIZED,
            &[&i64::from(finalized), &session_id],
        )
    }

    /// Archives or restores the session's whole compression lineage
    /// (`api.md` §2.5). Returns whether any row matched (an already archived
    /// lineage counts); `false` for an unknown id.
    pub fn set_session_archived(&self, session_id: &str, archived: bool) -> Result<bool> {
        self.set_lineage_flag(
            "archiving a session",
            LineageFlag::Archived,
            session_id,
            archived,
        )
    }

    /// Pins or unpins the session's whole compression lineage, as
    /// [`PgStore::set_session_archived`] does for `archived` (`api.md` §2.5).
    pub fn set_session_pinned(&self, session_id: &str, pinned: bool) -> Result<bool> {
        self.set_lineage_flag("pinning a session", LineageFlag::Pinned, session_id, pinned)
    }

    fn set_lineage_flag(
        &self,
        what: &str,
        flag: LineageFlag,
        session_id: &str,
        on: bool,
    ) -> Result<bool> {
        // The whole lineage: other sessions' rows and links, so alone.
        self.write(what, |tx| {
            set_lineage_flag_in(tx, what, flag, session_id, on)
        })
    }

    /// Records that compression of the session failed and must not be
    /// retried before `cooldown_until` (Unix seconds), with the error
    /// (`api.md` §2.5). An empty id is a no-op.
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
            session_id,
            SET_COOLDOWN,
            &[&cooldown_until, &error, &session_id],
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
        let now = self.now();
        self.read(|tx| {
            let row = tx
                .query_opt(
                    "SELECT compression_failure_cooldown_until, compression_failure_error \
                     FROM sessions WHERE id = $1",
                    &[&session_id],
                )
                .context("reading a compression cooldown")?;
            Ok(row.and_then(|row| active_cooldown(row.get(0), row.get(1), now)))
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
            session_id,
            CLEAR_COOLDOWN,
            &[&session_id],
        )
    }

    /// How many compressions in a row fell back (`api.md` §2.5); 0 for an
    /// unknown session.
    pub fn get_compression_fallback_streak(&self, session_id: &str) -> Result<i64> {
        self.counter(
            "SELECT compression_fallback_streak FROM sessions WHERE id = $1",
            session_id,
            "reading a compression fallback streak",
        )
    }

    /// Stores the compression fallback streak, clamped to ≥ 0 (`api.md` §2.5).
    pub fn set_compression_fallback_streak(&self, session_id: &str, streak: i64) -> Result<()> {
        self.update_one(
            "setting a compression fallback streak",
            session_id,
            SET_FALLBACK_STREAK,
            &[&streak.max(0), &session_id],
        )
    }

    /// How many compactions in a row were ineffective (`api.md` §2.5); 0 for
    /// an unknown session.
    pub fn get_compression_ineffective_count(&self, session_id: &str) -> Result<i64> {
        self.counter(
            "SELECT compression_ineffective_count FROM sessions WHERE id = $1",
            session_id,
            "reading a compression ineffective count",
        )
    }

    /// Stores the ineffective-compaction count, clamped to ≥ 0 (`api.md` §2.5).
    pub fn set_compression_ineffective_count(&self, session_id: &str, count: i64) -> Result<()> {
        self.update_one(
            "setting a compression ineffective count",
            session_id,
            SET_INEFFECTIVE_COUNT,
            &[&count.max(0), &session_id],
        )
    }

    fn counter(&self, sql: &str, session_id: &str, what: &str) -> Result<i64> {
        self.read(|tx| {
            let value: Option<Option<i64>> = tx
                .query_opt(sql, &[&session_id])
                .context(what)?
                .map(|row| row.get(0));
            Ok(value.flatten().unwrap_or(0))
        })
    }

    /// Runs one UPDATE of one session in its own write transaction, under
    /// the session's key.
    fn update_one(
        &self,
        what: &str,
        session_id: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<()> {
        self.write_in(what, &WriteScope::session(session_id), |tx| {
            tx.execute(sql, params).context(what)?;
            Ok(())
        })
    }
}

/// Sets `flag` to `on` on the compression lineage of `session_id`
/// ([`COMPRESSION_LINEAGE`]) inside the caller's transaction; whether any
/// row matched.
fn set_lineage_flag_in(
    tx: &mut postgres::Transaction<'_>,
    what: &str,
    flag: LineageFlag,
    session_id: &str,
    on: bool,
) -> Result<bool> {
    let column = match flag {
        LineageFlag::Archived => "archived",
        LineageFlag::Pinned => "pinned",
    };
    let sql = format!(
        "{COMPRESSION_LINEAGE}
UPDATE sessions SET {column} = $2 WHERE id IN (SELECT id FROM up UNION SELECT id FROM down)"
    );
    let changed = tx
        .execute(&sql, &[&session_id, &i64::from(on)])
        .context(what)?;
    Ok(changed > 0)
}

/// Archives the compression lineage of each session inside the caller's
/// transaction, as `set_session_archived` does; returns how many sessions
/// were given (the original's count of `archive_sessions` and
/// `archive_stale_sessions`, whatever changed).
pub(crate) fn archive_lineages(
    tx: &mut postgres::Transaction<'_>,
    ids: &[String],
) -> Result<usize> {
    for id in ids {
        set_lineage_flag_in(tx, "archiving a session", LineageFlag::Archived, id, true)?;
    }
    Ok(ids.len())
}
