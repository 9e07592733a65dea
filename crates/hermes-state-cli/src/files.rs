//! Opening the files of `export --output` and `import FILE` — never the store.
//! An export replaces its output atomically ([`OutputFile`]).
//!
//! Closing any descriptor on the live database drops this process's SQLite
//! POSIX locks, which is why the workspace's tidy check keeps library code
//! from opening files through `std::fs`. The files opened here are exports;
//! [`refuse_store`] makes sure they are not the store or its WAL sidecars
//! before anything is opened, and this module is the only place the binary
//! opens a file itself.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{CliError, CliResult};
use crate::store::Context;

/// The store and its sidecars (`-wal`, `-shm`, `-journal`).
fn store_files(store: &Path) -> Vec<PathBuf> {
    let mut files = vec![store.to_owned()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = store.as_os_str().to_owned();
        name.push(suffix);
        files.push(PathBuf::from(name));
    }
    files
}

fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(left), Ok(right)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        left.dev() == right.dev() && left.ino() == right.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (left, right);
        matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    }
}

/// Refuses `path` when it is the store (or one of its sidecars).
pub fn refuse_store(ctx: &Context, path: &Path, option: &str) -> CliResult {
    if store_files(&ctx.path).iter().any(|f| same_file(path, f)) {
        return Err(
            CliError::usage(format!("{option} {} is the store itself", path.display()))
                .hint("name another file"),
        );
    }
    Ok(())
}

/// The file `export --output PATH` writes.
///
/// PATH itself is never truncated or deleted: the export goes to a temporary
/// file in PATH's folder (created new, 0600: exports hold private
/// conversations), which [`OutputFile::commit`] syncs and renames onto PATH,
/// so PATH holds either its old bytes or the whole new export. Dropping an
/// uncommitted `OutputFile` (any failure) removes the temporary file and
/// nothing else. An existing regular PATH keeps its mode. When PATH exists
/// and is not a regular file (`/dev/null`, a FIFO, a terminal) it is written
/// in place: it cannot be replaced, and it is never removed.
pub struct OutputFile {
    path: PathBuf,
    target: Target,
}

enum Target {
    /// A temporary file, renamed onto `to` by `commit`.
    Replace {
        temp: tempfile::NamedTempFile,
        to: PathBuf,
    },
    /// A device or FIFO, written directly.
    InPlace,
}

impl OutputFile {
    /// Prepares the output at `path`; returns it and the handle to write to.
    pub fn create(ctx: &Context, path: &Path) -> CliResult<(OutputFile, File)> {
        refuse_store(ctx, path, "--output")?;
        let existing = match std::fs::metadata(path) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(path).is_ok() {
                    return Err(CliError::failed(format!(
                        "--output {} is a symbolic link to nothing",
                        path.display()
                    ))
                    .hint("name a file, or remove the link"));
                }
                None
            }
            Err(e) => return Err(CliError::io("cannot access", path, &e)),
        };
        if let Some(meta) = &existing {
            if meta.is_dir() {
                return Err(CliError::failed(format!(
                    "--output {} is a directory",
                    path.display()
                ))
                .hint("name a file"));
            }
            if !meta.is_file() {
                let file = File::options()
                    .write(true)
                    .open(path)
                    .map_err(|e| CliError::io("cannot write", path, &e))?;
                let output = OutputFile {
                    path: path.to_owned(),
                    target: Target::InPlace,
                };
                return Ok((output, file));
            }
        }
        // A link to a regular file: the export replaces the file it names,
        // not the link.
        let to = if existing.is_some() {
            std::fs::canonicalize(path).map_err(|e| CliError::io("cannot resolve", path, &e))?
        } else {
            path.to_owned()
        };
        let folder = match to.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        };
        let name = to
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Err(e) = std::fs::metadata(&folder) {
            return Err(CliError::io("cannot create", path, &e));
        }
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(&folder)
            .map_err(|e| CliError::io("cannot create a temporary file in", &folder, &e))?;
        if let Some(meta) = &existing {
            temp.as_file()
                .set_permissions(meta.permissions())
                .map_err(|e| CliError::io("cannot set the mode of", temp.path(), &e))?;
        }
        let file = temp
            .as_file()
            .try_clone()
            .map_err(|e| CliError::io("cannot write", temp.path(), &e))?;
        let output = OutputFile {
            path: path.to_owned(),
            target: Target::Replace { temp, to },
        };
        Ok((output, file))
    }

    /// The path the user named.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the export durable and puts it at the path: fsync, then rename
    /// over the old file (and fsync the folder, so the rename survives a crash).
    pub fn commit(self) -> CliResult {
        let Target::Replace { temp, to } = self.target else {
            return Ok(());
        };
        temp.as_file()
            .sync_all()
            .map_err(|e| CliError::io("cannot sync", temp.path(), &e))?;
        temp.persist(&to)
            .map_err(|e| CliError::io("cannot rename the export onto", &to, &e.error))?;
        #[cfg(unix)]
        if let Some(folder) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
            // Best effort: the export is complete and in place already.
            let _ = File::open(folder).and_then(|dir| dir.sync_all()); // tidy: not the live database (a folder)
        }
        Ok(())
    }
}

/// Opens a file to import: a regular file only (stdin, `-`, is the way to
/// read a pipe). A device such as `/dev/zero` or `/dev/urandom` never ends,
/// a FIFO would hold the open until a writer came, and a directory has no
/// bytes: each is refused with what it is. The kind is checked on the path
/// before the open (which a FIFO would block) and on what was opened.
pub fn open_input(ctx: &Context, path: &Path) -> CliResult<File> {
    refuse_store(ctx, path, "import")?;
    let meta = std::fs::metadata(path).map_err(|e| CliError::io("cannot read", path, &e))?;
    require_regular(path, &meta)?;
    let file = File::options()
        .read(true)
        .open(path)
        .map_err(|e| CliError::io("cannot read", path, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| CliError::io("cannot read", path, &e))?;
    require_regular(path, &meta)?;
    Ok(file)
}

/// Refuses what is not a regular file, naming what it is.
fn require_regular(path: &Path, meta: &std::fs::Metadata) -> CliResult {
    if meta.is_file() {
        return Ok(());
    }
    let kind = file_kind(meta);
    let hint = if meta.is_dir() {
        "import takes a file written by `hermes-state export`"
    } else {
        "import takes a file written by `hermes-state export`; to import from a pipe, give `-` (stdin)"
    };
    Err(CliError::failed(format!(
        "import: {} is {kind}, not a regular file",
        path.display()
    ))
    .hint(hint))
}

/// What a file that is not a regular one is, in words.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    if meta.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}
