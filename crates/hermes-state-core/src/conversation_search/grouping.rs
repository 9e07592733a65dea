//! The grouping itself, over any [`ConversationSource`]: hits read page by
//! page in the search's order (cut from the keys list when the source gives
//! one), their sessions' conversation roots found a page at a time, and the
//! page of conversations asked for, titled, with its best hits read in full.

use std::collections::{HashMap, HashSet};

use super::{ConversationHit, ConversationScope, ConversationSource, MAX_HITS_READ, PAGE_HITS};
use crate::search::{HitKey, SearchHit, SearchOptions};
use crate::sessions::MAX_LINEAGE_STEPS;

/// The search by conversation over any [`ConversationSource`]: the hits
/// `scope` takes, read page by page in the search's order and collapsed by
/// conversation; `options.limit` and `options.offset` count conversations.
/// The reading bound ([`MAX_HITS_READ`]) counts every hit read, in scope or
/// not. The pages are cut from [`ConversationSource::hit_keys`] when the
/// source gives it; the answer is [`group_conversations_by_pages`]'s.
pub fn group_conversations<S: ConversationSource>(
    source: &mut S,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
) -> Result<Vec<ConversationHit>, S::Error> {
    // Reading stops at the first page past this many hits once the
    // conversations are filled: the list is read that far first.
    let keys = source.hit_keys(query, options, Some(MAX_HITS_READ))?;
    if let Some(keys) = keys {
        let complete = keys.len() < MAX_HITS_READ;
        let listed = Listed { keys, complete };
        if let Some(found) = read(source, query, options, scope, Some(listed))? {
            return Ok(found);
        }
    }
    group_conversations_by_pages(source, query, options, scope)
}

/// [`group_conversations`] reading every page from
/// [`ConversationSource::search_page`]: each page ranks every match again
/// and reads every hit in full.
pub fn group_conversations_by_pages<S: ConversationSource>(
    source: &mut S,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
) -> Result<Vec<ConversationHit>, S::Error> {
    Ok(read(source, query, options, scope, None)?.unwrap_or_default())
}

/// The first hits of the search as keys, or all of them.
struct Listed {
    keys: Vec<HitKey>,
    /// Whether `keys` holds every hit; otherwise the whole list is asked
    /// for when the reading goes past it.
    complete: bool,
}

/// The reading: pages of the listed keys while they hold hits, else of the
/// search. `None` when a best hit of the keys could not be read in full.
fn read<S: ConversationSource>(
    source: &mut S,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
    mut listed: Option<Listed>,
) -> Result<Option<Vec<ConversationHit>>, S::Error> {
    let wanted = options.offset as usize + options.limit as usize;
    let sort = options.sort.as_deref();
    let mut grouping = Grouping::default();
    let mut page = SearchOptions {
        limit: PAGE_HITS,
        offset: 0,
        ..options.clone()
    };
    let mut read = 0usize;
    loop {
        let offset = page.offset as usize;
        if listed
            .as_ref()
            .is_some_and(|l| !l.complete && offset >= l.keys.len())
        {
            listed = source.hit_keys(query, options, None)?.map(|keys| Listed {
                keys,
                complete: true,
            });
        }
        let cut = listed
            .as_ref()
            .and_then(|l| l.keys.get(offset..))
            .map(|rest| &rest[..rest.len().min(PAGE_HITS as usize)])
            .filter(|cut| !cut.is_empty());
        let (count, past) = match cut {
            Some(cut) => {
                let hits = cut.iter().map(|key| Hit {
                    id: key.id,
                    session_id: &key.session_id,
                    timestamp: key.timestamp,
                    full: None,
                });
                grouping.take(source, scope, sort, hits)?
            }
            None => {
                let found = source.search_page(query, &page)?;
                let hits = found.into_iter().map(|hit| Hit {
                    id: hit.id,
                    session_id: "",
                    timestamp: hit.timestamp,
                    full: Some(hit),
                });
                grouping.take(source, scope, sort, hits)?
            }
        };
        read += count;
        let filled = grouping.conversations.len() >= wanted;
        if past || count < PAGE_HITS as usize || (filled && read >= MAX_HITS_READ) {
            break;
        }
        let Some(next) = page.offset.checked_add(PAGE_HITS) else {
            break;
        };
        page.offset = next;
    }
    grouping.finish(source, options.offset as usize, options.limit as usize)
}

/// From this many sessions to walk at once, and when the store has fewer
/// sessions with a parent than that, those are listed once and the others
/// are not asked about (one read of the few sessions that have a parent
/// instead of one look-up per session).
const MANY_SESSIONS: usize = 64;

/// One hit as the grouping reads it: a key (its session in `session_id`), or
/// a full hit of a page (its session in `full`).
struct Hit<'k> {
    id: i64,
    session_id: &'k str,
    timestamp: f64,
    full: Option<SearchHit>,
}

impl Hit<'_> {
    fn session_id(&self) -> &str {
        self.full
            .as_ref()
            .map_or(self.session_id, |hit| hit.session_id.as_str())
    }
}

/// A conversation's best hit: read in full from a page, or a key's id.
enum Best {
    Full(SearchHit),
    Id(i64),
}

/// The conversations met so far, in the order of their best hits.
#[derive(Default)]
struct Grouping {
    /// Each session met: its conversation's root and its depth in the chain.
    roots: HashMap<String, (String, usize)>,
    /// Each session asked about: its parent when it continues it.
    parents: HashMap<String, Option<String>>,
    /// The sessions with a parent, once listed (see [`MANY_SESSIONS`]).
    with_parent: Option<HashSet<String>>,
    /// The store has more sessions with a parent than this (asked).
    children_above: usize,
    /// Message ids already counted (pages may overlap if the store changes).
    seen: HashSet<i64>,
    index: HashMap<String, usize>,
    conversations: Vec<Building>,
}

struct Building {
    root: String,
    best: Best,
    hits: usize,
    sessions: Vec<(usize, String)>,
    first: f64,
    last: f64,
}

impl Grouping {
    /// Takes one page's hits in order, up to the first `scope` is past;
    /// returns the page's size and whether reading can stop.
    fn take<'k, S: ConversationSource>(
        &mut self,
        source: &mut S,
        scope: &ConversationScope,
        sort: Option<&str>,
        hits: impl Iterator<Item = Hit<'k>>,
    ) -> Result<(usize, bool), S::Error> {
        let mut count = 0;
        let mut past = false;
        let mut taken = Vec::new();
        for hit in hits {
            count += 1;
            if past || scope.is_past(hit.timestamp, sort) {
                past = true;
                continue;
            }
            if scope.takes(hit.session_id(), hit.timestamp) {
                taken.push(hit);
            }
        }
        let sessions: Vec<String> = taken
            .iter()
            .map(|hit| hit.session_id().to_owned())
            .collect();
        self.walk_up(source, sessions)?;
        for hit in taken {
            self.add(source, hit)?;
        }
        Ok((count, past))
    }

    /// Asks the source about the chains of `sessions` a level at a time,
    /// many sessions per question, so that [`Grouping::root_of`] finds every
    /// step already known.
    fn walk_up<S: ConversationSource>(
        &mut self,
        source: &mut S,
        sessions: Vec<String>,
    ) -> Result<(), S::Error> {
        let mut level: Vec<String> = sessions
            .into_iter()
            .filter(|id| !self.roots.contains_key(id))
            .collect::<HashSet<_>>()
            .into_iter()
            .filter(|id| !self.parents.contains_key(id))
            .collect();
        for _ in 0..=MAX_LINEAGE_STEPS {
            if level.len() >= MANY_SESSIONS
                && self.with_parent.is_none()
                && level.len() > self.children_above
            {
                self.with_parent = source.sessions_with_parent(level.len())?;
                self.children_above = level.len();
            }
            if let Some(with_parent) = &self.with_parent {
                // A session without a parent continues none.
                let (asked, root): (Vec<String>, Vec<String>) =
                    level.into_iter().partition(|id| with_parent.contains(id));
                for id in root {
                    self.parents.insert(id, None);
                }
                level = asked;
            }
            if level.is_empty() {
                break;
            }
            let parents = source.continued_from_each(&level)?;
            let mut next = HashSet::new();
            for (id, parent) in level.into_iter().zip(parents) {
                if let Some(parent) = &parent {
                    next.insert(parent.clone());
                }
                self.parents.insert(id, parent);
            }
            level = next
                .into_iter()
                .filter(|id| !self.parents.contains_key(id))
                .collect();
        }
        Ok(())
    }

    fn add<S: ConversationSource>(&mut self, source: &mut S, hit: Hit<'_>) -> Result<(), S::Error> {
        if !self.seen.insert(hit.id) {
            return Ok(());
        }
        let session_id = hit.session_id().to_owned();
        let (root, depth) = self.root_of(source, &session_id)?;
        let at = hit.timestamp;
        match self.index.get(&root) {
            Some(&i) => {
                let conversation = &mut self.conversations[i];
                conversation.hits += 1;
                conversation.first = conversation.first.min(at);
                conversation.last = conversation.last.max(at);
                if !conversation
                    .sessions
                    .iter()
                    .any(|(_, id)| *id == session_id)
                {
                    conversation.sessions.push((depth, session_id));
                }
            }
            None => {
                self.index.insert(root.clone(), self.conversations.len());
                self.conversations.push(Building {
                    root,
                    sessions: vec![(depth, session_id)],
                    best: match hit.full {
                        Some(full) => Best::Full(full),
                        None => Best::Id(hit.id),
                    },
                    hits: 1,
                    first: at,
                    last: at,
                });
            }
        }
        Ok(())
    }

    /// The conversation root of a session and the session's depth below it.
    fn root_of<S: ConversationSource>(
        &mut self,
        source: &mut S,
        session_id: &str,
    ) -> Result<(String, usize), S::Error> {
        if let Some(found) = self.roots.get(session_id) {
            return Ok(found.clone());
        }
        let mut chain = vec![session_id.to_owned()];
        let mut seen: HashSet<String> = HashSet::from([session_id.to_owned()]);
        for _ in 0..MAX_LINEAGE_STEPS {
            let current = chain.last().map(String::as_str).unwrap_or(session_id);
            let parent = match self.parents.get(current) {
                Some(parent) => parent.clone(),
                None => {
                    let parent = source.continued_from(current)?;
                    self.parents.insert(current.to_owned(), parent.clone());
                    parent
                }
            };
            let Some(parent) = parent else {
                break;
            };
            if !seen.insert(parent.clone()) {
                break;
            }
            chain.push(parent);
        }
        let root = chain
            .last()
            .cloned()
            .unwrap_or_else(|| session_id.to_owned());
        let depth = chain.len() - 1;
        self.roots
            .insert(session_id.to_owned(), (root.clone(), depth));
        Ok((root, depth))
    }

    /// The page `offset..offset + limit` of the conversations, titled, their
    /// best hits read in full; `None` when one of them cannot be.
    fn finish<S: ConversationSource>(
        self,
        source: &mut S,
        offset: usize,
        limit: usize,
    ) -> Result<Option<Vec<ConversationHit>>, S::Error> {
        let page: Vec<Building> = self
            .conversations
            .into_iter()
            .skip(offset)
            .take(limit)
            .collect();
        let ids: Vec<i64> = page
            .iter()
            .filter_map(|c| match c.best {
                Best::Id(id) => Some(id),
                Best::Full(_) => None,
            })
            .collect();
        let mut full: HashMap<i64, SearchHit> = if ids.is_empty() {
            HashMap::new()
        } else {
            source
                .hits_by_id(&ids)?
                .into_iter()
                .map(|hit| (hit.id, hit))
                .collect()
        };
        let mut found = Vec::with_capacity(page.len());
        for mut c in page {
            let best = match c.best {
                Best::Full(hit) => hit,
                Best::Id(id) => match full.remove(&id) {
                    Some(hit) => hit,
                    None => return Ok(None),
                },
            };
            let tip = source.compression_tip(&c.root)?;
            let title = match source.session_title(&tip)? {
                Some(title) => Some(title),
                None if tip != c.root => source.session_title(&c.root)?,
                None => None,
            };
            c.sessions.sort();
            found.push(ConversationHit {
                root_session_id: c.root,
                title,
                best,
                hits: c.hits,
                session_ids: c.sessions.into_iter().map(|(_, id)| id).collect(),
                first_timestamp: c.first,
                last_timestamp: c.last,
            });
        }
        Ok(Some(found))
    }
}
