//! Every key of the interactive search, without a terminal or a store.

use clap::Parser;
use hermes_state::SearchHit;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

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
    Filters::new(&args, &["cli".to_owned(), "telegram".to_owned()])
}

fn hit(n: i64) -> SearchHit {
    SearchHit {
        id: n,
        session_id: format!("s{n}"),
        role: "user".to_owned(),
        snippet: format!("hit >>>{n}<<<"),
        timestamp: 1_784_894_400.0,
        tool_name: None,
        source: Some("cli".to_owned()),
        model: None,
        session_started: None,
        context: Vec::new(),
    }
}

/// An app showing `n` hits (ids 1..=n), `page` rows high.
fn app_with(n: i64, page: usize) -> App {
    let mut app = App::new("bike".to_owned(), filters());
    app.page = page;
    app.set_outcome(Outcome::Hits((1..=n).map(hit).collect()));
    app
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(app: &mut App, text: &str) -> Vec<Action> {
    text.chars()
        .map(|c| app.handle(key(KeyCode::Char(c))))
        .collect()
}

#[test]
fn typing_edits_the_query_and_asks_for_a_search_each_time() {
    let mut app = App::new(String::new(), filters());
    assert_eq!(type_text(&mut app, "bik e"), vec![Action::Search; 5]);
    assert_eq!(app.query, "bik e");
    assert_eq!(app.handle(key(KeyCode::Backspace)), Action::Search);
    assert_eq!(app.query, "bik ");
    assert_eq!(app.handle(ctrl('w')), Action::Search);
    assert_eq!(app.query, "");
    type_text(&mut app, "a b");
    assert_eq!(app.handle(ctrl('u')), Action::Search);
    assert_eq!(app.query, "");
    // Shift gives capitals; they are typed, not commands.
    let capital = KeyEvent::new(KeyCode::Char('B'), KeyModifiers::SHIFT);
    assert_eq!(app.handle(capital), Action::Search);
    assert_eq!(app.query, "B");
}

#[test]
fn every_letter_is_typed_and_only_ctrl_u_and_ctrl_w_edit() {
    let mut app = App::new(String::new(), filters());
    // `u` and `w` once cleared the query and deleted a word.
    type_text(&mut app, "queue unwound would work");
    assert_eq!(app.query, "queue unwound would work");
    let letters: String = ('a'..='z').chain('A'..='Z').collect();
    let mut app = App::new(String::new(), filters());
    type_text(&mut app, &letters);
    assert_eq!(app.query, letters);
    // Ctrl with Alt is no edit, Alt alone types nothing.
    let mut app = App::new("docker build".to_owned(), filters());
    let ctrl_alt = KeyModifiers::CONTROL | KeyModifiers::ALT;
    for code in ['u', 'w'] {
        app.handle(KeyEvent::new(KeyCode::Char(code), ctrl_alt));
        app.handle(KeyEvent::new(KeyCode::Char(code), KeyModifiers::ALT));
    }
    assert_eq!(app.query, "docker build");
}

#[test]
fn ctrl_w_deletes_the_last_word_and_the_spaces_after_it() {
    let mut app = App::new("docker build  ".to_owned(), filters());
    app.handle(ctrl('w'));
    assert_eq!(app.query, "docker ");
    app.handle(ctrl('w'));
    assert_eq!(app.query, "");
}

#[test]
fn only_typing_and_deleting_count_as_edits() {
    assert!(App::edits_query(&key(KeyCode::Char('x'))));
    assert!(App::edits_query(&key(KeyCode::Char('u'))));
    assert!(App::edits_query(&ctrl('w')));
    assert!(App::edits_query(&key(KeyCode::Backspace)));
    assert!(App::edits_query(&ctrl('u')));
    for other in [
        key(KeyCode::Enter),
        key(KeyCode::Tab),
        key(KeyCode::Down),
        ctrl('s'),
        ctrl('y'),
        ctrl('c'),
    ] {
        assert!(!App::edits_query(&other), "{other:?}");
    }
}

#[test]
fn arrows_and_pages_move_the_selection_within_the_hits_and_keep_it_in_view() {
    let mut app = app_with(25, 10);
    assert_eq!(app.handle(key(KeyCode::Up)), Action::Redraw);
    assert_eq!(app.selected, 0);
    app.handle(key(KeyCode::Down));
    app.handle(key(KeyCode::Down));
    assert_eq!((app.selected, app.top), (2, 0));
    app.handle(key(KeyCode::PageDown));
    assert_eq!((app.selected, app.top), (12, 3));
    app.handle(key(KeyCode::PageDown));
    app.handle(key(KeyCode::PageDown));
    assert_eq!((app.selected, app.top), (24, 15), "clamped to the last hit");
    app.handle(key(KeyCode::PageUp));
    assert_eq!((app.selected, app.top), (14, 14));
    app.handle(key(KeyCode::Home));
    assert_eq!((app.selected, app.top), (0, 0));
    app.handle(key(KeyCode::End));
    assert_eq!(app.selected_hit().map(|h| h.id), Some(25));
}

#[test]
fn a_new_answer_selects_its_first_hit() {
    let mut app = app_with(25, 10);
    app.handle(key(KeyCode::End));
    app.set_outcome(Outcome::Hits(vec![hit(7)]));
    assert_eq!((app.selected, app.top), (0, 0));
    assert_eq!(app.selected_hit().map(|h| h.id), Some(7));
}

#[test]
fn enter_opens_the_selected_hit_and_does_nothing_without_hits() {
    let mut app = app_with(3, 10);
    app.handle(key(KeyCode::Down));
    assert_eq!(
        app.handle(key(KeyCode::Enter)),
        Action::Open {
            session_id: "s2".to_owned(),
            message_id: 2,
        }
    );
    let mut empty = App::new("nothing".to_owned(), filters());
    empty.set_outcome(Outcome::Hits(Vec::new()));
    assert_eq!(empty.handle(key(KeyCode::Enter)), Action::Redraw);
    let mut broken = App::new("\"unclosed".to_owned(), filters());
    broken.set_outcome(Outcome::Problem("unbalanced quote".to_owned()));
    assert_eq!(broken.handle(key(KeyCode::Enter)), Action::Redraw);
    assert_eq!(broken.handle(key(KeyCode::Tab)), Action::Redraw);
}

#[test]
fn tab_resumes_and_ctrl_y_copies_the_selected_session() {
    let mut app = app_with(3, 10);
    app.handle(key(KeyCode::Down));
    app.handle(key(KeyCode::Down));
    assert_eq!(app.handle(ctrl('y')), Action::Copy("s3".to_owned()));
    assert_eq!(
        app.handle(key(KeyCode::Tab)),
        Action::Resume("s3".to_owned())
    );
}

#[test]
fn esc_quits_the_list_and_ctrl_c_interrupts_it() {
    let mut app = app_with(3, 10);
    assert_eq!(app.handle(key(KeyCode::Esc)), Action::Quit);
    assert_eq!(app.handle(ctrl('c')), Action::Interrupt);
}

#[test]
fn filter_keys_step_their_ring_and_search_again() {
    let mut app = app_with(3, 10);
    assert_eq!(app.handle(ctrl('s')), Action::Search);
    assert_eq!(app.handle(ctrl('r')), Action::Search);
    assert_eq!(app.handle(ctrl('t')), Action::Search);
    assert_eq!(
        app.filters.describe(),
        "source: cli · role: user · since: 1h"
    );
    assert_eq!(app.query, "bike", "filter keys are not typed");
}

fn reading(lines: usize, hit_at: usize) -> Reading {
    let lines = (0..lines)
        .map(|i| ReadLine {
            text: format!("line {i}"),
            kind: if i == hit_at {
                LineKind::HitHeading
            } else {
                LineKind::Body
            },
        })
        .collect();
    Reading::new("s2".to_owned(), lines)
}

#[test]
fn a_conversation_opens_on_its_hit_and_scrolls_within_its_rows() {
    let mut app = app_with(3, 10);
    app.show_reading(reading(40, 20));
    let View::Reading(view) = &app.view else {
        panic!("not reading");
    };
    assert_eq!(view.scroll, 18, "the hit two rows below the top");
    let scroll = |app: &App| match &app.view {
        View::Reading(r) => r.scroll,
        View::List => panic!("back in the list"),
    };
    app.handle(key(KeyCode::Up));
    assert_eq!(scroll(&app), 17);
    app.handle(key(KeyCode::PageDown));
    app.handle(key(KeyCode::PageDown));
    assert_eq!(scroll(&app), 30, "the last row stays at the bottom");
    app.handle(key(KeyCode::Home));
    assert_eq!(scroll(&app), 0);
    app.handle(key(KeyCode::End));
    assert_eq!(scroll(&app), 30);
    // Typing does not reach the query while reading.
    assert_eq!(app.handle(key(KeyCode::Char('x'))), Action::Redraw);
    assert_eq!(app.query, "bike");
    assert_eq!(app.handle(ctrl('y')), Action::Copy("s2".to_owned()));
    assert_eq!(app.handle(key(KeyCode::Esc)), Action::Redraw);
    assert_eq!(app.view, View::List);
    assert_eq!(
        app.selected_hit().map(|h| h.id),
        Some(1),
        "the list is as it was"
    );
}

#[test]
fn tab_in_a_conversation_resumes_it_and_ctrl_c_quits() {
    let mut app = app_with(3, 10);
    app.show_reading(reading(5, 1));
    assert_eq!(
        app.handle(key(KeyCode::Tab)),
        Action::Resume("s2".to_owned())
    );
    assert_eq!(app.handle(ctrl('c')), Action::Interrupt);
}

#[test]
fn long_lines_are_wrapped_to_the_width_and_rewrapped_when_it_changes() {
    let mut app = app_with(1, 10);
    app.width = 10;
    app.show_reading(Reading::new(
        "s1".to_owned(),
        vec![ReadLine {
            text: "the bike shop is open".to_owned(),
            kind: LineKind::HitBody,
        }],
    ));
    let View::Reading(view) = &mut app.view else {
        panic!("not reading");
    };
    let texts = |v: &Reading| v.rows.iter().map(|r| r.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(view), ["the bike", "shop is", "open"]);
    assert!(view.rows.iter().all(|r| r.kind == LineKind::HitBody));
    view.fit(40, 10);
    assert_eq!(texts(view), ["the bike shop is open"]);
}

#[test]
fn a_conversation_shorter_than_the_view_is_shown_from_its_start() {
    let mut app = app_with(1, 30);
    app.show_reading(reading(20, 15));
    let View::Reading(view) = &app.view else {
        panic!("not reading");
    };
    assert_eq!(view.scroll, 0);
}

#[test]
fn a_hit_near_the_start_opens_the_conversation_at_its_top() {
    let mut app = app_with(1, 30);
    app.show_reading(reading(100, 20));
    let View::Reading(view) = &app.view else {
        panic!("not reading");
    };
    assert_eq!(view.scroll, 0, "the hit's first rows fit below the header");
    app.view = View::List;
    app.show_reading(reading(100, 26));
    let View::Reading(view) = &app.view else {
        panic!("not reading");
    };
    assert_eq!(view.scroll, 24, "the hit two rows below the top");
}

#[test]
fn a_key_clears_the_last_notice() {
    let mut app = app_with(3, 10);
    app.notice = Some("copied s1".to_owned());
    app.handle(key(KeyCode::Down));
    assert_eq!(app.notice, None);
}

/// A key of the property tests below, and what it does to a query.
#[derive(Debug, Clone)]
enum Typed {
    /// A character, typed as a terminal reports it (capitals with Shift).
    Char(char),
    Backspace,
    CtrlU,
    CtrlW,
}

impl Typed {
    fn event(&self) -> KeyEvent {
        match *self {
            Typed::Char(c) if c.is_uppercase() => {
                KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT)
            }
            Typed::Char(c) => key(KeyCode::Char(c)),
            Typed::Backspace => key(KeyCode::Backspace),
            Typed::CtrlU => ctrl('u'),
            Typed::CtrlW => ctrl('w'),
        }
    }

    /// The same edit on a plain string: the model the app must follow.
    fn apply(&self, query: &mut String) {
        match *self {
            Typed::Char(c) => query.push(c),
            Typed::Backspace => {
                query.pop();
            }
            Typed::CtrlU => query.clear(),
            Typed::CtrlW => {
                let word = query.trim_end();
                let start = word.rfind(char::is_whitespace).map_or(0, |i| {
                    i + word[i..].chars().next().map_or(1, char::len_utf8)
                });
                query.truncate(start);
            }
        }
    }
}

fn typed() -> impl proptest::strategy::Strategy<Value = Typed> {
    use proptest::prelude::*;
    prop_oneof![
        8 => any::<char>().prop_map(Typed::Char),
        4 => proptest::char::range('a', 'z').prop_map(Typed::Char),
        1 => Just(Typed::Backspace),
        1 => Just(Typed::CtrlU),
        1 => Just(Typed::CtrlW),
    ]
}

proptest::proptest! {
    /// Whatever is typed is the query, character for character: no
    /// printable key is a command.
    #[test]
    fn the_query_is_what_was_typed(text in proptest::prelude::any::<String>()) {
        let mut app = App::new(String::new(), filters());
        for c in text.chars() {
            proptest::prop_assert_eq!(app.handle(Typed::Char(c).event()), Action::Search);
        }
        proptest::prop_assert_eq!(&app.query, &text);
    }

    /// Typing mixed with Backspace, Ctrl-U and Ctrl-W leaves the query a
    /// plain string model of the same keys leaves.
    #[test]
    fn editing_keys_do_to_the_query_what_they_say(
        start in "[a-z ]{0,12}",
        keys in proptest::collection::vec(typed(), 0..64),
    ) {
        let mut app = App::new(start.clone(), filters());
        let mut model = start;
        for k in &keys {
            proptest::prop_assert_eq!(app.handle(k.event()), Action::Search);
            k.apply(&mut model);
            proptest::prop_assert_eq!(&app.query, &model, "after {:?}", k);
        }
    }
}

#[test]
fn only_answers_of_the_current_generation_are_taken() {
    let mut app = App::new(String::new(), filters());
    type_text(&mut app, "ab");
    let first = app.begin_search();
    let second = app.begin_search();
    assert!(!app.is_answered());
    // The answer of a query no longer current is dropped.
    assert!(!app.take_answer(first, Answer::Final(Outcome::Hits(vec![hit(9)]))));
    assert!(app.hits().is_empty() && !app.is_answered());
    // A partial answer, then the final one; a late partial one is dropped.
    assert!(app.take_answer(second, Answer::Partial(vec![hit(3), hit(2)])));
    assert!(app.is_answered() && app.partial);
    app.handle(key(KeyCode::Down));
    assert_eq!(app.selected_hit().map(|h| h.id), Some(2));
    assert!(app.take_answer(second, Answer::Final(Outcome::Hits(vec![hit(1), hit(2)]))));
    assert!(!app.partial);
    // The hit selected in the partial answer stays selected.
    assert_eq!(app.selected_hit().map(|h| h.id), Some(2));
    assert!(!app.take_answer(second, Answer::Partial(vec![hit(5)])));
    assert_eq!(app.hits().len(), 2);
    // Without a key moving it, the final answer's first hit is selected.
    let third = app.begin_search();
    app.take_answer(third, Answer::Partial(vec![hit(3), hit(2)]));
    app.take_answer(third, Answer::Final(Outcome::Hits(vec![hit(2), hit(3)])));
    assert_eq!(app.selected_hit().map(|h| h.id), Some(2));
}

#[test]
fn keys_on_hits_wait_for_an_answer_to_the_query_typed() {
    let mut app = app_with(3, 10);
    app.begin_search();
    // Hits of an earlier query: Enter, Tab, arrows and Ctrl-Y wait ...
    for k in [
        key(KeyCode::Enter),
        key(KeyCode::Tab),
        key(KeyCode::Down),
        ctrl('y'),
    ] {
        assert!(app.must_wait(&k, false), "{k:?}");
    }
    // ... typing, the filters and leaving do not, unless keys wait already.
    for k in [
        key(KeyCode::Char('x')),
        key(KeyCode::Backspace),
        ctrl('s'),
        ctrl('t'),
    ] {
        assert!(!app.must_wait(&k, false), "{k:?}");
        assert!(app.must_wait(&k, true), "{k:?}");
    }
    for k in [key(KeyCode::Esc), ctrl('c')] {
        assert!(!app.must_wait(&k, true), "{k:?}");
    }
    let now = app.generation;
    app.take_answer(now, Answer::Partial(vec![hit(4)]));
    assert!(!app.must_wait(&key(KeyCode::Enter), false));
}
