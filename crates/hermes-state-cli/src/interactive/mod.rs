//! `search -i`: search as you type, in a terminal UI (ratatui on crossterm).
//!
//! * `app`: the state and what each key does (pure, tested without a terminal);
//! * `filters`: the source / role / since filters the keys cycle;
//! * `reads`: the searches and the conversation reads, on the read-only handle;
//! * `draw`: the screen; `wrap`: the conversation's rows;
//! * `terminal`: raw mode and the alternate screen, always restored, and the
//!   OSC 52 clipboard escape.
//!
//! The loop searches after every edit, except that keys already waiting are
//! handled first: a burst of typing (a paste, a fast typist on a big store)
//! costs one search, not one per key, and an Enter typed after them opens a
//! hit of the final query.

mod app;
mod draw;
mod filters;
mod reads;
mod terminal;
mod wrap;

use std::io;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyEventKind};

use self::app::{Action, App};
use self::filters::Filters;
use self::reads::Searcher;
use self::terminal::{
    StdoutOnTerminal, TerminalGuard, copy_to_clipboard, require_terminal, terminal_error,
};
use crate::cli::SearchArgs;
use crate::error::{CliError, CliResult};
use crate::store::{Access, Context};

/// `search -i`
///
/// What it needs is checked before the store is opened: no `--json`, and a
/// terminal to draw on.
pub fn search(ctx: &Context, args: &SearchArgs) -> CliResult {
    if ctx.out.json {
        return Err(
            CliError::usage("search -i draws a screen; --json does not apply")
                .hint("drop --json, or drop -i for `search QUERY --json`"),
        );
    }
    require_terminal()?;
    let db = &*ctx.open(Access::Read)?;
    let scope = crate::commands::search::scope(ctx, db, args)?.sessions;
    let sources = reads::recent_sources(db).map_err(|e| ctx.fail(&e))?;
    let searcher = Searcher::new(db, args, scope);
    let mut app = App::new(args.query.clone(), Filters::new(args, &sources));
    app.colors = ctx.out.color;
    let ending = {
        // Dropped in reverse: the terminal restored first, then stdout.
        let _stdout = StdoutOnTerminal::redirect()?;
        let _guard = TerminalGuard::enter()?;
        run(&mut app, &searcher)?
    };
    // The terminal is back to normal: the line lands on the shell's screen.
    match ending {
        Ending::Resume(id) => {
            let id = db
                .resolve_resume_session_id(&id)
                .map_err(|e| ctx.fail(&e))?;
            ctx.out.line(format!("hermes --resume {id}"))?;
            Ok(())
        }
        Ending::Quit => Ok(()),
        Ending::Interrupted => Err(CliError::interrupted()),
    }
}

/// How the event loop ended.
enum Ending {
    /// Tab: resume this session.
    Resume(String),
    /// Esc: nothing chosen.
    Quit,
    /// Ctrl-C: nothing chosen, and the exit status says so (130, as a shell
    /// reports a program stopped by SIGINT).
    Interrupted,
}

/// The event loop, until a key leaves; how it was left.
fn run(app: &mut App, searcher: &Searcher<'_>) -> CliResult<Ending> {
    let io_error = |e: io::Error| terminal_error("drawing", &e);
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout())).map_err(io_error)?;
    terminal.clear().map_err(io_error)?;
    let mut pending = !app.query.is_empty();
    loop {
        let waiting =
            event::poll(Duration::ZERO).map_err(|e| terminal_error("reading keys", &e))?;
        if pending && !waiting {
            app.set_outcome(searcher.search(&app.query, &app.filters));
            pending = false;
        }
        if !pending {
            terminal
                .draw(|frame| draw::draw(frame, app))
                .map_err(io_error)?;
        }
        let Event::Key(key) = event::read().map_err(|e| terminal_error("reading keys", &e))? else {
            continue; // a resize: drawn again on the next turn
        };
        if key.kind != KeyEventKind::Press {
            continue;
        }
        if pending && !App::edits_query(&key) {
            app.set_outcome(searcher.search(&app.query, &app.filters));
            pending = false;
        }
        match app.handle(key) {
            Action::Redraw => {}
            Action::Search => pending = true,
            Action::Open {
                session_id,
                message_id,
            } => match searcher.conversation(&session_id, message_id) {
                Ok(reading) => app.show_reading(reading),
                Err(error) => app.notice = Some(format!("cannot read {session_id}: {error}")),
            },
            Action::Copy(id) => {
                app.notice = Some(match copy_to_clipboard(&id) {
                    Ok(()) => format!("copied {id} (OSC 52)"),
                    Err(error) => format!("cannot copy: {error}"),
                });
            }
            Action::Resume(id) => return Ok(Ending::Resume(id)),
            Action::Quit => return Ok(Ending::Quit),
            Action::Interrupt => return Ok(Ending::Interrupted),
        }
    }
}
