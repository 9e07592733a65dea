//! More of the `SessionDb` API on PostgreSQL (issue #13), with the SQLite
//! backend's rules: replacing a gateway routing scope, the compression
//! chain through a session, the working directories, finding sessions by
//! id, stamping the newest matching message, archiving idle sessions, and
//! the gateway's peers: recording one, finding a session by origin or by
//! peer, listing the gateway's sessions. SQLite's `LOWER` folds ASCII only,
//! so source comparisons fold with `translate` as the listings do.
//!
//! The branch marker of a compression chain lives in `model_config` JSON
//! text that may not be valid JSON; candidates come ordered from SQL and the
//! contract crate's [`has_marker`] filters them, as in `lookups`.

use std::collections::HashSet;

use hermes_state_core::compression_lineage::{LineageNode, LineageReads, compression_lineage};
use hermes_state_core::lookups::{PeerLookup, SessionActivity, has_marker};
use hermes_state_core::rich_listing::{self, RichSession, SessionCwd};
use hermes_state_types::{Content, Session, stored};
use postgres::Transaction;
use serde_json::Value;

use crate::content;
use crate::error::{Context, PgError, Result};
use crate::prune::fold_ascii;
use crate::rich_listing::{LAST_ACTIVE, activity_from_row};
use crate::rows::{SESSION_COLUMNS, select_list, session_from_row};
use crate::session_updates::archive_lineages;
use crate::{PgStore, WriteScope};

const DELETE_SCOPE_ROUTES: &str = "DELETE FROM gateway_routing WHERE scope = $1";

const UPSERT_ROUTE: &str = "INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (scope, session_key) DO UPDATE SET entry_json = excluded.entry_json, updated_at = excluded.updated_at";

const LINEAGE_NODE: &str =
    "SELECT id, parent_session_id, end_reason, model_config FROM sessions WHERE id = $1";

/// Children of `$1`, earliest start first (SQLite orders NULL first; ties,
/// which the original leaves to SQLite, by id); the branch marker is
/// filtered by the rule.
const LINEAGE_CHILDREN: &str = "SELECT id, parent_session_id, end_reason, model_config
FROM sessions WHERE parent_session_id = $1
ORDER BY started_at ASC NULLS FIRST, id ASC";

impl PgStore {
    /// Replaces the whole routing map of `scope` with `entries`, in one
    /// transaction: the scope's rows are deleted, then every pair whose key
    /// and entry are both non-empty is inserted, all with the same
    /// `updated_at`. Other scopes are untouched; when a key occurs twice,
    /// the last entry wins.
    pub fn replace_gateway_routing_entries<K, V>(
        &self,
        entries: impl IntoIterator<Item = (K, V)>,
        scope: &str,
    ) -> Result<()>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        const WHAT: &str = "replacing the gateway routing entries";
        let entries: Vec<(String, String)> = entries
            .into_iter()
            .filter(|(key, entry)| !key.as_ref().is_empty() && !entry.as_ref().is_empty())
            .map(|(key, entry)| (key.as_ref().to_owned(), entry.as_ref().to_owned()))
            .collect();
        let updated_at = self.now();
        self.write(WHAT, |tx| {
            tx.execute(DELETE_SCOPE_ROUTES, &[&scope]).context(WHAT)?;
            let insert = tx.prepare(UPSERT_ROUTE).context(WHAT)?;
            for (key, entry) in &entries {
                tx.execute(&insert, &[&scope, key, entry, &updated_at])
                    .context(WHAT)?;
            }
            Ok(())
        })
    }

    /// `api.md` §9.2: the compression chain through `session_id`, root
    /// first, by the contract crate's rule
    /// ([`hermes_state_core::compression_lineage`]); `[]` for an unknown id.
    pub fn get_compression_lineage(&self, session_id: &str) -> Result<Vec<String>> {
        self.read(|tx| compression_lineage(&mut PgLineage { tx }, session_id))
    }

    /// `api.md` §10.4: every working directory that is not NULL and not
    /// only spaces, with its number of sessions and its last activity (the
    /// newest end, else start), in byte order (SQLite's `GROUP BY` order); of
    /// archived sessions too with `include_archived`.
    pub fn distinct_session_cwds(&self, include_archived: bool) -> Result<Vec<SessionCwd>> {
        self.read(|tx| {
            Ok(tx
                .query(
                    "SELECT cwd, COUNT(*), MAX(COALESCE(ended_at, started_at, 0)) FROM sessions \
                     WHERE cwd IS NOT NULL AND btrim(cwd, ' ') <> '' AND ($1 OR archived = 0) \
                     GROUP BY cwd ORDER BY cwd COLLATE \"C\"",
                    &[&include_archived],
                )
                .context("listing working directories")?
                .iter()
                .map(|row| SessionCwd {
                    cwd: row.get(0),
                    sessions: row.get(1),
                    last_active: row.get::<_, Option<f64>>(2).unwrap_or_default(),
                })
                .collect())
        })
    }

    /// `api.md` §10.4: the picker's conversations whose id (or the id of a
    /// session of their compression chain) contains `query`, ranked exact
    /// id, then prefix, then substring, at most `limit` (the SQLite
    /// backend's rules: `hermes_state_core::rich_listing`'s
    /// `id_search_options` and `rank_by_id`).
    pub fn search_sessions_by_id(
        &self,
        query: &str,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<RichSession>> {
        let needle = rich_listing::needle(Some(query));
        if needle.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let candidates = self.list_sessions_rich(&rich_listing::id_search_options(
            &needle,
            limit,
            include_archived,
        ))?;
        Ok(rich_listing::rank_by_id(candidates, &needle, limit))
    }
}

const SET_LATEST_USER_API_CONTENT: &str = "UPDATE messages SET api_content = $3
WHERE id = (SELECT id FROM messages WHERE session_id = $1 AND role = 'user' AND active = 1
            ORDER BY id DESC LIMIT 1)
  AND content IS NOT DISTINCT FROM $2";

const LATEST_MATCHING: &str = "SELECT id FROM messages
WHERE session_id = $1 AND role = $2 AND content = $3 AND active = 1 ORDER BY id DESC LIMIT 1";

impl PgStore {
    /// Sets `api_content` on the session's newest live `user` message, only
    /// if its stored content is `content` (`api.md` §4.5; `None` matches a
    /// NULL content); returns the number of rows changed, 0 or 1.
    pub fn set_latest_user_api_content(
        &self,
        session_id: &str,
        content: Option<&Content>,
        api_content: &str,
    ) -> Result<usize> {
        const WHAT: &str = "setting a message's api_content";
        let encoded = match content {
            None => None,
            // Content PostgreSQL cannot hold (a NUL) is in no row here.
            Some(c) => {
                match content::to_pg(&content::as_written(stored::encode_content(c)), WHAT) {
                    Ok(Some(text)) => Some(text),
                    Ok(None) => None,
                    Err(_) => return Ok(0),
                }
            }
        };
        self.write_in(WHAT, &WriteScope::session(session_id), |tx| {
            let changed = tx
                .execute(
                    SET_LATEST_USER_API_CONTENT,
                    &[&session_id, &encoded, &api_content],
                )
                .context(WHAT)?;
            Ok(usize::try_from(changed).unwrap_or(usize::MAX))
        })
    }

    /// Stamps `display_kind` and `display_metadata` (JSON text when truthy,
    /// else NULL, replacing what was there) on the newest live message of
    /// the session with this role and this exact text content (`api.md`
    /// §4.5); returns whether a row matched. An empty session id, content or
    /// display kind changes nothing (`false`).
    pub fn set_latest_matching_message_display_kind(
        &self,
        session_id: &str,
        role: &str,
        content: &str,
        display_kind: &str,
        display_metadata: Option<&Value>,
    ) -> Result<bool> {
        const WHAT: &str = "setting a message's display kind";
        if session_id.is_empty() || content.is_empty() || display_kind.is_empty() {
            return Ok(false);
        }
        // Text PostgreSQL cannot hold (a NUL) is in no row here.
        let Ok(content) = content::text_to_pg(content, WHAT) else {
            return Ok(false);
        };
        let metadata = stored::encode_json_field(display_metadata);
        self.write_in(WHAT, &WriteScope::session(session_id), |tx| {
            let Some(row) = tx
                .query_opt(LATEST_MATCHING, &[&session_id, &role, &content])
                .context("finding the matching message")?
            else {
                return Ok(false);
            };
            let id: i64 = row.get(0);
            tx.execute(
                "UPDATE messages SET display_kind = $2, display_metadata = $3 WHERE id = $1",
                &[&id, &display_kind, &metadata],
            )
            .context(WHAT)?;
            Ok(true)
        })
    }

    /// `api.md` §10.4, §11.4: archives every session idle for `idle_days`
    /// with its compression lineage, in one write transaction; returns how
    /// many sessions were selected (the SQLite backend's rule: not archived,
    /// not ended by `compression`, unpinned with `exclude_pinned`; a negative
    /// or NaN `idle_days` archives nothing).
    pub fn archive_stale_sessions(&self, idle_days: f64, exclude_pinned: bool) -> Result<usize> {
        let Some(idle_before) = rich_listing::idle_cutoff(self.now(), idle_days) else {
            return Ok(0);
        };
        self.write("archiving stale sessions", |tx| {
            archive_stale(tx, idle_before, exclude_pinned)
        })
    }
}

/// Archives the sessions idle since before `idle_before` with their
/// compression lineages, inside the caller's transaction; returns how many
/// were selected. The one idle-session rule of `archive_stale_sessions`
/// and `maybe_auto_archive` (`hermes_state_core::rich_listing::stale_session_ids`).
pub(crate) fn archive_stale(
    tx: &mut Transaction<'_>,
    idle_before: f64,
    exclude_pinned: bool,
) -> Result<usize> {
    let sql = format!(
        "SELECT s.id FROM sessions s
         WHERE s.archived = 0 AND COALESCE(s.end_reason, '') <> 'compression'
           AND ($2 OR s.pinned = 0) AND {LAST_ACTIVE} < $1
         ORDER BY s.started_at, s.id"
    );
    let ids: Vec<String> = tx
        .query(&sql, &[&idle_before, &!exclude_pinned])
        .context("finding stale sessions")?
        .iter()
        .map(|row| row.get(0))
        .collect();
    archive_lineages(tx, &ids)
}

/// Live or ended only by a cleanup, with messages: a gateway session a peer
/// may resume (`api.md` §12.2).
const RECOVERABLE: &str =
    "(s.ended_at IS NULL OR s.end_reason IN ('agent_close', 'ws_orphan_reap'))
    AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)";

impl PgStore {
    /// Records who a gateway session talks to (`api.md` §2.5): sets
    /// `session_key`, `source`, `user_id`, `chat_id`, `chat_type` and
    /// `thread_id` from `peer` (a `None` overwrites with NULL), and
    /// `display_name` / `origin_json` only when given. A no-op unless both
    /// the id and the session key are non-empty. (`SessionDb` takes the same
    /// fields as one `GatewayPeer`, a type of the facade crate.)
    pub fn record_gateway_session_peer(
        &self,
        session_id: &str,
        peer: &PeerLookup,
        display_name: Option<&str>,
        origin_json: Option<&str>,
    ) -> Result<()> {
        let key = peer.session_key.as_deref().unwrap_or_default();
        if session_id.is_empty() || key.is_empty() {
            return Ok(());
        }
        self.write_in(
            "recording a gateway peer",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(
                    "UPDATE sessions SET session_key = $1, source = $2, user_id = $3, chat_id = $4,
                   chat_type = $5, thread_id = $6,
                   display_name = CASE WHEN $7 THEN $8 ELSE display_name END,
                   origin_json = CASE WHEN $9 THEN $10 ELSE origin_json END
                 WHERE id = $11",
                    &[
                        &key,
                        &peer.source,
                        &peer.user_id,
                        &peer.chat_id,
                        &peer.chat_type,
                        &peer.thread_id,
                        &display_name.is_some(),
                        &display_name,
                        &origin_json.is_some(),
                        &origin_json,
                        &session_id,
                    ],
                )
                .context("recording a gateway peer")?;
                Ok(())
            },
        )
    }

    /// `api.md` §12.2: the newest live gateway session of a chat (and
    /// thread, when given; a missing thread matches `""`), of `platform`
    /// (ASCII case-insensitive), preferring `user_id`'s; `None` when the
    /// chat's live sessions belong to several users and none is the given
    /// one, and for an empty platform or chat.
    pub fn find_session_by_origin(
        &self,
        platform: &str,
        chat_id: &str,
        thread_id: Option<&str>,
        user_id: Option<&str>,
    ) -> Result<Option<String>> {
        if platform.is_empty() || chat_id.is_empty() {
            return Ok(None);
        }
        let sql = format!(
            "SELECT id, COALESCE(user_id, '') FROM sessions
             WHERE {source} = {platform} AND session_key IS NOT NULL
               AND chat_id = $2 AND ended_at IS NULL
               AND ($3::text IS NULL OR COALESCE(thread_id, '') = $3)
             ORDER BY started_at DESC NULLS LAST, id DESC",
            source = fold_ascii("source"),
            platform = fold_ascii("$1"),
        );
        let rows: Vec<(String, String)> = self.read(|tx| {
            Ok(tx
                .query(&sql, &[&platform, &chat_id, &thread_id])
                .context("finding a session by origin")?
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect())
        })?;
        let Some((newest, _)) = rows.first() else {
            return Ok(None);
        };
        match user_id.filter(|u| !u.is_empty()) {
            Some(user) => {
                if let Some((id, _)) = rows.iter().find(|(_, u)| u == user) {
                    return Ok(Some(id.clone()));
                }
                if rows.len() > 1 {
                    return Ok(None);
                }
            }
            None => {
                let users: HashSet<&str> = rows
                    .iter()
                    .map(|(_, u)| u.trim())
                    .filter(|u| !u.is_empty())
                    .collect();
                if users.len() > 1 {
                    return Ok(None);
                }
            }
        }
        Ok(Some(newest.clone()))
    }

    /// `api.md` §12.2: the newest recoverable session of a gateway peer
    /// (live, or ended by `agent_close` / `ws_orphan_reap`, with messages),
    /// by its session key, else (when the peer names its chat and chat type)
    /// by its whole peer tuple; `None` without a key.
    pub fn find_latest_gateway_session_for_peer(
        &self,
        peer: &PeerLookup,
    ) -> Result<Option<Session>> {
        let Some(key) = peer.session_key.as_deref().filter(|k| !k.is_empty()) else {
            return Ok(None);
        };
        let columns = select_list("s", &SESSION_COLUMNS);
        let by_key = format!(
            "SELECT {columns} FROM sessions s
             WHERE s.session_key = $1 AND s.source = $2 AND {RECOVERABLE}
             ORDER BY s.started_at DESC NULLS LAST, s.id DESC LIMIT 1"
        );
        let by_peer = format!(
            "SELECT {columns} FROM sessions s WHERE s.source = $1
               AND COALESCE(s.user_id, '') = COALESCE($2::text, '')
               AND COALESCE(s.chat_id, '') = COALESCE($3::text, '')
               AND COALESCE(s.chat_type, '') = COALESCE($4::text, '')
               AND COALESCE(s.thread_id, '') = COALESCE($5::text, '')
               AND {RECOVERABLE}
             ORDER BY s.started_at DESC NULLS LAST, s.id DESC LIMIT 1"
        );
        self.read(|tx| {
            if let Some(row) = tx
                .query_opt(&by_key, &[&key, &peer.source])
                .context("finding a gateway session")?
            {
                return Ok(Some(session_from_row(&row)));
            }
            if peer.chat_id.is_none() || peer.chat_type.is_none() {
                return Ok(None);
            }
            Ok(tx
                .query_opt(
                    &by_peer,
                    &[
                        &peer.source,
                        &peer.user_id,
                        &peer.chat_id,
                        &peer.chat_type,
                        &peer.thread_id,
                    ],
                )
                .context("finding a gateway session")?
                .as_ref()
                .map(session_from_row))
        })
    }

    /// `api.md` §12.2: the newest session of each gateway `session_key`,
    /// with `last_active`, most recently active first; of one platform
    /// (ASCII case-insensitive) when given and non-empty; live ones only
    /// with `active_only`.
    pub fn list_gateway_sessions(
        &self,
        platform: Option<&str>,
        active_only: bool,
    ) -> Result<Vec<SessionActivity>> {
        let platform = platform.filter(|p| !p.is_empty());
        let sql = format!(
            "SELECT {columns}, {LAST_ACTIVE} AS last_active FROM sessions s
             WHERE s.session_key IS NOT NULL
               AND s.started_at = (SELECT MAX(s2.started_at) FROM sessions s2
                                   WHERE s2.session_key = s.session_key)
               AND ($1::text IS NULL OR {source} = {platform})
               AND (NOT $2 OR s.ended_at IS NULL)
             ORDER BY last_active DESC NULLS LAST, s.id DESC",
            columns = select_list("s", &SESSION_COLUMNS),
            source = fold_ascii("s.source"),
            platform = fold_ascii("$1"),
        );
        self.read(|tx| {
            Ok(tx
                .query(&sql, &[&platform, &active_only])
                .context("listing gateway sessions")?
                .iter()
                .map(activity_from_row)
                .collect())
        })
    }
}

/// The PostgreSQL store as the compression-lineage rule's reads.
struct PgLineage<'t, 'c> {
    tx: &'t mut Transaction<'c>,
}

fn lineage_node(row: &postgres::Row) -> LineageNode {
    LineageNode {
        id: row.get(0),
        parent: row.get(1),
        end_reason: row.get(2),
        branched: has_marker(row.get::<_, Option<&str>>(3), "_branched_from"),
    }
}

impl LineageReads for PgLineage<'_, '_> {
    type Error = PgError;

    fn node(&mut self, id: &str) -> Result<Option<LineageNode>> {
        Ok(self
            .tx
            .query_opt(LINEAGE_NODE, &[&id])
            .context("reading a session of a compression chain")?
            .as_ref()
            .map(lineage_node))
    }

    fn children(&mut self, id: &str) -> Result<Vec<LineageNode>> {
        Ok(self
            .tx
            .query(LINEAGE_CHILDREN, &[&id])
            .context("following a compression chain")?
            .iter()
            .map(lineage_node)
            .collect())
    }
}
