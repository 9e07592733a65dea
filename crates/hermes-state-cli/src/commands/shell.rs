//! `completions` and `man`: both generated from the clap definition in
//! `cli.rs`, so they name exactly the commands and options that exist. They
//! never open a store.

use std::io::{self, Write};

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::error::CliResult;

/// The program's name, as the scripts and the page call it.
const BIN: &str = "hermes-state";

/// `completions SHELL`: the completion script on stdout.
pub fn completions(shell: Shell) -> CliResult {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, BIN, &mut script);
    write_stdout(&script)
}

/// `man`: the man page (roff) on stdout: clap_mangen's page for the
/// program (name, synopsis, global options, the command list), then a
/// COMMANDS section with every command and its options, so
/// `man hermes-state` alone documents everything.
pub fn man() -> CliResult {
    let mut command = Cli::command();
    command.build();
    let mut page = Vec::new();
    // clap_mangen's whole-page render would list the commands as pages of
    // their own (hermes-state-sessions(1)) that do not exist; one page here.
    let manual = clap_mangen::Man::new(command.clone());
    manual.render_title(&mut page)?;
    manual.render_name_section(&mut page)?;
    manual.render_synopsis_section(&mut page)?;
    manual.render_description_section(&mut page)?;
    manual.render_options_section(&mut page)?;
    writeln!(page, ".SH COMMANDS")?;
    for group in command.get_subcommands().filter(|c| c.get_name() != "help") {
        let leaves: Vec<&clap::Command> = group.get_subcommands().collect();
        if leaves.is_empty() {
            render_command(&mut page, &format!("{BIN} {}", group.get_name()), group)?;
        }
        for leaf in leaves.into_iter().filter(|c| c.get_name() != "help") {
            let path = format!("{BIN} {} {}", group.get_name(), leaf.get_name());
            render_command(&mut page, &path, leaf)?;
        }
    }
    writeln!(page, ".SH ENVIRONMENT")?;
    writeln!(
        page,
        ".TP\n\\fBHERMES_HOME\\fR\nThe agent's folder: the store is $HERMES_HOME/state.db unless \\fB\\-\\-db\\fR is given."
    )?;
    writeln!(
        page,
        ".TP\n\\fBNO_COLOR\\fR\nWhen set and not empty, no colours, even on a terminal."
    )?;
    if let Some(after) = command.get_after_help() {
        writeln!(page, ".SH FILES\n{}", roff(&after.to_string()))?;
    }
    manual.render_version_section(&mut page)?;
    write_stdout(&page)
}

/// `.SS "hermes-state sessions delete"`, what it does, and its own options
/// (the global ones are on the page once, under OPTIONS).
fn render_command(page: &mut Vec<u8>, path: &str, command: &clap::Command) -> io::Result<()> {
    writeln!(page, ".SS \"{}\"", roff(path))?;
    if let Some(about) = command.get_long_about().or(command.get_about()) {
        writeln!(page, "{}", roff(&about.to_string()))?;
    }
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if arg.is_global_set() || arg.is_hide_set() || id == "help" || id == "version" {
            continue;
        }
        let value = arg
            .get_value_names()
            .and_then(|names| names.first())
            .map_or_else(|| id.to_uppercase(), ToString::to_string);
        let name = match (arg.get_short(), arg.get_long()) {
            (Some(short), Some(long)) => format!("\\fB-{short}\\fR, \\fB--{long}\\fR"),
            (None, Some(long)) => format!("\\fB--{long}\\fR"),
            (Some(short), None) => format!("\\fB-{short}\\fR"),
            (None, None) => format!("\\fI{value}\\fR"),
        };
        let takes_value = arg.get_action().takes_values() && arg.get_long().is_some();
        let name = if takes_value {
            format!("{name} \\fI{value}\\fR")
        } else {
            name
        };
        writeln!(page, ".TP\n{}", name.replace('-', "\\-"))?;
        if let Some(help) = arg.get_long_help().or(arg.get_help()) {
            writeln!(page, "{}", roff(&help.to_string()))?;
        }
    }
    Ok(())
}

/// Text as roff: backslashes and hyphens escaped, no line read as a request.
fn roff(text: &str) -> String {
    text.lines()
        .map(|line| {
            let line = line.replace('\\', "\\e").replace('-', "\\-");
            if line.starts_with('.') || line.starts_with('\'') {
                format!("\\&{line}")
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn write_stdout(bytes: &[u8]) -> CliResult {
    let mut out = io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::roff;

    #[test]
    fn roff_text_cannot_start_a_request() {
        assert_eq!(roff(".TH x"), "\\&.TH x");
        assert_eq!(roff("a-b \\ c"), "a\\-b \\e c");
    }
}
