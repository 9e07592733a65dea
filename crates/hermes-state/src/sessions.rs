//! Session writes: create, end, reopen, token and cost accounting.

use hermes_state_types::{AuxiliaryUsage, NewSession, Session, TokenUpdate, stored};
use rusqlite::{Connection, OptionalExtension, named_params};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};

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

impl SessionDb {
    /// Creates a session, or fills the still-NULL fields of an existing one
    /// (`api.md` §2.1); returns its id.
    ///
    /// A second create never changes `source`, `user_id`, `started_at` or any
    /// non-NULL value. With a parent, the child inherits the parent's
    /// workspace fields where its own are NULL, and, when the parent was ended
    /// by compression, its gateway fields too.
    ///
    /// Errors: [`Error::SessionNotFound`] when the parent does not exist (nothing written).
    pub fn create_session(&self, session: &NewSession) -> Result<String> {
        let model_config = stored::encode_json_field(session.model_config.as_ref());
        self.write("creating a session", |conn| {
            let parent = session.parent_session_id.as_deref().filter(|p| !p.is_empty());
            conn.prepare_cached(UPSERT_SESSION)
                .and_then(|mut stmt| {
                    stmt.execute(named_params! {
                        ":id": session.id, ":source": session.source, ":user_id": session.user_id,
                        ":session_key": session.session_key, ":chat_id": session.chat_id,
                        ":chat_type": session.chat_type, ":thread_id": session.thread_id,
                        ":model": session.model, ":model_config": model_config,
                        ":system_prompt": session.system_prompt, ":parent": session.parent_session_id,
                        ":cwd": session.cwd, ":profile_name": session.profile_name,
                        ":git_repo_root": session.git_repo_root, ":now": self.now(),
                    })
                })
                // The only foreign key a session row has is its parent.
                .map_err(|e| {
                    let parent = session.parent_session_id.as_deref().unwrap_or_default();
                    foreign_key_to_not_found(e, parent, "creating a session")
                })?;
            if let Some(parent) = parent {
                conn.execute(INHERIT_WORKSPACE, [&session.id, parent]).context("inheriting from the parent")?;
                conn.execute(INHERIT_GATEWAY, [&session.id, parent]).context("inheriting from the parent")?;
            }
            Ok(())
        })?;
        Ok(session.id.clone())
    }

    /// Creates the session if it is missing (`source` as given), filling a
    /// NULL `model`; returns the id.
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

    /// Ends a live session. The first end wins: an ended session keeps its
    /// reason and time. Unknown ids are ignored.
    pub fn end_session(&self, session_id: &str, end_reason: &str) -> Result<()> {
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
    pub fn reopen_session(&self, session_id: &str) -> Result<()> {
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
    pub fn get_session(&self, session_id: &str) -> Result<Option<Session>> {
        self.read(|conn| Ok(hermes_state_query::get_session(conn, session_id)?))
    }

    /// Adds (or, with `absolute`, sets) token and cost counters (`api.md` §3.1),
    /// creating the session with source `unknown` if it is missing.
    /// Incremental updates with usage also add to the `session_model_usage`
    /// row of the session's model and billing route (`task = ''`).
    pub fn update_token_counts(&self, session_id: &str, update: &TokenUpdate) -> Result<()> {
        self.ensure_session(session_id, "unknown", update.model.as_deref())?;
        let has_usage = update.has_usage();
        self.write("updating token counts", |conn| {
            set_first_accounted_route(conn, session_id, update, has_usage)?;
            let route = |value: &Option<String>| if has_usage { value.clone() } else { None };
            let sql = if update.absolute { ABSOLUTE_COUNTS } else { INCREMENTAL_COUNTS };
            conn.prepare_cached(sql)
                .and_then(|mut stmt| {
                    stmt.execute(named_params! {
                        ":id": session_id,
                        ":input": update.input_tokens, ":output": update.output_tokens,
                        ":cache_read": update.cache_read_tokens, ":cache_write": update.cache_write_tokens,
                        ":reasoning": update.reasoning_tokens,
                        ":estimated": update.estimated_cost_usd, ":actual": update.actual_cost_usd,
                        ":cost_status": update.cost_status, ":cost_source": update.cost_source,
                        ":pricing_version": update.pricing_version,
                        ":provider": route(&update.billing_provider), ":base_url": route(&update.billing_base_url),
                        ":mode": route(&update.billing_mode), ":model": route(&update.model),
                        ":api_calls": update.api_call_count,
                    })
                })
                .context("updating token counts")?;
            let adds_usage = !update.absolute
                && (update.input_tokens != 0
                    || update.output_tokens != 0
                    || update.cache_read_tokens != 0
                    || update.cache_write_tokens != 0
                    || update.reasoning_tokens != 0
                    || update.api_call_count != 0
                    || update.estimated_cost_usd.is_some_and(|c| c != 0.0));
            if adds_usage {
                let session_route = session_route(conn, session_id)?;
                let delta = UsageDelta {
                    model: update.model.clone().or(session_route.model).unwrap_or_else(|| "unknown".to_owned()),
                    provider: update.billing_provider.clone().or(session_route.provider).unwrap_or_default(),
                    base_url: update.billing_base_url.clone().or(session_route.base_url).unwrap_or_default(),
                    mode: update.billing_mode.clone().or(session_route.mode).unwrap_or_default(),
                    task: "",
                    api_calls: update.api_call_count,
                    tokens: [
                        update.input_tokens,
                        update.output_tokens,
                        update.cache_read_tokens,
                        update.cache_write_tokens,
                        update.reasoning_tokens,
                    ],
                    estimated: update.estimated_cost_usd.unwrap_or(0.0),
                    actual: update.actual_cost_usd.unwrap_or(0.0),
                    cost_status: update.cost_status.as_deref(),
                    cost_source: update.cost_source.as_deref(),
                };
                add_usage(conn, session_id, &delta, self.now())?;
            }
            Ok(())
        })
    }

    /// Records the usage of an auxiliary task (vision, compression, …) in
    /// `session_model_usage` without touching the session's counters
    /// (`api.md` §3.2). Empty ids or tasks are ignored.
    pub fn record_auxiliary_usage(&self, session_id: &str, usage: &AuxiliaryUsage) -> Result<()> {
        if session_id.is_empty() || usage.task.is_empty() {
            return Ok(());
        }
        self.ensure_session(session_id, "unknown", None)?;
        self.write("recording auxiliary usage", |conn| {
            let delta = UsageDelta {
                model: usage.model.clone().unwrap_or_else(|| "unknown".to_owned()),
                provider: usage.billing_provider.clone().unwrap_or_default(),
                base_url: usage.billing_base_url.clone().unwrap_or_default(),
                mode: String::new(),
                task: &usage.task,
                api_calls: 1,
                tokens: [
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                    usage.cache_write_tokens,
                    usage.reasoning_tokens,
                ],
                estimated: usage.estimated_cost_usd.unwrap_or(0.0),
                actual: 0.0,
                cost_status: None,
                cost_source: None,
            };
            add_usage(conn, session_id, &delta, self.now())
        })
    }
}

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

const INCREMENTAL_COUNTS: &str = "UPDATE sessions SET
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

const ABSOLUTE_COUNTS: &str = "UPDATE sessions SET
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

/// The session's model and billing route.
#[derive(Default)]
struct Route {
    model: Option<String>,
    provider: Option<String>,
    base_url: Option<String>,
    mode: Option<String>,
}

fn session_route(conn: &Connection, session_id: &str) -> Result<Route> {
    let route = conn
        .query_row(
            "SELECT model, billing_provider, billing_base_url, billing_mode FROM sessions WHERE id = ?1",
            [session_id],
            |row| Ok(Route { model: row.get(0)?, provider: row.get(1)?, base_url: row.get(2)?, mode: row.get(3)? }),
        )
        .optional()
        .context("reading the billing route")?;
    Ok(route.unwrap_or_default())
}

/// The first call that carries usage, a model and a provider fixes the
/// session's route when it differs from what the session was created with.
fn set_first_accounted_route(
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

struct UsageDelta<'a> {
    model: String,
    provider: String,
    base_url: String,
    mode: String,
    task: &'a str,
    api_calls: i64,
    tokens: [i64; 5],
    estimated: f64,
    actual: f64,
    cost_status: Option<&'a str>,
    cost_source: Option<&'a str>,
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

fn add_usage(conn: &Connection, session_id: &str, d: &UsageDelta<'_>, now: f64) -> Result<()> {
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
