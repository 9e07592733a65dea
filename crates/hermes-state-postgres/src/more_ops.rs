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
//! query crate's [`has_marker`] filters them, as in `lookups`.

use hermes_state_core::compression_lineage::{LineageNode, LineageReads};
use hermes_state_core::lookups::{PeerLookup, has_marker};
use postgres::Transaction;

use crate::error::{Context, PgError, Result};
use crate::rich_listing::LAST_ACTIVE;
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
}

pub(crate) const SET_LATEST_USER_API_CONTENT: &str = "UPDATE messages SET api_content = $3
WHERE id = (SELECT id FROM messages WHERE session_id = $1 AND role = 'user' AND active = 1
            ORDER BY id DESC LIMIT 1)
  AND content IS NOT DISTINCT FROM $2";

pub(crate) const LATEST_MATCHING: &str = "SELECT id FROM messages
WHERE session_id = $1 AND role = $2 AND content = $3 AND active = 1 ORDER BY id DESC LIMIT 1";

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
pub(crate) const RECOVERABLE: &str =
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
}

/// The PostgreSQL store as the compression-lineage rule's reads.
pub(crate) struct PgLineage<'t, 'c> {
    pub(crate) tx: &'t mut Transaction<'c>,
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
