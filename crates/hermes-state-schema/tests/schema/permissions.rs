//! File modes (0600 files, created at that mode) and journal modes an open
//! leaves as they were.

use std::path::PathBuf;

use hermes_state_schema::rusqlite::Connection;

use crate::common::*;

#[cfg(unix)]
#[test]
fn files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp_db();
    let (_conn, _) = open(&path);
    let mut checked = 0;
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        match std::fs::metadata(&file) {
            Ok(metadata) => {
                assert_eq!(
                    metadata.permissions().mode() & 0o777,
                    0o600,
                    "mode of {}",
                    file.display()
                );
                checked += 1;
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => panic!("{}: {error}", file.display()),
        }
    }
    assert_eq!(
        checked, 3,
        "a WAL store has its db, -wal and -shm files while open"
    );
}

/// The file is private from the moment it exists: it is created 0600 (the
/// umask can only remove bits) before SQLite opens it, not chmod-ed after.
#[cfg(unix)]
#[test]
fn a_new_store_file_is_private_from_its_creation() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp_db();
    assert!(hermes_state_schema::permissions::create_private_file(&path).expect("create"));
    let metadata = std::fs::metadata(&path).expect("exists");
    assert_eq!(
        metadata.len(),
        0,
        "an empty file, which SQLite takes for a new database"
    );
    assert_eq!(metadata.permissions().mode() & 0o777, 0o600);
    assert!(
        !hermes_state_schema::permissions::create_private_file(&path).expect("exists"),
        "an existing file is never opened or replaced"
    );
}

/// An existing file's mode is the owner's business: opening it for writing
/// (and upgrading it) leaves the mode as it was.
#[cfg(unix)]
#[test]
fn an_existing_store_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp_db();
    drop(open(&path));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let (_conn, report) = open(&path);
    assert!(!report.created);
    let mode = std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

/// An existing DELETE-mode file keeps DELETE through a writable open and an
/// upgrade; only a new store gets WAL.
#[test]
fn an_existing_file_keeps_its_journal_mode() {
    let (_dir, path) = temp_db();
    drop(open(&path));
    {
        let conn = Connection::open(&path).expect("owner");
        let mode: String = conn
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
            .expect("delete");
        assert_eq!(mode, "delete");
    }
    let (conn, report) = open(&path);
    assert_eq!(
        report.journal_mode,
        hermes_state_schema::JournalMode::Delete
    );
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("mode");
    assert_eq!(mode, "delete");
}
