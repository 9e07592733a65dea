//! The interactive search's state and what each key does to it.
//!
//! [`App::handle`] is pure: a key changes the state and returns the
//! [`Action`] the event loop must carry out (run the search, read a
//! conversation, copy, leave). Nothing here touches the terminal or the
//! store, so every key is tested without either.
//!
//! Searches run on another thread and answer later: every query (and
//! filter) the keys make is a new *generation* ([`App::begin_search`]); an
//! answer is taken only for the current one ([`App::take_answer`]), so the
//! answer of a query no longer shown is never drawn. Until the current
//! query has an answer the list shows the previous one as stale, and the
//! keys that act on a hit wait for it ([`App::must_wait`]).

use hermes_state::SearchHit;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::filters::Filters;
use super::wrap::{indentation, wrap};

/// What the event loop does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing beyond redrawing.
    Redraw,
    /// The query or a filter changed: search again.
    Search,
    /// Read the conversation around a hit.
    Open {
        /// The hit's session.
        session_id: String,
        /// The hit's message.
        message_id: i64,
    },
    /// Copy this session id to the clipboard.
    Copy(String),
    /// Leave, printing `hermes --resume` for this session.
    Resume(String),
    /// Leave without printing anything.
    Quit,
    /// Ctrl-C: leave without printing anything, as interrupted (exit 130).
    Interrupt,
}

/// The kind of a line of the conversation view, which decides its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// The session's metadata.
    Header,
    /// A message's heading (`── role  #id · time`).
    Heading,
    /// The heading of the message the search found.
    HitHeading,
    /// A line of a message.
    Body,
    /// A line of the message the search found.
    HitBody,
}

/// A line of the conversation view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadLine {
    /// Its text, without styles.
    pub text: String,
    /// How it is shown.
    pub kind: LineKind,
}

/// The conversation around a hit, as the reading view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The session read.
    pub session_id: String,
    /// Its lines: the session's metadata, then the messages around the hit.
    lines: Vec<ReadLine>,
    /// The lines wrapped to the view's width: what scrolls.
    pub rows: Vec<ReadLine>,
    /// The width `rows` are wrapped to (0 before the first fit).
    width: usize,
    /// The first row shown.
    pub scroll: usize,
}

impl Reading {
    /// A view of `lines`; [`Reading::fit`] wraps them.
    pub fn new(session_id: String, lines: Vec<ReadLine>) -> Self {
        Reading {
            session_id,
            rows: lines.clone(),
            lines,
            width: 0,
            scroll: 0,
        }
    }

    /// Wraps the lines to `width` columns, for a view `height` rows high.
    /// The first time, the view is scrolled so that the hit is in view, near
    /// the top unless it fits below the session's header; a conversation
    /// shorter than the view is shown whole.
    pub fn fit(&mut self, width: usize, height: usize) {
        if width != self.width {
            let first = self.width == 0;
            self.width = width;
            self.rows = self
                .lines
                .iter()
                .flat_map(|line| {
                    let hang = indentation(&line.text);
                    wrap(&line.text, width, hang)
                        .into_iter()
                        .map(|text| ReadLine {
                            text,
                            kind: line.kind,
                        })
                })
                .collect();
            if first {
                let hit = self
                    .rows
                    .iter()
                    .position(|l| l.kind == LineKind::HitHeading)
                    .unwrap_or(0);
                // From the top when the hit's first rows fit there (the
                // session's header stays in view), else from just above it.
                self.scroll = if hit + HIT_ROWS < height {
                    0
                } else {
                    hit.saturating_sub(HIT_MARGIN)
                };
            }
        }
        self.scroll = self
            .scroll
            .min(self.rows.len().saturating_sub(height.max(1)));
    }
}

/// Rows of context kept above the hit when a conversation opens scrolled.
const HIT_MARGIN: usize = 2;
/// Rows of the hit that must be in view for a conversation to open at its top.
const HIT_ROWS: usize = 5;

/// Which screen is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    /// The query and the hits.
    List,
    /// A conversation around a hit.
    Reading(Reading),
}

/// What the search answered for the current query.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Nothing typed yet.
    Empty,
    /// The hits (possibly none).
    Hits(Vec<SearchHit>),
    /// The query cannot be parsed: the quoting hint of `query_problem`.
    Problem(String),
    /// The store failed.
    Failed(String),
}

/// What the search thread sends for a query.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Hits of the query found so far, newest first: not the answer, which
    /// is still being computed.
    Partial(Vec<SearchHit>),
    /// The answer.
    Final(Outcome),
}

/// The whole state of the interactive search.
#[derive(Debug, Clone)]
pub struct App {
    /// The query as typed.
    pub query: String,
    /// The filters.
    pub filters: Filters,
    /// The answer to the query.
    pub outcome: Outcome,
    /// The selected hit (an index of the hits).
    pub selected: usize,
    /// The first hit shown.
    pub top: usize,
    /// How many rows the list or the conversation shows (set by drawing).
    pub page: usize,
    /// How many columns the conversation's text gets (set by drawing).
    pub width: usize,
    /// A one-time note for the status line (cleared by the next key).
    pub notice: Option<String>,
    /// The screen shown.
    pub view: View,
    /// Whether the screen may use colours (`NO_COLOR` unset).
    pub colors: bool,
    /// The generation of the query and filters as they are now.
    pub generation: u64,
    /// The generation `outcome` answers.
    pub answered: u64,
    /// Whether `outcome` is a partial answer (more is being searched).
    pub partial: bool,
    /// Whether a key moved the selection since the answer came.
    moved: bool,
}

impl App {
    /// The state at start: `query` typed, no answer yet.
    pub fn new(query: String, filters: Filters) -> Self {
        App {
            query,
            filters,
            outcome: Outcome::Empty,
            selected: 0,
            top: 0,
            page: 10,
            width: 80,
            notice: None,
            view: View::List,
            colors: true,
            generation: 0,
            answered: 0,
            partial: false,
            moved: false,
        }
    }

    /// The query or the filters changed: a new generation, whose answer the
    /// list waits for. Its number, for the search thread.
    pub fn begin_search(&mut self) -> u64 {
        self.generation += 1;
        self.generation
    }

    /// Whether the list shows an answer (partial or not) to the query and
    /// filters as they are now.
    pub fn is_answered(&self) -> bool {
        self.answered == self.generation
    }

    /// Takes `answer` if it answers the current generation; whether it did.
    /// A partial answer never replaces the final one of the same
    /// generation. A hit the keys selected in a partial answer stays
    /// selected in the final one when it is there; otherwise the first hit
    /// is selected.
    pub fn take_answer(&mut self, generation: u64, answer: Answer) -> bool {
        if generation != self.generation || (self.is_answered() && !self.partial) {
            return false;
        }
        let (outcome, partial) = match answer {
            Answer::Partial(hits) => (Outcome::Hits(hits), true),
            Answer::Final(outcome) => (outcome, false),
        };
        let kept = (self.is_answered() && self.moved).then(|| self.selected_hit().map(|h| h.id));
        self.set_outcome(outcome);
        self.answered = generation;
        self.partial = partial;
        if let Some(Some(id)) = kept
            && let Some(at) = self.hits().iter().position(|h| h.id == id)
        {
            self.select(at);
        }
        true
    }

    /// Whether `key` must wait for the current query's answer before it is
    /// handled: in the list, a key that acts on the hits (move, read,
    /// resume, copy) while the hits shown are those of an earlier query —
    /// and any key while others wait (`keys_waiting`), so keys keep their
    /// order. Editing the query, stepping a filter and leaving never wait
    /// for a search.
    pub fn must_wait(&self, key: &KeyEvent, keys_waiting: bool) -> bool {
        if !matches!(self.view, View::List) || App::leaves(key) {
            return false;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let filter = ctrl && matches!(key.code, KeyCode::Char('s' | 'r' | 't'));
        keys_waiting || (!self.is_answered() && !App::edits_query(key) && !filter)
    }

    /// Esc and Ctrl-C in the list: they leave whatever is searched.
    fn leaves(key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        key.code == KeyCode::Esc || (ctrl && key.code == KeyCode::Char('c'))
    }

    /// The hits shown (none when the query has no answer with hits).
    pub fn hits(&self) -> &[SearchHit] {
        match &self.outcome {
            Outcome::Hits(hits) => hits,
            _ => &[],
        }
    }

    /// The selected hit.
    pub fn selected_hit(&self) -> Option<&SearchHit> {
        self.hits().get(self.selected)
    }

    /// Takes the search's answer for the current query; the first hit is selected.
    pub fn set_outcome(&mut self, outcome: Outcome) {
        self.outcome = outcome;
        self.selected = 0;
        self.top = 0;
        self.moved = false;
    }

    /// Shows a conversation, wrapped to the current width.
    pub fn show_reading(&mut self, mut reading: Reading) {
        reading.fit(self.width, self.page);
        self.view = View::Reading(reading);
    }

    /// Whether a key changes the query (typing, deleting): the keys whose
    /// searches may be merged when several arrive at once.
    pub fn edits_query(key: &KeyEvent) -> bool {
        Edit::of(key).is_some()
    }

    /// What a key press does.
    pub fn handle(&mut self, key: KeyEvent) -> Action {
        self.notice = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return Action::Interrupt;
        }
        match &mut self.view {
            View::List => self.handle_list(key, ctrl),
            View::Reading(reading) => {
                let page = self.page;
                match key.code {
                    KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left => {
                        self.view = View::List;
                        Action::Redraw
                    }
                    KeyCode::Tab => Action::Resume(reading.session_id.clone()),
                    KeyCode::Char('y') if ctrl => Action::Copy(reading.session_id.clone()),
                    code => {
                        scroll(reading, code, page);
                        Action::Redraw
                    }
                }
            }
        }
    }

    fn handle_list(&mut self, key: KeyEvent, ctrl: bool) -> Action {
        if let Some(edit) = Edit::of(&key) {
            match edit {
                Edit::Type(c) => self.query.push(c),
                Edit::DeleteChar => {
                    self.query.pop();
                }
                Edit::DeleteWord => delete_word(&mut self.query),
                Edit::Clear => self.query.clear(),
            }
            return Action::Search;
        }
        let hit = |app: &App| app.selected_hit().map(|h| h.session_id.clone());
        match key.code {
            KeyCode::Esc => Action::Quit,
            KeyCode::Enter => match self.selected_hit() {
                Some(h) => Action::Open {
                    session_id: h.session_id.clone(),
                    message_id: h.id,
                },
                None => Action::Redraw,
            },
            KeyCode::Tab => hit(self).map_or(Action::Redraw, Action::Resume),
            KeyCode::Char('y') if ctrl => hit(self).map_or(Action::Redraw, Action::Copy),
            KeyCode::Char('s') if ctrl => {
                self.filters.source.advance();
                Action::Search
            }
            KeyCode::Char('r') if ctrl => {
                self.filters.role.advance();
                Action::Search
            }
            KeyCode::Char('t') if ctrl => {
                self.filters.since.advance();
                Action::Search
            }
            KeyCode::Up => self.select(self.selected.saturating_sub(1)),
            KeyCode::Down => self.select(self.selected.saturating_add(1)),
            KeyCode::PageUp => self.select(self.selected.saturating_sub(self.page.max(1))),
            KeyCode::PageDown => self.select(self.selected.saturating_add(self.page.max(1))),
            KeyCode::Home => self.select(0),
            KeyCode::End => self.select(usize::MAX),
            _ => Action::Redraw,
        }
    }

    /// Selects hit `at` (clamped to the hits), scrolling it into view.
    fn select(&mut self, at: usize) -> Action {
        self.moved = true;
        let last = self.hits().len().saturating_sub(1);
        self.selected = at.min(last);
        let page = self.page.max(1);
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + page {
            self.top = self.selected + 1 - page;
        }
        Action::Redraw
    }
}

/// What a key does to the query in the list, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    /// A printable key (Shift or not): the character is typed, whatever it is.
    Type(char),
    /// Backspace.
    DeleteChar,
    /// Ctrl-W.
    DeleteWord,
    /// Ctrl-U.
    Clear,
}

impl Edit {
    /// The edit a key makes. Only Ctrl-U and Ctrl-W are editing commands: a
    /// plain `u` or `w` is text like every other character (the commands
    /// once matched the bare letters, so no word with a `u` or `w` could be
    /// typed). A key with Ctrl or Alt is never text.
    fn of(key: &KeyEvent) -> Option<Edit> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('u') if ctrl && !alt => Some(Edit::Clear),
            KeyCode::Char('w') if ctrl && !alt => Some(Edit::DeleteWord),
            KeyCode::Char(c) if !ctrl && !alt => Some(Edit::Type(c)),
            KeyCode::Backspace => Some(Edit::DeleteChar),
            _ => None,
        }
    }
}

/// Scrolls the conversation view; the last line never leaves the bottom.
fn scroll(reading: &mut Reading, code: KeyCode, page: usize) {
    let page = page.max(1);
    let last_top = reading.rows.len().saturating_sub(page);
    reading.scroll = match code {
        KeyCode::Up => reading.scroll.saturating_sub(1),
        KeyCode::Down => reading.scroll.saturating_add(1),
        KeyCode::PageUp => reading.scroll.saturating_sub(page),
        KeyCode::PageDown => reading.scroll.saturating_add(page),
        KeyCode::Home => 0,
        KeyCode::End => last_top,
        _ => reading.scroll,
    }
    .min(last_top);
}

/// Ctrl-W: deletes the last word and the spaces after it.
fn delete_word(query: &mut String) {
    let kept = query.trim_end().len();
    query.truncate(kept);
    let start = query
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    query.truncate(start);
}

#[cfg(test)]
mod tests;
