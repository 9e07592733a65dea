//! One module per command group; [`run`] dispatches.
//!
//! Every command is written once, over the store [`Context::open`] opens
//! for either backend (a file, or PostgreSQL with `--database-url`), so it
//! prints the same on both. The few that need the SQLite file itself open
//! it with [`Context::open_file`] and are refused on PostgreSQL by one
//! check (`file_only`); `doctor` is the one command with a report of each
//! backend's own (`maintenance::doctor`, `postgres_doctor`).

mod auto;
mod demo;
mod export;
mod export_markdown;
mod file_only;
mod fts;
mod lineage_flags;
mod listing;
mod location;
mod maintenance;
mod messages;
mod migrate_to;
#[cfg(feature = "postgres")]
mod postgres_doctor;
mod prune;
mod query;
mod rewind;
mod schema;
pub(crate) mod search;
mod search_conversations;
mod sessions;
mod shell;
pub(crate) mod stats;
mod titles;

use std::path::PathBuf;

use crate::cli::{
    Cli, Command, FtsCommand, MaintenanceCommand, MessagesCommand, SessionsCommand, TitleCommand,
};
use crate::error::CliResult;
use crate::output::Output;
use crate::store::{self, Context};

/// Serialises a value of the library into a JSON value (field names as the library's).
macro_rules! to_json {
    ($value:expr) => {
        serde_json::to_value($value).map_err($crate::output::json_error)?
    };
}
pub(crate) use to_json;

/// Number of sessions in the store, archived ones included.
pub fn session_count(ctx: &Context, db: &dyn hermes_state::SessionStore) -> CliResult<i64> {
    db.session_count(&hermes_state::SessionCountOptions::all())
        .map_err(|e| ctx.fail(&e))
}

/// Whether `--db`'s text is a PostgreSQL URL rather than a path.
fn is_server_url(text: &str) -> bool {
    ["postgres://", "postgresql://"].iter().any(|scheme| {
        text.get(..scheme.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
    })
}

/// Runs the command.
///
/// `command` is the command's name for messages (`sessions show`).
pub fn run(mut cli: Cli, out: Output, command: String) -> CliResult {
    // These describe the program, not a store: no path is resolved.
    match &cli.command {
        Command::Completions(args) => return shell::completions(args.shell),
        Command::Man => return shell::man(),
        _ => {}
    }
    // A server URL given to --db is taken as one: as a path it would only
    // fail, and the failure would print the URL, password included.
    if let Some(text) = cli.db.as_deref().and_then(std::path::Path::to_str)
        && is_server_url(text)
    {
        cli.database_url = Some(crate::cli::LocationText::from(text));
        cli.db = None;
    }
    let location = match (&cli.db, &cli.database_url) {
        (_, Some(url)) => Some(
            hermes_state::StoreLocation::parse(url.as_str())
                .map_err(|e| crate::error::CliError::usage(format!("--database-url: {e}")))?,
        ),
        _ => None,
    };
    let (path, server) = match (cli.db.take(), location) {
        (Some(path), _) => (path, None),
        (None, Some(hermes_state::StoreLocation::Sqlite(path))) => (path, None),
        // Messages name the store by its redacted URL (no password, in
        // whatever form it was given), as every output does.
        (None, Some(hermes_state::StoreLocation::Postgres(url))) => {
            (PathBuf::from(url.redacted()), Some(url))
        }
        (None, None) => (store::default_path()?, None),
    };
    let ctx = Context {
        path,
        server,
        read_only: cli.read_only,
        out,
        command,
        write_moved: cli.write_moved,
    };
    if matches!(cli.command, Command::Where) {
        return location::show(&ctx);
    }
    file_only::refuse_on_server(&ctx, &cli.command)?;
    crate::session_arg::resolve_command(&ctx, &mut cli.command, cli.latest_source.as_deref())?;
    match cli.command {
        Command::Sessions(command) => match command {
            SessionsCommand::List(args) => listing::list(&ctx, &args),
            SessionsCommand::Show(args) => sessions::show(&ctx, &args),
            SessionsCommand::Create(args) => sessions::create(&ctx, &args),
            SessionsCommand::End(args) => sessions::end(&ctx, &args),
            SessionsCommand::Reopen(args) => sessions::reopen(&ctx, &args.id),
            SessionsCommand::Delete(args) => sessions::delete(&ctx, &args),
            SessionsCommand::Clear(args) => sessions::clear(&ctx, &args),
            SessionsCommand::Lineage(args) => sessions::lineage(&ctx, &args),
            SessionsCommand::Archive(args) => {
                lineage_flags::set(&ctx, &args.id, lineage_flags::Flag::Archived, true)
            }
            SessionsCommand::Unarchive(args) => {
                lineage_flags::set(&ctx, &args.id, lineage_flags::Flag::Archived, false)
            }
            SessionsCommand::Pin(args) => {
                lineage_flags::set(&ctx, &args.id, lineage_flags::Flag::Pinned, true)
            }
            SessionsCommand::Unpin(args) => {
                lineage_flags::set(&ctx, &args.id, lineage_flags::Flag::Pinned, false)
            }
            SessionsCommand::Rewind(args) => rewind::rewind(&ctx, &args),
            SessionsCommand::Restore(args) => rewind::restore(&ctx, &args),
        },
        Command::Messages(command) => match command {
            MessagesCommand::Append(args) => messages::append(&ctx, *args),
            MessagesCommand::List(args) => messages::list(&ctx, &args),
        },
        Command::Title(command) => match command {
            TitleCommand::Set(args) => titles::set(&ctx, &args),
            TitleCommand::Get(args) => titles::get(&ctx, &args.id),
            TitleCommand::Resolve(args) => titles::resolve(&ctx, &args.title),
            TitleCommand::Next(args) => titles::next(&ctx, &args.title),
        },
        Command::Search(args) if args.interactive => crate::interactive::search(&ctx, &args),
        Command::Search(args) => search::search(&ctx, &args),
        Command::Stats(args) => stats::stats(&ctx, &args),
        Command::Export(args) => export::export(&ctx, &args),
        Command::Import(args) => export::import(&ctx, &args),
        Command::Prune(args) => prune::prune(&ctx, &args),
        Command::Maintenance(MaintenanceCommand::Auto(args)) => auto::auto(&ctx, &args),
        Command::Doctor(args) => match &ctx.server {
            #[cfg(feature = "postgres")]
            Some(url) => postgres_doctor::doctor(&ctx, url, &args),
            _ => maintenance::doctor(&ctx, &args),
        },
        Command::Backup(args) => maintenance::backup(&ctx, &args),
        Command::Vacuum => maintenance::vacuum(&ctx),
        Command::Fts(FtsCommand::Rebuild) => fts::rebuild(&ctx),
        Command::Fts(FtsCommand::OptimizeStorage(args)) => fts::optimize_storage(&ctx, &args),
        Command::Fts(FtsCommand::RebuildCjk) => fts::rebuild_cjk(&ctx),
        Command::Migrate(args) => schema::migrate(&ctx, &args),
        Command::MigrateTo(args) => migrate_to::migrate_to(&ctx, &args),
        Command::Schema => schema::schema(&ctx),
        Command::Demo(args) => demo::demo(&ctx, &args),
        Command::Query(args) => query::query(&ctx, &args),
        Command::Completions(_) | Command::Man | Command::Where => Ok(()),
    }
}
