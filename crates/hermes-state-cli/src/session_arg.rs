//! Session arguments: every command argument that names a session goes
//! through [`resolve`], so `latest`, id prefixes and titles work everywhere.
//!
//! An argument is, in this order:
//! 1. an exact session id;
//! 2. `latest`: the session that started last (of `--latest-source`, else of
//!    the command's single `--source` where it has one, e.g. `search`);
//! 3. a session title (`resolve_session_by_title`, `api.md` §6.3: the
//!    newest numbered continuation `X #n`, else the holder of `X`);
//! 4. a unique prefix of an id (`resolve_session_id`, `api.md` §2.4; ASCII
//!    case-insensitive). A prefix several ids share is an error listing them.
//!
//! Titles come before prefixes because a title is a name the user chose,
//! while a prefix is a shorthand: a title such as `2026` names its session
//! even when ids start with `2026`.
//!
//! [`resolve_command`] rewrites the arguments of a parsed command before it
//! runs, through a read-only handle of its own (on either backend); an
//! argument that names nothing is left as it is, so each command reports it
//! as before.

use hermes_state::{ListFilter, RichListOptions, SessionStore};

use crate::cli::{Command, MessagesCommand, SessionsCommand, TitleCommand};
use crate::error::{CliError, CliResult};
use crate::store::Context;

/// The word that names the newest session.
pub const LATEST: &str = "latest";

/// How many candidates an ambiguous prefix lists.
const MAX_CANDIDATES: usize = 10;

/// Why an argument names no single session.
#[derive(Debug)]
pub enum Unresolved {
    /// No session has this id, title or id prefix.
    Unknown(String),
    /// Several ids start with the prefix (at most [`MAX_CANDIDATES`] + 1 listed,
    /// newest first).
    Ambiguous {
        /// The argument.
        prefix: String,
        /// The ids it starts.
        candidates: Vec<String>,
    },
    /// `latest`, but there is no session (of the source).
    NoSessions(Option<String>),
    /// The store failed.
    Store(hermes_state::Error),
}

impl From<hermes_state::Error> for Unresolved {
    fn from(error: hermes_state::Error) -> Self {
        Unresolved::Store(error)
    }
}

/// The full id a session argument names.
pub fn resolve(
    db: &dyn SessionStore,
    arg: &str,
    latest_source: Option<&str>,
) -> Result<String, Unresolved> {
    if db.get_session(arg)?.is_some() {
        return Ok(arg.to_owned());
    }
    if arg == LATEST {
        let filter = ListFilter {
            source: latest_source.map(str::to_owned),
            limit: Some(1),
            offset: 0,
        };
        return db
            .recent_sessions(&filter)?
            .pop()
            .map(|row| row.session.id)
            .ok_or_else(|| Unresolved::NoSessions(latest_source.map(str::to_owned)));
    }
    if !arg.is_empty()
        && let Some(id) = db.resolve_session_by_title(arg)?
    {
        return Ok(id);
    }
    if let Some(id) = db.resolve_session_id(arg)? {
        return Ok(id);
    }
    let candidates = prefix_candidates(db, arg)?;
    if candidates.len() > 1 {
        return Err(Unresolved::Ambiguous {
            prefix: arg.to_owned(),
            candidates,
        });
    }
    Err(Unresolved::Unknown(arg.to_owned()))
}

/// Ids starting with `prefix` (ASCII case-insensitive), most recently
/// active first, at most [`MAX_CANDIDATES`] + 1 (the extra one says
/// "more"). Every session counts, children and archived ones included (the
/// picker's id search, `search_sessions_by_id`, lists conversations only).
fn prefix_candidates(db: &dyn SessionStore, prefix: &str) -> Result<Vec<String>, Unresolved> {
    if prefix.is_empty() {
        return Ok(Vec::new());
    }
    let lower = prefix.to_ascii_lowercase();
    let options = RichListOptions {
        limit: 500,
        include_children: true,
        include_archived: true,
        order_by_last_active: true,
        id_query: Some(prefix.to_owned()),
        compact_rows: true,
        ..RichListOptions::default()
    };
    Ok(db
        .list_sessions_rich(&options)?
        .into_iter()
        .map(|row| row.session.id)
        .filter(|id| id.to_ascii_lowercase().starts_with(&lower))
        .take(MAX_CANDIDATES + 1)
        .collect())
}

/// The error for an argument that names no single session.
pub fn error(ctx: &Context, unresolved: &Unresolved) -> CliError {
    match unresolved {
        Unresolved::Unknown(arg) => ctx.unknown_session(arg),
        Unresolved::Ambiguous { prefix, candidates } => {
            let mut listed = candidates
                .iter()
                .take(MAX_CANDIDATES)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if candidates.len() > MAX_CANDIDATES {
                listed.push_str(", …");
            }
            CliError::failed(format!(
                "{}: {prefix:?} is the start of several session ids: {listed}",
                ctx.command
            ))
            .hint("type more of the id")
        }
        Unresolved::NoSessions(source) => CliError::failed(format!(
            "{}: there is no latest session{} in {}",
            ctx.command,
            source
                .as_deref()
                .map(|s| format!(" from {s:?}"))
                .unwrap_or_default(),
            ctx.path.display()
        ))
        .hint("list sessions with `hermes-state sessions list`"),
        Unresolved::Store(e) => ctx.fail(e),
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
    db: &dyn SessionStore,
    args: Vec<&mut String>,
    source: Option<&str>,
) -> CliResult {
    for arg in args {
        match resolve(db, arg, source) {
            Ok(id) => *arg = id,
            Err(Unresolved::Unknown(_) | Unresolved::Store(_)) => {}
            Err(unresolved) => return Err(error(ctx, &unresolved)),
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
