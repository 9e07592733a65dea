//! Listing sessions for pickers, dashboards and cleanups (`api.md` §10.1,
//! §10.3, §11.6), the SQLite backend's queries spelled for PostgreSQL. The
//! prune-filter listings (`list_prune_candidates`, `archive_sessions`) live
//! with the prune selection in `prune`.
//!
//! The picker listing's branch and delegate markers live in `model_config`
//! JSON text that may not be valid JSON, which PostgreSQL 15 cannot test
//! leniently in SQL. So the filters SQL can apply select lean rows (id,
//! start, marker text, parent facts) of every match; the contract crate's
//! `has_marker` filters them, the chain activity orders them and the page is
//! cut in Rust; only the page's full rows are then read. The cost grows
//! with the number of matching sessions, not with the page.

use std::collections::{HashMap, HashSet};

use hermes_state_core::lookups::{SessionActivity, has_marker};
use hermes_state_core::rich_listing::{RichListOptions, RichSession, preview};
use postgres::{Row, Transaction};

use crate::error::{Context, Result};
use crate::lookups::compression_tip;
use crate::prune::Conditions;
use crate::rows::{SESSION_COLUMNS, select_list, session_from_row};

/// The raw first-user-message text of `sessions s`, as SQLite's `SUBSTR(…,
/// 1, 63)` with LF and CR as spaces; `preview` finishes it.
const PREVIEW_SQL: &str =
    "COALESCE((SELECT replace(replace(substr(m.content, 1, 63), chr(10), ' '), chr(13), ' ')
    FROM messages m
    WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
    ORDER BY m.timestamp, m.id LIMIT 1), '')";

/// The preview of a stored content prefix as SQLite sees the same value:
/// structured content starts with a NUL there (nothing before it), bytes
/// are a blob (no text), numbers their decimal text.
fn pg_preview(raw: &str) -> String {
    if let Some(rest) = raw.strip_prefix('\u{1}') {
        for number in ["int:", "real:"] {
            if let Some(digits) = rest.strip_prefix(number) {
                return preview(digits);
            }
        }
        if rest.starts_with("json:") || rest.starts_with("bytes:") {
            return String::new();
        }
    }
    preview(raw)
}

/// A session of a forward compression chain, with what the chain filters
/// and the chain order read.
#[derive(Clone)]
pub(crate) struct ChainMember {
    pub(crate) id: String,
    pub(crate) title: Option<String>,
    pub(crate) last_active: f64,
}

/// One session the picker may list, before the page is cut.
pub(crate) struct Candidate {
    pub(crate) member: ChainMember,
    pub(crate) started_at: f64,
    pub(crate) model_config: Option<String>,
    pub(crate) has_parent: bool,
    pub(crate) after_branch: bool,
}

/// `COALESCE(newest message timestamp, started_at)` of `sessions s`.
pub(crate) const LAST_ACTIVE: &str =
    "COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)";

/// A row selected as `SESSION_COLUMNS…, last_active`.
pub(crate) fn activity_from_row(row: &Row) -> SessionActivity {
    SessionActivity {
        session: session_from_row(row),
        last_active: row.get::<_, Option<f64>>("last_active").unwrap_or_default(),
    }
}

/// SQLite's `LIKE '%needle%' ESCAPE '\'` on `LOWER(text)` for a lower-cased
/// needle: ASCII case folded on both sides, every character literal.
pub(crate) fn like(text: &str, needle: &str) -> bool {
    text.to_ascii_lowercase()
        .contains(&needle.to_ascii_lowercase())
}

impl ChainMember {
    /// Whether this session of a chain matches `search_query`'s needle: in
    /// its title or id, or its title without `-`, `_`, `.` and spaces holds
    /// the compact needle (when that is not empty).
    pub(crate) fn matches_search(&self, needle: &str, compact: &str) -> bool {
        let title = self.title.as_deref().unwrap_or_default();
        like(title, needle)
            || like(&self.id, needle)
            || (!compact.is_empty() && {
                let squeezed: String = title
                    .to_ascii_lowercase()
                    .chars()
                    .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
                    .collect();
                like(&squeezed, compact)
            })
    }
}

/// The filters of [`RichListOptions`] SQL can apply (all but the markers
/// and the chain filters).
pub(crate) fn rich_conditions(options: &RichListOptions) -> Conditions {
    let mut c = Conditions::default();
    if let Some(source) = options.source.clone().filter(|s| !s.is_empty()) {
        c.push("s.source = {}", vec![Box::new(source)]);
    }
    if !options.exclude_sources.is_empty() {
        c.push(
            "s.source <> ALL({})",
            vec![Box::new(options.exclude_sources.clone())],
        );
    }
    if let Some(prefix) = options.cwd_prefix.as_deref().filter(|p| !p.is_empty()) {
        c.push_cwd_prefix(prefix);
    }
    if options.min_message_count > 0 {
        c.push(
            "s.message_count >= {}",
            vec![Box::new(options.min_message_count)],
        );
    }
    if options.archived_only {
        c.push("s.archived = 1", vec![]);
    } else if !options.include_archived {
        c.push("s.archived = 0", vec![]);
    }
    c
}

/// The forward compression chain of each candidate, the candidate first:
/// through compression-ended sessions, their children that are neither
/// branches nor delegates nor `source = 'tool'` (`UNION` semantics: a
/// cycle ends).
pub(crate) fn chains(
    tx: &mut Transaction<'_>,
    candidates: &[Candidate],
) -> Result<HashMap<String, Vec<ChainMember>>> {
    let edges = tx
        .query(
            "SELECT c.parent_session_id, c.id, c.model_config, c.title,
                    COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = c.id),
                             c.started_at)
             FROM sessions c JOIN sessions p ON p.id = c.parent_session_id
             WHERE p.end_reason = 'compression' AND COALESCE(c.source, '') <> 'tool'",
            &[],
        )
        .context("reading compression chains")?;
    let mut children: HashMap<String, Vec<ChainMember>> = HashMap::new();
    for row in &edges {
        let config: Option<&str> = row.get(2);
        if has_marker(config, "_branched_from") || has_marker(config, "_delegate_from") {
            continue;
        }
        children.entry(row.get(0)).or_default().push(ChainMember {
            id: row.get(1),
            title: row.get(3),
            last_active: row.get::<_, Option<f64>>(4).unwrap_or_default(),
        });
    }
    Ok(candidates
        .iter()
        .map(|c| {
            let mut chain = vec![c.member.clone()];
            let mut seen = HashSet::from([c.member.id.clone()]);
            let mut next = 0;
            while let Some(id) = chain.get(next).map(|m| m.id.clone()) {
                next += 1;
                for child in children.get(&id).into_iter().flatten() {
                    if seen.insert(child.id.clone()) {
                        chain.push(child.clone());
                    }
                }
            }
            (c.member.id.clone(), chain)
        })
        .collect())
}

/// `SESSION_COLUMNS…, last_active, preview` of `sessions s`: the select
/// list of a rich row.
pub(crate) fn rich_select() -> String {
    format!(
        "{columns}, {LAST_ACTIVE} AS last_active, {PREVIEW_SQL} AS preview",
        columns = select_list("s", &SESSION_COLUMNS),
    )
}

/// A row selected with [`rich_select`] (no projection).
pub(crate) fn rich_from_row(row: &Row, compact: bool) -> RichSession {
    let mut session = session_from_row(row);
    if compact {
        session.system_prompt = None;
    }
    RichSession {
        session,
        last_active: row.get::<_, Option<f64>>("last_active").unwrap_or_default(),
        preview: pg_preview(&row.get::<_, String>("preview")),
        lineage_root_id: None,
        compact,
    }
}

/// One session as a rich row (no projection).
pub(crate) fn rich_row(
    tx: &mut Transaction<'_>,
    id: &str,
    compact: bool,
) -> Result<Option<RichSession>> {
    let sql = format!("SELECT {} FROM sessions s WHERE s.id = $1", rich_select());
    Ok(tx
        .query_opt(&sql, &[&id])
        .context("listing sessions")?
        .map(|row| rich_from_row(&row, compact)))
}

/// Replaces a compression-ended row by its compression tip's current state,
/// as the SQLite backend does.
pub(crate) fn project_tip(tx: &mut Transaction<'_>, row: &mut RichSession) -> Result<()> {
    if !row.projects_tip() {
        return Ok(());
    }
    let root = row.session.id.clone();
    let tip_id = compression_tip(tx, &root)?;
    if tip_id == root {
        return Ok(());
    }
    let Some(tip) = rich_row(tx, &tip_id, row.compact)? else {
        return Ok(());
    };
    row.project_onto(tip);
    Ok(())
}
