//! The search thread and the event loop around it.
//!
//! The loop never runs a search: it reads [`Message`]s — keys from the
//! thread that reads the terminal, answers from the search thread — handles
//! every message waiting, draws, and waits for the next. Each change of
//! the query or the filters starts a search ([`Searches::start`]) and
//! cancels the one running ([`Cancel`]: the store stops its statement), so
//! a burst of keys costs one search and a slow query never delays the
//! next key. The search thread skips requests already replaced, and the
//! app takes only the answers of the current generation
//! ([`App::take_answer`]).

use std::collections::VecDeque;
use std::io;
use std::sync::mpsc::{Receiver, Sender};

use hermes_state::cancel::Cancel;
use ratatui::crossterm::event::{Event, KeyEvent, KeyEventKind};

use super::Ending;
use super::app::{Action, Answer, App, Outcome, Reading};
use super::filters::Filters;
use super::terminal::{copy_to_clipboard, terminal_error};
use crate::error::CliResult;

/// What answers a query: the store's searcher, or a fake in tests.
pub trait Answering: Sync {
    /// Answers `query` under `filters`: zero or more partial answers, then
    /// the final one, through `emit`. Emits no final answer when `cancel`
    /// was raised (the answer would be of a query no longer wanted).
    fn answer(&self, query: &str, filters: &Filters, cancel: &Cancel, emit: &mut dyn FnMut(Answer));
}

/// A search the loop asks the search thread for.
#[derive(Debug)]
pub struct Request {
    generation: u64,
    query: String,
    filters: Filters,
    cancel: Cancel,
}

/// What the event loop reads.
#[derive(Debug)]
pub enum Message {
    /// An event of the terminal, or the error reading it.
    Terminal(io::Result<Event>),
    /// An answer of the search thread, for a generation.
    Answer(u64, Answer),
}

/// The loop's side of the search thread.
#[derive(Debug)]
pub struct Searches {
    requests: Sender<Request>,
    /// The flag of the search asked last.
    running: Option<Cancel>,
}

impl Searches {
    /// Requests go to `requests` ([`serve`] reads them).
    pub fn new(requests: Sender<Request>) -> Self {
        Searches {
            requests,
            running: None,
        }
    }

    /// Cancels the search asked last and asks for `app`'s current query.
    /// An empty query is answered here, at once.
    pub fn start(&mut self, app: &mut App) {
        self.stop();
        let generation = app.generation;
        if app.query.trim().is_empty() {
            app.take_answer(generation, Answer::Final(Outcome::Empty));
            return;
        }
        let cancel = Cancel::new();
        self.running = Some(cancel.clone());
        // A search thread that is gone leaves the list searching; the loop
        // ends with the terminal's next key anyway.
        let _ = self.requests.send(Request {
            generation,
            query: app.query.clone(),
            filters: app.filters.clone(),
            cancel,
        });
    }

    /// Cancels the search asked last, if it still runs.
    pub fn stop(&mut self) {
        if let Some(cancel) = self.running.take() {
            cancel.cancel();
        }
    }
}

/// The search thread: answers the newest request waiting, until the loop
/// drops its [`Searches`].
pub fn serve(answering: &dyn Answering, requests: Receiver<Request>, answers: Sender<Message>) {
    while let Ok(mut request) = requests.recv() {
        // Only the newest counts: the others were cancelled.
        while let Ok(newer) = requests.try_recv() {
            request = newer;
        }
        if request.cancel.is_cancelled() {
            continue;
        }
        let (generation, cancel) = (request.generation, &request.cancel);
        answering.answer(&request.query, &request.filters, cancel, &mut |answer| {
            if !cancel.is_cancelled() {
                let _ = answers.send(Message::Answer(generation, answer));
            }
        });
    }
}

/// What the loop does besides searching: read a conversation, draw.
pub trait Screen {
    /// The conversation around message `message_id` of `session_id`.
    fn conversation(&self, session_id: &str, message_id: i64) -> Result<Reading, String>;
    /// Draws the app.
    fn draw(&mut self, app: &mut App) -> io::Result<()>;
}

/// The event loop, until a key leaves; how it was left.
pub fn event_loop(
    app: &mut App,
    searches: &mut Searches,
    messages: &Receiver<Message>,
    screen: &mut dyn Screen,
) -> CliResult<Ending> {
    let io_error = |e: io::Error| terminal_error("drawing", &e);
    // Keys that act on the hits, waiting for the current query's answer.
    let mut waiting: VecDeque<KeyEvent> = VecDeque::new();
    if !app.query.is_empty() {
        app.begin_search();
        searches.start(app);
    }
    screen.draw(app).map_err(io_error)?;
    loop {
        let Ok(first) = messages.recv() else {
            // Both threads are gone: nothing more can come.
            return Err(terminal_error(
                "reading keys",
                &io::Error::other("the key reader stopped"),
            ));
        };
        let mut search = false;
        for message in std::iter::once(first).chain(messages.try_iter()) {
            match message {
                Message::Terminal(Err(error)) => {
                    return Err(terminal_error("reading keys", &error));
                }
                Message::Terminal(Ok(Event::Key(key))) if key.kind == KeyEventKind::Press => {
                    if app.must_wait(&key, !waiting.is_empty()) {
                        waiting.push_back(key);
                    } else if let Some(ending) = handle(app, key, &mut search, screen) {
                        return Ok(ending);
                    }
                }
                // A resize, a key released: drawn again below.
                Message::Terminal(Ok(_)) => {}
                Message::Answer(generation, answer) => {
                    app.take_answer(generation, answer);
                }
            }
        }
        // One search for all the edits handled; then the keys that waited
        // for an answer, as far as the answers shown let them run.
        loop {
            if search {
                searches.start(app);
                search = false;
            }
            while let Some(key) = waiting.front().copied() {
                if app.must_wait(&key, false) {
                    break;
                }
                waiting.pop_front();
                if let Some(ending) = handle(app, key, &mut search, screen) {
                    return Ok(ending);
                }
                if search {
                    break;
                }
            }
            if !search {
                break;
            }
        }
        screen.draw(app).map_err(io_error)?;
    }
}

/// Carries out what a key asks; the ending when it leaves. A changed query
/// or filter begins a new generation and sets `search`.
fn handle(
    app: &mut App,
    key: KeyEvent,
    search: &mut bool,
    screen: &mut dyn Screen,
) -> Option<Ending> {
    match app.handle(key) {
        Action::Redraw => {}
        Action::Search => {
            app.begin_search();
            *search = true;
        }
        Action::Open {
            session_id,
            message_id,
        } => match screen.conversation(&session_id, message_id) {
            Ok(reading) => app.show_reading(reading),
            Err(error) => app.notice = Some(format!("cannot read {session_id}: {error}")),
        },
        Action::Copy(id) => {
            app.notice = Some(match copy_to_clipboard(&id) {
                Ok(()) => format!("copied {id} (OSC 52)"),
                Err(error) => format!("cannot copy: {error}"),
            });
        }
        Action::Resume(id) => return Some(Ending::Resume(id)),
        Action::Quit => return Some(Ending::Quit),
        Action::Interrupt => return Some(Ending::Interrupted),
    }
    None
}

#[cfg(test)]
mod tests;
