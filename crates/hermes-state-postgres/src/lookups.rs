//! Finding sessions and messages (`api.md` §2.4, §5.3, §6.2, §9.2), with
//! the SQLite backend's rules: by title, by id prefix, along compression
//! lineages, a window of messages, the recent user turns, a platform id.
//!
//! The branch and delegate markers live in `model_config` JSON text, which
//! may not be valid JSON; PostgreSQL 15 has no lenient test for that, so
//! candidates come ordered from SQL and the contract crate's
//! [`has_marker`] filters them.

use std::collections::HashSet;

use hermes_state_core::lookups::{MAX_RESUME_STEPS, escape_like, has_marker};
use hermes_state_core::message_reads::{
    AnchoredView, MessagesAround, RecentUserMessage, anchored_view, preview,
};
use hermes_state_core::sessions::MAX_LINEAGE_STEPS;
use hermes_state_types::{Message, Session, stored};
use postgres::Transaction;

use crate::PgStore;
use crate::content;
use crate::error::{Context, Result};
use crate::lineage::root_to_tip;
use crate::rows::{
    MESSAGE_COLUMNS, SESSION_COLUMNS, message_from_row, select_list, session_from_row,
};

/// Children of `$1` that may continue a compression, best first (`api.md`
/// §9.2): compression-ended, then live, then others; newest activity,
/// `started_at`, id, all descending. Markers are filtered afterwards.
const COMPRESSION_CHILDREN: &str = "SELECT c.id, c.model_config FROM sessions c
WHERE c.parent_session_id = $1 AND COALESCE(c.source, '') <> 'tool'
ORDER BY CASE WHEN c.end_reason = 'compression' THEN 0
              WHEN c.ended_at IS NULL THEN 1 ELSE 2 END,
         COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = c.id),
                  c.started_at) DESC NULLS LAST,
         c.started_at DESC NULLS LAST, c.id COLLATE \"C\" DESC";

/// Children of `$1` a resume may walk into, newest first; markers are
/// filtered afterwards.
const RESUME_CHILDREN: &str = "SELECT c.id, c.model_config FROM sessions c
WHERE c.parent_session_id = $1 AND COALESCE(c.source, '') <> 'tool'
  AND NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = c.parent_session_id
                  AND p.end_reason = 'branched' AND c.started_at >= p.ended_at)
ORDER BY c.started_at DESC NULLS LAST, c.id COLLATE \"C\" DESC";

impl PgStore {
    /// `api.md` §6.2: the session holding exactly this title
    /// (case-sensitive), or `None`.
    pub fn get_session_by_title(&self, title: &str) -> Result<Option<Session>> {
        let sql = format!(
            "SELECT {} FROM sessions s WHERE s.title = $1 LIMIT 1",
            select_list("s", &SESSION_COLUMNS)
        );
        self.read(|tx| {
            Ok(tx
                .query_opt(&sql, &[&title])
                .context("reading a session by title")?
                .as_ref()
                .map(session_from_row))
        })
    }

    /// `api.md` §2.4: the full id for an id or a unique id prefix: the
    /// argument when such a session exists, else the only session whose id
    /// starts with it (ASCII case-insensitive, `%` `_` `\` literal); `None`
    /// when none or several match, and for an empty prefix.
    pub fn resolve_session_id(&self, id_or_prefix: &str) -> Result<Option<String>> {
        let pattern = format!("{}%", escape_like(id_or_prefix));
        self.read(|tx| {
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
        })
    }

    /// `api.md` §9.2: the newest continuation of a compressed conversation,
    /// following the best child of each compression-ended session; the id
    /// itself when there is none (an unknown id included).
    pub fn get_compression_tip(&self, session_id: &str) -> Result<String> {
        self.read(|tx| compression_tip(tx, session_id))
    }

    /// `api.md` §9.2: the session to resume for `session_id`: its
    /// compression tip, then down the newest non-branch, non-delegate,
    /// non-tool children (at most 32 steps); the deepest of them with
    /// messages, else `session_id` itself (an unknown id included).
    pub fn resolve_resume_session_id(&self, session_id: &str) -> Result<String> {
        self.read(|tx| {
            let tip = compression_tip(tx, session_id)?;
            let mut best = has_messages(tx, &tip)?.then(|| tip.clone());
            let mut seen = HashSet::from([session_id.to_owned(), tip.clone()]);
            let mut current = tip;
            for _ in 0..MAX_RESUME_STEPS {
                let Some(child) = first_unmarked_child(tx, RESUME_CHILDREN, &current)? else {
                    break;
                };
                if !seen.insert(child.clone()) {
                    break;
                }
                if has_messages(tx, &child)? {
                    best = Some(child.clone());
                }
                current = child;
            }
            Ok(best.unwrap_or_else(|| session_id.to_owned()))
        })
    }

    /// `api.md` §9.2: the first session of the lineage root-to-tip (parent
    /// links walked up, stopping at a missing row or a repeat); the id
    /// itself for a root or an unknown id.
    pub fn get_conversation_root(&self, session_id: &str) -> Result<String> {
        let chain = self.read(|tx| root_to_tip(tx, session_id))?;
        Ok(chain
            .into_iter()
            .next()
            .unwrap_or_else(|| session_id.to_owned()))
    }

    /// A window of a session's messages around `message_id` (`api.md`
    /// §5.3): up to `window` rows before and after it, inactive ones
    /// included (a negative `window` gives the anchor alone); empty with
    /// zero counts when the message is not one of the session's.
    pub fn get_messages_around(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
    ) -> Result<MessagesAround> {
        let columns = select_list("m", &MESSAGE_COLUMNS);
        let before_sql = format!(
            "SELECT {columns} FROM messages m WHERE m.session_id = $1 AND m.id < $2 \
             ORDER BY m.id DESC LIMIT $3"
        );
        let after_sql = format!(
            "SELECT {columns} FROM messages m WHERE m.session_id = $1 AND m.id >= $2 \
             ORDER BY m.id LIMIT $3"
        );
        let window = window.max(0);
        self.read(|tx| {
            let found = tx
                .query_opt(
                    "SELECT 1 FROM messages WHERE id = $1 AND session_id = $2",
                    &[&message_id, &session_id],
                )
                .context("finding the anchor message")?;
            if found.is_none() {
                return Ok(MessagesAround::default());
            }
            let rows = |tx: &mut Transaction<'_>, sql: &str, limit: i64| -> Result<Vec<Message>> {
                Ok(tx
                    .query(sql, &[&session_id, &message_id, &limit])
                    .context("reading messages")?
                    .iter()
                    .map(message_from_row)
                    .collect())
            };
            let mut before = rows(tx, &before_sql, window)?;
            before.reverse();
            let rest = rows(tx, &after_sql, window.saturating_add(1))?;
            let messages_before = before.len();
            let messages_after = rest.len().saturating_sub(1);
            before.extend(rest);
            Ok(MessagesAround {
                window: before,
                messages_before,
                messages_after,
            })
        })
    }

    /// The window around `message_id` with the session's bookends (the
    /// original's `get_anchored_view`), by the contract crate's rule as on
    /// SQLite: a bookend is a message of the kept roles whose content
    /// SQLite's `length()` counts as non-empty (never structured content,
    /// which SQLite stores behind a NUL).
    pub fn get_anchored_view(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
        bookend: i64,
        keep_roles: Option<&[&str]>,
    ) -> Result<AnchoredView> {
        let around = self.get_messages_around(session_id, message_id, window)?;
        let roles: Option<Vec<String>> =
            keep_roles.map(|roles| roles.iter().map(|r| (*r).to_owned()).collect());
        anchored_view(
            around,
            message_id,
            bookend,
            keep_roles,
            |first, last, bookend| {
                self.read(|tx| {
                    let start =
                        bookend_rows(tx, session_id, first, bookend, roles.as_deref(), true)?;
                    let mut end =
                        bookend_rows(tx, session_id, last, bookend, roles.as_deref(), false)?;
                    end.reverse();
                    Ok((start, end))
                })
            },
        )
    }

    /// The newest `user` messages of a session, newest first, at most
    /// `limit`, with a one-line preview of each (`api.md` §5.3); rewound and
    /// compacted ones only with `include_inactive`.
    pub fn list_recent_user_messages(
        &self,
        session_id: &str,
        limit: u32,
        include_inactive: bool,
    ) -> Result<Vec<RecentUserMessage>> {
        let active = if include_inactive {
            ""
        } else {
            " AND active = 1"
        };
        let sql = format!(
            "SELECT id, timestamp, content FROM messages \
             WHERE session_id = $1 AND role = 'user'{active} ORDER BY id DESC LIMIT $2"
        );
        self.read(|tx| {
            Ok(tx
                .query(&sql, &[&session_id, &i64::from(limit)])
                .context("listing recent user messages")?
                .iter()
                .map(|row| {
                    let stored_content = content::from_pg(row.get(2));
                    let decoded = stored::decode_content(stored_content.as_ref());
                    RecentUserMessage {
                        id: row.get(0),
                        timestamp: row.get::<_, Option<f64>>(1).unwrap_or_default(),
                        preview: preview(decoded.as_ref()),
                    }
                })
                .collect())
        })
    }

    /// Whether the session has a message (in any state) with this platform
    /// message id (`api.md` §5.3); `false` for empty ids.
    pub fn has_platform_message_id(
        &self,
        session_id: &str,
        platform_message_id: &str,
    ) -> Result<bool> {
        if session_id.is_empty() || platform_message_id.is_empty() {
            return Ok(false);
        }
        self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT 1 FROM messages WHERE session_id = $1 AND platform_message_id = $2 \
                     LIMIT 1",
                    &[&session_id, &platform_message_id],
                )
                .context("probing messages")?
                .is_some())
        })
    }
}

fn session_exists(tx: &mut Transaction<'_>, session_id: &str) -> Result<bool> {
    Ok(tx
        .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&session_id])
        .context("checking a session")?
        .is_some())
}

fn has_messages(tx: &mut Transaction<'_>, session_id: &str) -> Result<bool> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM messages WHERE session_id = $1 LIMIT 1",
            &[&session_id],
        )
        .context("checking for messages")?
        .is_some())
}

/// The first child `sql` returns for `parent` that is neither a branch nor
/// a delegate.
fn first_unmarked_child(
    tx: &mut Transaction<'_>,
    sql: &str,
    parent: &str,
) -> Result<Option<String>> {
    let rows = tx
        .query(sql, &[&parent])
        .context("finding a child session")?;
    Ok(rows.iter().find_map(|row| {
        let model_config: Option<&str> = row.get(1);
        (!has_marker(model_config, "_branched_from") && !has_marker(model_config, "_delegate_from"))
            .then(|| row.get(0))
    }))
}

/// The compression tip of `session_id` (`api.md` §9.2), as the query
/// crate's `get_compression_tip` walks it.
pub(crate) fn compression_tip(tx: &mut Transaction<'_>, session_id: &str) -> Result<String> {
    let mut seen = HashSet::from([session_id.to_owned()]);
    let mut current = session_id.to_owned();
    for _ in 0..MAX_LINEAGE_STEPS {
        let end_reason: Option<String> = tx
            .query_opt("SELECT end_reason FROM sessions WHERE id = $1", &[&current])
            .context("reading an end reason")?
            .and_then(|row| row.get(0));
        if end_reason.as_deref() != Some("compression") {
            break;
        }
        let Some(child) = first_unmarked_child(tx, COMPRESSION_CHILDREN, &current)? else {
            break;
        };
        if !seen.insert(child.clone()) {
            break;
        }
        current = child;
    }
    Ok(current)
}

/// The first `limit` bookend rows before `bound` (`head`), or the last ones
/// after it (descending), of the kept roles, with content SQLite's
/// `length()` counts: not NULL, not empty, not structured, not an empty
/// blob.
fn bookend_rows(
    tx: &mut Transaction<'_>,
    session_id: &str,
    bound: i64,
    limit: i64,
    roles: Option<&[String]>,
    head: bool,
) -> Result<Vec<Message>> {
    let (side, order) = if head { ("<", "ASC") } else { (">", "DESC") };
    let sql = format!(
        "SELECT {} FROM messages m WHERE m.session_id = $1 AND m.id {side} $2 \
         AND ($5::text[] IS NULL OR m.role = ANY($5)) \
         AND length(m.content) > 0 AND NOT starts_with(m.content, $3) AND m.content <> $4 \
         ORDER BY m.id {order} LIMIT $6",
        select_list("m", &MESSAGE_COLUMNS)
    );
    let empty_blob = content::EMPTY_BLOB;
    let roles: Option<Vec<String>> = roles.map(<[String]>::to_vec);
    Ok(tx
        .query(
            &sql,
            &[
                &session_id,
                &bound,
                &content::PG_JSON_PREFIX,
                &empty_blob,
                &roles,
                &limit,
            ],
        )
        .context("reading bookend messages")?
        .iter()
        .map(message_from_row)
        .collect())
}
