//! Opening a connection and setting it up as the original does
//! (`schema-v23.md` §2): busy timeout, journal mode with its fallback rule,
//! foreign keys.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Context, SqliteError};

/// How long one statement waits inside SQLite for a lock before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_millis(1000);

/// The journal mode a writable connection ended up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalMode {
    /// Write-ahead log: concurrent readers with one writer.
    Wal,
    /// Rollback journal (the fallback on file systems without WAL support, or
    /// on SQLite builds with the WAL-reset bug).
    Delete,
    /// Some other mode found on disk and left alone.
    Other,
}

impl JournalMode {
    /// Its name in reports: `wal`, `delete`, `other`.
    pub fn name(self) -> &'static str {
        match self {
            JournalMode::Wal => "wal",
            JournalMode::Delete => "delete",
            JournalMode::Other => "other",
        }
    }
}

/// Opens a read-write connection (creating the file if it does not exist) with
/// the busy timeout set, and nothing else done yet.
///
/// Nothing is written here: the caller classifies the file before any pragma
/// that could change it.
pub fn open_read_write(path: &Path) -> Result<Connection, SqliteError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(path, flags).context(&format!("opening {}", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .context("setting the busy timeout")?;
    register_tokenizers(&conn);
    Ok(conn)
}

/// Opens a read-only connection, as the original's `read_only=True` handle:
/// busy timeout only; no pragma, no schema step. A missing file is an error.
///
/// A WAL store whose folder cannot be written (read-only media, a folder of
/// another user) cannot be read the shared way: SQLite must create the
/// `-shm` index beside it. When the store's write-ahead log holds nothing
/// (no `-wal` file, or an empty one), the main file alone is the whole
/// store, and it is read as an unchanging file instead (SQLite's
/// `immutable`; [`is_read_as_immutable`] tells, for the output to say so).
/// When the log holds changes, reading the main file alone would miss them:
/// the error says so and what to do.
pub fn open_read_only(path: &Path) -> Result<Connection, SqliteError> {
    let conn = open_read_only_plain(path)?;
    match conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())) {
        Err(error) if cannot_set_up_shared_reading(&error) => {
            if wal_holds_changes(path) {
                return Err(SqliteError::new(
                    format!(
                        "reading {}: its folder cannot be written, so SQLite cannot set up \
                         shared reading, and its write-ahead log ({}) holds changes not yet in the \
                         main file; copy the store with its -wal file to a folder you may write, \
                         and read the copy",
                        path.display(),
                        sidecar(path, "-wal").display()
                    ),
                    error,
                ));
            }
            open_immutable(path)
        }
        _ => Ok(conn),
    }
}

/// Whether [`open_read_only`] reads the store at `path` as an unchanging
/// file (its folder cannot be written, its write-ahead log is empty).
/// Decided again from the files on each call: it is what the next read-only
/// connection would do.
pub fn is_read_as_immutable(path: &Path) -> bool {
    let Ok(conn) = open_read_only_plain(path) else {
        return false;
    };
    matches!(
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())),
        Err(error) if cannot_set_up_shared_reading(&error) && !wal_holds_changes(path)
    )
}

fn open_read_only_plain(path: &Path) -> Result<Connection, SqliteError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)
        .context(&format!("opening {} read-only", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .context("setting the busy timeout")?;
    register_tokenizers(&conn);
    Ok(conn)
}

/// The store as an unchanging file: `file:PATH?immutable=1`.
fn open_immutable(path: &Path) -> Result<Connection, SqliteError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let uri = format!("file:{}?immutable=1", uri_path(path));
    let conn = Connection::open_with_flags(&uri, flags)
        .context(&format!("opening {} as an unchanging file", path.display()))?;
    register_tokenizers(&conn);
    Ok(conn)
}

/// SQLite's answer when a read-only connection, the file itself open,
/// cannot create the `-shm` index of a WAL store: `SQLITE_READONLY_CANTINIT`
/// and its kin with an empty log, `SQLITE_CANTOPEN` (of the `-shm`) with a
/// log to read.
fn cannot_set_up_shared_reading(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
    )
}

/// Whether the store's `-wal` file exists with content.
fn wal_holds_changes(path: &Path) -> bool {
    // tidy: not the live database (the size of its -wal sidecar)
    std::fs::metadata(sidecar(path, "-wal")).is_ok_and(|meta| meta.len() > 0)
}

fn sidecar(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// A path in a `file:` URI: every byte outside the unreserved set and `/`
/// percent-encoded (spaces, `?`, `#`, `%` in folder names).
fn uri_path(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        absolute.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = absolute.to_string_lossy().replace('\\', "/").into_bytes();
    let mut out = String::new();
    for &byte in &bytes {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Registers the built-in `cjk_unicode61` tokenizer, so that statements
/// reaching `messages_fts_cjk` (message writes, through its triggers) work on
/// this connection. Registration writes nothing to the file. A failure (only
/// possible without FTS5) leaves the tokenizer absent, as the original treats
/// a missing tokenizer library; [`has_cjk_tokenizer`] tells which.
///
/// `HERMES_CJK_FTS=0|false|off|no` (the original's switch, `schema-v23.md`
/// §6.6) disables it: the tokenizer is then absent, exactly as for an
/// original without the library.
pub fn register_tokenizers(conn: &Connection) {
    if cjk_enabled() {
        let _ = crate::cjk::register(conn);
    }
}

/// The environment variable that switches the CJK tokenizer off.
pub const CJK_SWITCH_ENV: &str = "HERMES_CJK_FTS";

/// Whether the CJK tokenizer is enabled: `HERMES_CJK_FTS`, trimmed and
/// lower-cased, is not one of `0`, `false`, `off`, `no`.
pub fn cjk_enabled() -> bool {
    match std::env::var(CJK_SWITCH_ENV) {
        Ok(value) => !cjk_switched_off(&value),
        Err(_) => true,
    }
}

/// Whether a value of `HERMES_CJK_FTS` switches the tokenizer off.
pub fn cjk_switched_off(value: &str) -> bool {
    matches!(
        value.trim().to_lowercase().as_str(),
        "0" | "false" | "off" | "no"
    )
}

/// Whether the `cjk_unicode61` tokenizer is available on this connection.
pub fn has_cjk_tokenizer(conn: &Connection) -> bool {
    conn.execute_batch(
        "CREATE VIRTUAL TABLE temp.hermes_cjk_probe USING fts5(x, tokenize='cjk_unicode61'); DROP TABLE temp.hermes_cjk_probe;",
    )
    .is_ok()
}

/// Whether a SQLite version (as `sqlite3_libversion_number`, e.g. `3054001`)
/// carries the WAL-reset corruption bug: `>= 3.7.0` and `< 3.51.3`, except the
/// back-ported fixes `3.50.7 ..< 3.51.0` and `3.44.6 ..< 3.45.0`.
pub fn has_wal_reset_bug(version_number: i32) -> bool {
    let affected = (3_007_000..3_051_003).contains(&version_number);
    let backported = (3_050_007..3_051_000).contains(&version_number)
        || (3_044_006..3_045_000).contains(&version_number);
    affected && !backported
}

/// Applies the journal-mode rule and `foreign_keys=ON` to a writable connection.
///
/// Only a **new** store (`new_store`: the file has no schema objects yet) gets
/// the rule of `schema-v23.md` §2.2: WAL unless the linked SQLite has the
/// WAL-reset bug; on a file system that refuses WAL (`locking protocol`,
/// `not authorized`) DELETE. An existing file keeps the journal mode it has
/// (`newer-versions.md` §4.2): its owner may have chosen DELETE on purpose
/// (their Hermes links a SQLite with the WAL-reset bug, or the file system
/// cannot keep WAL's `-shm` coherent), the original never downgrades WAL, so
/// one switch by us would be permanent for every process of that user.
pub fn configure_writable(conn: &Connection, new_store: bool) -> Result<JournalMode, SqliteError> {
    let current = journal_mode(conn)?;
    let mode = if current == JournalMode::Wal || !new_store {
        current
    } else if has_wal_reset_bug(rusqlite::version_number()) {
        // Errors ignored, as the original: the file stays in whatever mode it has.
        let _ = conn.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()));
        journal_mode(conn)?
    } else {
        match conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(())) {
            Ok(()) => journal_mode(conn)?,
            Err(error) if refuses_wal(&error) => {
                let _ = conn.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()));
                journal_mode(conn)?
            }
            Err(error) => return Err(SqliteError::new("switching to WAL", error)),
        }
    };
    conn.pragma_update(None, "foreign_keys", "ON")
        .context("enabling foreign keys")?;
    Ok(mode)
}

fn refuses_wal(error: &rusqlite::Error) -> bool {
    let text = error.to_string().to_ascii_lowercase();
    text.contains("locking protocol") || text.contains("not authorized")
}

/// The journal mode SQLite reports for the main database.
pub fn journal_mode(conn: &Connection) -> Result<JournalMode, SqliteError> {
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .context("reading the journal mode")?;
    Ok(match mode.to_ascii_lowercase().as_str() {
        "wal" => JournalMode::Wal,
        "delete" => JournalMode::Delete,
        _ => JournalMode::Other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wal_reset_bug_range_matches_the_spec() {
        let cases = [
            (3_006_023, false),
            (3_007_000, true),
            (3_040_001, true),
            (3_044_005, true),
            (3_044_006, false),
            (3_045_000, true),
            (3_050_006, true),
            (3_050_007, false),
            (3_051_000, true),
            (3_051_002, true),
            (3_051_003, false),
            (3_054_001, false),
        ];
        for (version, affected) in cases {
            assert_eq!(has_wal_reset_bug(version), affected, "version {version}");
        }
    }

    #[test]
    fn bundled_sqlite_is_free_of_the_wal_reset_bug() {
        let version = rusqlite::version_number();
        assert!(
            version >= 3_051_003,
            "bundled SQLite {} is older than 3.51.3",
            rusqlite::version()
        );
        assert!(!has_wal_reset_bug(version));
    }
}
