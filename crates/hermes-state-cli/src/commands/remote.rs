//! Commands on a PostgreSQL store (`--database-url postgres://…`), and
//! `migrate-to` in both directions.
//!
//! A PostgreSQL store is reached through the library's backend seam
//! (`SessionStore`), which offers the everyday reads and writes; the
//! commands below use it and print exactly as on a file. A command that
//! needs more of the library than the seam offers says so and names the
//! way to do it, rather than guessing. Reading commands open the store
//! read-only, as on a file. Session arguments (an id, `latest`, a title,
//! an id prefix) resolve as on a file, through the same resolver.

use std::path::PathBuf;

use hermes_state::{MessagePage, PostgresUrl, StoreLocation, open_store};

use crate::cli::{Cli, Command, MessagesCommand, MigrateToArgs, SessionsCommand, TitleCommand};
use crate::commands::{command_name, listing, messages, search, to_json};
use crate::error::{CliError, CliResult};
use crate::output::Output;
#[cfg(feature = "postgres")]
use crate::store::Access;
use crate::store::Context;

/// Runs a command on the PostgreSQL store `url` names.
pub fn run(mut cli: Cli, url: &PostgresUrl, out: Output) -> CliResult {
    let command = command_name(&cli.command);
    let ctx = Context {
        // Messages name the store by its redacted URL (no password, in
        // whatever form it was given), as every output does.
        path: PathBuf::from(url.redacted()),
        read_only: cli.read_only,
        out,
        command,
        write_moved: cli.write_moved,
    };
    let reading = is_reading(&cli.command);
    if !reading && ctx.read_only {
        return Err(CliError::usage(format!(
            "`{command}` writes to the store, but --read-only was given"
        ))
        .hint("drop --read-only"));
    }
    // Session arguments (`latest`, a title, an id prefix) become full ids,
    // as on a file; a store that does not open is the command's to report.
    if crate::session_arg::names_sessions(&mut cli.command)
        && let Ok(store) = open_store(&StoreLocation::Postgres(url.clone()), true)
    {
        crate::session_arg::resolve_command_in(
            &ctx,
            store.as_ref(),
            &mut cli.command,
            cli.latest_source.as_deref(),
        )?;
    }
    let open = || {
        let store =
            open_store(&StoreLocation::Postgres(url.clone()), reading).map_err(|e| ctx.fail(&e))?;
        ctx.note_moved(store.as_ref());
        Ok::<_, CliError>(store)
    };
    match cli.command {
        Command::Sessions(SessionsCommand::List(args)) => {
            listing::list_in(&ctx, open()?.as_ref(), &args)
        }
        Command::Sessions(SessionsCommand::Show(args)) => {
            super::sessions::show_in(&ctx, open()?.as_ref(), &args)
        }
        Command::Messages(MessagesCommand::List(args)) => {
            let store = open()?;
            let session = super::sessions::find_session(&ctx, store.as_ref(), &args.id)?;
            let page = MessagePage {
                include_inactive: args.all,
                limit: args.limit.map(i64::from),
                offset: i64::from(args.offset),
            };
            let rows = store
                .get_messages_page(&session.id, page)
                .map_err(|e| ctx.fail(&e))?;
            messages::print_messages(&ctx, &rows)
        }
        Command::Search(args) if args.interactive => {
            crate::interactive::preflight(&ctx)?;
            crate::interactive::search_in(&ctx, open()?.as_ref(), &args)
        }
        Command::Search(args) => search::search_in(&ctx, open()?.as_ref(), &args),
        Command::Title(TitleCommand::Get(args)) => {
            let store = open()?;
            let session = super::sessions::find_session(&ctx, store.as_ref(), &args.id)?;
            print_optional(&ctx, session.title.as_deref())
        }
        Command::Title(TitleCommand::Resolve(args)) => {
            let id = open()?
                .resolve_session_by_title(&args.title)
                .map_err(|e| ctx.fail(&e))?;
            print_optional(&ctx, id.as_deref())
        }
        Command::Title(TitleCommand::Set(args)) => {
            let store = open()?;
            let title = Some(args.title.as_str()).filter(|t| !t.is_empty());
            if !store
                .set_session_title(&args.id, title)
                .map_err(|e| ctx.fail(&e))?
            {
                return Err(ctx.unknown_session(&args.id));
            }
            let stored = store
                .get_session_title(&args.id)
                .map_err(|e| ctx.fail(&e))?;
            print_optional(&ctx, stored.as_deref())
        }
        Command::Sessions(SessionsCommand::Lineage(args)) => {
            super::sessions::lineage_of(&ctx, open()?.as_ref(), &args)
        }
        Command::Stats(args) => super::stats::stats_of(&ctx, open()?.as_ref(), &args),
        Command::Export(args) => {
            super::export::check_export_args(&args)?;
            super::export::export_from(&ctx, open()?.as_ref(), &args)
        }
        Command::Import(args) => super::export::import_into(&ctx, &args, open),
        Command::MigrateTo(args) => to_sqlite(&ctx, url, &args),
        #[cfg(feature = "postgres")]
        Command::Doctor(args) => super::remote_doctor::doctor(&ctx, url, &args),
        command if super::remote_writes::handles(&command) => {
            super::remote_writes::run(&ctx, url, command)
        }
        _ => Err(not_here(&ctx, &format!("`{command}`"))),
    }
}

/// Whether a command only reads (and so opens the store read-only).
fn is_reading(command: &Command) -> bool {
    matches!(
        command,
        Command::Sessions(
            SessionsCommand::List(_) | SessionsCommand::Show(_) | SessionsCommand::Lineage(_)
        ) | Command::Stats(_)
            | Command::Messages(MessagesCommand::List(_))
            | Command::Search(_)
            | Command::Title(
                TitleCommand::Get(_) | TitleCommand::Resolve(_) | TitleCommand::Next(_)
            )
            | Command::Export(_)
    ) || matches!(command, Command::Prune(args) if args.dry_run)
        || matches!(command, Command::Doctor(args) if !args.repair)
}

pub(super) fn not_here(ctx: &Context, what: &str) -> CliError {
    CliError::usage(format!(
        "{what}: works on a SQLite file, not on a PostgreSQL store ({})",
        ctx.path.display()
    ))
    .hint("the server has its own tools for this (autovacuum, pg_dump, …; docs/POSTGRES.md); `hermes-state --database-url URL migrate-to sqlite:PATH` copies the store to a file")
}

fn print_optional(ctx: &Context, value: Option<&str>) -> CliResult {
    if ctx.out.json {
        return ctx.out.json(&to_json!(&value));
    }
    ctx.out.text(format!("{}\n", value.unwrap_or("")))
}

/// `migrate-to` on a SQLite store: to PostgreSQL.
pub fn migrate_to(ctx: &Context, args: &MigrateToArgs) -> CliResult {
    let target = StoreLocation::parse(args.target.as_str())
        .map_err(|e| CliError::usage(format!("migrate-to: {e}")))?;
    let StoreLocation::Postgres(url) = target else {
        return Err(
            CliError::usage("migrate-to: the store is already a SQLite file")
                .hint("`hermes-state backup PATH` copies it to another file"),
        );
    };
    to_postgres(ctx, &url)
}

#[cfg(feature = "postgres")]
fn to_postgres(ctx: &Context, url: &PostgresUrl) -> CliResult {
    let db = ctx.open(Access::Write)?;
    // The target first: an unreachable server, a refused login or a
    // target that already holds a store must not leave the file upgraded.
    let target =
        open_store(&StoreLocation::Postgres(url.to_owned()), false).map_err(|e| ctx.fail(&e))?;
    let held = target
        .session_count(&hermes_state::SessionCountOptions::all())
        .map_err(|e| ctx.fail(&e))?
        + target.message_count(None).map_err(|e| ctx.fail(&e))?;
    drop(target);
    if held > 0 {
        return Err(CliError::failed(
            "migrate-to: the target store is not empty (it holds sessions or messages)",
        )
        .hint("copy into a new schema: name it in the URL (`?schema=NAME`)"));
    }
    // The copy reads a file at schema version 23.
    ctx.start_writing(&db)?;
    let report = db
        .migrate_to_postgres_location(url)
        .map_err(|e| ctx.fail(&e))?;
    print_move(
        ctx,
        &report,
        &format!("marked {} as moved", ctx.path.display()),
    )
}

#[cfg(not(feature = "postgres"))]
fn to_postgres(_ctx: &Context, _url: &PostgresUrl) -> CliResult {
    Err(without_postgres())
}

#[cfg(feature = "postgres")]
fn to_sqlite(ctx: &Context, url: &PostgresUrl, args: &MigrateToArgs) -> CliResult {
    let target = StoreLocation::parse(args.target.as_str())
        .map_err(|e| CliError::usage(format!("migrate-to: {e}")))?;
    let StoreLocation::Sqlite(path) = target else {
        return Err(
            CliError::usage("migrate-to: the store is already on PostgreSQL")
                .hint("give a file: migrate-to sqlite:PATH"),
        );
    };
    let report =
        hermes_state::migrate_postgres_location_to_sqlite(url, &path).map_err(|e| ctx.fail(&e))?;
    print_move(ctx, &report, "marked the PostgreSQL store as moved")
}

#[cfg(not(feature = "postgres"))]
fn to_sqlite(_ctx: &Context, _url: &PostgresUrl, _args: &MigrateToArgs) -> CliResult {
    Err(without_postgres())
}

#[cfg(not(feature = "postgres"))]
fn without_postgres() -> CliError {
    CliError::usage("this hermes-state was built without PostgreSQL support")
        .hint("build it with the `postgres` feature (on by default)")
}

#[cfg(feature = "postgres")]
fn print_move(ctx: &Context, report: &hermes_state::MoveReport, marked: &str) -> CliResult {
    if ctx.out.json {
        let rows: serde_json::Map<String, serde_json::Value> = report
            .rows
            .iter()
            .map(|(table, n)| (table.clone(), serde_json::Value::from(*n)))
            .collect();
        return ctx.out.json(&serde_json::json!({
            "target": report.target,
            "rows": rows,
            "superseded_at": report.superseded_at,
        }));
    }
    let counts: Vec<String> = report
        .rows
        .iter()
        .map(|(table, n)| format!("{n} {table}"))
        .collect();
    ctx.out.text(format!(
        "copied and verified {} to {}; {marked}\n",
        counts.join(", "),
        report.target
    ))
}
