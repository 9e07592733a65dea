//! File modes of the store: the database and its `-wal`/`-shm` sidecars are
//! private to their owner (0600).
//!
//! Modes are set **by path** (`chmod`), never through a descriptor opened on
//! the live file: closing any descriptor of a file drops every POSIX lock this
//! process holds on it, including SQLite's, which would silently break its
//! locking.

use std::path::{Path, PathBuf};

use crate::error::SchemaError;

/// Sets 0600 on the database and whichever sidecars exist. A file that
/// belongs to another user (`EPERM`) is left as it is.
pub fn restrict(db_path: &Path) -> Result<(), SchemaError> {
    for path in store_files(db_path) {
        restrict_one(&path)?;
    }
    Ok(())
}

/// The database path and its `-wal`, `-shm` and `-journal` sidecars.
pub fn store_files(db_path: &Path) -> [PathBuf; 4] {
    let sidecar = |suffix: &str| {
        let mut name = db_path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    [
        db_path.to_owned(),
        sidecar("-wal"),
        sidecar("-shm"),
        sidecar("-journal"),
    ]
}

#[cfg(unix)]
fn restrict_one(path: &Path) -> Result<(), SchemaError> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
        Ok(()) => Ok(()),
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
            ) =>
        {
            Ok(())
        }
        Err(source) => Err(SchemaError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

#[cfg(not(unix))]
fn restrict_one(_path: &Path) -> Result<(), SchemaError> {
    Ok(())
}

/// Creates the database file, empty and private (0600), when it does not
/// exist yet; returns whether this call created it.
///
/// SQLite would create it with `0644 & ~umask` and the `-wal`/`-shm` files
/// take the database file's mode, so without this there would be a window in
/// which a new store (private conversations) is readable by others. The
/// exclusive create (`O_EXCL`) only ever makes a new, empty file: it never
/// opens an existing one, so it cannot touch a live database or its locks.
/// SQLite treats the empty file as a new database.
pub fn create_private_file(db_path: &Path) -> Result<bool, SchemaError> {
    let mut options = std::fs::OpenOptions::new(); // tidy: not the live database (create_new only)
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt; // tidy: not the live database (create_new only)
        options.mode(0o600);
    }
    match options.open(db_path) {
        Ok(_new_empty_file) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(source) => Err(SchemaError::Io {
            path: db_path.to_owned(),
            source,
        }),
    }
}

/// Creates a folder and its missing ancestors (`mkdir -p`); folders created
/// here are 0700, since they hold private conversations. Existing folders keep
/// their mode.
pub fn create_private_dir_all(dir: &Path) -> Result<(), SchemaError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|source| SchemaError::Io {
        path: dir.to_owned(),
        source,
    })
}
