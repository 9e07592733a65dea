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

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use hermes_state_core::lookups::{SessionActivity, has_marker, is_listable};
use hermes_state_core::rich_listing::{
    RichListOptions, RichSession, compact_needle, needle, preview,
};
use hermes_state_core::sessions::SessionCountOptions;
use postgres::{Row, Transaction};

use crate::PgStore;
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
struct ChainMember {
    id: String,
    title: Option<String>,
    last_active: f64,
}

/// One session the picker may list, before the page is cut.
struct Candidate {
    member: ChainMember,
    started_at: f64,
    model_config: Option<String>,
    has_parent: bool,
    after_branch: bool,
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

impl PgStore {
    /// `api.md` §10.1: every session (children and archived included) with
    /// `last_active`, most recently active first; of `source` when given
    /// and non-empty.
    pub fn search_sessions(
        &self,
        source: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<SessionActivity>> {
        let source = source.filter(|s| !s.is_empty());
        let sql = format!(
            "SELECT {columns}, {LAST_ACTIVE} AS last_active FROM sessions s
             WHERE ($1::text IS NULL OR s.source = $1)
             ORDER BY last_active DESC NULLS LAST, s.started_at DESC, s.id DESC
             LIMIT $2 OFFSET $3",
            columns = select_list("s", &SESSION_COLUMNS),
        );
        self.read(|tx| {
            Ok(tx
                .query(&sql, &[&source, &i64::from(limit), &i64::from(offset)])
                .context("searching sessions")?
                .iter()
                .map(activity_from_row)
                .collect())
        })
    }

    /// `api.md` §11.6: the number of empty sessions (`message_count = 0`,
    /// ended, not archived).
    pub fn count_empty_sessions(&self) -> Result<i64> {
        self.read(|tx| {
            Ok(tx
                .query_one(
                    "SELECT COUNT(*) FROM sessions s \
                     WHERE s.message_count = 0 AND s.ended_at IS NOT NULL AND s.archived = 0",
                    &[],
                )
                .context("counting empty sessions")?
                .get(0))
        })
    }
}

impl PgStore {
    /// `api.md` §2.4: the number of sessions `options` selects (by default
    /// every session that is not archived), with the picker listing's
    /// filters; listable sessions are told apart in Rust, as the listing
    /// does.
    pub fn session_count(&self, options: &SessionCountOptions) -> Result<i64> {
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
        self.read(|tx| {
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
        })
    }

    /// `api.md` §10.3: sessions for a picker with `last_active` and a
    /// one-line preview, filtered, ordered and projected onto their
    /// compression tips as [`RichListOptions`] says (the SQLite backend's
    /// rules, `id_query` and `search_query` only with `order_by_last_active`;
    /// see the module documentation for how the page is cut). Ties of the
    /// start order are broken by id, descending.
    pub fn list_sessions_rich(&self, options: &RichListOptions) -> Result<Vec<RichSession>> {
        let conditions = rich_conditions(options);
        let lean = format!(
            "SELECT s.id, s.started_at, s.model_config, s.parent_session_id IS NOT NULL,
                    EXISTS (SELECT 1 FROM sessions ps WHERE ps.id = s.parent_session_id
                            AND ps.end_reason = 'branched' AND s.started_at >= ps.ended_at),
                    {LAST_ACTIVE}, s.title
             FROM sessions s{} ORDER BY s.started_at DESC, s.id DESC",
            conditions.where_clause()
        );
        self.read(|tx| {
            let mut candidates: Vec<Candidate> = tx
                .query(&lean, &conditions.params())
                .context("listing sessions")?
                .iter()
                .map(|row| Candidate {
                    member: ChainMember {
                        id: row.get(0),
                        title: row.get(6),
                        last_active: row.get::<_, Option<f64>>(5).unwrap_or_default(),
                    },
                    started_at: row.get(1),
                    model_config: row.get(2),
                    has_parent: row.get(3),
                    after_branch: row.get(4),
                })
                .collect();
            if !options.include_children {
                candidates.retain(|c| {
                    is_listable(c.model_config.as_deref(), c.has_parent, c.after_branch)
                });
            }
            if options.order_by_last_active {
                let chains = chains(tx, &candidates)?;
                let id_needle = needle(options.id_query.as_deref());
                let search_needle = needle(options.search_query.as_deref());
                let compact = compact_needle(&search_needle);
                candidates.retain(|c| {
                    let chain = &chains[&c.member.id];
                    (id_needle.is_empty() || chain.iter().any(|m| like(&m.id, &id_needle)))
                        && (search_needle.is_empty()
                            || chain
                                .iter()
                                .any(|m| m.matches_search(&search_needle, &compact)))
                });
                // The newest activity of each chain, then start, then id.
                let mut keyed: Vec<(f64, Candidate)> = candidates
                    .into_iter()
                    .map(|c| {
                        let newest = chains[&c.member.id]
                            .iter()
                            .map(|m| m.last_active)
                            .fold(f64::NEG_INFINITY, f64::max);
                        (newest, c)
                    })
                    .collect();
                keyed.sort_by(|(ka, a), (kb, b)| {
                    kb.partial_cmp(ka)
                        .unwrap_or(Ordering::Equal)
                        .then(
                            b.started_at
                                .partial_cmp(&a.started_at)
                                .unwrap_or(Ordering::Equal),
                        )
                        .then_with(|| b.member.id.cmp(&a.member.id))
                });
                candidates = keyed.into_iter().map(|(_, c)| c).collect();
            }
            let page: Vec<String> = candidates
                .into_iter()
                .skip(usize::try_from(options.offset).unwrap_or(usize::MAX))
                .take(usize::try_from(options.limit).unwrap_or(usize::MAX))
                .map(|c| c.member.id)
                .collect();
            let mut rows = Vec::with_capacity(page.len());
            for id in &page {
                if let Some(mut row) = rich_row(tx, id, options.compact_rows)? {
                    if options.project_compression_tips && !options.include_children {
                        project_tip(tx, &mut row)?;
                    }
                    rows.push(row);
                }
            }
            Ok(rows)
        })
    }
}

/// SQLite's `LIKE '%needle%' ESCAPE '\'` on `LOWER(text)` for a lower-cased
/// needle: ASCII case folded on both sides, every character literal.
fn like(text: &str, needle: &str) -> bool {
    text.to_ascii_lowercase()
        .contains(&needle.to_ascii_lowercase())
}

impl ChainMember {
    /// Whether this session of a chain matches `search_query`'s needle: in
    /// its title or id, or its title without `-`, `_`, `.` and spaces holds
    /// the compact needle (when that is not empty).
    fn matches_search(&self, needle: &str, compact: &str) -> bool {
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
fn rich_conditions(options: &RichListOptions) -> Conditions {
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
fn chains(
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
fn rich_row(tx: &mut Transaction<'_>, id: &str, compact: bool) -> Result<Option<RichSession>> {
    let sql = format!("SELECT {} FROM sessions s WHERE s.id = $1", rich_select());
    Ok(tx
        .query_opt(&sql, &[&id])
        .context("listing sessions")?
        .map(|row| rich_from_row(&row, compact)))
}

/// Replaces a compression-ended row by its compression tip's current state,
/// as the SQLite backend does.
fn project_tip(tx: &mut Transaction<'_>, row: &mut RichSession) -> Result<()> {
    if row.session.end_reason.as_deref() != Some("compression") {
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
    let s = &mut row.session;
    let t = tip.session;
    s.id = t.id;
    s.ended_at = t.ended_at;
    s.end_reason = t.end_reason;
    s.message_count = t.message_count;
    s.tool_call_count = t.tool_call_count;
    s.title = t.title;
    s.model = t.model;
    s.system_prompt = t.system_prompt;
    s.cwd = t.cwd;
    s.git_branch = t.git_branch;
    s.git_repo_root = t.git_repo_root;
    row.last_active = tip.last_active;
    row.preview = tip.preview;
    row.lineage_root_id = Some(root);
    Ok(())
}
