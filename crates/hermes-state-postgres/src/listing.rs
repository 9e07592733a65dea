//! Recent sessions with a preview and their last activity (`api.md` §10).

use hermes_state_core::listing::{DEFAULT_LIST_LIMIT, ListFilter, SessionListing};
use hermes_state_core::lookups::origin_session;

use crate::PgStore;
use crate::error::Context;
use crate::prune::fold_ascii;
use crate::rich_listing::Candidate;
use crate::rich_listing::ChainMember;
use crate::rich_listing::LAST_ACTIVE;
use crate::rich_listing::activity_from_row;
use crate::rich_listing::chains;
use crate::rich_listing::like;
use crate::rich_listing::project_tip;
use crate::rich_listing::rich_conditions;
use crate::rich_listing::rich_from_row;
use crate::rich_listing::rich_row;
use crate::rich_listing::rich_select;
use crate::rows::{SESSION_COLUMNS, select_list, session_from_row};
use hermes_state_core::Result as CoreResult;
use hermes_state_core::lookups::PeerLookup;
use hermes_state_core::lookups::SessionActivity;
use hermes_state_core::lookups::is_listable;
use hermes_state_core::rich_listing;
use hermes_state_core::rich_listing::RichListOptions;
use hermes_state_core::rich_listing::RichSession;
use hermes_state_core::rich_listing::SessionCwd;
use hermes_state_core::rich_listing::compact_needle;
use hermes_state_core::rich_listing::cron_id_range;
use hermes_state_core::rich_listing::needle;
use hermes_state_core::store::Listings;
use hermes_state_types::Session;
use std::cmp::Ordering;

impl Listings for PgStore {
    /// `api.md` §10.4: the sessions of cron job `job_id`, newest start
    /// first (ties by id, descending), as rich rows (`last_active`,
    /// `preview`); `limit` rows after skipping `offset`.
    fn list_cron_job_runs(
        &self,
        job_id: &str,
        limit: u32,
        offset: u32,
    ) -> CoreResult<Vec<RichSession>> {
        let (low, high) = cron_id_range(job_id);
        let sql = format!(
            "SELECT {} FROM sessions s
             WHERE s.source = 'cron' AND s.id >= $1 AND s.id < $2
             ORDER BY s.started_at DESC, s.id DESC LIMIT $3 OFFSET $4",
            rich_select()
        );
        let (limit, offset) = (i64::from(limit), i64::from(offset));
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &[&low, &high, &limit, &offset])
                .context("listing cron job runs")?
                .iter()
                .map(|row| rich_from_row(row, false))
                .collect())
        })?)
    }

    /// Recent sessions, newest start first, with the first 63 characters of
    /// the earliest user message (`""` for structured content, as SQLite's
    /// string functions give) and the newest message's time.
    fn recent_sessions(&self, filter: &ListFilter) -> CoreResult<Vec<SessionListing>> {
        let source = filter.source.as_deref().filter(|s| !s.is_empty());
        let sql = format!(
            "SELECT {},
                COALESCE((SELECT CASE WHEN left(m.content, 1) = chr(1) THEN '' ELSE substr(m.content, 1, 63) END
                          FROM messages m
                          WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
                          ORDER BY m.timestamp, m.id LIMIT 1), '') AS preview,
                COALESCE((SELECT max(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id),
                         s.started_at) AS last_active
             FROM sessions s
             WHERE ($1::TEXT IS NULL OR s.source = $1)
             ORDER BY s.started_at DESC LIMIT $2 OFFSET $3",
            select_list("s", &SESSION_COLUMNS)
        );
        let limit = i64::from(filter.limit.unwrap_or(DEFAULT_LIST_LIMIT));
        let offset = i64::from(filter.offset);
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &[&source, &limit, &offset])
                .context("listing sessions")?
                .iter()
                .map(|row| SessionListing {
                    session: session_from_row(row),
                    preview: row.get("preview"),
                    last_active: row.get("last_active"),
                })
                .collect())
        })?)
    }

    /// `api.md` §10.4: every working directory that is not NULL and not
    /// only spaces, with its number of sessions and its last activity (the
    /// newest end, else start), in byte order (SQLite's `GROUP BY` order); of
    /// archived sessions too with `include_archived`.
    fn distinct_session_cwds(&self, include_archived: bool) -> CoreResult<Vec<SessionCwd>> {
        Ok(self.read(|tx| {
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
        })?)
    }

    /// `api.md` §10.4: the picker's conversations whose id (or the id of a
    /// session of their compression chain) contains `query`, ranked exact
    /// id, then prefix, then substring, at most `limit` (the SQLite
    /// backend's rules: `hermes_state_core::rich_listing`'s
    /// `id_search_options` and `rank_by_id`).
    fn search_sessions_by_id(
        &self,
        query: &str,
        limit: u32,
        include_archived: bool,
    ) -> CoreResult<Vec<RichSession>> {
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

    /// `api.md` §12.2: the newest live gateway session of a chat (and
    /// thread, when given; a missing thread matches `""`), of `platform`
    /// (ASCII case-insensitive), preferring `user_id`'s; `None` when the
    /// chat's live sessions belong to several users and none is the given
    /// one, and for an empty platform or chat.
    fn find_session_by_origin(
        &self,
        platform: &str,
        chat_id: &str,
        thread_id: Option<&str>,
        user_id: Option<&str>,
    ) -> CoreResult<Option<String>> {
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
        Ok(origin_session(&rows, user_id))
    }

    /// `api.md` §12.2: the newest recoverable session of a gateway peer
    /// (live, or ended by `agent_close` / `ws_orphan_reap`, with messages),
    /// by its session key, else (when the peer names its chat and chat type)
    /// by its whole peer tuple; `None` without a key.
    fn find_latest_gateway_session_for_peer(
        &self,
        peer: &PeerLookup,
    ) -> CoreResult<Option<Session>> {
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
        Ok(self.read(|tx| {
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
        })?)
    }

    /// `api.md` §12.2: the newest session of each gateway `session_key`,
    /// with `last_active`, most recently active first; of one platform
    /// (ASCII case-insensitive) when given and non-empty; live ones only
    /// with `active_only`.
    fn list_gateway_sessions(
        &self,
        platform: Option<&str>,
        active_only: bool,
    ) -> CoreResult<Vec<SessionActivity>> {
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
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &[&platform, &active_only])
                .context("listing gateway sessions")?
                .iter()
                .map(activity_from_row)
                .collect())
        })?)
    }

    /// `api.md` §10.1: every session (children and archived included) with
    /// `last_active`, most recently active first; of `source` when given
    /// and non-empty.
    fn search_sessions(
        &self,
        source: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> CoreResult<Vec<SessionActivity>> {
        let source = source.filter(|s| !s.is_empty());
        let sql = format!(
            "SELECT {columns}, {LAST_ACTIVE} AS last_active FROM sessions s
             WHERE ($1::text IS NULL OR s.source = $1)
             ORDER BY last_active DESC NULLS LAST, s.started_at DESC, s.id DESC
             LIMIT $2 OFFSET $3",
            columns = select_list("s", &SESSION_COLUMNS),
        );
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &[&source, &i64::from(limit), &i64::from(offset)])
                .context("searching sessions")?
                .iter()
                .map(activity_from_row)
                .collect())
        })?)
    }

    /// `api.md` §10.3: sessions for a picker with `last_active` and a
    /// one-line preview, filtered, ordered and projected onto their
    /// compression tips as [`RichListOptions`] says (the SQLite backend's
    /// rules, `id_query` and `search_query` only with `order_by_last_active`;
    /// see the module documentation for how the page is cut). Ties of the
    /// start order are broken by id, descending.
    fn list_sessions_rich(&self, options: &RichListOptions) -> CoreResult<Vec<RichSession>> {
        let conditions = rich_conditions(options);
        let lean = format!(
            "SELECT s.id, s.started_at, s.model_config, s.parent_session_id IS NOT NULL,
                    EXISTS (SELECT 1 FROM sessions ps WHERE ps.id = s.parent_session_id
                            AND ps.end_reason = 'branched' AND s.started_at >= ps.ended_at),
                    {LAST_ACTIVE}, s.title
             FROM sessions s{} ORDER BY s.started_at DESC, s.id DESC",
            conditions.where_clause()
        );
        Ok(self.read(|tx| {
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
        })?)
    }
}

/// Live or ended only by a cleanup, with messages: a gateway session a peer
/// may resume (`api.md` §12.2).
const RECOVERABLE: &str =
    "(s.ended_at IS NULL OR s.end_reason IN ('agent_close', 'ws_orphan_reap'))
    AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)";
