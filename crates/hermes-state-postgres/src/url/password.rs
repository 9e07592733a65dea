//! Where the password comes from when the settings hold none, as libpq
//! looks for it: `PGPASSWORD`, then the password file (`passfile=`, else
//! `PGPASSFILE`, else `~/.pgpass`). Both keep a secret out of the URL, so
//! the URL itself can be shown, copied and logged.
//!
//! Neither is ever shown: the password is handed to the client and
//! nothing else (the client's `Debug` of its settings writes `_` for it).

use std::path::{Path, PathBuf};

use postgres::config::Host;

/// The variable libpq reads a password from.
pub const PASSWORD_VAR: &str = "PGPASSWORD";
/// The variable naming libpq's password file.
pub const PASSFILE_VAR: &str = "PGPASSFILE";

/// The password for `config` when it holds none: `PGPASSWORD` if set and
/// not empty, else the first line of the password file that matches the
/// first host, its port, the database and the user.
pub(crate) fn fallback(config: &postgres::Config, passfile: Option<&Path>) -> Option<Vec<u8>> {
    if let Some(password) = std::env::var_os(PASSWORD_VAR).filter(|p| !p.is_empty()) {
        return Some(password.into_encoded_bytes());
    }
    let file = passfile
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(PASSFILE_VAR).map(PathBuf::from))
        .or_else(|| home::home_dir().map(|home| home.join(".pgpass")))?;
    let text = readable_passfile(&file)?;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(host)) => host.clone(),
        // libpq matches a socket connection with `localhost`.
        Some(Host::Unix(_)) | None => "localhost".to_owned(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default();
    let database = config.get_dbname().unwrap_or(user);
    lookup(&text, [&host, &port, database, user]).map(String::into_bytes)
}

/// The file's text, unless it cannot be read or (on Unix) others may read
/// it: libpq ignores a password file with group or world access.
fn readable_passfile(file: &Path) -> Option<String> {
    let metadata = std::fs::metadata(file).ok()?;
    if !metadata.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if metadata.permissions().mode() & 0o077 != 0 {
            return None;
        }
    }
    std::fs::read_to_string(file).ok()
}

/// The password of the first line `host:port:database:user:password`
/// whose four first fields match (`*` matches anything; `\` escapes `:`
/// and `\`); lines starting with `#` are comments.
fn lookup(text: &str, wanted: [&str; 4]) -> Option<String> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let fields = split_fields(line);
            if fields.len() < 5 {
                return None;
            }
            let matches = fields
                .iter()
                .zip(wanted)
                .all(|(field, wanted)| field == "*" || field == wanted);
            matches.then(|| fields[4..].join(":"))
        })
}

fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("one field").extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_line_gives_the_password() {
        let text = "# comment\n\
                    other:5432:*:*:nope\n\
                    db.example:5432:app:alice:pa\\:ss:w\n\
                    *:*:*:*:fallback\n";
        assert_eq!(
            lookup(text, ["db.example", "5432", "app", "alice"]).as_deref(),
            Some("pa:ss:w")
        );
        assert_eq!(
            lookup(text, ["db.example", "5433", "app", "alice"]).as_deref(),
            Some("fallback")
        );
        assert_eq!(lookup("h:1:d:u\n", ["h", "1", "d", "u"]), None);
    }
}
