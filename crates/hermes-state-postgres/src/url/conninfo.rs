//! The two texts a store's connection settings are written in, read into
//! one list of `(option, value)` settings: a URL
//! (`postgres://user:password@host:port/database?option=value`) and a
//! libpq key=value connection string (`host=db user=alice password='…'`).
//!
//! The URL grammar is the client's (`tokio_postgres::Config`'s, itself
//! modelled on libpq's): the user name and password end at the *first* `@`,
//! so a password may hold `/`, `?`, `:` or `&` as it is. What the client
//! would read in a way its writer cannot have meant is refused instead: a
//! second `@`, or an `@` after a `?` that follows what could be the hosts
//! (a password written as a query parameter with an `@` in it would
//! otherwise become part of a host name, and be shown wherever the host
//! is); and a host name with a character no host name has. The key=value grammar is libpq's
//! (values quoted with `'…'`, `\` escaping the next character).
//!
//! **No message of this module repeats a value**, and an option's name is
//! repeated only when no secret option (`password`, …) came before it: an
//! unescaped `&` or an unquoted space inside a password would otherwise
//! make the rest of it an option name, shown in the error.

use percent_encoding::percent_decode;

use crate::error::{PgError, Result};

/// One option as written: its name and its value (decoded, as bytes: a
/// password in a URL may be any bytes once percent-decoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Setting {
    pub key: String,
    pub value: Vec<u8>,
}

/// Options whose values are secrets: never shown, and nothing written
/// after them is named in an error.
pub(crate) const SECRET_OPTIONS: &[&str] = &[
    "password",
    "sslpassword",
    "scram_client_key",
    "scram_server_key",
    "oauth_client_secret",
];

/// The options read by hermes-state itself.
pub(crate) const OWN_OPTIONS: &[&str] = &[
    "schema",
    "sslmode",
    "sslrootcert",
    "passfile",
    "password",
    "pool_size",
    "statement_timeout",
];

/// Options handed to the client as they are.
pub(crate) const CLIENT_OPTIONS: &[&str] = &[
    "user",
    "dbname",
    "options",
    "application_name",
    "sslnegotiation",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// libpq options this client does not offer: refused by name, rather than
/// connecting without what they ask for.
pub(crate) const UNSUPPORTED_OPTIONS: &[&str] = &[
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "sslcompression",
    "sslkeylogfile",
    "requiressl",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "gssencmode",
    "gsslib",
    "gssdelegation",
    "krbsrvname",
    "requirepeer",
    "require_auth",
    "service",
    "replication",
    "fallback_application_name",
    "client_encoding",
    "min_protocol_version",
    "max_protocol_version",
    "scram_client_key",
    "scram_server_key",
    "oauth_issuer",
    "oauth_client_id",
    "oauth_client_secret",
    "oauth_scope",
];

/// A name as an error may show it: only a known option's, and only while
/// no secret option came before it in the text. A name the text's author
/// did not mean as one — the tail of a password after an unquoted space,
/// an unescaped `&` or a misplaced quote — is never known.
pub(crate) fn shown_name<'a>(key: &'a str, settings_so_far: &[Setting]) -> Option<&'a str> {
    let known = [OWN_OPTIONS, CLIENT_OPTIONS, UNSUPPORTED_OPTIONS]
        .iter()
        .any(|names| names.contains(&key));
    (known && nameable(settings_so_far)).then_some(key)
}

/// Whether a value holds `password=` (or another secret option's name and
/// `=`): a quote or an `&` went missing and a password moved into a value
/// that is shown.
pub(crate) fn names_a_secret(value: &[u8]) -> bool {
    let text = String::from_utf8_lossy(value).to_ascii_lowercase();
    SECRET_OPTIONS.iter().any(|secret| {
        text.match_indices(secret)
            .any(|(at, _)| text[at + secret.len()..].trim_start().starts_with('='))
    })
}

/// Reads a `postgres://` / `postgresql://` URL or a key=value string.
pub(crate) fn parse(text: &str) -> Result<Vec<Setting>> {
    match ["postgresql://", "postgres://"]
        .iter()
        .find_map(|scheme| text.strip_prefix(scheme))
    {
        Some(rest) => parse_url(rest),
        None => parse_key_values(text),
    }
}

/// Whether a name may be repeated in an error: only while no secret option
/// came before it in the text.
pub(crate) fn nameable(settings_so_far: &[Setting]) -> bool {
    !settings_so_far
        .iter()
        .any(|s| SECRET_OPTIONS.contains(&s.key.as_str()))
}

fn invalid(message: impl Into<String>) -> PgError {
    PgError::InvalidUrl(message.into())
}

fn parse_url(rest: &str) -> Result<Vec<Setting>> {
    let mut settings = Vec::new();
    let after_credentials = match rest.split_once('@') {
        Some((credentials, after)) => {
            if after.contains('@') {
                return Err(invalid(
                    "the URL has more than one '@': write an '@' inside a user name or password as %40",
                ));
            }
            if let Some(query) = credentials.find('?')
                && could_be_hosts(&credentials[..query])
            {
                return Err(invalid(
                    "the URL has an '@' after its '?': write an '@' inside a parameter's value as %40",
                ));
            }
            let (user, password) = match credentials.split_once(':') {
                Some((user, password)) => (user, Some(password)),
                None => (credentials, None),
            };
            if !user.is_empty() {
                let user = decode_text(user, "the user name")?;
                settings.push(setting("user", user.into_bytes()));
            }
            if let Some(password) = password.filter(|p| !p.is_empty()) {
                settings.push(setting(
                    "password",
                    percent_decode(password.as_bytes()).collect(),
                ));
            }
            after
        }
        None => rest,
    };
    let host_end = after_credentials
        .find(['/', '?'])
        .unwrap_or(after_credentials.len());
    let (hosts, mut rest) = after_credentials.split_at(host_end);
    if !hosts.is_empty() {
        for chunk in hosts.split(',') {
            let (host, port) = split_host_port(chunk)?;
            settings.push(setting("host", decode_text(host, "a host")?.into_bytes()));
            let port = decode_text(port.unwrap_or("5432"), "a port")?;
            settings.push(setting("port", port.into_bytes()));
        }
    }
    if let Some(path) = rest.strip_prefix('/') {
        let end = path.find('?').unwrap_or(path.len());
        let database = decode_text(&path[..end], "the database name")?;
        if !database.is_empty() {
            settings.push(setting("dbname", database.into_bytes()));
        }
        rest = &path[end..];
    }
    if let Some(query) = rest.strip_prefix('?') {
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(invalid(
                    "a URL parameter has no '=' (write each as name=value, joined by &)",
                ));
            };
            let key = decode_text(key, "a parameter's name")?;
            let value = if SECRET_OPTIONS.contains(&key.as_str()) {
                percent_decode(value.as_bytes()).collect()
            } else {
                decode_text(value, "a parameter's value")?.into_bytes()
            };
            settings.push(Setting { key, value });
        }
    }
    Ok(settings)
}

/// Whether text before a `?` could be the URL's hosts (and database):
/// then an `@` after that `?` may belong to a parameter's value, and the
/// client's reading (credentials up to the first `@`) may not be the
/// writer's. `alice:p` cannot be (`p` is no port), so `alice:p?w=1@host`
/// is a password with a `?` in it.
fn could_be_hosts(text: &str) -> bool {
    let hosts = text.split('/').next().unwrap_or_default();
    hosts.split(',').all(|chunk| match split_host_port(chunk) {
        Ok((_, Some(port))) => port.chars().all(|c| c.is_ascii_digit()),
        Ok((_, None)) => true,
        Err(_) => false,
    })
}

/// Refuses a TCP host name with a character no host name or address has
/// (`=`, `&`, `?`, `'`, spaces, …): such a "host" is part of something
/// else — a query, a password — that a misplaced character moved, and it
/// would be shown wherever the host is. Socket paths (`/…`) are free.
pub(crate) fn check_host(host: &str) -> Result<()> {
    let plausible = host.starts_with('/')
        || host
            .chars()
            .all(|c| c.is_alphanumeric() || ".-_:%".contains(c));
    if plausible {
        Ok(())
    } else {
        Err(invalid(
            "a host name holds characters no host name has: percent-encode reserved characters \
             (@ : / ? & =) in the user name, password and parameters",
        ))
    }
}

/// `host`, `host:port` or `[v6]` / `[v6]:port`, as the client splits them.
fn split_host_port(chunk: &str) -> Result<(&str, Option<&str>)> {
    if let Some(bracketed) = chunk.strip_prefix('[') {
        let Some((host, after)) = bracketed.split_once(']') else {
            return Err(invalid("a host in [brackets] has no closing ']'"));
        };
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err(invalid("text follows a host's closing ']'")),
            },
        };
    }
    Ok(match chunk.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (chunk, None),
    })
}

fn decode_text(text: &str, what: &str) -> Result<String> {
    percent_decode(text.as_bytes())
        .decode_utf8()
        .map(|decoded| decoded.into_owned())
        .map_err(|_| invalid(format!("{what} is not UTF-8 once percent-decoded")))
}

fn setting(key: &str, value: Vec<u8>) -> Setting {
    Setting {
        key: key.to_owned(),
        value,
    }
}

/// libpq's key=value grammar: `key = value` pairs separated by white
/// space; a value is a run of non-space characters or `'quoted'`, with `\`
/// taking the next character as it is.
fn parse_key_values(text: &str) -> Result<Vec<Setting>> {
    let mut settings: Vec<Setting> = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        if key.is_empty() {
            if chars.peek().is_some() {
                return Err(invalid("the connection string has an '=' without a name"));
            }
            return Ok(settings);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            let message = match shown_name(&key, &settings) {
                Some(key) => format!("the option `{key}` has no '=' (write name=value)"),
                None => "an option has no '=' (its name is not shown; quote a value holding \
                         spaces: name='…')"
                    .to_owned(),
            };
            return Err(invalid(message));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                    None => {
                        return Err(invalid(
                            "a quoted value of the connection string has no closing quote",
                        ));
                    }
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
            if value.is_empty() {
                return Err(invalid(
                    "an option of the connection string has no value (write name='' for an empty one)",
                ));
            }
        }
        settings.push(Setting {
            key,
            value: value.into_bytes(),
        });
    }
}

/// A value quoted for the key=value grammar (`'…'`, `\` and `'` escaped),
/// so the client reads back exactly `value`.
pub(crate) fn quote(value: &str) -> String {
    let mut quoted = String::with_capacity(value.len() + 2);
    quoted.push('\'');
    for c in value.chars() {
        if c == '\\' || c == '\'' {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('\'');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|s| (s.key, String::from_utf8(s.value).unwrap()))
            .collect()
    }

    fn p(key: &str, value: &str) -> (String, String) {
        (key.to_owned(), value.to_owned())
    }

    #[test]
    fn a_password_in_userinfo_may_hold_reserved_characters_as_the_client_reads_them() {
        assert_eq!(
            pairs("postgres://alice:pa/ss@host/db"),
            [
                p("user", "alice"),
                p("password", "pa/ss"),
                p("host", "host"),
                p("port", "5432"),
                p("dbname", "db")
            ]
        );
        assert_eq!(
            pairs("postgresql://alice:p?w:x@h:6/d?sslmode=require"),
            [
                p("user", "alice"),
                p("password", "p?w:x"),
                p("host", "h"),
                p("port", "6"),
                p("dbname", "d"),
                p("sslmode", "require")
            ]
        );
        assert_eq!(
            pairs("postgres://al%40ice:p%40ss%2F@[::1]:7,h2/d%20b"),
            [
                p("user", "al@ice"),
                p("password", "p@ss/"),
                p("host", "::1"),
                p("port", "7"),
                p("host", "h2"),
                p("port", "5432"),
                p("dbname", "d b")
            ]
        );
    }

    #[test]
    fn a_password_parameter_is_a_setting_like_any_other() {
        assert_eq!(
            pairs("postgres://host/db?user=alice&password=SE%26CRET"),
            [
                p("host", "host"),
                p("port", "5432"),
                p("dbname", "db"),
                p("user", "alice"),
                p("password", "SE&CRET")
            ]
        );
    }

    #[test]
    fn an_at_sign_the_client_would_misread_is_refused_without_repeating_the_url() {
        for url in [
            "postgresql://127.0.0.1:1/app?sche@ma=s&user=alice&password=P%26SECRET",
            "postgres://alice:p@SECRET@host/db",
            "postgres://host/db?password=p@SECRET",
            "postgres://host:5432?user=a&password=p@SECRET",
        ] {
            let error = parse(url).unwrap_err().to_string();
            assert!(error.contains("%40"), "{error}");
            assert!(!error.contains("SECRET"), "{error}");
        }
    }

    #[test]
    fn a_userinfo_password_with_a_question_mark_and_an_equals_sign_is_a_password() {
        assert_eq!(
            pairs("postgres://alice:P?w0rd&x=1@h/d"),
            [
                p("user", "alice"),
                p("password", "P?w0rd&x=1"),
                p("host", "h"),
                p("port", "5432"),
                p("dbname", "d")
            ]
        );
    }

    #[test]
    fn key_value_strings_follow_libpq() {
        assert_eq!(
            pairs(r"host=db  port = 5433 password='it\'s x' user=a\ b dbname=''"),
            [
                p("host", "db"),
                p("port", "5433"),
                p("password", "it's x"),
                p("user", "a b"),
                p("dbname", "")
            ]
        );
        for value in ["plain", "it's", r"back\slash", " spaced ", ""] {
            let text = format!("password={}", quote(value));
            assert_eq!(pairs(&text), [p("password", value)], "{text}");
        }
    }

    #[test]
    fn names_written_after_a_secret_are_never_repeated() {
        // An unquoted space inside a password makes its tail an option name.
        let error = parse("host=h password=abc defgh user=x")
            .unwrap_err()
            .to_string();
        assert!(!error.contains("defgh"), "{error}");
        // Nor an unknown one: it may be a password that a misplaced quote
        // turned into a name.
        let error = parse("host='h password='Secret9 user=x")
            .unwrap_err()
            .to_string();
        assert!(!error.contains("Secret9"), "{error}");
        let error = parse("host=h dbname user=x").unwrap_err().to_string();
        assert!(error.contains("dbname"), "{error}");
    }
}
