//! Store URLs: `postgres://user:password@host:port/database?schema=NAME`,
//! or the same settings as a libpq key=value string
//! (`host=… dbname=… schema=NAME`).
//!
//! The URL names the database; the store inside it is one PostgreSQL
//! schema, chosen by the `schema` parameter, else [`DEFAULT_SCHEMA`]. The
//! schema never comes from a local path, so the same URL reaches the same
//! store from every host (a `migrate-to URL` and a later `--database-url
//! URL` agree).
//!
//! **One parse, one redaction.** The text is read once (`conninfo`) into
//! settings; the client gets exactly those settings, and
//! [`StoreUrl::redacted`] is written from them, never from the text — so
//! what is shown is what is connected to, and no password (in the user
//! information, percent-encoded or not, as a `password=` parameter, in a
//! key=value string, or from `PGPASSWORD` / the password file) is in it.
//! `Display` and `Debug` are the redacted form; errors about the text
//! never repeat it.

mod conninfo;
mod password;
mod settings;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use postgres::config::Host;

pub use self::password::{PASSFILE_VAR, PASSWORD_VAR};
pub use self::settings::{MAX_POOL_SIZE, OperatorSettings};
use crate::error::{PgError, Result};
use crate::tls::{RootCerts, SslMode, TlsPlan, TlsSettings};

/// The schema of a URL without a `schema` parameter.
pub const DEFAULT_SCHEMA: &str = "hermes";

/// A parsed store URL: the connection settings, the TLS settings and the
/// store's schema. Shown only redacted (`Display`, `Debug`).
#[derive(Clone)]
pub struct StoreUrl {
    config: postgres::Config,
    /// The client's options as given to it (no password): what
    /// equality compares, with the password, since the client's settings
    /// have no `PartialEq`.
    client_options: String,
    schema: String,
    tls: TlsSettings,
    passfile: Option<PathBuf>,
    settings: OperatorSettings,
}

impl StoreUrl {
    /// Parses a `postgres://` / `postgresql://` URL or a libpq key=value
    /// string. `schema`, `sslmode`, `sslrootcert`, `passfile`, `pool_size`
    /// and `statement_timeout` are read here; the client's own options
    /// (`application_name` among them) go to it as they are.
    ///
    /// Errors ([`PgError::InvalidUrl`], never repeating the text): a text
    /// the grammar refuses (an ambiguous `@`), an
    /// option unknown or unsupported, a value the client refuses, a schema
    /// name outside `[a-z_][a-z0-9_]{0,62}` or starting with `pg_`;
    /// [`PgError::InvalidSetting`] for a `pool_size` or `statement_timeout`
    /// it does not take.
    pub fn parse(url: &str) -> Result<StoreUrl> {
        let settings = conninfo::parse(url)?;
        let mut schema = None;
        let mut tls = TlsSettings::default();
        let mut passfile = None;
        let mut operator = OperatorSettings::default();
        let mut password = None;
        let mut client = String::new();
        for (index, setting) in settings.iter().enumerate() {
            let key = setting.key.as_str();
            let text = || {
                String::from_utf8(setting.value.clone())
                    .map_err(|_| PgError::InvalidUrl("an option's value is not UTF-8".to_owned()))
            };
            let named = |what: &str| match conninfo::shown_name(key, &settings[..index]) {
                Some(key) => format!("{what} `{key}`"),
                None => format!(
                    "{what} (its name is not shown: it may be part of a password; \
                     the options are listed in docs/POSTGRES.md)"
                ),
            };
            if !conninfo::SECRET_OPTIONS.contains(&key) && conninfo::names_a_secret(&setting.value)
            {
                return Err(PgError::InvalidUrl(format!(
                    "{} holds `password=` (is a quote or an & missing?)",
                    named("the value of option")
                )));
            }
            match key {
                "schema" => schema = Some((text()?, conninfo::nameable(&settings[..index]))),
                "sslmode" => {
                    let value = text()?;
                    tls.mode = Some(SslMode::parse(&value).ok_or_else(|| {
                        PgError::InvalidUrl(if value == "allow" {
                            "sslmode=allow is not supported (it tries cleartext first): use prefer or disable".to_owned()
                        } else {
                            "invalid value for option `sslmode`: use disable, prefer, require, verify-ca or verify-full".to_owned()
                        })
                    })?);
                }
                "sslrootcert" => tls.root = Some(RootCerts::parse(&text()?)),
                "passfile" => passfile = Some(PathBuf::from(text()?)),
                "pool_size" | "statement_timeout" => {
                    operator.read(key, &text()?).map_err(|error| {
                        // A name after a password may be the password's tail.
                        if conninfo::shown_name(key, &settings[..index]).is_some() {
                            error
                        } else {
                            PgError::InvalidUrl(named("an invalid value for option"))
                        }
                    })?;
                }
                "password" => password = Some(setting.value.clone()).filter(|p| !p.is_empty()),
                "host" => {
                    let hosts = text()?;
                    for host in hosts.split(',') {
                        conninfo::check_host(host)?;
                    }
                    client.push_str("host=");
                    client.push_str(&conninfo::quote(&hosts));
                    client.push(' ');
                }
                key if conninfo::CLIENT_OPTIONS.contains(&key) => {
                    client.push_str(key);
                    client.push('=');
                    client.push_str(&conninfo::quote(&text()?));
                    client.push(' ');
                }
                key if conninfo::UNSUPPORTED_OPTIONS.contains(&key) => {
                    return Err(PgError::InvalidUrl(format!(
                        "{} is not supported by hermes-state's PostgreSQL client",
                        named("the libpq option")
                    )));
                }
                _ => return Err(PgError::InvalidUrl(named("unknown option"))),
            }
        }
        let (schema, nameable) = schema.unwrap_or_else(|| (DEFAULT_SCHEMA.to_owned(), true));
        validate_schema_name(&schema).map_err(|error| {
            if nameable {
                error
            } else {
                PgError::InvalidUrl(
                    "the schema name (not shown: it follows a password) is not valid: use 1–63 \
                     characters of a-z, 0-9 and _, not starting with a digit or pg_"
                        .to_owned(),
                )
            }
        })?;
        // Every name is one the client knows and every value is quoted, so
        // its only possible complaint is a value it refuses, which it names
        // by option, never by value.
        let mut config = postgres::Config::from_str(&client)
            .map_err(|error| PgError::InvalidUrl(error.to_string()))?;
        if let Some(password) = password {
            config.password(password);
        }
        Ok(StoreUrl {
            config,
            client_options: client,
            schema,
            tls,
            passfile,
            settings: operator,
        })
    }

    /// The store's schema.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The client's connection settings as written (its `Debug` hides the
    /// password; `PGPASSWORD` and the password file are read at connect).
    pub fn config(&self) -> &postgres::Config {
        &self.config
    }

    /// The TLS settings as written.
    pub fn tls(&self) -> &TlsSettings {
        &self.tls
    }

    /// What a connection will do about TLS (libpq's table; the default
    /// root file `~/.postgresql/root.crt` is used when it exists).
    pub fn tls_plan(&self) -> Result<TlsPlan> {
        self.tls.plan(crate::tls::default_root_file().as_deref())
    }

    /// Whether every host is a Unix socket, where (as in libpq) TLS is
    /// never used.
    pub(crate) fn over_sockets_only(&self) -> bool {
        let hosts = self.config.get_hosts();
        !hosts.is_empty() && hosts.iter().all(|host| !matches!(host, Host::Tcp(_)))
    }

    /// The settings to connect with: as written, plus the password from
    /// `PGPASSWORD` or the password file when the text holds none.
    pub(crate) fn client_config(&self) -> postgres::Config {
        let mut config = self.config.clone();
        if config.get_password().is_none()
            && let Some(password) = password::fallback(&config, self.passfile.as_deref())
        {
            config.password(password);
        }
        config
    }

    /// The settings without any secret, as a URL: user, hosts and ports,
    /// database, `schema`, and the `hostaddr`, `sslmode`, `sslrootcert` and
    /// `passfile` given. The only form of a store's location written
    /// anywhere (messages, `--json`, the marker of a moved store, logs).
    pub fn redacted(&self) -> String {
        let config = &self.config;
        let mut url = String::from("postgresql://");
        if let Some(user) = config.get_user().filter(|user| !user.is_empty()) {
            url.push_str(&encode(user));
            url.push('@');
        }
        let ports = config.get_ports();
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let name = match host {
                    Host::Tcp(name) if name.contains(':') => format!("[{}]", encode_v6(name)),
                    Host::Tcp(name) => encode(name),
                    Host::Unix(path) => encode(&path.display().to_string()),
                };
                let port = ports
                    .get(i)
                    .or_else(|| (ports.len() == 1).then(|| &ports[0]));
                match port {
                    Some(port) => format!("{name}:{port}"),
                    None => name,
                }
            })
            .collect();
        url.push_str(&hosts.join(","));
        url.push('/');
        if let Some(database) = config.get_dbname() {
            url.push_str(&encode(database));
        }
        url.push_str("?schema=");
        url.push_str(&self.schema);
        let addresses = config.get_hostaddrs();
        if !addresses.is_empty() {
            let addresses: Vec<String> = addresses.iter().map(ToString::to_string).collect();
            url.push_str("&hostaddr=");
            url.push_str(&encode(&addresses.join(",")));
        }
        if let Some(mode) = self.tls.mode {
            url.push_str("&sslmode=");
            url.push_str(mode.as_str());
        }
        if let Some(root) = &self.tls.root {
            url.push_str("&sslrootcert=");
            url.push_str(&encode(&root.as_setting()));
        }
        if let Some(passfile) = &self.passfile {
            url.push_str("&passfile=");
            url.push_str(&encode(&passfile.display().to_string()));
        }
        url.push_str(&self.settings.as_parameters());
        url
    }

    /// The operator's settings given (`pool_size`, `statement_timeout`).
    pub fn settings(&self) -> OperatorSettings {
        self.settings
    }

    /// The `passfile` given, if any.
    pub fn passfile(&self) -> Option<&Path> {
        self.passfile.as_deref()
    }
}

/// Everything but letters, digits and `-._~` is percent-encoded.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn encode(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

fn encode_v6(text: &str) -> String {
    const V6: &AsciiSet = &COMPONENT.remove(b':');
    utf8_percent_encode(text, V6).to_string()
}

impl PartialEq for StoreUrl {
    fn eq(&self, other: &StoreUrl) -> bool {
        self.client_options == other.client_options
            && self.config.get_password() == other.config.get_password()
            && self.schema == other.schema
            && self.tls == other.tls
            && self.passfile == other.passfile
            && self.settings == other.settings
    }
}

impl Eq for StoreUrl {}

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
            "postgres://h/db?sslmode=allow",
            "postgres://h/db?sslmode=verify-everything",
            "postgres://h/db?sslcert=client.pem",
            "postgres://h:port/db",
            "host=h port=x",
            "host=h dbname",
        ] {
            let error = StoreUrl::parse(url).unwrap_err();
            assert_eq!(
                error.kind(),
                hermes_state_types::ErrorKind::InvalidInput,
                "{url}"
            );
        }
    }

    /// The three forms issue 24 found printed whole, and the key=value form.
    #[test]
    fn every_form_of_password_is_left_out_of_the_redacted_form() {
        for (url, redacted) in [
            (
                "postgres://alice:pa/ss@host/db",
                "postgresql://alice@host:5432/db?schema=hermes",
            ),
            (
                "postgres://alice:p?w@host/db",
                "postgresql://alice@host:5432/db?schema=hermes",
            ),
            (
                "postgres://host/db?user=alice&password=SECRET",
                "postgresql://alice@host:5432/db?schema=hermes",
            ),
            (
                "postgresql://al%40ice:S%3AE%2FC@[::1]:6,h2/d%20b?sslmode=verify-full&sslrootcert=%2Fca.pem",
                "postgresql://al%40ice@[::1]:6,h2:5432/d%20b?schema=hermes&sslmode=verify-full&sslrootcert=%2Fca.pem",
            ),
            (
                "host=db.example user=alice password='S E\\'C' dbname=app schema=team",
                "postgresql://alice@db.example/app?schema=team",
            ),
        ] {
            let parsed = StoreUrl::parse(url).unwrap();
            assert_eq!(parsed.redacted(), redacted, "{url}");
            assert_eq!(format!("{parsed}"), redacted);
            assert_eq!(format!("{parsed:?}"), redacted);
            assert!(parsed.config().get_password().is_some(), "{url}");
        }
        let parsed = StoreUrl::parse("host=h password='S E\\'C'").unwrap();
        assert_eq!(parsed.config().get_password(), Some(&b"S E'C"[..]));
    }

    #[test]
    fn errors_about_a_url_never_repeat_it() {
        for url in [
            "postgres://alice:SECRET@host:port/db",
            "postgres://alice:SECRET@host/db?bogus=1",
            "postgres://host/db?password=SECRET&SECRETTAIL=1",
            "host=h password=SECRET SECRETTAIL=1",
            "host=h password=SECRET SECRETTAIL",
            "host=h password='SECRET",
            "postgres://alice:SE@CRET@host/db",
            "postgres://host/db?password=SE@CRET",
        ] {
            let error = StoreUrl::parse(url).unwrap_err();
            for shown in [error.to_string(), format!("{error:?}")] {
                assert!(!shown.contains("SECRET"), "{url}: {shown}");
                assert!(!shown.contains("CRET"), "{url}: {shown}");
            }
        }
    }
}
