//! Drawing the interactive search: the query line, the hits or the
//! conversation, the status line (results, active filters, the query's
//! problem, whether the search still runs), and the keys. While the query
//! typed has no answer yet the list shows the previous one dimmed, without
//! a selection, and the status line says `searching…`; a partial answer
//! says so (`partial — still searching`) until the final one replaces it. Drawing reads the state, except for the page
//! size and width it records for the keys that move by a page.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, LineKind, Outcome, Reading, View};
use crate::columns::{fit, width};
use crate::output::{datetime, one_line};

/// The prompt in front of the query.
const PROMPT: &str = "search › ";

/// The keys of the list, as the bottom line shows them.
const LIST_KEYS: &str = "↑↓ PgUp PgDn move · Enter read · Tab resume · Ctrl-Y copy id · \
                         Ctrl-S source · Ctrl-R role · Ctrl-T since · Esc quit";
/// The keys of the conversation view.
const READING_KEYS: &str = "↑↓ PgUp PgDn Home End scroll · Esc back · Tab resume · Ctrl-Y copy id";

/// The status line while the query typed has no answer yet.
pub const SEARCHING: &str = "searching…";

/// How the status line marks a partial answer, after its count.
pub const PARTIAL: &str = "(partial — still searching)";

/// The widest session-id column of the list; longer ids are cut with `…`.
const MAX_ID_WIDTH: usize = 40;

/// The gutter in front of each conversation row (`▌ ` marks the hit).
const GUTTER: u16 = 2;

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, app: &mut App) {
    let [query, body, status, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    app.page = usize::from(body.height);
    app.width = usize::from(body.width.saturating_sub(GUTTER));

    let prompt = Line::from(vec![
        Span::styled(PROMPT, Style::default().fg(Color::Cyan)),
        Span::raw(app.query.clone()),
    ]);
    frame.render_widget(Paragraph::new(prompt), query);

    let dim = Style::default().add_modifier(Modifier::DIM);
    match &mut app.view {
        View::List => {
            let cursor = Line::from(format!("{PROMPT}{}", app.query)).width();
            let x = query
                .x
                .saturating_add(u16::try_from(cursor).unwrap_or(u16::MAX));
            frame.set_cursor_position((x.min(query.right().saturating_sub(1)), query.y));
            draw_list(frame, app, body);
            frame.render_widget(Paragraph::new(Span::styled(LIST_KEYS, dim)), keys);
        }
        View::Reading(reading) => {
            reading.fit(app.width, app.page);
            draw_reading(frame, reading, body);
            frame.render_widget(Paragraph::new(Span::styled(READING_KEYS, dim)), keys);
        }
    }
    frame.render_widget(Paragraph::new(status_line(app)), status);
    if !app.colors {
        // NO_COLOR: no colour anywhere; bold, dim and reverse stay.
        for cell in &mut frame.buffer_mut().content {
            cell.set_fg(Color::Reset).set_bg(Color::Reset);
        }
    }
}

/// One row per hit: session, time, source, role, and the snippet with the
/// matched terms highlighted; the selected row is reversed.
fn draw_list(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let hits = app.hits();
    let stale = !app.is_answered();
    let message = match &app.outcome {
        _ if stale && hits.is_empty() => Some("Searching…".to_owned()),
        Outcome::Empty => Some("Type to search every message of the store.".to_owned()),
        Outcome::Hits(hits) if hits.is_empty() => Some("No message matches.".to_owned()),
        Outcome::Problem(problem) => Some(problem.clone()),
        Outcome::Failed(error) => Some(format!("The search failed: {error}")),
        Outcome::Hits(_) => None,
    };
    if let Some(message) = message {
        let style = Style::default().add_modifier(Modifier::DIM);
        frame.render_widget(Paragraph::new(Span::styled(message, style)), area);
        return;
    }
    let shown = || {
        hits.iter()
            .enumerate()
            .skip(app.top)
            .take(usize::from(area.height))
    };
    // One column for the ids on screen, as wide as the widest (within reason).
    let id_width = shown()
        .map(|(_, hit)| width(&hit.session_id))
        .max()
        .unwrap_or(0)
        .min(MAX_ID_WIDTH);
    let rows: Vec<Line<'_>> = shown()
        .map(|(i, hit)| {
            // The hits of an earlier query: shown dimmed, none selected.
            let selected = i == app.selected && !stale;
            let base = if selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else if stale {
                Style::default().add_modifier(Modifier::DIM)
            } else {
                Style::default()
            };
            let mut role = hit.role.clone();
            if let Some(tool) = &hit.tool_name {
                role = format!("{role} {tool}");
            }
            let mut spans = vec![
                Span::styled(if selected { "▶ " } else { "  " }, base),
                Span::styled(
                    format!("{}  ", fit(&hit.session_id, id_width)),
                    base.add_modifier(Modifier::BOLD),
                ),
                Span::styled(
                    format!("{}  ", datetime(hit.timestamp)),
                    base.fg(Color::Gray),
                ),
                Span::styled(
                    format!("{} ", fit(hit.source.as_deref().unwrap_or("?"), 10)),
                    base.fg(Color::Blue),
                ),
                Span::styled(format!("{} ", fit(&role, 9)), base.fg(Color::Cyan)),
            ];
            spans.extend(snippet_spans(&hit.snippet, base));
            Line::from(spans)
        })
        .collect();
    frame.render_widget(Paragraph::new(rows), area);
}

/// A snippet on one line, the terms between the library's `>>>` and `<<<`
/// markers bold yellow and the markers dropped.
pub fn snippet_spans(snippet: &str, base: Style) -> Vec<Span<'static>> {
    let marked = base.fg(Color::Yellow).add_modifier(Modifier::BOLD);
    let flat = one_line(snippet);
    let mut spans = Vec::new();
    let mut parts = flat.split(">>>");
    if let Some(first) = parts.next().filter(|p| !p.is_empty()) {
        spans.push(Span::styled(first.to_owned(), base));
    }
    for part in parts {
        let (term, rest) = part.split_once("<<<").unwrap_or((part, ""));
        spans.push(Span::styled(term.to_owned(), marked));
        if !rest.is_empty() {
            spans.push(Span::styled(rest.to_owned(), base));
        }
    }
    spans
}

/// The conversation's rows from the scroll position; the hit's rows have a
/// `▌` in the gutter and its heading is highlighted.
fn draw_reading(frame: &mut Frame<'_>, reading: &Reading, area: Rect) {
    let rows: Vec<Line<'_>> = reading
        .rows
        .iter()
        .skip(reading.scroll)
        .take(usize::from(area.height))
        .map(|row| {
            let (gutter, style) = match row.kind {
                LineKind::Header => ("  ", Style::default().fg(Color::Gray)),
                LineKind::Heading => ("  ", Style::default().fg(Color::Cyan)),
                LineKind::HitHeading => (
                    "▌ ",
                    Style::default()
                        .fg(Color::Yellow)
                        .add_modifier(Modifier::BOLD),
                ),
                LineKind::Body => ("  ", Style::default()),
                LineKind::HitBody => ("▌ ", Style::default()),
            };
            Line::from(vec![
                Span::styled(gutter, Style::default().fg(Color::Yellow)),
                Span::styled(row.text.clone(), style),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(rows), area);
}

/// The status line: a notice of the last key, else what the search found
/// (or why it could not run), then the active filters.
fn status_line(app: &App) -> Line<'static> {
    let filters = app.filters.describe();
    if let Some(notice) = &app.notice {
        return Line::from(vec![
            Span::styled(notice.clone(), Style::default().fg(Color::Green)),
            Span::raw(format!(" · {filters}")),
        ]);
    }
    if let View::Reading(reading) = &app.view {
        let last = (reading.scroll + app.page).min(reading.rows.len());
        return Line::from(format!(
            "session {} · rows {}–{} of {} · {filters}",
            reading.session_id,
            (reading.scroll + 1).min(last),
            last,
            reading.rows.len()
        ));
    }
    let (found, style) = match &app.outcome {
        _ if !app.is_answered() => (SEARCHING.to_owned(), Style::default().fg(Color::Yellow)),
        Outcome::Hits(hits) if app.partial => (
            format!(
                "{} result{} so far {PARTIAL}",
                hits.len(),
                if hits.len() == 1 { "" } else { "s" }
            ),
            Style::default().fg(Color::Yellow),
        ),
        Outcome::Empty => ("type a query".to_owned(), Style::default()),
        Outcome::Hits(hits) => (
            format!(
                "{} result{}",
                hits.len(),
                if hits.len() == 1 { "" } else { "s" }
            ),
            Style::default(),
        ),
        Outcome::Problem(problem) => (problem.clone(), Style::default().fg(Color::Yellow)),
        Outcome::Failed(error) => (format!("error: {error}"), Style::default().fg(Color::Red)),
    };
    Line::from(vec![
        Span::styled(found, style),
        Span::raw(format!(" · {filters}")),
    ])
}

#[cfg(test)]
mod tests;
