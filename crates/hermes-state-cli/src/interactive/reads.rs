//! What the interactive search reads from the store (one read-only handle,
//! as every reading command): the hits of a query under the filters, the
//! conversation around a hit, the sources the source filter steps through.
//!
//! A query is answered by [`Searcher::answer`] on the search thread: on a
//! SQLite store first a partial answer, the newest matches
//! ([`SessionDb::search_partial`]: one step on an index route, bounded steps
//! of the newest ids on the LIKE route, for at most [`PARTIAL_BUDGET`]),
//! then the exact answer, the one `search QUERY` gives. Both are stopped by
//! the next key ([`Cancel`]). A PostgreSQL store has no partial answer: its
//! exact answer comes alone.

use std::collections::{BTreeSet, HashSet};
use std::time::{Duration, Instant};

use hermes_state::cancel::Cancel;
use hermes_state::prelude::AsSqlite;
use hermes_state::search_scope::search_messages_in_cancellable;
use hermes_state::{
    ConversationScope, ErrorKind, ListFilter, SearchHit, SearchOptions, SessionDb, SessionStore,
    query_problem,
};

use super::app::{Answer, LineKind, Outcome, ReadLine, Reading};
use super::filters::Filters;
use super::worker::Answering;
use crate::cli::{SearchArgs, SortOrder};
use crate::output::Output;
use crate::render::conversation::{Folding, render_message, session_header};

/// Messages shown on each side of a hit in the conversation view.
pub const AROUND: i64 = 10;

/// How long partial answers are looked for before the exact search runs
/// (a step that starts within it runs to its end).
pub const PARTIAL_BUDGET: Duration = Duration::from_millis(20);

/// Ids the first step of a partial answer on the LIKE route looks at; each
/// next step looks at twice as many.
const FIRST_PARTIAL_ROWS: u32 = 4096;

/// How many of the newest sessions the source filter takes its sources from.
const SOURCE_SESSIONS: u32 = 500;

/// The search as the flags fixed it; the query and the cycled filters vary.
#[derive(Debug)]
pub struct Searcher<'a> {
    db: &'a dyn SessionStore,
    /// `--session`: the sessions whose hits count.
    scope: Option<HashSet<String>>,
    exclude_sources: Vec<String>,
    limit: u32,
    sort: SortOrder,
    include_inactive: bool,
}

impl<'a> Searcher<'a> {
    /// The search of `args`, hits restricted to `scope` when given.
    pub fn new(
        db: &'a dyn SessionStore,
        args: &SearchArgs,
        scope: Option<HashSet<String>>,
    ) -> Self {
        Searcher {
            db,
            scope,
            exclude_sources: args.exclude_source.clone(),
            limit: args.limit,
            sort: args.sort,
            include_inactive: args.include_inactive,
        }
    }

    /// The exact answer to `query` under `filters`, or `None` when `cancel`
    /// stopped it. As `search` does, a query that finds nothing because
    /// FTS5 cannot parse it is a [`Outcome::Problem`] saying so, never an
    /// empty list.
    pub fn search(&self, query: &str, filters: &Filters, cancel: &Cancel) -> Option<Outcome> {
        if query.trim().is_empty() {
            return Some(Outcome::Empty);
        }
        let (options, scope) = self.options(filters);
        Some(
            match search_messages_in_cancellable(self.db, query, &options, &scope, cancel) {
                Err(error) if error.kind() == ErrorKind::Cancelled => return None,
                Ok(hits) if hits.is_empty() => match query_problem(query) {
                    Some(problem) => Outcome::Problem(problem.to_string()),
                    None => Outcome::Hits(hits),
                },
                Ok(hits) => Outcome::Hits(hits),
                Err(error) => Outcome::Failed(error.to_string()),
            },
        )
    }

    /// The partial answers of `query` on a SQLite store (see the module),
    /// each emitted as it grows: the newest hits found so far, in scope,
    /// newest first. Nothing when the query has none, when it was
    /// cancelled, or when a step fails (the exact search reports failures).
    fn partials(
        &self,
        db: &SessionDb,
        query: &str,
        filters: &Filters,
        cancel: &Cancel,
        emit: &mut dyn FnMut(Answer),
    ) {
        let started = Instant::now();
        let (options, scope) = self.options(filters);
        let limit = options.limit as usize;
        let mut found: Vec<SearchHit> = Vec::new();
        let (mut below, mut rows) = (None, FIRST_PARTIAL_ROWS);
        loop {
            let Ok(Some(step)) = db.search_partial(query, &options, below, rows, cancel) else {
                return;
            };
            let before = found.len();
            found.extend(
                step.hits
                    .into_iter()
                    .filter(|hit| scope.takes(&hit.session_id, hit.timestamp)),
            );
            found.sort_by(|a, b| b.timestamp.total_cmp(&a.timestamp).then(b.id.cmp(&a.id)));
            found.truncate(limit);
            if found.len() > before {
                emit(Answer::Partial(found.clone()));
            }
            match step.next {
                Some(next) if found.len() < limit && started.elapsed() < PARTIAL_BUDGET => {
                    below = Some(next);
                    rows = rows.saturating_mul(2);
                }
                _ => return,
            }
        }
    }

    /// The search's options and scope under `filters`.
    fn options(&self, filters: &Filters) -> (SearchOptions, ConversationScope) {
        let source = &filters.source.current().value;
        let role = &filters.role.current().value;
        let options = SearchOptions {
            source_filter: (!source.is_empty()).then(|| source.clone()),
            exclude_sources: (!self.exclude_sources.is_empty())
                .then(|| self.exclude_sources.clone()),
            role_filter: (!role.is_empty()).then(|| role.clone()),
            limit: self.limit,
            offset: 0,
            sort: match self.sort {
                SortOrder::Relevance => None,
                SortOrder::Newest => Some("newest".to_owned()),
                SortOrder::Oldest => Some("oldest".to_owned()),
            },
            include_inactive: self.include_inactive,
        };
        let scope = ConversationScope {
            sessions: self.scope.clone(),
            since: filters.since.current().value.bound(crate::clock::now()),
            until: filters.until,
        };
        (options, scope)
    }

    /// The conversation around message `message_id` of `session_id`: the
    /// session's metadata, then up to [`AROUND`] messages on each side, drawn
    /// as `sessions show` draws them (without styles; the view adds its own).
    pub fn conversation(&self, session_id: &str, message_id: i64) -> hermes_state::Result<Reading> {
        let plain = Output {
            json: false,
            quiet: false,
            verbose: 0,
            stdout_tty: false,
            stderr_tty: false,
            color: false,
        };
        let mut lines = Vec::new();
        // Each line of `text`; an empty text is one blank line.
        let mut push = |text: &str, kind| {
            let mut rows: Vec<&str> = text.lines().collect();
            if rows.is_empty() {
                rows.push("");
            }
            lines.extend(rows.into_iter().map(|line| ReadLine {
                text: line.to_owned(),
                kind,
            }));
        };
        if let Some(session) = self.db.get_session(session_id)? {
            push(&session_header(&plain, &session), LineKind::Header);
            push("", LineKind::Header);
        }
        let around = self
            .db
            .get_messages_around(session_id, message_id, AROUND)?;
        // A full side may have more beyond it: say where the rest is.
        let whole = format!("… the whole conversation: hermes-state sessions show {session_id}");
        if around.messages_before == AROUND as usize {
            push(&whole, LineKind::Header);
            push("", LineKind::Header);
        }
        for message in &around.window {
            let mut text = String::new();
            render_message(&mut text, &plain, message, Folding::default());
            let (heading, body) = if message.id == message_id {
                (LineKind::HitHeading, LineKind::HitBody)
            } else {
                (LineKind::Heading, LineKind::Body)
            };
            let mut rows = text.lines();
            if let Some(first) = rows.next() {
                push(first, heading);
            }
            for row in rows {
                push(row, body);
            }
        }
        if around.messages_after == AROUND as usize {
            push(&whole, LineKind::Header);
        }
        Ok(Reading::new(session_id.to_owned(), lines))
    }
}

impl Answering for Searcher<'_> {
    /// Partial answers first where the store has them, then the exact one.
    fn answer(
        &self,
        query: &str,
        filters: &Filters,
        cancel: &Cancel,
        emit: &mut dyn FnMut(Answer),
    ) {
        if !query.trim().is_empty()
            && let Some(db) = self.db.as_sqlite()
        {
            self.partials(db, query, filters, cancel, emit);
        }
        if let Some(outcome) = self.search(query, filters, cancel) {
            emit(Answer::Final(outcome));
        }
    }
}

/// The sources of the newest sessions (and of none older: a store's
/// sources change rarely, and this keeps the start instant on any store).
pub fn recent_sources(db: &dyn SessionStore) -> hermes_state::Result<Vec<String>> {
    let sessions = db.recent_sessions(&ListFilter {
        source: None,
        limit: Some(SOURCE_SESSIONS),
        offset: 0,
    })?;
    let sources: BTreeSet<String> = sessions.into_iter().map(|s| s.session.source).collect();
    Ok(sources.into_iter().collect())
}
