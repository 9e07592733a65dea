//! A WAL store in a folder this user cannot write (read-only media, another
//! user's folder): SQLite cannot create the `-shm` index a shared read
//! needs. With an empty write-ahead log the store is read as an unchanging
//! file, and the output says so; with changes in the log the error says why
//! and what to do (issue 26, item 4). Run as a user without write access to
//! the folder: the test's own user, or `nobody` through `runuser` when the
//! tests run as root (root may write any folder).

#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::{Command, Output};

use crate::common::Env;

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// The binary run as a user who may not write `folder`, or `None` (with the
/// reason printed) when this machine cannot arrange one.
fn as_reader(folder: &Path, args: &[&str]) -> Option<Output> {
    let binary = env!("CARGO_BIN_EXE_hermes-state");
    let mut command = if is_root() {
        if Command::new("runuser").arg("--help").output().is_err() {
            println!("skipped: running as root without runuser (root may write any folder)");
            return None;
        }
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--", binary]);
        c
    } else {
        Command::new(binary)
    };
    let output = command
        .args(args)
        .env("TZ", "UTC")
        .env("HERMES_HOME", folder)
        .env_remove("HERMES_STATE_DATABASE_URL")
        .current_dir("/")
        .output()
        .expect("run the binary");
    Some(output)
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A demo store in WAL mode, alone in a folder the reader may enter but not
/// write; `wal` gives its `-wal` file content (a copy of a live one).
fn read_only_store(env: &Env, wal: bool) -> std::path::PathBuf {
    let source = env.demo("source.db");
    let folder = env.path(if wal { "ro-wal" } else { "ro" });
    std::fs::create_dir(&folder).expect("the folder");
    let db = folder.join("state.db");
    if wal {
        // A writer holding the store open with changes in its log: the
        // files are copied as they are then.
        let live = hermes_state::rusqlite::Connection::open(&source).expect("open");
        live.pragma_update(None, "wal_autocheckpoint", 0)
            .expect("no checkpoints");
        live.execute_batch(
            "UPDATE sessions SET title = 'changed in the log' WHERE id = 'demo-paris'",
        )
        .expect("a write into the log");
        std::fs::copy(&source, &db).expect("copy the store"); // tidy: not the live database (a test's copy)
        std::fs::copy(env.path("source.db-wal"), folder.join("state.db-wal"))
            .expect("copy its log"); // tidy: not the live database
        drop(live);
    } else {
        std::fs::copy(&source, &db).expect("copy the store"); // tidy: not the live database (a test's copy)
    }
    for file in std::fs::read_dir(&folder).expect("list").flatten() {
        set_mode(&file.path(), 0o644);
    }
    set_mode(&folder, 0o555);
    let mut up = folder.parent();
    while let Some(dir) = up {
        // The reader must reach the folder (the test's temporary folders are 0700).
        if dir.starts_with(std::env::temp_dir()) && dir != std::env::temp_dir() {
            set_mode(dir, 0o755);
        }
        up = dir.parent();
    }
    db
}

#[test]
fn a_wal_store_in_a_folder_nobody_here_may_write_is_read_as_an_unchanging_file() {
    let env = Env::new();
    let db = read_only_store(&env, false);
    let folder = db.parent().unwrap().to_owned();
    let before: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let db_text = db.to_str().unwrap();
    let Some(listed) = as_reader(&folder, &["--db", db_text, "sessions", "list"]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&listed.stderr);
    assert!(listed.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&listed.stdout).contains("demo-paris"));
    assert!(
        stderr.contains("read as an unchanging file"),
        "the output says so: {stderr}"
    );
    let found = as_reader(&folder, &["--db", db_text, "search", "bike"]).unwrap();
    assert!(
        found.status.success(),
        "{}",
        String::from_utf8_lossy(&found.stderr)
    );
    assert!(String::from_utf8_lossy(&found.stdout).contains("demo-paris"));
    let after: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before, after, "nothing was created beside the store");
    set_mode(&folder, 0o755);
}

#[test]
fn a_wal_store_with_changes_in_its_log_in_such_a_folder_is_an_error_that_says_what_to_do() {
    let env = Env::new();
    let db = read_only_store(&env, true);
    let folder = db.parent().unwrap().to_owned();
    let Some(listed) = as_reader(&folder, &["--db", db.to_str().unwrap(), "sessions", "list"])
    else {
        return;
    };
    let stderr = String::from_utf8_lossy(&listed.stderr);
    assert!(
        !listed.status.success(),
        "must not answer from the main file alone"
    );
    assert!(
        listed.stdout.is_empty(),
        "no partial answer: {}",
        String::from_utf8_lossy(&listed.stdout)
    );
    assert!(stderr.contains("write-ahead log"), "{stderr}");
    assert!(
        stderr.contains("copy the store with its -wal file"),
        "{stderr}"
    );
    set_mode(&folder, 0o755);
}
