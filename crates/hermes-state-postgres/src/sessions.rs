//! Session writes and reads (`api.md` §2, §11.6).

use hermes_state_types::{NewSession, Session, stored};
use postgres::error::SqlState;

use crate::error::{Context, PgError};
use crate::handoff::CLAIM;
use crate::handoff::COMPLETE;
use crate::handoff::FAIL;
use crate::handoff::REQUEST;
use crate::lookups::session_exists;
use crate::rich_listing::rich_conditions;
use crate::rows::{SESSION_COLUMNS, select_list, session_from_row};
use crate::session_updates::CLEAR_COOLDOWN;
use crate::session_updates::LineageFlag;
use crate::session_updates::SET_BILLING_ROUTE;
use crate::session_updates::SET_COOLDOWN;
use crate::session_updates::SET_CWD;
use crate::session_updates::SET_EXPIRY_FINALIZED;
use crate::session_updates::SET_FALLBACK_STREAK;
use crate::session_updates::SET_INEFFECTIVE_COUNT;
use crate::session_updates::SET_META;
use crate::session_updates::SET_MODEL;
use crate::session_updates::SET_SYSTEM_PROMPT;
use crate::sweeps::FINALIZE_ORPHANED_COMPRESSIONS;
use crate::sweeps::PROMOTE_TO_RESET;
use crate::{PgStore, WriteScope};
use hermes_state_core::Result as CoreResult;
use hermes_state_core::lookups::escape_like;
use hermes_state_core::lookups::is_listable;
use hermes_state_core::rich_listing::RichListOptions;
use hermes_state_core::session_updates::CompressionCooldown;
use hermes_state_core::session_updates::HandoffState;
use hermes_state_core::session_updates::ORPHANED_COMPRESSION_AGE;
use hermes_state_core::session_updates::active_cooldown;
use hermes_state_core::session_updates::handoff_error_text;
use hermes_state_core::session_updates::trimmed;
use hermes_state_core::sessions::SessionCountOptions;
use hermes_state_core::store::Sessions;

const UPSERT_SESSION: &str = "INSERT INTO sessions (id, source, user_id, session_key, chat_id, chat_type, thread_id, model, model_config, system_prompt, parent_session_id, cwd, profile_name, git_repo_root, started_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
ON CONFLICT (id) DO UPDATE SET
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

const INHERIT_WORKSPACE: &str = "UPDATE sessions c SET
    cwd = COALESCE(c.cwd, p.cwd),
    git_repo_root = COALESCE(c.git_repo_root, p.git_repo_root),
    git_branch = COALESCE(c.git_branch, p.git_branch),
    profile_name = COALESCE(c.profile_name, p.profile_name)
FROM sessions p WHERE c.id = $1 AND p.id = $2";

const INHERIT_GATEWAY: &str = "UPDATE sessions c SET
    user_id = COALESCE(c.user_id, p.user_id),
    session_key = COALESCE(c.session_key, p.session_key),
    chat_id = COALESCE(c.chat_id, p.chat_id),
    chat_type = COALESCE(c.chat_type, p.chat_type),
    thread_id = COALESCE(c.thread_id, p.thread_id),
    display_name = COALESCE(c.display_name, p.display_name),
    origin_json = COALESCE(c.origin_json, p.origin_json)
FROM sessions p WHERE c.id = $1 AND p.id = $2 AND p.end_reason = 'compression'";

/// A foreign-key refusal as the missing session it names; any other error as is.
pub(crate) fn foreign_key_to_not_found(
    error: postgres::Error,
    session_id: &str,
    context: &str,
) -> PgError {
    if error.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) {
        PgError::SessionNotFound(session_id.to_owned())
    } else {
        PgError::postgres(context, error)
    }
}

impl Sessions for PgStore {
    /// `api.md` §2.5, with the roots as a slice: see the generic inherent
    /// method of the same name.
    fn backfill_repo_roots(&self, roots: &[(&str, &str)]) -> CoreResult<()> {
        Ok(PgStore::backfill_repo_roots(self, roots.iter().copied())?)
    }

    /// Requests a handoff of the session to `platform` (`api.md` §2.5);
    /// returns whether it did: `false` for an unknown session or a handoff
    /// already `pending` or `running`.
    fn request_handoff(&self, session_id: &str, platform: &str) -> CoreResult<bool> {
        Ok(self.write_in(
            "requesting a handoff",
            &WriteScope::session(session_id),
            |tx| {
                Ok(tx
                    .execute(REQUEST, &[&platform, &session_id])
                    .context("requesting a handoff")?
                    > 0)
            },
        )?)
    }

    /// Claims a pending handoff (`pending` → `running`) (`api.md` §2.5);
    /// returns whether this caller got it.
    fn claim_handoff(&self, session_id: &str) -> CoreResult<bool> {
        Ok(self.write_in(
            "claiming a handoff",
            &WriteScope::session(session_id),
            |tx| {
                Ok(tx
                    .execute(CLAIM, &[&session_id])
                    .context("claiming a handoff")?
                    > 0)
            },
        )?)
    }

    /// Marks the session's handoff `completed` and clears its error
    /// (`api.md` §2.5), whatever its state was.
    fn complete_handoff(&self, session_id: &str) -> CoreResult<()> {
        Ok(self.write_in(
            "completing a handoff",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(COMPLETE, &[&session_id])
                    .context("completing a handoff")?;
                Ok(())
            },
        )?)
    }

    /// Marks the session's handoff `failed` with the first 500 characters
    /// of `error` (`api.md` §2.5), whatever its state was.
    fn fail_handoff(&self, session_id: &str, error: &str) -> CoreResult<()> {
        let error = handoff_error_text(error);
        Ok(self.write_in(
            "failing a handoff",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(FAIL, &[&error, &session_id])
                    .context("failing a handoff")?;
                Ok(())
            },
        )?)
    }

    /// The session's handoff state, platform and error (`api.md` §2.5);
    /// `None` for an unknown session.
    fn get_handoff_state(&self, session_id: &str) -> CoreResult<Option<HandoffState>> {
        Ok(self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT handoff_state, handoff_platform, handoff_error FROM sessions \
                     WHERE id = $1",
                    &[&session_id],
                )
                .context("reading a handoff state")?
                .map(|row| HandoffState {
                    state: row.get(0),
                    platform: row.get(1),
                    error: row.get(2),
                }))
        })?)
    }

    /// The sessions with a `pending` handoff, oldest start first (`api.md`
    /// §2.5; equal starts by id).
    fn list_pending_handoffs(&self) -> CoreResult<Vec<Session>> {
        let sql = format!(
            "SELECT {} FROM sessions s WHERE s.handoff_state = 'pending' \
             ORDER BY s.started_at, s.id",
            select_list("s", &SESSION_COLUMNS)
        );
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &[])
                .context("listing pending handoffs")?
                .iter()
                .map(session_from_row)
                .collect())
        })?)
    }

    /// `api.md` §2.4: the full id for an id or a unique id prefix: the
    /// argument when such a session exists, else the only session whose id
    /// starts with it (ASCII case-insensitive, `%` `_` `\` literal); `None`
    /// when none or several match, and for an empty prefix.
    fn resolve_session_id(&self, id_or_prefix: &str) -> CoreResult<Option<String>> {
        let pattern = format!("{}%", escape_like(id_or_prefix));
        Ok(self.read(|tx| {
            if session_exists(tx, id_or_prefix)? {
                return Ok(Some(id_or_prefix.to_owned()));
            }
            if id_or_prefix.is_empty() {
                return Ok(None);
            }
            // ILIKE folds case in every script, SQLite's LIKE in ASCII
            // only: the prefix is checked again byte-wise.
            let ids: Vec<String> = tx
                .query(
                    "SELECT id FROM sessions WHERE id ILIKE $1 ESCAPE '\\' \
                     ORDER BY started_at DESC",
                    &[&pattern],
                )
                .context("resolving a session id prefix")?
                .iter()
                .map(|row| row.get::<_, String>(0))
                .filter(|id| {
                    id.len() >= id_or_prefix.len()
                        && id.as_bytes()[..id_or_prefix.len()]
                            .eq_ignore_ascii_case(id_or_prefix.as_bytes())
                })
                .take(2)
                .collect();
            Ok(match ids.as_slice() {
                [id] => Some(id.clone()),
                _ => None,
            })
        })?)
    }

    /// `api.md` §2.4: the number of sessions `options` selects (by default
    /// every session that is not archived), with the picker listing's
    /// filters; listable sessions are told apart in Rust, as the listing
    /// does.
    fn session_count(&self, options: &SessionCountOptions) -> CoreResult<i64> {
        const WHAT: &str = "counting sessions";
        let listing = RichListOptions {
            source: options.source.clone(),
            exclude_sources: options.exclude_sources.clone(),
            cwd_prefix: options.cwd_prefix.clone(),
            min_message_count: options.min_message_count,
            include_archived: options.include_archived,
            archived_only: options.archived_only,
            ..RichListOptions::default()
        };
        let conditions = rich_conditions(&listing);
        Ok(self.read(|tx| {
            if !options.exclude_children {
                let sql = format!(
                    "SELECT count(*) FROM sessions s{}",
                    conditions.where_clause()
                );
                return Ok(tx
                    .query_one(&sql, &conditions.params())
                    .context(WHAT)?
                    .get(0));
            }
            let sql = format!(
                "SELECT s.model_config, s.parent_session_id IS NOT NULL,
                        EXISTS (SELECT 1 FROM sessions ps WHERE ps.id = s.parent_session_id
                                AND ps.end_reason = 'branched' AND s.started_at >= ps.ended_at)
                 FROM sessions s{}",
                conditions.where_clause()
            );
            let listable = tx
                .query(&sql, &conditions.params())
                .context(WHAT)?
                .iter()
                .filter(|row| is_listable(row.get(0), row.get(1), row.get(2)))
                .count();
            Ok(i64::try_from(listable).unwrap_or(i64::MAX))
        })?)
    }

    /// Replaces the session's system prompt snapshot (`api.md` §2.5).
    fn update_system_prompt(&self, session_id: &str, system_prompt: &str) -> CoreResult<()> {
        Ok(self.update_one(
            "updating the system prompt",
            session_id,
            SET_SYSTEM_PROMPT,
            &[&system_prompt, &session_id],
        )?)
    }

    /// Sets the session's model unconditionally; `None` clears it (`api.md` §2.5).
    fn update_session_model(&self, session_id: &str, model: Option<&str>) -> CoreResult<()> {
        Ok(self.update_one(
            "updating the session model",
            session_id,
            SET_MODEL,
            &[&model, &session_id],
        )?)
    }

    /// Stores `model_config_json` as given (`None` clears it) and, when
    /// `model` is `Some`, the model (`api.md` §2.5).
    fn update_session_meta(
        &self,
        session_id: &str,
        model_config_json: Option<&str>,
        model: Option<&str>,
    ) -> CoreResult<()> {
        Ok(self.update_one(
            "updating the session meta",
            session_id,
            SET_META,
            &[&model_config_json, &model, &session_id],
        )?)
    }

    /// Sets the billing provider and base URL (`None` clears them), the
    /// billing mode when `Some`, and clears the system prompt snapshot
    /// (`api.md` §2.5).
    fn update_session_billing_route(
        &self,
        session_id: &str,
        provider: Option<&str>,
        base_url: Option<&str>,
        billing_mode: Option<&str>,
    ) -> CoreResult<()> {
        Ok(self.update_one(
            "updating the billing route",
            session_id,
            SET_BILLING_ROUTE,
            &[&provider, &base_url, &billing_mode, &session_id],
        )?)
    }

    /// Sets the working directory, and the git branch and repository root
    /// when non-empty after trimming (the trimmed text is stored) (`api.md`
    /// §2.5). An empty id or `cwd` makes it a no-op.
    fn update_session_cwd(
        &self,
        session_id: &str,
        cwd: &str,
        git_branch: Option<&str>,
        git_repo_root: Option<&str>,
    ) -> CoreResult<()> {
        if session_id.is_empty() || cwd.is_empty() {
            return Ok(());
        }
        let (branch, root) = (trimmed(git_branch), trimmed(git_repo_root));
        Ok(self.update_one(
            "updating the session cwd",
            session_id,
            SET_CWD,
            &[&cwd, &branch, &root, &session_id],
        )?)
    }

    /// Sets the gateway's `expiry_finalized` flag (1 or 0) (`api.md` §2.5);
    /// an empty id is a no-op.
    fn set_expiry_finalized(&self, session_id: &str, finalized: bool) -> CoreResult<()> {
        if session_id.is_empty() {
            return Ok(());
        }
        Ok(self.update_one(
            "setting expiry_finalized",
            session_id,
            SET_EXPIRY_FINALIZED,
            &[&i64::from(finalized), &session_id],
        )?)
    }

    /// Archives or restores the session's whole compression lineage
    /// (`api.md` §2.5). Returns whether any row matched (an already archived
    /// lineage counts); `false` for an unknown id.
    fn set_session_archived(&self, session_id: &str, archived: bool) -> CoreResult<bool> {
        Ok(self.set_lineage_flag(
            "archiving a session",
            LineageFlag::Archived,
            session_id,
            archived,
        )?)
    }

    /// Pins or unpins the session's whole compression lineage, as
    /// [`PgStore::set_session_archived`] does for `archived` (`api.md` §2.5).
    fn set_session_pinned(&self, session_id: &str, pinned: bool) -> CoreResult<bool> {
        Ok(self.set_lineage_flag("pinning a session", LineageFlag::Pinned, session_id, pinned)?)
    }

    /// Records that compression of the session failed and must not be
    /// retried before `cooldown_until` (Unix seconds), with the error
    /// (`api.md` §2.5). An empty id is a no-op.
    fn record_compression_failure_cooldown(
        &self,
        session_id: &str,
        cooldown_until: f64,
        error: Option<&str>,
    ) -> CoreResult<()> {
        if session_id.is_empty() {
            return Ok(());
        }
        Ok(self.update_one(
            "recording a compression cooldown",
            session_id,
            SET_COOLDOWN,
            &[&cooldown_until, &error, &session_id],
        )?)
    }

    /// The session's compression-failure cooldown while it runs (`api.md`
    /// §2.5); `None` when unset, expired (by the handle's clock), for an
    /// unknown session or an empty id.
    fn get_compression_failure_cooldown(
        &self,
        session_id: &str,
    ) -> CoreResult<Option<CompressionCooldown>> {
        if session_id.is_empty() {
            return Ok(None);
        }
        let now = self.now();
        Ok(self.read(|tx| {
            let row = tx
                .query_opt(
                    "SELECT compression_failure_cooldown_until, compression_failure_error \
                     FROM sessions WHERE id = $1",
                    &[&session_id],
                )
                .context("reading a compression cooldown")?;
            Ok(row.and_then(|row| active_cooldown(row.get(0), row.get(1), now)))
        })?)
    }

    /// Clears the session's compression-failure cooldown and its error
    /// (`api.md` §2.5). An empty id is a no-op.
    fn clear_compression_failure_cooldown(&self, session_id: &str) -> CoreResult<()> {
        if session_id.is_empty() {
            return Ok(());
        }
        Ok(self.update_one(
            "clearing a compression cooldown",
            session_id,
            CLEAR_COOLDOWN,
            &[&session_id],
        )?)
    }

    /// How many compressions in a row fell back (`api.md` §2.5); 0 for an
    /// unknown session.
    fn get_compression_fallback_streak(&self, session_id: &str) -> CoreResult<i64> {
        Ok(self.counter(
            "SELECT compression_fallback_streak FROM sessions WHERE id = $1",
            session_id,
            "reading a compression fallback streak",
        )?)
    }

    /// Stores the compression fallback streak, clamped to ≥ 0 (`api.md` §2.5).
    fn set_compression_fallback_streak(&self, session_id: &str, streak: i64) -> CoreResult<()> {
        Ok(self.update_one(
            "setting a compression fallback streak",
            session_id,
            SET_FALLBACK_STREAK,
            &[&streak.max(0), &session_id],
        )?)
    }

    /// How many compactions in a row were ineffective (`api.md` §2.5); 0 for
    /// an unknown session.
    fn get_compression_ineffective_count(&self, session_id: &str) -> CoreResult<i64> {
        Ok(self.counter(
            "SELECT compression_ineffective_count FROM sessions WHERE id = $1",
            session_id,
            "reading a compression ineffective count",
        )?)
    }

    /// Stores the ineffective-compaction count, clamped to ≥ 0 (`api.md` §2.5).
    fn set_compression_ineffective_count(&self, session_id: &str, count: i64) -> CoreResult<()> {
        Ok(self.update_one(
            "setting a compression ineffective count",
            session_id,
            SET_INEFFECTIVE_COUNT,
            &[&count.max(0), &session_id],
        )?)
    }

    /// Creates a session or fills the NULL fields of an existing one
    /// (`api.md` §2.1), with the SQLite backend's inheritance rules.
    /// Errors: [`PgError::SessionNotFound`] for a missing parent.
    fn create_session(&self, session: &NewSession) -> CoreResult<String> {
        let model_config = stored::encode_json_field(session.model_config.as_ref());
        let now = self.now();
        let scope = WriteScope::sessions(
            std::iter::once(session.id.as_str()).chain(
                session
                    .parent_session_id
                    .as_deref()
                    .filter(|p| !p.is_empty()),
            ),
        );
        // The parent's key too: the child copies several of its fields.
        self.write_in("creating a session", &scope, |tx| {
            let parent = session
                .parent_session_id
                .as_deref()
                .filter(|p| !p.is_empty());
            tx.execute(
                UPSERT_SESSION,
                &[
                    &session.id,
                    &session.source,
                    &session.user_id,
                    &session.session_key,
                    &session.chat_id,
                    &session.chat_type,
                    &session.thread_id,
                    &session.model,
                    &model_config,
                    &session.system_prompt,
                    &session.parent_session_id,
                    &session.cwd,
                    &session.profile_name,
                    &session.git_repo_root,
                    &now,
                ],
            )
            .map_err(|e| {
                foreign_key_to_not_found(e, parent.unwrap_or_default(), "creating a session")
            })?;
            if let Some(parent) = parent {
                tx.execute(INHERIT_WORKSPACE, &[&session.id, &parent])
                    .context("inheriting from the parent")?;
                tx.execute(INHERIT_GATEWAY, &[&session.id, &parent])
                    .context("inheriting from the parent")?;
            }
            Ok(())
        })?;
        Ok(session.id.clone())
    }

    /// Ends a live session; the first end wins; unknown ids are ignored (`api.md` §2.2).
    fn end_session(&self, session_id: &str, end_reason: &str) -> CoreResult<()> {
        let now = self.now();
        Ok(self.write_in("ending a session", &WriteScope::session(session_id), |tx| {
            tx.execute(
                "UPDATE sessions SET ended_at = $1, end_reason = $2 WHERE id = $3 AND ended_at IS NULL",
                &[&now, &end_reason, &session_id],
            )
            .context("ending a session")?;
            Ok(())
        })?)
    }

    /// Makes an ended session live again (`api.md` §2.3).
    fn reopen_session(&self, session_id: &str) -> CoreResult<()> {
        Ok(self.write_in(
            "reopening a session",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(
                    "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = $1",
                    &[&session_id],
                )
                .context("reopening a session")?;
                Ok(())
            },
        )?)
    }

    /// One session, or `None` for an unknown id.
    fn get_session(&self, session_id: &str) -> CoreResult<Option<Session>> {
        let sql = format!(
            "SELECT {} FROM sessions s WHERE s.id = $1",
            select_list("s", &SESSION_COLUMNS)
        );
        Ok(self.read(|tx| {
            Ok(tx
                .query_opt(&sql, &[&session_id])
                .context("reading a session")?
                .map(|row| session_from_row(&row)))
        })?)
    }

    /// Creates the session if it is missing (`source` as given), filling a
    /// NULL `model` (`api.md` §2.1); returns the id.
    fn ensure_session(
        &self,
        session_id: &str,
        source: &str,
        model: Option<&str>,
    ) -> CoreResult<String> {
        let mut session = NewSession::new(session_id, source);
        session.model = model.map(str::to_owned);
        self.create_session(&session)
    }

    /// Ends the session with `reason` when it is live or was ended by
    /// `agent_close` / `ws_orphan_reap` (`api.md` §2.5); returns whether a
    /// row changed. Never fails: any error (a read-only handle included)
    /// gives `false`, as on SQLite.
    fn promote_to_session_reset(&self, session_id: &str, reason: &str) -> bool {
        let now = self.now();
        self.write("promoting to a session reset", |tx| {
            let changed = tx
                .execute(PROMOTE_TO_RESET, &[&now, &reason, &session_id])
                .context("promoting to a session reset")?;
            Ok(changed > 0)
        })
        .unwrap_or(false)
    }

    /// Ends (`orphaned_compression`, now) every compression continuation
    /// that made no API call, is still live more than 7 days after it
    /// started, has messages, and whose parent was ended by compression
    /// (`api.md` §2.5); returns how many.
    fn finalize_orphaned_compression_sessions(&self) -> CoreResult<usize> {
        let now = self.now();
        Ok(self.write("finalizing orphaned compressions", |tx| {
            let changed = tx
                .execute(
                    FINALIZE_ORPHANED_COMPRESSIONS,
                    &[&now, &(now - ORPHANED_COMPRESSION_AGE)],
                )
                .context("finalizing orphaned compressions")?;
            Ok(usize::try_from(changed).unwrap_or(usize::MAX))
        })?)
    }
}
