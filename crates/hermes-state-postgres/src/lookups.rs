//! Finding sessions and messages (`api.md` §2.4, §5.3, §6.2, §9.2), with
//! the SQLite backend's rules: by title, by id prefix, along compression
//! lineages, a window of messages, the recent user turns, a platform id.
//!
//! The branch and delegate markers live in `model_config` JSON text, which
//! may not be valid JSON; PostgreSQL 15 has no lenient test for that, so
//! candidates come ordered from SQL and the query crate's
//! [`has_marker`] filters them.

use std::collections::HashSet;

use hermes_state_core::lookups::has_marker;
use hermes_state_core::sessions::MAX_LINEAGE_STEPS;
use hermes_state_types::Message;
use postgres::Transaction;

use crate::content;
use crate::error::{Context, Result};
use crate::rows::{MESSAGE_COLUMNS, message_from_row, select_list};

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
pub(crate) const RESUME_CHILDREN: &str = "SELECT c.id, c.model_config FROM sessions c
WHERE c.parent_session_id = $1 AND COALESCE(c.source, '') <> 'tool'
  AND NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = c.parent_session_id
                  AND p.end_reason = 'branched' AND c.started_at >= p.ended_at)
ORDER BY c.started_at DESC NULLS LAST, c.id COLLATE \"C\" DESC";

pub(crate) fn session_exists(tx: &mut Transaction<'_>, session_id: &str) -> Result<bool> {
    Ok(tx
        .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&session_id])
        .context("checking a session")?
        .is_some())
}

pub(crate) fn has_messages(tx: &mut Transaction<'_>, session_id: &str) -> Result<bool> {
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
pub(crate) fn first_unmarked_child(
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
pub(crate) fn bookend_rows(
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
