//! The commands that work on the SQLite file itself — its pages (`vacuum`,
//! `backup`), its FTS5 indexes (`fts …`), its schema (`schema`, `migrate`)
//! and its SQL (`query`) — and the one refusal they meet on PostgreSQL,
//! whose server has its own tools for each.

use crate::cli::Command;
use crate::error::{CliError, CliResult};
use crate::store::Context;

/// Whether `command` needs the SQLite file.
fn needs_the_file(command: &Command) -> bool {
    matches!(
        command,
        Command::Backup(_)
            | Command::Vacuum
            | Command::Fts(_)
            | Command::Migrate(_)
            | Command::Schema
            | Command::Query(_)
    )
}

/// Refuses a command that needs the file when the store is on PostgreSQL,
/// before anything is opened, naming the server's own tools and the way to
/// a file.
pub fn refuse_on_server(ctx: &Context, command: &Command) -> CliResult {
    if ctx.server.is_none() || !needs_the_file(command) {
        return Ok(());
    }
    Err(CliError::usage(format!(
        "`{}`: works on a SQLite file, not on a PostgreSQL store ({})",
        ctx.command,
        ctx.path.display()
    ))
    .hint("the server has its own tools for this (autovacuum, pg_dump, …; docs/POSTGRES.md); `hermes-state --database-url URL migrate-to sqlite:PATH` copies the store to a file"))
}
