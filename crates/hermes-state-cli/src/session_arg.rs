//! Session arguments: every command argument that names a session goes
//! through the library's rule (`hermes_state::session_ref`: an exact id,
//! `latest`, a title, a unique id prefix), so `latest`, id prefixes and
//! titles work everywhere. `latest` is the newest session of
//! `--latest-source`, else of the command's single `--source` where it has
//! one (e.g. `search`).
//!
//! [`resolve_command`] rewrites the arguments of a parsed command before it
//! runs, through a read-only handle of its own (on either backend); an
//! argument that names nothing is left as it is, so each command reports it
//! as before.

use hermes_state::session_ref::{MAX_CANDIDATES, SessionRef, resolve};

use crate::cli::{Command, MessagesCommand, SessionsCommand, TitleCommand};
use crate::error::{CliError, CliResult};
use crate::store::Context;

/// The error when `arg` names several sessions, or `latest` none; `None`
/// when it names one, or nothing (which the command itself reports).
fn error(ctx: &Context, arg: &str, answer: &SessionRef, source: Option<&str>) -> Option<CliError> {
    match answer {
        SessionRef::Found(_) | SessionRef::Unknown => None,
        SessionRef::Ambiguous(candidates) => {
            let mut listed = candidates
                .iter()
                .take(MAX_CANDIDATES)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if candidates.len() > MAX_CANDIDATES {
                listed.push_str(", …");
            }
            Some(
                CliError::failed(format!(
                    "{}: {arg:?} is the start of several session ids: {listed}",
                    ctx.command
                ))
                .hint("type more of the id"),
            )
        }
        SessionRef::NoSessions => Some(
            CliError::failed(format!(
                "{}: there is no latest session{} in {}",
                ctx.command,
                source.map(|s| format!(" from {s:?}")).unwrap_or_default(),
                ctx.path.display()
            ))
            .hint("list sessions with `hermes-state sessions list`"),
        ),
    }
}

/// Rewrites every session argument of `command` to the full id it names,
/// looked up on a read-only handle of its own. Arguments naming nothing
/// stay as they are (the command reports them), and so do all of them when
/// the store does not open (the command reports that); an ambiguous prefix,
/// or `latest` without sessions, is an error here.
pub fn resolve_command(
    ctx: &Context,
    command: &mut Command,
    latest_source: Option<&str>,
) -> CliResult {
    let mut source = latest_source.map(str::to_owned);
    let args = session_args(command, &mut source);
    if args.is_empty() {
        return Ok(());
    }
    let Some(db) = ctx.peek() else {
        return Ok(());
    };
    resolve_all(ctx, db.as_ref(), args, source.as_deref())
}

fn resolve_all(
    ctx: &Context,
    db: &dyn hermes_state::SessionStore,
    args: Vec<&mut String>,
    source: Option<&str>,
) -> CliResult {
    for arg in args {
        // A store failure is left to the command, which reports it.
        let Ok(answer) = resolve(db, arg, source) else {
            continue;
        };
        if let Some(error) = error(ctx, arg, &answer, source) {
            return Err(error);
        }
        if let SessionRef::Found(id) = answer {
            *arg = id;
        }
    }
    Ok(())
}

/// The session arguments of a command (`sessions create --id` is a new id,
/// not one). Sets `source` to the command's single `--source` for `latest`
/// when `--latest-source` was not given.
fn session_args<'a>(command: &'a mut Command, source: &mut Option<String>) -> Vec<&'a mut String> {
    match command {
        Command::Sessions(command) => match command {
            SessionsCommand::List(_) => Vec::new(),
            SessionsCommand::Show(args) => vec![&mut args.id],
            SessionsCommand::Create(args) => args.parent.iter_mut().collect(),
            SessionsCommand::End(args) => vec![&mut args.id],
            SessionsCommand::Delete(args) => args.ids.iter_mut().collect(),
            SessionsCommand::Rewind(args) => vec![&mut args.id],
            SessionsCommand::Restore(args) => vec![&mut args.id],
            SessionsCommand::Clear(args) => vec![&mut args.id],
            SessionsCommand::Lineage(args) => vec![&mut args.id],
            SessionsCommand::Reopen(args)
            | SessionsCommand::Archive(args)
            | SessionsCommand::Unarchive(args)
            | SessionsCommand::Pin(args)
            | SessionsCommand::Unpin(args) => vec![&mut args.id],
        },
        Command::Messages(MessagesCommand::Append(args)) => vec![&mut args.id],
        Command::Messages(MessagesCommand::List(args)) => vec![&mut args.id],
        Command::Title(TitleCommand::Set(args)) => vec![&mut args.id],
        Command::Title(TitleCommand::Get(args)) => vec![&mut args.id],
        Command::Search(args) => {
            if source.is_none() && args.source.len() == 1 {
                *source = args.source.first().cloned();
            }
            args.session.iter_mut().collect()
        }
        Command::Export(args) => args.session.iter_mut().collect(),
        _ => Vec::new(),
    }
}
