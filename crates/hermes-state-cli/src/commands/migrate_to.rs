//! `migrate-to`: moves the store between the backends, a file to
//! PostgreSQL or PostgreSQL to a file; the store left behind is marked as
//! moved (`Context` notes it on every read and refuses writes to it).

use std::path::Path;

#[cfg(feature = "postgres")]
use hermes_state::open_store;
use hermes_state::{PostgresUrl, StoreLocation};

use crate::cli::MigrateToArgs;
use crate::error::{CliError, CliResult};
#[cfg(feature = "postgres")]
use crate::store::Access;
use crate::store::Context;

/// `migrate-to TARGET`: to the other backend than the store's.
pub fn migrate_to(ctx: &Context, args: &MigrateToArgs) -> CliResult {
    let target = StoreLocation::parse(args.target.as_str())
        .map_err(|e| CliError::usage(format!("migrate-to: {e}")))?;
    match (&ctx.server, target) {
        (None, StoreLocation::Postgres(url)) => to_postgres(ctx, &url),
        (Some(url), StoreLocation::Sqlite(path)) => to_sqlite(ctx, url, &path),
        (None, StoreLocation::Sqlite(_)) => Err(CliError::usage(
            "migrate-to: the store is already a SQLite file",
        )
        .hint("`hermes-state backup PATH` copies it to another file")),
        (Some(_), StoreLocation::Postgres(_)) => Err(CliError::usage(
            "migrate-to: the store is already on PostgreSQL",
        )
        .hint("give a file: migrate-to sqlite:PATH")),
    }
}

#[cfg(feature = "postgres")]
fn to_postgres(ctx: &Context, url: &PostgresUrl) -> CliResult {
    let db = ctx.open_file(Access::Write)?;
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
    print_move(ctx, &report)
}

#[cfg(not(feature = "postgres"))]
fn to_postgres(_ctx: &Context, _url: &PostgresUrl) -> CliResult {
    Err(without_postgres())
}

#[cfg(feature = "postgres")]
fn to_sqlite(ctx: &Context, url: &PostgresUrl, path: &Path) -> CliResult {
    ctx.refuse_read_only(Access::Write)?;
    let report =
        hermes_state::migrate_postgres_location_to_sqlite(url, path).map_err(|e| ctx.fail(&e))?;
    print_move(ctx, &report)
}

#[cfg(not(feature = "postgres"))]
fn to_sqlite(_ctx: &Context, _url: &PostgresUrl, _path: &Path) -> CliResult {
    Err(without_postgres())
}

#[cfg(not(feature = "postgres"))]
fn without_postgres() -> CliError {
    CliError::usage("this hermes-state was built without PostgreSQL support")
        .hint("build it with the `postgres` feature (on by default)")
}

#[cfg(feature = "postgres")]
fn print_move(ctx: &Context, report: &hermes_state::MoveReport) -> CliResult {
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
        "copied and verified {} to {}; marked {} as moved\n",
        counts.join(", "),
        report.target,
        ctx.path.display()
    ))
}
