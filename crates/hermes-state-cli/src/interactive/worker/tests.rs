//! The event loop with a fake searcher: answers of a query no longer
//! current are never drawn, the next key cancels a slow search, partial
//! answers are marked until the final one replaces them.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use hermes_state::SearchHit;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};

use super::*;
use crate::cli::{Cli, Command};

fn filters() -> Filters {
    let args = match Cli::try_parse_from(["hermes-state", "search", "-i"])
        .expect("valid")
        .command
    {
        Command::Search(args) => args,
        other => panic!("not a search: {other:?}"),
    };
    Filters::new(&args, &["cli".to_owned()])
}

fn hit(n: i64) -> SearchHit {
    SearchHit {
        id: n,
        session_id: format!("s{n}"),
        role: "user".to_owned(),
        snippet: format!("hit >>>{n}<<<"),
        timestamp: 1_784_894_400.0 + n as f64,
        tool_name: None,
        source: Some("cli".to_owned()),
        model: None,
        session_started: None,
        context: Vec::new(),
    }
}

/// The final answer the fake gives a query: one hit per character, ids
/// from the query's length.
fn final_hits(query: &str) -> Vec<SearchHit> {
    let n = query.chars().count() as i64;
    (0..n).map(|i| hit(100 * n + i)).collect()
}

/// A searcher that answers `slow` only when cancelled (never, that is),
/// and every other query with a partial answer, then after `delay` its
/// final one; it records what it was asked and what was cancelled.
struct Fake {
    slow: &'static str,
    delay: Duration,
    asked: Mutex<Vec<String>>,
    cancelled: Mutex<Vec<(String, Duration)>>,
}

impl Fake {
    fn new(slow: &'static str, delay: Duration) -> Self {
        Fake {
            slow,
            delay,
            asked: Mutex::new(Vec::new()),
            cancelled: Mutex::new(Vec::new()),
        }
    }
}

impl Answering for Fake {
    fn answer(&self, query: &str, _: &Filters, cancel: &Cancel, emit: &mut dyn FnMut(Answer)) {
        self.asked.lock().unwrap().push(query.to_owned());
        let started = Instant::now();
        // A search that would take 10 s, checking its flag as a store does.
        let wait = |limit: Duration| {
            while started.elapsed() < limit {
                if cancel.is_cancelled() {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            true
        };
        if query == self.slow {
            if !wait(Duration::from_secs(10)) {
                self.cancelled
                    .lock()
                    .unwrap()
                    .push((query.to_owned(), started.elapsed()));
            }
            return;
        }
        emit(Answer::Partial(vec![hit(1)]));
        if wait(self.delay) {
            emit(Answer::Final(Outcome::Hits(final_hits(query))));
        }
    }
}

/// What one drawing showed.
#[derive(Debug, Clone, PartialEq)]
struct Drawn {
    query: String,
    answered: bool,
    partial: bool,
    ids: Vec<i64>,
}

/// A screen that records every drawing, and the conversations opened.
#[derive(Default)]
struct Recorder {
    drawn: Vec<Drawn>,
    opened: Arc<Mutex<Vec<(String, i64)>>>,
}

impl Screen for Recorder {
    fn conversation(&self, session_id: &str, message_id: i64) -> Result<Reading, String> {
        self.opened
            .lock()
            .unwrap()
            .push((session_id.to_owned(), message_id));
        Ok(Reading::new(session_id.to_owned(), Vec::new()))
    }

    fn draw(&mut self, app: &mut App) -> io::Result<()> {
        self.drawn.push(Drawn {
            query: app.query.clone(),
            answered: app.is_answered(),
            partial: app.partial,
            ids: app.hits().iter().map(|h| h.id).collect(),
        });
        Ok(())
    }
}

fn press(code: KeyCode) -> Message {
    Message::Terminal(Ok(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))))
}

/// Runs the loop on `fake` with `keys` sent from another thread, each
/// after its pause; the ending and the screen.
fn run(fake: &Fake, keys: Vec<(Duration, Message)>) -> (Ending, Recorder) {
    let mut app = App::new(String::new(), filters());
    let mut screen = Recorder::default();
    let (to_loop, messages) = mpsc::channel();
    let (requests, for_search) = mpsc::channel();
    let ending = std::thread::scope(|scope| {
        let answers = to_loop.clone();
        scope.spawn(move || serve(fake, for_search, answers));
        scope.spawn(move || {
            for (pause, key) in keys {
                std::thread::sleep(pause);
                to_loop.send(key).unwrap();
            }
        });
        let mut searches = Searches::new(requests);
        let ending = event_loop(&mut app, &mut searches, &messages, &mut screen);
        searches.stop();
        ending
    });
    (ending.expect("the loop ends by a key"), screen)
}

#[test]
fn the_next_key_cancels_a_slow_search_whose_answer_is_never_drawn() {
    let fake = Fake::new("a", Duration::from_millis(5));
    let ms = Duration::from_millis;
    let (ending, screen) = run(
        &fake,
        vec![
            (ms(0), press(KeyCode::Char('a'))),
            // The slow search runs by then.
            (ms(100), press(KeyCode::Char('b'))),
            (ms(200), press(KeyCode::Esc)),
        ],
    );
    assert!(matches!(ending, Ending::Quit));
    let cancelled = fake.cancelled.lock().unwrap().clone();
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    assert_eq!(cancelled[0].0, "a");
    // Stopped by the key, not after its 10 s.
    assert!(cancelled[0].1 < Duration::from_secs(2), "{cancelled:?}");
    // While `a` was searched the screen said so, with no hits of it.
    assert!(
        screen
            .drawn
            .iter()
            .filter(|d| d.query == "a")
            .all(|d| !d.answered && d.ids.is_empty()),
        "{:?}",
        screen.drawn
    );
    // `ab` was answered: its partial answer, then its final one.
    let last = screen.drawn.last().unwrap();
    assert_eq!(
        last,
        &Drawn {
            query: "ab".to_owned(),
            answered: true,
            partial: false,
            ids: final_hits("ab").iter().map(|h| h.id).collect(),
        }
    );
}

#[test]
fn a_partial_answer_is_marked_until_the_final_one_replaces_it() {
    let fake = Fake::new("", Duration::from_millis(150));
    let ms = Duration::from_millis;
    let (_, screen) = run(
        &fake,
        vec![
            (ms(0), press(KeyCode::Char('k'))),
            (ms(400), press(KeyCode::Esc)),
        ],
    );
    let answers: Vec<&Drawn> = screen
        .drawn
        .iter()
        .filter(|d| d.query == "k" && d.answered)
        .collect();
    assert_eq!(
        answers.first().map(|d| (d.partial, d.ids.clone())),
        Some((true, vec![1])),
        "{:?}",
        screen.drawn
    );
    assert_eq!(
        answers.last().map(|d| (d.partial, d.ids.clone())),
        Some((false, final_hits("k").iter().map(|h| h.id).collect())),
        "{:?}",
        screen.drawn
    );
    // Once final, never partial again.
    let at = answers.iter().position(|d| !d.partial).unwrap();
    assert!(
        answers[at..].iter().all(|d| !d.partial),
        "{:?}",
        screen.drawn
    );
}

#[test]
fn enter_typed_after_a_query_waits_for_its_answer_and_opens_its_hit() {
    // The final answer comes 100 ms after the partial one; Enter is sent
    // with the query, before either.
    let fake = Fake::new("", Duration::from_millis(100));
    let keys = vec![
        (Duration::ZERO, press(KeyCode::Char('x'))),
        (Duration::ZERO, press(KeyCode::Char('y'))),
        (Duration::ZERO, press(KeyCode::Enter)),
        (Duration::from_millis(400), press(KeyCode::Esc)),
        (Duration::ZERO, press(KeyCode::Esc)),
    ];
    let (ending, screen) = run(&fake, keys);
    assert!(matches!(ending, Ending::Quit));
    // Opened: a hit of `xy`'s answer (its partial one, here: the first
    // answer of the query typed), never one of an earlier query's.
    let opened = screen.opened.lock().unwrap().clone();
    assert_eq!(opened, vec![("s1".to_owned(), 1)]);
    assert_eq!(
        fake.asked.lock().unwrap().last().map(String::as_str),
        Some("xy")
    );
}
