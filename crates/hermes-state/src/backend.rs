//! The backend seam: the operations both stores offer, as one trait, and
//! the one function that turns a database URL into a store.
//!
//! [`SessionDb`] (SQLite, the reference) implements [`SessionStore`]; with
//! the `postgres` feature, so does [`hermes_state_postgres::PgStore`].
//! Code written against `dyn SessionStore` runs on either; the default
//! build links no PostgreSQL code.

use std::path::PathBuf;

use hermes_state_query::listing::{ListFilter, SessionListing};
use hermes_state_query::search::{SearchHit, SearchOptions};
use hermes_state_types::{Message, NewMessage, NewSession, Session};

use crate::db::{SessionDb, StoreOptions};
use crate::error::{Error, Result};

/// The environment variable naming the store (`postgres://…` or a SQLite path).
pub const DATABASE_URL_VAR: &str = "HERMES_STATE_DATABASE_URL";

/// The operations every backend offers, with the SQLite store's semantics
/// (`api.md`); see each `SessionDb` method of the same name.
pub trait SessionStore: Send + Sync + std::fmt::Debug {
    /// `api.md` §2.1.
    fn create_session(&self, session: &NewSession) -> Result<String>;
    /// `api.md` §2.2.
    fn end_session(&self, session_id: &str, end_reason: &str) -> Result<()>;
    /// `api.md` §2.3.
    fn reopen_session(&self, session_id: &str) -> Result<()>;
    /// `api.md` §2.4.
    fn get_session(&self, session_id: &str) -> Result<Option<Session>>;
    /// `api.md` §11.6.
    fn delete_session(&self, session_id: &str) -> Result<bool>;
    /// `api.md` §4.
    fn append_message(&self, message: &NewMessage) -> Result<i64>;
    /// Several messages in one transaction.
    fn append_messages(&self, messages: &[NewMessage]) -> Result<Vec<i64>>;
    /// `api.md` §5.1.
    fn get_messages(&self, session_id: &str) -> Result<Vec<Message>>;
    /// Rows of one session or of the store.
    fn message_count(&self, session_id: Option<&str>) -> Result<i64>;
    /// `api.md` §10.2.
    fn recent_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionListing>>;
    /// `api.md` §8.
    fn search_messages(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>>;
    /// `api.md` §6.2.
    fn set_session_title(&self, session_id: &str, title: Option<&str>) -> Result<bool>;
    /// `api.md` §6.
    fn get_session_title(&self, session_id: &str) -> Result<Option<String>>;
    /// `api.md` §6.3.
    fn resolve_session_by_title(&self, title: &str) -> Result<Option<String>>;
    /// A `state_meta` value.
    fn get_meta(&self, key: &str) -> Result<Option<String>>;
    /// Which backend this is, e.g. for messages: `sqlite` or `postgres`.
    fn backend_name(&self) -> &'static str;
}

/// Forwards every trait method to the inherent method of the same name.
macro_rules! forward_store {
    ($name:literal, $err:expr) => {
        fn create_session(&self, session: &NewSession) -> Result<String> {
            Self::create_session(self, session).map_err($err)
        }
        fn end_session(&self, session_id: &str, end_reason: &str) -> Result<()> {
            Self::end_session(self, session_id, end_reason).map_err($err)
        }
        fn reopen_session(&self, session_id: &str) -> Result<()> {
            Self::reopen_session(self, session_id).map_err($err)
        }
        fn get_session(&self, session_id: &str) -> Result<Option<Session>> {
            Self::get_session(self, session_id).map_err($err)
        }
        fn delete_session(&self, session_id: &str) -> Result<bool> {
            Self::delete_session(self, session_id).map_err($err)
        }
        fn append_message(&self, message: &NewMessage) -> Result<i64> {
            Self::append_message(self, message).map_err($err)
        }
        fn append_messages(&self, messages: &[NewMessage]) -> Result<Vec<i64>> {
            Self::append_messages(self, messages).map_err($err)
        }
        fn get_messages(&self, session_id: &str) -> Result<Vec<Message>> {
            Self::get_messages(self, session_id).map_err($err)
        }
        fn message_count(&self, session_id: Option<&str>) -> Result<i64> {
            Self::message_count(self, session_id).map_err($err)
        }
        fn recent_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionListing>> {
            Self::recent_sessions(self, filter).map_err($err)
        }
        fn search_messages(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
            Self::search_messages(self, query, options).map_err($err)
        }
        fn set_session_title(&self, session_id: &str, title: Option<&str>) -> Result<bool> {
            Self::set_session_title(self, session_id, title).map_err($err)
        }
        fn get_session_title(&self, session_id: &str) -> Result<Option<String>> {
            Self::get_session_title(self, session_id).map_err($err)
        }
        fn resolve_session_by_title(&self, title: &str) -> Result<Option<String>> {
            Self::resolve_session_by_title(self, title).map_err($err)
        }
        fn get_meta(&self, key: &str) -> Result<Option<String>> {
            Self::get_meta(self, key).map_err($err)
        }
        fn backend_name(&self) -> &'static str {
            $name
        }
    };
}

impl SessionStore for SessionDb {
    forward_store!("sqlite", std::convert::identity);
}

#[cfg(feature = "postgres")]
impl SessionStore for hermes_state_postgres::PgStore {
    forward_store!("postgres", Error::from);
}

/// Where a store lives, as a database URL names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file (`sqlite:PATH`, or a plain path).
    Sqlite(PathBuf),
    /// A PostgreSQL database and schema (`postgres://…` or `postgresql://…`,
    /// `?schema=NAME`); kept as given, password included, for connecting
    /// only: show it with [`StoreLocation::redacted`].
    Postgres(String),
}

impl StoreLocation {
    /// Reads a database URL: `postgres://…`, `postgresql://…`, `sqlite:PATH`
    /// or a path. Another `scheme://` or an empty text is refused, never
    /// taken as a file name.
    pub fn parse(url: &str) -> Result<StoreLocation> {
        let url = url.trim();
        if url.is_empty() {
            return Err(Error::InvalidInput("the database URL is empty".into()));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(StoreLocation::Postgres(url.to_owned()));
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
        if let Some((scheme, _)) = url.split_once("://") {
            return Err(Error::InvalidInput(format!(
                "unknown database URL scheme {scheme:?}: use postgres://, postgresql:// or sqlite:PATH"
            )));
        }
        Ok(StoreLocation::Sqlite(PathBuf::from(url)))
    }

    /// The location without a password, for messages and files.
    pub fn redacted(&self) -> String {
        match self {
            StoreLocation::Sqlite(path) => format!("sqlite:{}", path.display()),
            StoreLocation::Postgres(url) => redact_postgres_url(url),
        }
    }
}

/// A PostgreSQL URL with its password replaced (`postgres://u:***@h/db`).
pub fn redact_postgres_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
            format!("{scheme}://{user}@{host}{tail}")
        }
        None => url.to_owned(),
    }
}

/// Opens the store at `location`, read-only or not.
///
/// SQLite paths open as [`SessionDb::open_with`] does; PostgreSQL URLs need
/// the `postgres` feature (without it: [`Error::InvalidInput`], never a
/// fall-back to a SQLite file). An unreachable server is an error of kind
/// `Unavailable`.
pub fn open_store(location: &StoreLocation, read_only: bool) -> Result<Box<dyn SessionStore>> {
    match location {
        StoreLocation::Sqlite(path) => {
            let options = StoreOptions {
                read_only,
                ..StoreOptions::default()
            };
            Ok(Box::new(SessionDb::open_with(path, &options)?))
        }
        StoreLocation::Postgres(url) => open_postgres(url, read_only),
    }
}

#[cfg(feature = "postgres")]
fn open_postgres(url: &str, read_only: bool) -> Result<Box<dyn SessionStore>> {
    use hermes_state_postgres::{PgStore, StoreUrl};
    let url = StoreUrl::parse(url)?;
    let store = if read_only {
        PgStore::open_read_only(&url)?
    } else {
        PgStore::open(&url)?
    };
    Ok(Box::new(store))
}

#[cfg(not(feature = "postgres"))]
fn open_postgres(_url: &str, _read_only: bool) -> Result<Box<dyn SessionStore>> {
    Err(Error::InvalidInput(
        "this build has no PostgreSQL support (build with the `postgres` feature)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_one_backend_or_are_refused() {
        assert_eq!(
            StoreLocation::parse("postgresql://u:pw@h:5/db?schema=a").unwrap(),
            StoreLocation::Postgres("postgresql://u:pw@h:5/db?schema=a".into())
        );
        assert_eq!(
            StoreLocation::parse("sqlite:/tmp/x.db").unwrap(),
            StoreLocation::Sqlite("/tmp/x.db".into())
        );
        assert_eq!(
            StoreLocation::parse("state.db").unwrap(),
            StoreLocation::Sqlite("state.db".into())
        );
        for bad in ["", "  ", "mysql://h/db", "sqlite:"] {
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
            "postgres://u@h/db?schema=a"
        );
    }
}
