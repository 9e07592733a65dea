//! Generated store locations with a password in them, for the property
//! "a password never appears in anything printed" (issue 24): the same
//! generators serve the library's test (errors, redacted forms, `Debug`)
//! and the command line's (its output on a failing connection).
//!
//! A location is written in one of the forms the client accepts — the
//! password in the user information (as it is, with reserved characters,
//! or percent-encoded), as a `password=` query parameter (as it is or
//! encoded), in a key=value string (quoted or not) — and then maybe
//! damaged (a character inserted, the text cut, a stray option), so valid
//! and invalid texts are both generated.

use proptest::prelude::*;
use proptest::sample::select;

/// Characters of generated passwords: letters and digits, and every
/// character with a meaning in a URL or a key=value string.
const PASSWORD_CHARS: &[char] = &[
    'A', 'K', 'Q', 'Z', 'b', 'x', '7', '3', '/', '?', '@', ':', '&', '=', '#', '%', '+', ' ', '\'',
    '\\', ';', ',', '[', ']', '~', '!', '$', '*', '(', ')', '-', '.', '_', 'é', '密',
];

/// A password of 8 to 16 characters with at least one uppercase letter
/// and one digit, so it cannot be a piece of the rest of the text
/// (lowercase names) or of a message by chance.
pub fn password() -> impl Strategy<Value = String> {
    proptest::collection::vec(select(PASSWORD_CHARS), 6..14).prop_map(|chars| {
        let mut password: String = chars.into_iter().collect();
        password.insert(0, 'P');
        password.push('9');
        password
    })
}

/// Where generated locations point: a host and port, and a user and
/// database name (lowercase), e.g. a closed port for a failing connection
/// or the test server.
#[derive(Debug, Clone)]
pub struct Server {
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: u16,
    /// User name.
    pub user: String,
    /// Database name.
    pub database: String,
}

impl Server {
    /// `127.0.0.1:1`: nothing listens there, so connecting fails at once.
    pub fn closed_port() -> Server {
        Server {
            host: "127.0.0.1".to_owned(),
            port: 1,
            user: "alice".to_owned(),
            database: "app".to_owned(),
        }
    }
}

/// Every character but letters and digits, percent-encoded.
pub fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The forms of a location holding `password`, before any damage.
pub fn forms(password: &str, server: &Server, schema: &str) -> Vec<String> {
    let Server {
        host,
        port,
        user,
        database,
    } = server;
    let encoded = percent_encoded(password);
    vec![
        format!("postgres://{user}:{password}@{host}:{port}/{database}?schema={schema}"),
        format!("postgresql://{user}:{encoded}@{host}:{port}/{database}?schema={schema}"),
        format!(
            "postgres://{host}:{port}/{database}?user={user}&password={password}&schema={schema}"
        ),
        format!(
            "postgresql://{host}:{port}/{database}?schema={schema}&user={user}&password={encoded}"
        ),
        format!(
            "host={host} port={port} user={user} password={} dbname={database} schema={schema}",
            quoted(password)
        ),
        format!("host={host} port={port} password={password} user={user} schema={schema}"),
        format!(
            "postgres://{user}:{password}@{host}:{port}/{database}?schema={schema}&sslmode=verify-full"
        ),
    ]
}

/// Damage done to a location: none, or a character inserted, the text
/// cut, or an option appended.
#[derive(Debug, Clone)]
pub enum Damage {
    /// The text as it is.
    None,
    /// This character inserted at this fraction of the length.
    Insert(char, f64),
    /// Cut at this fraction of the length.
    Cut(f64),
    /// An option appended (`&bogus=1` or ` bogus=1`, or a bad port).
    Append(&'static str),
}

impl Damage {
    /// The damaged text.
    pub fn apply(&self, text: &str) -> String {
        let at = |fraction: f64| {
            let chars: Vec<char> = text.chars().collect();
            let index = ((chars.len() as f64) * fraction) as usize;
            (chars, index.min(text.chars().count()))
        };
        match self {
            Damage::None => text.to_owned(),
            Damage::Insert(c, fraction) => {
                let (mut chars, index) = at(*fraction);
                chars.insert(index, *c);
                chars.into_iter().collect()
            }
            Damage::Cut(fraction) => {
                let (chars, index) = at(*fraction);
                chars[..index].iter().collect()
            }
            Damage::Append(tail) => format!("{text}{tail}"),
        }
    }
}

/// Damage, none half of the time.
pub fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => Just(Damage::None),
        1 => (select(&['@', '?', '&', '=', '/', ':', '\'', ' ', '%', '[', ',']), 0.0..1.0f64)
            .prop_map(|(c, f)| Damage::Insert(c, f)),
        1 => (0.0..1.0f64).prop_map(Damage::Cut),
        1 => select(&["&bogus=1", " bogus=1", "&port=x", " port=x", "&sslmode=allow", "&sslrootcert=/nonexistent/ca.pem&sslmode=require"][..])
            .prop_map(Damage::Append),
    ]
}

/// The forms in which `password` could show: as it is, percent-encoded
/// (whole, or as a URL component), quoted for a key=value string.
pub fn shown_forms(password: &str) -> Vec<String> {
    let component: String = password
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._~".contains(c) {
                c.to_string()
            } else {
                percent_encoded(&c.to_string())
            }
        })
        .collect();
    vec![
        password.to_owned(),
        percent_encoded(password),
        component,
        quoted(password),
    ]
}

/// Panics, naming where, when `printed` shows `password` in any form.
pub fn assert_not_shown(password: &str, printed: &str, where_: &str) {
    for form in shown_forms(password) {
        assert!(
            !printed.contains(&form),
            "the password {password:?} shows (as {form:?}) in {where_}: {printed}"
        );
    }
}
