//! The backend seam: the contract's `SessionStore`
//! (`hermes_state_core::SessionStore`, which both backends implement in
//! their own crates), and the one function that turns a database URL into
//! a store.
//!
//! [`SessionDb`] (SQLite, the reference) implements every section; with the
//! `postgres` feature, so does [`hermes_state_postgres::PgStore`]. Code
//! written against `dyn SessionStore` runs on either; the default build
//! links no PostgreSQL code.

use std::path::PathBuf;

use crate::db::{SessionDb, StoreOptions};
use crate::error::{Error, Result};

/// The `state_meta` key a moved store's old copy carries: where the store
/// moved (a URL without credentials, or `sqlite:PATH`). Readers of the old
/// copy can tell it is no longer written.
pub const SUPERSEDED_BY: &str = "superseded_by";
/// The `state_meta` key holding when the store moved (Unix seconds).
pub const SUPERSEDED_AT: &str = "superseded_at";

/// The environment variable naming the store (`postgres://…` or a SQLite path).
pub const DATABASE_URL_VAR: &str = "HERMES_STATE_DATABASE_URL";

pub use hermes_state_core::SessionStore;

/// The SQLite store behind a `dyn SessionStore`, for what only a file
/// offers (the rest of `SessionDb`'s API).
pub trait AsSqlite {
    /// The file's `SessionDb`; `None` on other backends.
    fn as_sqlite(&self) -> Option<&SessionDb>;
}

impl AsSqlite for dyn SessionStore {
    fn as_sqlite(&self) -> Option<&SessionDb> {
        self.as_any().downcast_ref::<SessionDb>()
    }
}

/// Where a store lives, as a database URL names it.
///
/// `Debug` shows a PostgreSQL location redacted, as everything else does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file (`sqlite:PATH`, or a plain path).
    Sqlite(PathBuf),
    /// A PostgreSQL database and schema (`postgres://…`, `postgresql://…`
    /// or a libpq key=value string; `schema=NAME`), parsed.
    Postgres(PostgresUrl),
}

impl StoreLocation {
    /// Reads a database URL: `postgres://…`, `postgresql://…`, a libpq
    /// key=value string (`host=… dbname=…`: text that starts with a
    /// lowercase `name=`), `sqlite:PATH` or a path. Another `scheme://`
    /// or an empty text is refused, never taken as a file name. Errors
    /// never repeat the text (it may hold a password).
    pub fn parse(url: &str) -> Result<StoreLocation> {
        let url = url.trim();
        if url.is_empty() {
            return Err(Error::InvalidInput("the database URL is empty".into()));
        }
        if url.starts_with("postgres://")
            || url.starts_with("postgresql://")
            || looks_like_key_values(url)
        {
            return Ok(StoreLocation::Postgres(PostgresUrl::parse(url)?));
        }
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            if path.is_empty() {
                return Err(Error::InvalidInput("sqlite: needs a path".into()));
            }
            return Ok(StoreLocation::Sqlite(PathBuf::from(path)));
        }
        if looks_like_postgres_typo(url) || holds_a_password(url) {
            return Err(Error::InvalidInput(
                "the database URL is neither a PostgreSQL URL (postgres://… or postgresql://…), \
                 a key=value string nor a file name (it is not shown: it holds a password or \
                 looks like a PostgreSQL URL)"
                    .into(),
            ));
        }
        if let Some((scheme, _)) = url.split_once("://") {
            // Only a scheme-like prefix is repeated, never the rest.
            let scheme = if scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            {
                format!(" {scheme:?}")
            } else {
                String::new()
            };
            return Err(Error::InvalidInput(format!(
                "unknown database URL scheme{scheme}: use postgres://, postgresql:// or sqlite:PATH"
            )));
        }
        Ok(StoreLocation::Sqlite(PathBuf::from(url)))
    }

    /// The location without a password, for messages and files: the
    /// PostgreSQL form is [`PostgresUrl::redacted`].
    pub fn redacted(&self) -> String {
        match self {
            StoreLocation::Sqlite(path) => format!("sqlite:{}", path.display()),
            StoreLocation::Postgres(url) => url.redacted(),
        }
    }

    /// A location as some text names it (a `superseded_by` marker, which
    /// an older release may have written with a password in it), shown
    /// redacted; text that does not parse is not shown at all.
    pub fn redact_text(text: &str) -> String {
        match StoreLocation::parse(text) {
            Ok(location) => location.redacted(),
            Err(_) => "(a location that cannot be read; not shown)".to_owned(),
        }
    }
}

/// `postgres:` or `postgresql:` without `//`: a mistyped URL, which as a
/// file name would be shown (password and all) in every message.
fn looks_like_postgres_typo(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["postgres:", "postgresql:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
}

/// Text naming a secret option (`password=`, `sslpassword=`, …) is never
/// taken as a file name, whose every mention would show it.
fn holds_a_password(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower
        .match_indices("password")
        .any(|(at, word)| lower[at + word.len()..].trim_start().starts_with('='))
        || [
            "scram_client_key",
            "scram_server_key",
            "oauth_client_secret",
        ]
        .iter()
        .any(|option| lower.contains(option))
}

/// Whether the text is a libpq key=value connection string: it starts
/// with a lowercase option name and `=` (`host=db dbname=app`). A file
/// whose name looks so is named `sqlite:PATH` or `./PATH`.
fn looks_like_key_values(text: &str) -> bool {
    let name_end = text
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    name_end > 0
        && text.starts_with(|c: char| c.is_ascii_lowercase())
        && text[name_end..].trim_start().starts_with('=')
}

/// A PostgreSQL store's connection settings, parsed (the PostgreSQL
/// backend's `StoreUrl`). `Display` and `Debug` are its redacted form:
/// no password, whatever form it was written in.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(PostgresUrlInner);

#[cfg(feature = "postgres")]
type PostgresUrlInner = Box<hermes_state_postgres::StoreUrl>;
/// Without the backend no PostgreSQL location can be made: `parse` refuses.
#[cfg(not(feature = "postgres"))]
type PostgresUrlInner = std::convert::Infallible;

impl PostgresUrl {
    /// Parses a PostgreSQL URL or key=value string (see
    /// [`StoreLocation::parse`]); without the `postgres` feature every
    /// text is refused ([`Error::InvalidInput`]).
    pub fn parse(text: &str) -> Result<PostgresUrl> {
        #[cfg(feature = "postgres")]
        {
            Ok(PostgresUrl(Box::new(
                hermes_state_postgres::StoreUrl::parse(text)?,
            )))
        }
        #[cfg(not(feature = "postgres"))]
        {
            let _ = text;
            Err(Error::InvalidInput(
                "this build has no PostgreSQL support (build with the `postgres` feature)".into(),
            ))
        }
    }

    /// The settings without any secret, as a URL (`postgresql://user@host:port/db?schema=…`).
    pub fn redacted(&self) -> String {
        #[cfg(feature = "postgres")]
        {
            self.0.redacted()
        }
        #[cfg(not(feature = "postgres"))]
        {
            match self.0 {}
        }
    }

    /// The backend's parsed URL.
    #[cfg(feature = "postgres")]
    pub fn store_url(&self) -> &hermes_state_postgres::StoreUrl {
        &self.0
    }
}

impl std::fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl std::fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Opens the store at `location`, read-only or not.
///
/// SQLite paths open as [`SessionDb::open_with`] does; PostgreSQL URLs need
/// the `postgres` feature (without it [`StoreLocation::parse`] refuses
/// them, never falling back to a SQLite file). An unreachable server is an
/// error of kind `Unavailable`.
pub fn open_store(location: &StoreLocation, read_only: bool) -> Result<Box<dyn SessionStore>> {
    open_store_with(
        location,
        &StoreOptions {
            read_only,
            ..StoreOptions::default()
        },
    )
}

/// The store `location` names, opened with `options` on either backend:
/// read-only or not, and the handle's clock (every "now" the store writes).
pub fn open_store_with(
    location: &StoreLocation,
    options: &StoreOptions,
) -> Result<Box<dyn SessionStore>> {
    match location {
        StoreLocation::Sqlite(path) => Ok(Box::new(SessionDb::open_with(path, options)?)),
        StoreLocation::Postgres(url) => open_postgres(url, options),
    }
}

#[cfg(feature = "postgres")]
fn open_postgres(url: &PostgresUrl, options: &StoreOptions) -> Result<Box<dyn SessionStore>> {
    use hermes_state_postgres::PgStore;
    let mut store = if options.read_only {
        PgStore::open_read_only(url.store_url())?
    } else {
        PgStore::open(url.store_url())?
    };
    if let Some(clock) = options.clock.clone() {
        store = store.with_clock(std::sync::Arc::new(move || clock.now()));
    }
    Ok(Box::new(store))
}

#[cfg(not(feature = "postgres"))]
fn open_postgres(url: &PostgresUrl, _options: &StoreOptions) -> Result<Box<dyn SessionStore>> {
    match url.0 {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_one_backend_or_are_refused() {
        assert!(matches!(
            StoreLocation::parse("postgresql://u:pw@h:5/db?schema=a").unwrap(),
            StoreLocation::Postgres(_)
        ));
        assert!(matches!(
            StoreLocation::parse("host=h user=u password=pw schema=a").unwrap(),
            StoreLocation::Postgres(_)
        ));
        assert_eq!(
            StoreLocation::parse("./host=h").unwrap(),
            StoreLocation::Sqlite("./host=h".into())
        );
        assert_eq!(
            StoreLocation::parse("sqlite:/tmp/x.db").unwrap(),
            StoreLocation::Sqlite("/tmp/x.db".into())
        );
        assert_eq!(
            StoreLocation::parse("state.db").unwrap(),
            StoreLocation::Sqlite("state.db".into())
        );
        for bad in [
            "",
            "  ",
            "mysql://h/db",
            "sqlite:",
            "host=h bogus=1",
            "postgres:/alice:secret@h/db",
            "@host=h password=secret",
        ] {
            assert_eq!(
                StoreLocation::parse(bad).unwrap_err().kind(),
                hermes_state_types::ErrorKind::InvalidInput,
                "{bad:?}"
            );
        }
        assert_eq!(
            StoreLocation::parse("postgres://u:secret@h/db?schema=a")
                .unwrap()
                .redacted(),
            "postgresql://u@h:5432/db?schema=a"
        );
        let location = StoreLocation::parse("postgres://u:secret@h/db?schema=a").unwrap();
        assert!(!format!("{location:?}").contains("secret"));
        assert_eq!(
            StoreLocation::redact_text("postgres://alice:pa/ss@host/db"),
            "postgresql://alice@host:5432/db?schema=hermes"
        );
        assert!(!StoreLocation::redact_text("postgres://alice:pa@ss@host/db").contains("ss@"));
    }
}
