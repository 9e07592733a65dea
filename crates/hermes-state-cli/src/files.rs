//! Opening the files of `export --output` and `import FILE` — never the store.
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

/// Creates (or truncates) an export file.
pub fn create_output(ctx: &Context, path: &Path) -> CliResult<File> {
    refuse_store(ctx, path, "--output")?;
    File::options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| CliError::io("cannot create", path, &e))
}

/// Opens a file to import.
pub fn open_input(ctx: &Context, path: &Path) -> CliResult<File> {
    refuse_store(ctx, path, "import")?;
    File::options()
        .read(true)
        .open(path)
        .map_err(|e| CliError::io("cannot read", path, &e))
}
