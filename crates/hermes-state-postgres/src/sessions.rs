//! Session writes and reads (`api.md` §2, §11.6).

use hermes_state_types::{NewSession, Session, stored};
use postgres::error::SqlState;

use crate::error::{Context, PgError, Result};
use crate::rows::{SESSION_COLUMNS, select_list, session_from_row};
use crate::{PgStore, WriteScope};

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

impl PgStore {
    /// Creates a session or fills the NULL fields of an existing one
    /// (`api.md` §2.1), with the SQLite backend's inheritance rules.
    /// Errors: [`PgError::SessionNotFound`] for a missing parent.
    pub fn create_session(&self, session: &NewSession) -> Result<String> {
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
    pub fn end_session(&self, session_id: &str, end_reason: &str) -> Result<()> {
        let now = self.now();
        self.write_in("ending a session", &WriteScope::session(session_id), |tx| {
            tx.execute(
                "UPDATE sessions SET ended_at = $1, end_reason = $2 WHERE id = $3 AND ended_at IS NULL",
                &[&now, &end_reason, &session_id],
            )
            .context("ending a session")?;
            Ok(())
        })
    }

    /// Makes an ended session live again (`api.md` §2.3).
    pub fn reopen_session(&self, session_id: &str) -> Result<()> {
        self.write_in(
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
        )
    }

    /// One session, or `None` for an unknown id.
    pub fn get_session(&self, session_id: &str) -> Result<Option<Session>> {
        let sql = format!(
            "SELECT {} FROM sessions s WHERE s.id = $1",
            select_list("s", &SESSION_COLUMNS)
        );
        self.read(|tx| {
            Ok(tx
                .query_opt(&sql, &[&session_id])
                .context("reading a session")?
                .map(|row| session_from_row(&row)))
        })
    }

    /// Deletes a session with its messages (`api.md` §11.6): delegate
    /// children (marked `_delegate_from` in their `model_config`) go with
    /// it, recursively; other children are orphaned. `false` for an unknown id.
    pub fn delete_session(&self, session_id: &str) -> Result<bool> {
        self.delete_session_with(session_id, None)
    }

    /// Creates the session if it is missing (`source` as given), filling a
    /// NULL `model` (`api.md` §2.1); returns the id.
    pub fn ensure_session(
        &self,
        session_id: &str,
        source: &str,
        model: Option<&str>,
    ) -> Result<String> {
        let mut session = NewSession::new(session_id, source);
        session.model = model.map(str::to_owned);
        self.create_session(&session)
    }
}

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
