//! The writing commands on a PostgreSQL store whose operations the
//! `SessionStore` seam offers: `sessions create|end|reopen|delete|clear|
//! archive|unarchive|pin|unpin|rewind|restore`, `messages append`,
//! `title next` and `prune` (`--dry-run` included). Each runs the very
//! function the file case runs, over the seam, so it prints the same.
//!
//! A command that needs the store opens it read-only first, so a schema
//! that holds no store is an error ("holds no hermes-state store"), never
//! created in passing; `sessions create` creates it, as it creates a file.

use hermes_state::{PostgresUrl, SessionStore, StoreLocation, open_store};

use crate::cli::{Command, MaintenanceCommand, MessagesCommand, SessionsCommand, TitleCommand};
use crate::commands::lineage_flags::{self, Flag};
use crate::commands::remote::not_here;
use crate::commands::{auto, demo, messages, prune, rewind, sessions, titles};
use crate::confirm::Consent;
use crate::error::CliResult;
use crate::store::{Access, Context};

/// Whether [`run`] handles the command.
pub fn handles(command: &Command) -> bool {
    matches!(
        command,
        Command::Sessions(
            SessionsCommand::Create(_)
                | SessionsCommand::End(_)
                | SessionsCommand::Reopen(_)
                | SessionsCommand::Delete(_)
                | SessionsCommand::Clear(_)
                | SessionsCommand::Archive(_)
                | SessionsCommand::Unarchive(_)
                | SessionsCommand::Pin(_)
                | SessionsCommand::Unpin(_)
                | SessionsCommand::Rewind(_)
                | SessionsCommand::Restore(_)
        ) | Command::Messages(MessagesCommand::Append(_))
            | Command::Title(TitleCommand::Next(_))
            | Command::Prune(_)
            | Command::Maintenance(MaintenanceCommand::Auto(_))
            | Command::Demo(_)
    )
}

/// Runs a command [`handles`] on the PostgreSQL store `url` names.
pub fn run(ctx: &Context, url: &PostgresUrl, command: Command) -> CliResult {
    let open = |access: Access| open(ctx, url, access);
    match command {
        Command::Sessions(command) => match command {
            SessionsCommand::Create(args) => {
                sessions::create_in(ctx, open(Access::Create)?.as_ref(), &args)
            }
            SessionsCommand::End(args) => {
                sessions::end_in(ctx, open(Access::Write)?.as_ref(), &args)
            }
            SessionsCommand::Reopen(args) => {
                sessions::reopen_in(ctx, open(Access::Write)?.as_ref(), &args.id)
            }
            SessionsCommand::Delete(args) => {
                Consent::new(args.consent.yes).require(ctx)?;
                let store = open(Access::Write)?;
                // One transaction for every id, transcripts removed from
                // `--sessions-dir` as on a file.
                sessions::delete_in(ctx, store.as_ref(), &args, &|ids| {
                    store
                        .delete_sessions(ids, args.sessions_dir.as_deref())
                        .map(|_| ())
                })
            }
            SessionsCommand::Clear(args) => {
                Consent::new(args.consent.yes).require(ctx)?;
                sessions::clear_in(ctx, open(Access::Write)?.as_ref(), &args)
            }
            SessionsCommand::Archive(args) => flag(ctx, &open, &args.id, Flag::Archived, true),
            SessionsCommand::Unarchive(args) => flag(ctx, &open, &args.id, Flag::Archived, false),
            SessionsCommand::Pin(args) => flag(ctx, &open, &args.id, Flag::Pinned, true),
            SessionsCommand::Unpin(args) => flag(ctx, &open, &args.id, Flag::Pinned, false),
            SessionsCommand::Rewind(args) => {
                rewind::rewind_in(ctx, open(Access::Write)?.as_ref(), &args)
            }
            SessionsCommand::Restore(args) => {
                rewind::restore_in(ctx, open(Access::Write)?.as_ref(), &args)
            }
            _ => Err(not_here(ctx, &format!("`{}`", ctx.command))),
        },
        Command::Messages(MessagesCommand::Append(args)) => {
            messages::append_in(ctx, open(Access::Write)?.as_ref(), *args)
        }
        Command::Title(TitleCommand::Next(args)) => {
            titles::next_in(ctx, open(Access::Read)?.as_ref(), &args.title)
        }
        Command::Prune(args) => {
            let access = if args.dry_run {
                Access::Read
            } else {
                Consent::new(args.consent.yes).require(ctx)?;
                Access::Write
            };
            prune::prune_in(ctx, open(access)?.as_ref(), &args)
        }
        Command::Maintenance(MaintenanceCommand::Auto(args)) => {
            auto::auto_in(ctx, open(Access::Write)?.as_ref(), &args)
        }
        Command::Demo(args) => {
            // The suggested commands name the store by its URL without the
            // password (as every message does), quoted for a shell.
            let url = ctx.path.display().to_string().replace('\'', r"'\''");
            demo::demo_in(
                ctx,
                open(Access::Create)?.as_ref(),
                &args,
                &format!(" --database-url '{url}'"),
            )
        }
        _ => Err(not_here(ctx, &format!("`{}`", ctx.command))),
    }
}

fn flag(
    ctx: &Context,
    open: &dyn Fn(Access) -> CliResult<Box<dyn SessionStore>>,
    id: &str,
    flag: Flag,
    on: bool,
) -> CliResult {
    lineage_flags::set_in(ctx, open(Access::Write)?.as_ref(), id, flag, on)
}

/// Opens the store for `access`: reading commands read-only; writing ones
/// after a read-only open has found the store (only `Create` may create it).
fn open(ctx: &Context, url: &PostgresUrl, access: Access) -> CliResult<Box<dyn SessionStore>> {
    let location = StoreLocation::Postgres(url.clone());
    let fail = |e: hermes_state::Error| ctx.fail(&e);
    if access != Access::Create {
        let reader = open_store(&location, true).map_err(fail)?;
        if access == Access::Read {
            ctx.note_moved(reader.as_ref());
            return Ok(reader);
        }
        // Checked on the read-only handle: the writable open may migrate.
        ctx.refuse_moved(reader.as_ref())?;
    }
    open_store(&location, false).map_err(fail)
}
