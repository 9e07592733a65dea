//! Creating and upgrading a store's schema, and checking it at open.
//!
//! The PostgreSQL steps have their own ledger (refinery's
//! `refinery_schema_history`, in the store's schema), separate from the
//! shared `schema_version` table, which holds the SQLite version the data
//! model matches (23). Only writable opens run steps; they take a
//! session-level advisory lock keyed on the schema, so two hosts opening a
//! new store at once do not both create it. Read-only opens never run DDL:
//! they refuse a missing or older store and accept a newer one.

use postgres::Client;

use crate::error::{Context, PgError, Result};
use crate::url::StoreUrl;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// How long a writable open waits for another host's migration.
const MIGRATION_LOCK_TIMEOUT: &str = "60s";

/// The name of the optional trigram index (substring and CJK search).
pub const TRIGRAM_INDEX: &str = "idx_messages_content_trgm";

/// What the store's server offers beyond the required schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// `pg_trgm` is installed and the partial trigram index exists:
    /// substring patterns of three or more characters use it.
    pub trigram: bool,
}

/// The newest PostgreSQL step this library has.
pub fn known_step() -> i64 {
    embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| i64::from(m.version()))
        .max()
        .unwrap_or(0)
}

/// Every PostgreSQL step this library has: version, name and refinery's
/// checksum (what `refinery_schema_history` records for it), for the doctor.
pub(crate) fn known_steps() -> Vec<(i64, String, u64)> {
    embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| (i64::from(m.version()), m.name().to_owned(), m.checksum()))
        .collect()
}

/// Brings the store's schema to the current steps (creating the schema and
/// the store when missing), then sets up the optional trigram index.
pub(crate) fn migrate(client: &mut Client, url: &StoreUrl) -> Result<Capabilities> {
    let schema = url.schema();
    client
        // No `statement_timeout` of the URL here: a step may rewrite a large
        // table, and a step cut short would only be run again at every open.
        .batch_execute(&format!(
            "SET lock_timeout = '{MIGRATION_LOCK_TIMEOUT}'; SET statement_timeout = 0"
        ))
        .context("setting the migration lock timeout")?;
    client
        .execute(
            "SELECT pg_advisory_lock(hashtextextended('hermes-state migrate ' || $1, 0))",
            &[&schema],
        )
        .context("waiting for the migration lock")?;
    let result = migrate_locked(client, schema);
    let unlock = client
        .execute(
            "SELECT pg_advisory_unlock(hashtextextended('hermes-state migrate ' || $1, 0))",
            &[&schema],
        )
        .context("releasing the migration lock");
    client
        .batch_execute("RESET lock_timeout")
        .context("resetting the lock timeout")?;
    let capabilities = result?;
    unlock?;
    Ok(capabilities)
}

fn migrate_locked(client: &mut Client, schema: &str) -> Result<Capabilities> {
    // Only when missing: `CREATE SCHEMA IF NOT EXISTS` needs the right to
    // create schemas in the database even when the schema exists, which a
    // role given only its own schema by the administrator does not have.
    let exists = client
        .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
        .context("looking for the store's schema")?
        .is_some();
    if !exists {
        client
            .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\""))
            .context("creating the store's schema")?;
    }
    let applied = applied_step(client, schema)?;
    if let Some(found) = applied
        && found > known_step()
    {
        return Err(PgError::SchemaTooNew {
            schema: schema.to_owned(),
            found,
            known: known_step(),
        });
    }
    // Steps to run on a store hosts may be writing to: they run alone,
    // holding the store's writer lock exclusively (session-level: the
    // runner commits each step itself), so no write is half-way through
    // a table a step rewrites, and none starts until the steps are done.
    let alone = applied.is_some_and(|found| found < known_step());
    if alone {
        client
            .execute(
                "SELECT pg_advisory_lock(hashtextextended('hermes-state write ' || $1, 0))",
                &[&schema],
            )
            .context("waiting for the store's writes to finish before migrating")?;
    }
    let ran = run_steps(client);
    if alone {
        client
            .execute(
                "SELECT pg_advisory_unlock(hashtextextended('hermes-state write ' || $1, 0))",
                &[&schema],
            )
            .context("releasing the store's writer lock after migrating")?;
    }
    ran?;
    Ok(Capabilities {
        trigram: ensure_trigram_index(client, schema),
    })
}

/// Runs the steps this build has and the store lacks.
fn run_steps(client: &mut Client) -> Result<()> {
    embedded::migrations::runner()
        .set_abort_divergent(true)
        .run(client)
        .map_err(|error| {
            // The runner's step ("error asserting migrations table") without
            // its own rendering of the client's cause ("`db error`").
            let step = match error.kind() {
                refinery::error::Kind::Connection(step, _) => step.clone(),
                other => other.to_string(),
            };
            PgError::migration(&step, &error)
        })?;
    Ok(())
}

/// Creates the partial trigram index when `pg_trgm` is (or can be)
/// installed. Optional: a server without the extension, or a role that may
/// not create it, gets a store without the index (substring search scans),
/// and the next writable open tries again.
fn ensure_trigram_index(client: &mut Client, schema: &str) -> bool {
    if trigram_schema(client).ok().flatten().is_none() {
        // In `public`, never in the store's schema: an extension belongs to
        // the schema it is created in, so `DROP SCHEMA store CASCADE` would
        // take it, and every other store's trigram index, with it. Under a
        // database-wide advisory lock, so two stores opened at once do not
        // race to create it. A refusal (no rights, no `public`) rolls back
        // and leaves the store without the index.
        let created = client.batch_execute(
            "BEGIN; \
             SELECT pg_advisory_xact_lock(hashtextextended('hermes-state pg_trgm', 0)); \
             CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public; \
             COMMIT",
        );
        if created.is_err() {
            let _ = client.batch_execute("ROLLBACK");
        }
    }
    let Ok(Some(extension_schema)) = trigram_schema(client) else {
        return false;
    };
    let ddl = format!(
        "CREATE INDEX IF NOT EXISTS {TRIGRAM_INDEX} ON \"{schema}\".messages \
         USING GIN (content \"{extension_schema}\".gin_trgm_ops) WHERE role <> 'tool'"
    );
    client.batch_execute(&ddl).is_ok()
}

/// The schema `pg_trgm` is installed in, if it is.
fn trigram_schema(client: &mut Client) -> Result<Option<String>> {
    let row = client
        .query_opt(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace \
             WHERE e.extname = 'pg_trgm'",
            &[],
        )
        .context("looking for pg_trgm")?;
    Ok(row.map(|row| row.get(0)))
}

/// The newest step recorded in the store's ledger; `None` without a ledger.
fn applied_step(client: &mut Client, schema: &str) -> Result<Option<i64>> {
    let ledger: bool = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 \
             AND tablename = 'refinery_schema_history')",
            &[&schema],
        )
        .context("looking for the migration ledger")?
        .get(0);
    if !ledger {
        return Ok(None);
    }
    let row = client
        .query_one(
            &format!("SELECT max(version)::BIGINT FROM \"{schema}\".refinery_schema_history"),
            &[],
        )
        .context("reading the migration ledger")?;
    Ok(row.get(0))
}

/// Checks, without writing, that the schema holds a store this library can
/// read: present and at least at the current step (newer is fine).
pub(crate) fn check_readable(client: &mut Client, url: &StoreUrl) -> Result<Capabilities> {
    let schema = url.schema();
    match applied_step(client, schema)? {
        None => Err(PgError::NoStore {
            schema: schema.to_owned(),
            problem: "holds no hermes-state store (open it writable once to create it)".into(),
        }),
        Some(found) if found < known_step() => Err(PgError::NoStore {
            schema: schema.to_owned(),
            problem: format!(
                "holds a store at PostgreSQL step {found}; this library needs step {} \
                 (open it writable once to upgrade it)",
                known_step()
            ),
        }),
        Some(_) => {
            let trigram: bool = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = $2)",
                    &[&schema, &TRIGRAM_INDEX],
                )
                .context("looking for the trigram index")?
                .get(0);
            Ok(Capabilities { trigram })
        }
    }
}
