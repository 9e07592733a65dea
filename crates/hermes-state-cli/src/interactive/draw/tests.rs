//! The screen, drawn on ratatui's test backend.

use clap::Parser;
use hermes_state::SearchHit;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier, Style};

use super::*;
use crate::cli::{Cli, Command};
use crate::interactive::app::ReadLine;
use crate::interactive::filters::Filters;

fn app(query: &str) -> App {
    let args = match Cli::try_parse_from(["hermes-state", "search", "-i", "--role", "user"])
        .expect("valid")
        .command
    {
        Command::Search(args) => args,
        other => panic!("not a search: {other:?}"),
    };
    App::new(query.to_owned(), Filters::new(&args, &["cli".to_owned()]))
}

fn hit(n: i64, snippet: &str) -> SearchHit {
    SearchHit {
        id: n,
        session_id: format!("20260724_1200{n:02}_abcdef"),
        role: "user".to_owned(),
        snippet: snippet.to_owned(),
        timestamp: 1_784_894_400.0,
        tool_name: None,
        source: Some("telegram".to_owned()),
        model: None,
        session_started: None,
        context: Vec::new(),
    }
}

/// The screen's rows as text, after drawing `app` on a `width`×`height` terminal.
fn screen(app: &mut App, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|frame| draw(frame, app)).expect("draw");
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

#[test]
fn the_list_shows_the_query_the_hits_the_results_and_the_filters() {
    let mut app = app("bike");
    app.set_outcome(Outcome::Hits(vec![
        hit(1, "my >>>bike<<< has a flat"),
        hit(2, "the >>>bike<<< shop"),
    ]));
    let rows = screen(&mut app, 100, 8);
    assert_eq!(rows[0], "search › bike");
    assert!(
        rows[1].starts_with(
            "▶ 20260724_120001_abcdef  2026-07-24 12:00  telegram   user      my bike has a flat"
        ),
        "{rows:?}"
    );
    assert!(rows[2].starts_with("  20260724_120002_abcdef"), "{rows:?}");
    assert_eq!(rows[6], "2 results · source: any · role: user · since: any");
    assert!(rows[7].starts_with("↑↓ PgUp PgDn move · Enter read · Tab resume"));
    assert_eq!(
        (app.page, app.width),
        (5, 98),
        "the list's size is recorded"
    );
}

#[test]
fn an_unparsable_query_shows_its_problem_not_an_empty_list() {
    let mut app = app("\"unclosed");
    app.set_outcome(Outcome::Problem(
        "the query has an unclosed quote".to_owned(),
    ));
    let rows = screen(&mut app, 100, 6);
    assert_eq!(rows[1], "the query has an unclosed quote");
    assert!(rows[4].starts_with("the query has an unclosed quote · source: any"));
}

#[test]
fn a_notice_replaces_the_count_until_the_next_key() {
    let mut app = app("bike");
    app.set_outcome(Outcome::Hits(vec![hit(1, ">>>bike<<<")]));
    app.notice = Some("copied 20260724_120001_abcdef (OSC 52)".to_owned());
    let rows = screen(&mut app, 100, 6);
    assert!(rows[4].starts_with("copied 20260724_120001_abcdef (OSC 52) · source: any"));
}

#[test]
fn the_conversation_view_marks_the_hit_and_says_where_it_is() {
    let mut app = app("bike");
    let line = |text: &str, kind| ReadLine {
        text: text.to_owned(),
        kind,
    };
    screen(&mut app, 60, 7); // the loop has drawn the list before a hit opens
    app.show_reading(Reading::new(
        "s1".to_owned(),
        vec![
            line("Session s1", LineKind::Header),
            line("── user  #1", LineKind::Heading),
            line("before", LineKind::Body),
            line("── assistant  #2", LineKind::HitHeading),
            line("the bike", LineKind::HitBody),
            line("── user  #3", LineKind::Heading),
        ],
    ));
    let rows = screen(&mut app, 60, 7);
    assert_eq!(rows[1], "  ── user  #1", "the hit two rows below the top");
    assert_eq!(rows[3], "▌ ── assistant  #2");
    assert_eq!(rows[4], "▌ the bike");
    assert!(
        rows[5].starts_with("session s1 · rows 2–5 of 6 · source: any · role: user"),
        "{rows:?}"
    );
    assert!(rows[6].starts_with("↑↓ PgUp PgDn Home End scroll · Esc back"));
}

#[test]
fn snippet_markers_become_highlighted_terms() {
    let base = Style::default();
    let spans = snippet_spans("a >>>bike<<< and\n>>>bikes<<<", base);
    let texts: Vec<&str> = spans.iter().map(|s| s.content.as_ref()).collect();
    assert_eq!(texts, ["a ", "bike", " and ", "bikes"]);
    assert_eq!(spans[1].style.fg, Some(Color::Yellow));
    assert!(spans[1].style.add_modifier.contains(Modifier::BOLD));
    assert_eq!(spans[2].style, base);
}

#[test]
fn no_color_draws_without_colours_but_keeps_the_selection_visible() {
    let mut app = app("bike");
    app.colors = false;
    app.set_outcome(Outcome::Hits(vec![hit(1, "my >>>bike<<<")]));
    let mut terminal = Terminal::new(TestBackend::new(80, 6)).expect("test backend");
    terminal.draw(|frame| draw(frame, &mut app)).expect("draw");
    let buffer = terminal.backend().buffer();
    assert!(
        buffer
            .content
            .iter()
            .all(|cell| cell.fg == Color::Reset && cell.bg == Color::Reset)
    );
    assert!(buffer[(0, 1)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn ids_of_different_lengths_line_up_in_one_column() {
    let mut app = app("parse");
    let mut short = hit(1, ">>>parse<<<");
    short.session_id = "demo-refactor".to_owned();
    let mut long = hit(2, ">>>parse<<<");
    long.session_id = "demo-refactor-docs".to_owned();
    app.set_outcome(Outcome::Hits(vec![short, long]));
    let rows = screen(&mut app, 100, 6);
    assert!(
        rows[1].starts_with("▶ demo-refactor       2026-07-24 12:00"),
        "{rows:?}"
    );
    assert!(
        rows[2].starts_with("  demo-refactor-docs  2026-07-24 12:00"),
        "{rows:?}"
    );
}

#[test]
fn wide_sources_keep_the_columns_aligned() {
    let mut app = app("东京");
    let mut wide = hit(1, ">>>东京<<<");
    wide.source = Some("微信".to_owned());
    app.set_outcome(Outcome::Hits(vec![wide, hit(2, ">>>东京<<<")]));
    let mut terminal = Terminal::new(TestBackend::new(100, 6)).expect("test backend");
    terminal.draw(|frame| draw(frame, &mut app)).expect("draw");
    let buffer = terminal.backend().buffer();
    // The terminal column where a row's role starts: the source column is
    // 10 columns wide whatever its characters (a CJK one takes two).
    let role_column = |y: u16| {
        (0..96u16).find(|&x| {
            (0..4u16).all(|i| buffer[(x + i, y)].symbol() == &"user"[i as usize..=i as usize])
        })
    };
    assert_eq!(role_column(1), role_column(2));
    assert!(role_column(1).is_some());
}

#[test]
fn a_query_without_its_answer_says_searching_and_a_partial_answer_says_so() {
    let mut app = app("bike");
    app.set_outcome(Outcome::Hits(vec![hit(1, "old >>>bik<<<")]));
    // The query changed: the earlier hits stay, dimmed, none selected.
    let generation = app.begin_search();
    let rows = screen(&mut app, 80, 6);
    assert!(rows[4].starts_with("searching… · source: any"), "{rows:?}");
    assert!(
        rows[1].starts_with("  ") && rows[1].contains("old bik"),
        "{rows:?}"
    );
    // A partial answer: counted as found so far, and marked.
    app.take_answer(
        generation,
        crate::interactive::app::Answer::Partial(vec![hit(2, "new"), hit(3, "newer")]),
    );
    let rows = screen(&mut app, 120, 6);
    assert!(
        rows[4].starts_with("2 results so far (partial — still searching) · source: any"),
        "{rows:?}"
    );
    assert!(
        rows[1].starts_with("▶ ") && rows[1].contains("new"),
        "{rows:?}"
    );
    // The final answer replaces it, unmarked.
    app.take_answer(
        generation,
        crate::interactive::app::Answer::Final(Outcome::Hits(vec![hit(3, "newer")])),
    );
    let rows = screen(&mut app, 120, 6);
    assert!(rows[4].starts_with("1 result · source: any"), "{rows:?}");
}
