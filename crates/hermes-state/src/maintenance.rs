//! Maintenance: pruning old sessions, giving the space back, FTS upkeep and
//! online backups (`api.md` §11.3–11.4).

use std::path::Path;

pub(crate) use hermes_state_query::prune::remove_transcripts;
pub use hermes_state_query::prune::{
    ArchiveSelection, PruneCandidate, PruneFilters, PruneOptions, PruneReport, PruneSelection,
};
use hermes_state_schema::{SchemaError, retry};
use rusqlite::Connection;

use crate::db::{SessionDb, existing_fts_tables};
use crate::error::{Error, Result, WriteContext};

impl SessionDb {
    /// Gives the space of deleted rows back to the file system (`api.md`
    /// §11.4): FTS5 `'optimize'` on each existing FTS table, a TRUNCATE
    /// checkpoint, `VACUUM`, and one more TRUNCATE checkpoint (in WAL mode the
    /// file only shrinks when the vacuumed pages are checkpointed). Returns the
    /// number of FTS tables optimised.
    ///
    /// `VACUUM` cannot run inside a transaction, so these statements run one
    /// by one on the writable connection, each retried on lock errors with
    /// the write path's policy. It rewrites the whole file: it
    /// needs free disk space of about the file's size and blocks other
    /// writers while it runs.
    pub fn vacuum(&self) -> Result<usize> {
        if self.is_read_only() {
            return Err(Error::ReadOnly("vacuuming".to_owned()));
        }
        let tables = self.read(|conn| Ok(existing_fts_tables(conn)))?;
        for table in &tables {
            self.write_statement(
                "optimizing an FTS index",
                &format!("INSERT INTO {table}({table}) VALUES('optimize')"),
            )?;
        }
        self.write_statement("checkpointing", "PRAGMA wal_checkpoint(TRUNCATE)")?;
        self.write_statement("vacuuming", "VACUUM")?;
        self.write_statement("checkpointing", "PRAGMA wal_checkpoint(TRUNCATE)")?;
        Ok(tables.len())
    }

    /// FTS5 `'optimize'` (merge the index segments) on each existing FTS
    /// table, in one write transaction; returns how many.
    pub fn optimize_fts(&self) -> Result<usize> {
        self.fts_command("optimizing the FTS indexes", "optimize")
    }

    /// FTS5 `'rebuild'` (re-index from the messages) of each existing FTS
    /// table, in one write transaction, clearing any pending gated-backfill
    /// markers (the rebuild completes it); returns how many tables.
    pub fn rebuild_fts(&self) -> Result<usize> {
        let tables = self.read(|conn| Ok(existing_fts_tables(conn)))?;
        self.rebuild_fts_indexes()?;
        Ok(tables.len())
    }

    /// Writes a consistent copy of the live store to `target`, a file that
    /// must not exist yet ([`crate::ErrorKind::InvalidInput`] otherwise).
    ///
    /// The copy is made with `VACUUM INTO` on a dedicated read-only
    /// connection: it is one read snapshot, so it is consistent while this
    /// handle, other handles or other processes keep writing, and the handle
    /// is not blocked meanwhile. The copy is compact (no free pages), in
    /// rollback-journal mode until a store opens it, and private (0600 from
    /// its creation on). On failure the partial copy is removed.
    pub fn backup_to(&self, target: impl AsRef<Path>) -> Result<()> {
        self.read(|_| Ok(()))?;
        let target = std::path::absolute(target.as_ref())
            .map_err(|source| io_error(target.as_ref(), source))?;
        // An absolute path never starts with `file:`, so SQLite cannot take it for a URI.
        let target_text = target.to_str().ok_or_else(|| {
            Error::InvalidInput(format!(
                "backup path {} is not valid UTF-8",
                target.display()
            ))
        })?;
        let created = create_private_file(&target)?;
        let result = self.copy_into(&created, &target, target_text);
        if result.is_err() {
            remove_if_still_ours(&created, &target);
        }
        result
    }

    /// Copies the store into `created` (the file this call created at
    /// `target`). SQLite writes by name, so on Linux it is given the
    /// descriptor's own name (`/proc/self/fd/N`), which names the created
    /// file whatever happens to `target` meanwhile (a rename, a symlink put
    /// in its place); elsewhere `target` itself.
    fn copy_into(&self, created: &std::fs::File, target: &Path, target_text: &str) -> Result<()> {
        let through = descriptor_name(created).unwrap_or_else(|| target_text.to_owned());
        let conn = hermes_state_schema::open_read_only(self.path())?;
        retry::with_retries(
            || {
                // A failed attempt may have left a partial copy; VACUUM INTO
                // only writes into an empty file.
                created
                    .set_len(0)
                    .map_err(|source| io_error(target, source))?;
                conn.execute("VACUUM INTO ?1", [through.as_str()])
                    .context("backing up the store")?;
                Ok(())
            },
            Error::kind,
        )
        .map_err(|error| gave_up("backing up the store", error))?;
        drop(conn);
        restrict_descriptor(created).map_err(|source| io_error(target, source))?;
        Ok(())
    }

    fn fts_command(&self, what: &str, command: &str) -> Result<usize> {
        self.write(what, |conn: &Connection| {
            let tables = existing_fts_tables(conn);
            for table in &tables {
                conn.execute_batch(&format!("INSERT INTO {table}({table}) VALUES('{command}')"))
                    .context(what)?;
            }
            Ok(tables.len())
        })
    }
}

/// Creates an empty file readable by its owner only, and keeps it open; an
/// existing path is refused.
fn create_private_file(path: &Path) -> Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new(); // tidy: not the live database (the backup target)
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt; // tidy: not the live database
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(file) => Ok(file),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Err(
            Error::InvalidInput(format!("backup target {} already exists", path.display())),
        ),
        Err(source) => Err(io_error(path, source)),
    }
}

/// The name under which the process reaches an open file by its descriptor
/// (Linux's `/proc/self/fd/N`), when the system has one.
fn descriptor_name(file: &std::fs::File) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let name = format!("/proc/self/fd/{}", file.as_raw_fd());
        return Path::new(&name).exists().then_some(name);
    }
    #[allow(unreachable_code)]
    {
        let _ = file;
        None
    }
}

/// Mode 0600 on the open file itself (never on whatever the path names now).
fn restrict_descriptor(file: &std::fs::File) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    let _ = file;
    Ok(())
}

/// Removes the partial copy at `target` only while that name still is the
/// file this call created (same device and inode): a file someone put in
/// its place is never deleted.
fn remove_if_still_ours(created: &std::fs::File, target: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let (Ok(ours), Ok(there)) = (created.metadata(), std::fs::symlink_metadata(target)) else {
            return;
        };
        if ours.dev() != there.dev() || ours.ino() != there.ino() {
            return;
        }
    }
    let _ = std::fs::remove_file(target); // tidy: not the live database (our partial backup)
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::from(SchemaError::Io {
        path: path.to_owned(),
        source,
    })
}

/// A lock error that outlasted every retry, as the write path reports it.
fn gave_up(what: &str, error: Error) -> Error {
    if error.kind() != hermes_state_types::ErrorKind::Busy {
        return error;
    }
    match error.into_backend::<hermes_state_sqlite::SqliteError>() {
        Ok(hermes_state_sqlite::SqliteError { source, .. }) => {
            crate::error::busy(what, retry::MAX_ATTEMPTS, source)
        }
        Err(other) => other,
    }
}
