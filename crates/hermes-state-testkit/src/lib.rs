//! Test support shared by the workspace's test binaries; a dev-dependency
//! only (tidy test `the_test_kit_is_a_dev_dependency_only`).
//!
//! [`conformance`]: the suite of the contract's cases every backend's tests
//! run ([`conformance::run_all`]); [`build`]: the sessions and messages
//! tests write, defined once. [`PgSchema`]: a fresh PostgreSQL schema on the server
//! [`PG_URL_VAR`] names, its store URL, and its removal when the test ends,
//! so that every PostgreSQL test of every crate names, skips and cleans up
//! alike.

// The skip line is printed on purpose: `cargo test` shows it.
#![allow(clippy::print_stdout)]

pub mod build;
pub mod conformance;
pub mod secrets;
pub mod throwaway;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The variable naming the PostgreSQL test server (`.ci/postgres.sh` sets it).
pub const PG_URL_VAR: &str = "HERMES_STATE_TEST_PG_URL";

/// A schema name no other test of any process uses, and the store URL that
/// names it on the test server; dropped (`CASCADE`) with this guard.
#[derive(Debug)]
pub struct PgSchema {
    admin: String,
    name: String,
    url: String,
}

impl PgSchema {
    /// A fresh schema named `<prefix>_<pid>_<n>_<nanos>` on the test server;
    /// `None`, after printing `skipped: …` naming `case`, when no server is
    /// configured.
    pub fn new(prefix: &str, case: &str) -> Option<PgSchema> {
        let Ok(admin) = std::env::var(PG_URL_VAR) else {
            println!("skipped: {PG_URL_VAR} is not set ({case} needs a PostgreSQL server)");
            return None;
        };
        Some(PgSchema::on(&admin, prefix))
    }

    /// A fresh schema on the server `admin` names.
    pub fn on(admin: &str, prefix: &str) -> PgSchema {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let name = format!(
            "{prefix}_{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let separator = if admin.contains('?') { '&' } else { '?' };
        PgSchema {
            url: format!("{admin}{separator}schema={name}"),
            admin: admin.to_owned(),
            name,
        }
    }

    /// The store URL: the server's URL with `schema=<name>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's URL, without the schema.
    pub fn admin(&self) -> &str {
        &self.admin
    }

    /// A plain client on the server (for raw checks), its `search_path`
    /// unset.
    ///
    /// # Panics
    /// When the server cannot be reached: a test cannot go on without it.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.admin, postgres::NoTls).expect("connect to the test server")
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ =
                client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name));
        }
    }
}
