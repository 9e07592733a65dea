//! The other session updates (`api.md` §2.5): prompt, model, billing route,
//! workspace, the gateway's expiry flag, the compression lineage's archive
//! and pin flags, and the compression bookkeeping the agent keeps between
//! turns, with the SQLite backend's rules.
//!
//! Each is one write transaction. An unknown session id is no error: the
//! update changes nothing (`api.md` §14).

use postgres::types::ToSql;

use crate::error::{Context, Result};
use crate::{PgStore, WriteScope};

pub(crate) const SET_SYSTEM_PROMPT: &str = "UPDATE sessions SET system_prompt = $1 WHERE id = $2";
pub(crate) const SET_MODEL: &str = "UPDATE sessions SET model = $1::text WHERE id = $2";
pub(crate) const SET_META: &str =
    "UPDATE sessions SET model_config = $1::text, model = COALESCE($2::text, model) WHERE id = $3";
pub(crate) const SET_BILLING_ROUTE: &str = "UPDATE sessions SET billing_provider = $1::text, \
     billing_base_url = $2::text, billing_mode = COALESCE($3::text, billing_mode), \
     system_prompt = NULL WHERE id = $4";
pub(crate) const SET_CWD: &str = "UPDATE sessions SET cwd = $1,
    git_branch = COALESCE($2::text, git_branch),
    git_repo_root = COALESCE($3::text, git_repo_root)
WHERE id = $4";
pub(crate) const SET_EXPIRY_FINALIZED: &str =
    "UPDATE sessions SET expiry_finalized = $1 WHERE id = $2";
pub(crate) const SET_COOLDOWN: &str = "UPDATE sessions SET compression_failure_cooldown_until = $1, \
     compression_failure_error = $2::text WHERE id = $3";
pub(crate) const CLEAR_COOLDOWN: &str = "UPDATE sessions SET compression_failure_cooldown_until = NULL, \
     compression_failure_error = NULL WHERE id = $1";
pub(crate) const SET_FALLBACK_STREAK: &str =
    "UPDATE sessions SET compression_fallback_streak = $1 WHERE id = $2";
pub(crate) const SET_INEFFECTIVE_COUNT: &str =
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

/// The two flag columns a lineage update may set (never caller text).
#[derive(Clone, Copy)]
pub(crate) enum LineageFlag {
    Archived,
    Pinned,
}

impl PgStore {
    pub(crate) fn set_lineage_flag(
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

    pub(crate) fn counter(&self, sql: &str, session_id: &str, what: &str) -> Result<i64> {
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
    pub(crate) fn update_one(
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
