//! `hermes-state`: inspect and maintain a Hermes Agent session store
//! (`~/.hermes/state.db`) from the command line. See `docs/CLI.md`.
//!
//! Exit codes: 0 success, 1 a failed operation, 2 bad usage, 130 interrupted
//! (Ctrl-C in `search -i`). Errors are one line on stderr:
//! `error: <what>: <detail>; <what to do>`.
//!
//! Output goes through `writeln!` on locked handles rather than `println!`,
//! so a closed pipe (`hermes-state export | head`) ends the program quietly
//! instead of panicking; the workspace's `print_stdout` / `print_stderr`
//! lints therefore need no exception here.

mod cli;
mod clock;
mod columns;
mod commands;
mod confirm;
mod error;
mod files;
mod interactive;
mod local_time;
mod output;
mod pager;
mod progress;
mod render;
mod row_format;
mod session_arg;
mod store;
mod time_window;

use std::io::Write;
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches};

use crate::cli::Cli;
use crate::error::CliError;
use crate::output::Output;

fn main() -> ExitCode {
    // A panic is a bug, but the user still gets one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let detail = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let _ = writeln!(
            std::io::stderr(),
            "error: internal error ({detail}); please report this as a bug of hermes-state"
        );
    }));

    // The zone of human times, needed by clap's parsers of dates (`--since`).
    local_time::choose(local_time::utc_flag_in(std::env::args_os()));
    // clap prints its own usage errors and exits 2 (0 for --help / --version).
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let out = Output::new(cli.json, cli.quiet, cli.verbose);
    match commands::run(cli, out, command_name(&matches)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report(&error),
    }
}

/// The command as messages name it (`sessions show`): its spelling in the
/// command line's definition, aliases resolved.
fn command_name(matches: &ArgMatches) -> String {
    let mut names = Vec::new();
    let mut at = matches;
    while let Some((name, sub)) = at.subcommand() {
        names.push(name);
        at = sub;
    }
    names.join(" ")
}

fn report(error: &CliError) -> ExitCode {
    if error.broken_pipe {
        return ExitCode::SUCCESS;
    }
    if error.code == error::EXIT_INTERRUPTED {
        // Interrupted by the user, who knows it: the status says it, no line.
        return ExitCode::from(error.code);
    }
    let _ = writeln!(std::io::stderr().lock(), "{error}");
    ExitCode::from(error.code)
}
