//! Session writes: create, end, reopen, token and cost accounting.

use hermes_state_types::{NewSession, Session, TokenUpdate, stored};
use rusqlite::{Connection, OptionalExtension, named_params};

use hermes_state_core::accounting::{SessionRoute, UsageDelta};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};
use crate::handoff::CLAIM;
use crate::handoff::COMPLETE;
use crate::handoff::FAIL;
use crate::handoff::REQUEST;
use crate::session_updates::CLEAR_COOLDOWN;
use crate::session_updates::FINALIZE_ORPHANED_COMPRESSIONS;
use crate::session_updates::PROMOTE_TO_RESET;
use crate::session_updates::SET_BILLING_ROUTE;
use crate::session_updates::SET_COOLDOWN;
use crate::session_updates::SET_CWD;
use crate::session_updates::SET_EXPIRY_FINALIZED;
use crate::session_updates::SET_FALLBACK_STREAK;
use crate::session_updates::SET_INEFFECTIVE_COUNT;
use crate::session_updates::SET_META;
use crate::session_updates::SET_MODEL;
use crate::session_updates::SET_SYSTEM_PROMPT;
use hermes_state_core::session_updates::ORPHANED_COMPRESSION_AGE;
use hermes_state_core::session_updates::trimmed;
use hermes_state_core::store::Sessions;
use hermes_state_query::lookups;
use hermes_state_query::session_updates as query;
use hermes_state_query::session_updates::CompressionCooldown;
use hermes_state_query::session_updates::HandoffState;
use hermes_state_query::sessions::SessionCountOptions;

const UPSERT_SESSION: &str = "INSERT INTO sessions (id, source, user_id, session_key, chat_id, chat_type, thread_id, model, model_config, system_prompt, parent_session_id, cwd, profile_name, git_repo_root, started_at)
VALUES (:id, :source, :user_id, :session_key, :chat_id, :chat_type, :thread_id, :model, :model_config, :system_prompt, :parent, :cwd, :profile_name, :git_repo_root, :now)
ON CONFLICT(id) DO UPDATE SET
    model = COALESCE(sessions.model, excluded.model),
    model_config = COALESCE(sessions.model_config, excluded.model_config),
    system_prompt = COALESCE(sessions.system_prompt, excluded.system_prompt),
    session_key = COALESCE(sessions.session_key, excluded.session_key),
    chat_id = COALESCE(sessions.chat_id, excluded.chat_id),
    chat_type = COALESCE(sessions.chat_type, excluded.chat_type),
    thread_id = COALESCE(sessions.thread_id, excluded.thread_id),
    parent_session_id = COALESCE(sessions.parent_session_id, excluded.parent_session_id),
    cwd = COALESCE(sessions.cwd, excluded.cwd),
    profile_name = COALESCE(sessions.profile_name, excluded.profile_name),
    git_repo_root = COALESCE(sessions.git_repo_root, excluded.git_repo_root)";

/// Workspace fields every child inherits from its parent (NULL-only fill).
const INHERIT_WORKSPACE: &str = "UPDATE sessions SET
    cwd = COALESCE(cwd, (SELECT p.cwd FROM sessions p WHERE p.id = ?2)),
    git_repo_root = COALESCE(git_repo_root, (SELECT p.git_repo_root FROM sessions p WHERE p.id = ?2)),
    git_branch = COALESCE(git_branch, (SELECT p.git_branch FROM sessions p WHERE p.id = ?2)),
    profile_name = COALESCE(profile_name, (SELECT p.profile_name FROM sessions p WHERE p.id = ?2))
WHERE id = ?1";

/// Gateway fields a compression continuation inherits, so replies keep
/// reaching the same chat.
const INHERIT_GATEWAY: &str = "UPDATE sessions SET
    user_id = COALESCE(user_id, (SELECT p.user_id FROM sessions p WHERE p.id = ?2)),
    session_key = COALESCE(session_key, (SELECT p.session_key FROM sessions p WHERE p.id = ?2)),
    chat_id = COALESCE(chat_id, (SELECT p.chat_id FROM sessions p WHERE p.id = ?2)),
    chat_type = COALESCE(chat_type, (SELECT p.chat_type FROM sessions p WHERE p.id = ?2)),
    thread_id = COALESCE(thread_id, (SELECT p.thread_id FROM sessions p WHERE p.id = ?2)),
    display_name = COALESCE(display_name, (SELECT p.display_name FROM sessions p WHERE p.id = ?2)),
    origin_json = COALESCE(origin_json, (SELECT p.origin_json FROM sessions p WHERE p.id = ?2))
WHERE id = ?1 AND EXISTS (SELECT 1 FROM sessions p WHERE p.id = ?2 AND p.end_reason = 'compression')";

/// Maps SQLite's `FOREIGN KEY constraint failed` of a statement whose only
/// foreign key names `session_id` to [`Error::SessionNotFound`]; any other
/// error keeps its SQLite form. Letting the constraint decide (rather than
/// looking the session up first) saves a query per write and matches the
/// original exactly: e.g. re-creating a session whose stored parent is kept
/// by the upsert succeeds even if the parent given now does not exist.
pub(crate) fn foreign_key_to_not_found(
    error: rusqlite::Error,
    session_id: &str,
    what: &str,
) -> Error {
    let is_foreign_key = matches!(
        &error,
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY
    );
    if is_foreign_key {
        Error::SessionNotFound(session_id.to_owned())
    } else {
        crate::error::sqlite(what, error)
    }
}

pub(crate) const INCREMENTAL_COUNTS: &str = "UPDATE sessions SET
    input_tokens = input_tokens + :input,
    output_tokens = output_tokens + :output,
    cache_read_tokens = cache_read_tokens + :cache_read,
    cache_write_tokens = cache_write_tokens + :cache_write,
    reasoning_tokens = reasoning_tokens + :reasoning,
    estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE(:estimated, 0),
    actual_cost_usd = CASE WHEN :actual IS NULL THEN actual_cost_usd ELSE COALESCE(actual_cost_usd, 0) + :actual END,
    cost_status = COALESCE(:cost_status, cost_status),
    cost_source = COALESCE(:cost_source, cost_source),
    pricing_version = COALESCE(:pricing_version, pricing_version),
    billing_provider = COALESCE(billing_provider, :provider),
    billing_base_url = COALESCE(billing_base_url, :base_url),
    billing_mode = COALESCE(billing_mode, :mode),
    model = COALESCE(model, :model),
    api_call_count = COALESCE(api_call_count, 0) + :api_calls
WHERE id = :id";

pub(crate) const ABSOLUTE_COUNTS: &str = "UPDATE sessions SET
    input_tokens = :input,
    output_tokens = :output,
    cache_read_tokens = :cache_read,
    cache_write_tokens = :cache_write,
    reasoning_tokens = :reasoning,
    estimated_cost_usd = COALESCE(:estimated, 0),
    actual_cost_usd = CASE WHEN :actual IS NULL THEN actual_cost_usd ELSE :actual END,
    cost_status = COALESCE(:cost_status, cost_status),
    cost_source = COALESCE(:cost_source, cost_source),
    pricing_version = COALESCE(:pricing_version, pricing_version),
    billing_provider = COALESCE(billing_provider, :provider),
    billing_base_url = COALESCE(billing_base_url, :base_url),
    billing_mode = COALESCE(billing_mode, :mode),
    model = COALESCE(model, :model),
    api_call_count = :api_calls
WHERE id = :id";

/// The session's model and billing route (all `None` for an unknown
/// session), which a token update that names none of its own falls back on.
pub(crate) fn session_route(conn: &Connection, session_id: &str) -> Result<SessionRoute> {
    let route = conn
        .query_row(
            "SELECT model, billing_provider, billing_base_url, billing_mode FROM sessions WHERE id = ?1",
            [session_id],
            |row| Ok(SessionRoute { model: row.get(0)?, provider: row.get(1)?, base_url: row.get(2)?, mode: row.get(3)? }),
        )
        .optional()
        .context("reading the billing route")?;
    Ok(route.unwrap_or_default())
}

/// The first call that carries usage, a model and a provider fixes the
/// session's route when it differs from what the session was created with.
pub(crate) fn set_first_accounted_route(
    conn: &Connection,
    session_id: &str,
    update: &TokenUpdate,
    has_usage: bool,
) -> Result<()> {
    let (Some(model), Some(provider)) = (&update.model, &update.billing_provider) else {
        return Ok(());
    };
    if !has_usage {
        return Ok(());
    }
    let row: Option<(Option<String>, Option<String>, Option<i64>)> = conn
        .query_row(
            "SELECT model, billing_provider, api_call_count FROM sessions WHERE id = ?1",
            [session_id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()
        .context("reading the billing route")?;
    let Some((row_model, row_provider, api_calls)) = row else {
        return Ok(());
    };
    if api_calls.unwrap_or(0) == 0
        && (row_model.as_ref() != Some(model) || row_provider.as_ref() != Some(provider))
    {
        conn.execute(
            "UPDATE sessions SET model = ?1, billing_provider = ?2, billing_base_url = ?3, billing_mode = ?4 WHERE id = ?5",
            rusqlite::params![model, provider, update.billing_base_url, update.billing_mode, session_id],
        )
        .context("setting the billing route")?;
    }
    Ok(())
}

const UPSERT_USAGE: &str = "INSERT INTO session_model_usage (session_id, model, billing_provider, billing_base_url, billing_mode, task, api_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, cost_source, first_seen, last_seen)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?17)
ON CONFLICT(session_id, model, billing_provider, billing_base_url, billing_mode, task) DO UPDATE SET
    api_call_count = api_call_count + excluded.api_call_count,
    input_tokens = input_tokens + excluded.input_tokens,
    output_tokens = output_tokens + excluded.output_tokens,
    cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
    cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
    reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
    estimated_cost_usd = estimated_cost_usd + excluded.estimated_cost_usd,
    actual_cost_usd = actual_cost_usd + excluded.actual_cost_usd,
    cost_status = COALESCE(excluded.cost_status, cost_status),
    cost_source = COALESCE(excluded.cost_source, cost_source),
    last_seen = excluded.last_seen";

pub(crate) fn add_usage(
    conn: &Connection,
    session_id: &str,
    d: &UsageDelta<'_>,
    now: f64,
) -> Result<()> {
    conn.prepare_cached(UPSERT_USAGE)
        .and_then(|mut stmt| {
            stmt.execute(rusqlite::params![
                session_id,
                d.model,
                d.provider,
                d.base_url,
                d.mode,
                d.task,
                d.api_calls,
                d.tokens[0],
                d.tokens[1],
                d.tokens[2],
                d.tokens[3],
                d.tokens[4],
                d.estimated,
                d.actual,
                d.cost_status,
                d.cost_source,
                now,
            ])
        })
        .context("recording model usage")?;
    Ok(())
}

impl Sessions for SessionDb {
    /// `api.md` §2.5, with the roots as a slice: see the generic inherent
    /// method of the same name.
    fn backfill_repo_roots(&self, roots: &[(&str, &str)]) -> Result<()> {
        SessionDb::backfill_repo_roots(self, roots.iter().copied())
    }

    /// Requests a handoff of the session to `platform` (`api.md` §2.5): when
    /// no handoff is in flight (state NULL, `completed` or `failed`) the state
    /// becomes `pending`, the platform is stored and the last error cleared.
    /// Returns whether it did; `false` for an unknown session or a handoff
    /// already `pending` or `running`.
    fn request_handoff(&self, session_id: &str, platform: &str) -> Result<bool> {
        self.write("requesting a handoff", |conn| {
            let changed = conn
                .execute(REQUEST, [platform, session_id])
                .context("requesting a handoff")?;
            Ok(changed > 0)
        })
    }

    /// Claims a pending handoff (`pending` → `running`) (`api.md` §2.5);
    /// returns whether this caller got it.
    fn claim_handoff(&self, session_id: &str) -> Result<bool> {
        self.write("claiming a handoff", |conn| {
            let changed = conn
                .execute(CLAIM, [session_id])
                .context("claiming a handoff")?;
            Ok(changed > 0)
        })
    }

    /// Marks the session's handoff `completed` and clears its error (`api.md`
    /// §2.5), whatever its state was.
    fn complete_handoff(&self, session_id: &str) -> Result<()> {
        self.update_one("completing a handoff", COMPLETE, [session_id])
    }

    /// Marks the session's handoff `failed` with the first 500 characters of
    /// `error` (`api.md` §2.5), whatever its state was.
    fn fail_handoff(&self, session_id: &str, error: &str) -> Result<()> {
        let error = query::handoff_error_text(error);
        self.update_one("failing a handoff", FAIL, [error, session_id])
    }

    /// The session's handoff state, platform and error (`api.md` §2.5);
    /// `None` for an unknown session.
    fn get_handoff_state(&self, session_id: &str) -> Result<Option<HandoffState>> {
        self.read(|conn| Ok(query::handoff_state(conn, session_id)?))
    }

    /// The sessions with a `pending` handoff, oldest start first (`api.md` §2.5).
    fn list_pending_handoffs(&self) -> Result<Vec<Session>> {
        self.read(|conn| Ok(query::pending_handoffs(conn)?))
    }

    /// The number of sessions `options` selects (`api.md` §2.4): by default
    /// (the original's defaults) every session that is not archived;
    /// [`SessionCountOptions::all`] for every row.
    fn session_count(&self, options: &SessionCountOptions) -> Result<i64> {
        self.read(|conn| Ok(hermes_state_query::sessions::session_count(conn, options)?))
    }

    /// `api.md` §2.4: the full id for an id or a unique id prefix: the
    /// argument when such a session exists, else the only session whose id
    /// starts with it (ASCII case-insensitive, `%` `_` `\` literal); `None`
    /// when none or several match, and for an empty prefix.
    fn resolve_session_id(&self, id_or_prefix: &str) -> Result<Option<String>> {
        self.read(|conn| Ok(lookups::resolve_session_id(conn, id_or_prefix)?))
    }

    /// Replaces the session's system prompt snapshot (`api.md` §2.5).
    fn update_system_prompt(&self, session_id: &str, system_prompt: &str) -> Result<()> {
        self.update_one(
            "updating the system prompt",
            SET_SYSTEM_PROMPT,
            rusqlite::params![system_prompt, session_id],
        )
    }

    /// Sets the session's model unconditionally; `None` clears it (`api.md` §2.5).
    fn update_session_model(&self, session_id: &str, model: Option<&str>) -> Result<()> {
        self.update_one(
            "updating the session model",
            SET_MODEL,
            rusqlite::params![model, session_id],
        )
    }

    /// Stores `model_config_json` as given (no re-encoding; `None` clears it)
    /// and, when `model` is `Some`, the model (`api.md` §2.5).
    fn update_session_meta(
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
    fn update_session_billing_route(
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
    fn update_session_cwd(
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

    /// Sets the gateway's `expiry_finalized` flag (1 or 0) (`api.md` §2.5);
    /// an empty id is a no-op.
    fn set_expiry_finalized(&self, session_id: &str, finalized: bool) -> Result<()> {
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
    fn set_session_archived(&self, session_id: &str, archived: bool) -> Result<bool> {
        self.set_lineage_flag("archiving a session", "archived", session_id, archived)
    }

    /// Pins or unpins the session's whole compression lineage, as
    /// [`SessionDb::set_session_archived`] does for `archived` (`api.md` §2.5).
    fn set_session_pinned(&self, session_id: &str, pinned: bool) -> Result<bool> {
        self.set_lineage_flag("pinning a session", "pinned", session_id, pinned)
    }

    /// Ends the session with `reason` ([`SESSION_RESET`](crate::session_updates::SESSION_RESET) in the original's
    /// default) when it is live or was ended by `agent_close` /
    /// `ws_orphan_reap` (ends a reset may supersede) (`api.md` §2.5). Returns
    /// whether a row changed.
    ///
    /// Never fails: any error (a read-only handle included) gives `false`, as
    /// the original.
    fn promote_to_session_reset(&self, session_id: &str, reason: &str) -> bool {
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
    fn finalize_orphaned_compression_sessions(&self) -> Result<usize> {
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

    /// Records that compression of the session failed and must not be retried
    /// before `cooldown_until` (Unix seconds), with the error (`api.md`
    /// §2.5). An empty id is a no-op.
    fn record_compression_failure_cooldown(
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
    fn get_compression_failure_cooldown(
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
    fn clear_compression_failure_cooldown(&self, session_id: &str) -> Result<()> {
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
    fn get_compression_fallback_streak(&self, session_id: &str) -> Result<i64> {
        self.read(|conn| Ok(query::compression_fallback_streak(conn, session_id)?))
    }

    /// Stores the compression fallback streak, clamped to ≥ 0 (`api.md` §2.5).
    fn set_compression_fallback_streak(&self, session_id: &str, streak: i64) -> Result<()> {
        self.update_one(
            "setting a compression fallback streak",
            SET_FALLBACK_STREAK,
            rusqlite::params![streak.max(0), session_id],
        )
    }

    /// How many compactions in a row were ineffective (`api.md` §2.5); 0 for
    /// an unknown session.
    fn get_compression_ineffective_count(&self, session_id: &str) -> Result<i64> {
        self.read(|conn| Ok(query::compression_ineffective_count(conn, session_id)?))
    }

    /// Stores the ineffective-compaction count, clamped to ≥ 0 (`api.md` §2.5).
    fn set_compression_ineffective_count(&self, session_id: &str, count: i64) -> Result<()> {
        self.update_one(
            "setting a compression ineffective count",
            SET_INEFFECTIVE_COUNT,
            rusqlite::params![count.max(0), session_id],
        )
    }

    /// Creates a session, or fills the still-NULL fields of an existing one
    /// (`api.md` §2.1); returns its id.
    ///
    /// A second create never changes `source`, `user_id`, `started_at` or any
    /// non-NULL value. With a parent, the child inherits the parent's
    /// workspace fields where its own are NULL, and, when the parent was ended
    /// by compression, its gateway fields too.
    ///
    /// Errors: [`Error::SessionNotFound`] when the parent does not exist (nothing written).
    fn create_session(&self, session: &NewSession) -> Result<String> {
        self.write("creating a session", |conn| {
            upsert_session(conn, session, self.now())
        })?;
        Ok(session.id.clone())
    }

    /// Creates the session if it is missing (`source` as given), filling a
    /// NULL `model`; returns the id.
    fn ensure_session(
        &self,
        session_id: &str,
        source: &str,
        model: Option<&str>,
    ) -> Result<String> {
        let mut session = NewSession::new(session_id, source);
        session.model = model.map(str::to_owned);
        self.create_session(&session)
    }

    /// Ends a live session. The first end wins: an ended session keeps its
    /// reason and time. Unknown ids are ignored.
    fn end_session(&self, session_id: &str, end_reason: &str) -> Result<()> {
        self.write("ending a session", |conn| {
            conn.execute(
                "UPDATE sessions SET ended_at = ?1, end_reason = ?2 WHERE id = ?3 AND ended_at IS NULL",
                rusqlite::params![self.now(), end_reason, session_id],
            )
            .context("ending a session")?;
            Ok(())
        })
    }

    /// Makes an ended session live again (clears `ended_at` and `end_reason`).
    /// Unknown ids are ignored.
    fn reopen_session(&self, session_id: &str) -> Result<()> {
        self.write("reopening a session", |conn| {
            conn.execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?1",
                [session_id],
            )
            .context("reopening a session")?;
            Ok(())
        })
    }

    /// One session, or `None` for an unknown id.
    fn get_session(&self, session_id: &str) -> Result<Option<Session>> {
        self.read(|conn| Ok(hermes_state_query::get_session(conn, session_id)?))
    }
}

/// `create_session`'s statements inside a caller's transaction: the row
/// inserted, or its NULL columns filled (`api.md` §2.1), and the workspace
/// and gateway fields inherited from the parent. The accounting writes call
/// it too, so that creating a missing session and counting its tokens are
/// one transaction.
pub(crate) fn upsert_session(conn: &Connection, session: &NewSession, now: f64) -> Result<()> {
    let model_config = stored::encode_json_field(session.model_config.as_ref());
    let parent = session
        .parent_session_id
        .as_deref()
        .filter(|p| !p.is_empty());
    conn.prepare_cached(UPSERT_SESSION)
        .and_then(|mut stmt| {
            stmt.execute(named_params! {
                ":id": session.id, ":source": session.source, ":user_id": session.user_id,
                ":session_key": session.session_key, ":chat_id": session.chat_id,
                ":chat_type": session.chat_type, ":thread_id": session.thread_id,
                ":model": session.model, ":model_config": model_config,
                ":system_prompt": session.system_prompt, ":parent": session.parent_session_id,
                ":cwd": session.cwd, ":profile_name": session.profile_name,
                ":git_repo_root": session.git_repo_root, ":now": now,
            })
        })
        // The only foreign key a session row has is its parent.
        .map_err(|e| {
            let parent = session.parent_session_id.as_deref().unwrap_or_default();
            foreign_key_to_not_found(e, parent, "creating a session")
        })?;
    if let Some(parent) = parent {
        conn.execute(INHERIT_WORKSPACE, [&session.id, parent])
            .context("inheriting from the parent")?;
        conn.execute(INHERIT_GATEWAY, [&session.id, parent])
            .context("inheriting from the parent")?;
    }
    Ok(())
}
