//! `search -i`: search as you type, in a terminal UI (ratatui on crossterm).
//!
//! * `app`: the state and what each key does (pure, tested without a terminal);
//! * `filters`: the source / role / since filters the keys cycle;
//! * `worker`: the event loop and the search thread it asks;
//! * `reads`: the searches (partial answers first, where the store has them)
//!   and the conversation reads, on the read-only handle;
//! * `draw`: the screen; `wrap`: the conversation's rows;
//! * `terminal`: raw mode and the alternate screen, always restored, and the
//!   OSC 52 clipboard escape.
//!
//! The loop never waits for a search: searches run on a thread of their
//! own, the next edit cancels the running one, and keys already waiting are
//! handled first, so a burst of typing (a paste, a fast typist on a big
//! store) costs one search, not one per key. A query whose exact answer
//! takes a while shows a partial one first (the newest matches), marked as
//! such until the exact answer replaces it. Keys that act on a hit wait for
//! an answer to the query typed: an Enter typed after a burst opens a hit
//! of the final query.

mod app;
mod draw;
mod filters;
mod reads;
mod terminal;
mod worker;
mod wrap;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event;

use self::app::{App, Reading};
use self::filters::Filters;
use self::reads::Searcher;
use self::terminal::{StdoutOnTerminal, TerminalGuard, require_terminal, terminal_error};
use self::worker::{Message, Screen, Searches};
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

/// The terminal the loop draws on, and the store it reads conversations from.
struct Tui<'a> {
    terminal: Terminal<CrosstermBackend<io::Stdout>>,
    searcher: &'a Searcher<'a>,
}

impl Screen for Tui<'_> {
    fn conversation(&self, session_id: &str, message_id: i64) -> Result<Reading, String> {
        self.searcher
            .conversation(session_id, message_id)
            .map_err(|e| e.to_string())
    }

    fn draw(&mut self, app: &mut App) -> io::Result<()> {
        self.terminal.draw(|frame| draw::draw(frame, app)).map(drop)
    }
}

/// How often the key reader looks whether the loop ended.
const KEY_POLL: Duration = Duration::from_millis(50);

/// The event loop with its two threads (the key reader, the searches),
/// until a key leaves; how it was left.
fn run(app: &mut App, searcher: &Searcher<'_>) -> CliResult<Ending> {
    let io_error = |e: io::Error| terminal_error("drawing", &e);
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout())).map_err(io_error)?;
    terminal.clear().map_err(io_error)?;
    let mut tui = Tui { terminal, searcher };
    let (to_loop, messages) = mpsc::channel();
    let (requests, for_search) = mpsc::channel();
    let ended = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let answers = to_loop.clone();
        scope.spawn(move || worker::serve(searcher, for_search, answers));
        let ended = &ended;
        scope.spawn(move || read_keys(ended, &to_loop));
        let mut searches = Searches::new(requests);
        let ending = worker::event_loop(app, &mut searches, &messages, &mut tui);
        // The search running is cancelled; its thread ends with `searches`.
        searches.stop();
        drop(searches);
        ended.store(true, Ordering::SeqCst);
        ending
    })
}

/// The key reader: the terminal's events to the loop, until it ends (or
/// the terminal fails, which the loop reports).
fn read_keys(ended: &AtomicBool, to_loop: &mpsc::Sender<Message>) {
    while !ended.load(Ordering::SeqCst) {
        let event = match event::poll(KEY_POLL) {
            Ok(false) => continue,
            Ok(true) => event::read(),
            Err(error) => Err(error),
        };
        let failed = event.is_err();
        if to_loop.send(Message::Terminal(event)).is_err() || failed {
            return;
        }
    }
}
