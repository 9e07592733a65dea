//! Store URLs: `postgres://user:password@host:port/database?schema=NAME`.
//!
//! The URL names the database; the store inside it is one PostgreSQL
//! schema, chosen by the `schema` parameter, else [`DEFAULT_SCHEMA`]. The
//! schema never comes from a local path, so the same URL reaches the same
//! store from every host (a `migrate-to URL` and a later `--database-url
//! URL` agree).

use std::fmt;
use std::str::FromStr;

use crate::error::{PgError, Result};

/// The schema of a URL without a `schema` parameter.
pub const DEFAULT_SCHEMA: &str = "hermes";

/// A parsed store URL: the connection settings and the store's schema.
#[derive(Clone)]
pub struct StoreUrl {
    config: postgres::Config,
    schema: String,
}

impl StoreUrl {
    /// Parses a `postgres://` or `postgresql://` URL; the `schema` query
    /// parameter is ours and is removed before the client sees the rest.
    ///
    /// Errors ([`PgError::InvalidUrl`]): another scheme, a URL the client
    /// refuses, a schema name outside `[a-z_][a-z0-9_]{0,62}` or starting
    /// with `pg_`.
    pub fn parse(url: &str) -> Result<StoreUrl> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(PgError::InvalidUrl(
                "a PostgreSQL store URL starts with postgres:// or postgresql://".into(),
            ));
        }
        let (base, query) = match url.split_once('?') {
            Some((base, query)) => (base, query),
            None => (url, ""),
        };
        let mut schema = None;
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("schema", value)) => schema = Some(value.to_owned()),
                _ => rest.push(pair),
            }
        }
        let schema = schema.unwrap_or_else(|| DEFAULT_SCHEMA.to_owned());
        validate_schema_name(&schema)?;
        let client_url = if rest.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", rest.join("&"))
        };
        let config = postgres::Config::from_str(&client_url).map_err(|error| {
            // The client's message never repeats the password.
            PgError::InvalidUrl(error.to_string())
        })?;
        Ok(StoreUrl { config, schema })
    }

    /// The same server and database with another schema.
    pub fn with_schema(&self, schema: &str) -> Result<StoreUrl> {
        validate_schema_name(schema)?;
        Ok(StoreUrl {
            config: self.config.clone(),
            schema: schema.to_owned(),
        })
    }

    /// The store's schema.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The client's connection settings.
    pub fn config(&self) -> &postgres::Config {
        &self.config
    }

    /// The URL without its password: what may be written into a file or a
    /// log (e.g. the marker left in a migrated `state.db`).
    pub fn redacted(&self) -> String {
        let user = self.config.get_user().unwrap_or_default();
        let host = match self.config.get_hosts().first() {
            Some(postgres::config::Host::Tcp(host)) => host.clone(),
            Some(postgres::config::Host::Unix(path)) => path.display().to_string(),
            None => "localhost".to_owned(),
        };
        let port = self
            .config
            .get_ports()
            .first()
            .map(|p| format!(":{p}"))
            .unwrap_or_default();
        let database = self.config.get_dbname().unwrap_or_default();
        let at = if user.is_empty() {
            String::new()
        } else {
            format!("{user}@")
        };
        format!(
            "postgresql://{at}{host}{port}/{database}?schema={}",
            self.schema
        )
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Refuses schema names that could not be used unquoted in every tool:
/// `[a-z_][a-z0-9_]{0,62}`, not starting with `pg_` (reserved by PostgreSQL).
pub fn validate_schema_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !first_ok || !rest_ok || name.len() > 63 {
        return Err(PgError::InvalidUrl(format!(
            "schema name {name:?}: use 1–63 characters of a-z, 0-9 and _, not starting with a digit"
        )));
    }
    if name.starts_with("pg_") {
        return Err(PgError::InvalidUrl(format!(
            "schema name {name:?}: names starting with pg_ are reserved by PostgreSQL"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_parameter_is_ours_and_defaults_to_hermes() {
        let url = StoreUrl::parse("postgres://u:secret@db.example:5433/app?schema=team_a").unwrap();
        assert_eq!(url.schema(), "team_a");
        assert_eq!(url.config().get_dbname(), Some("app"));
        assert_eq!(
            url.redacted(),
            "postgresql://u@db.example:5433/app?schema=team_a"
        );
        assert!(!format!("{url:?}").contains("secret"));
        let url = StoreUrl::parse("postgresql://u@h/app?connect_timeout=3").unwrap();
        assert_eq!(url.schema(), DEFAULT_SCHEMA);
    }

    #[test]
    fn bad_urls_and_schema_names_are_refused() {
        for url in [
            "mysql://h/db",
            "state.db",
            "postgres://h/db?schema=Upper",
            "postgres://h/db?schema=pg_x",
            "postgres://h/db?schema=1abc",
            "postgres://h/db?schema=a;drop",
            "postgres://h/db?schema=",
            "postgres://h/db?nonsense_option=1",
        ] {
            let error = StoreUrl::parse(url).unwrap_err();
            assert_eq!(
                error.kind(),
                hermes_state_types::ErrorKind::InvalidInput,
                "{url}"
            );
        }
    }
}
