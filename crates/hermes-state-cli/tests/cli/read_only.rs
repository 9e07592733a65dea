//! Reading commands leave the store byte-for-byte as it was; errors of the
//! library are errors, never empty answers; `export --output` replaces its
//! file atomically and never harms what was there.
//!
//! The store is the v23 file exactly as the original leaves it
//! (`xtask::fixtures`, `Shape::V23`), in WAL and in DELETE mode, in a folder
//! of its own: a reading command must not change its bytes, its journal mode
//! (header bytes 18–19) or the set of files in that folder. For WAL the
//! realistic case is a live one: a running Hermes holds the file open with
//! un-checkpointed writes in its `-wal`; the commands must leave the `-wal`
//! as it is too (no checkpoint). On a *closed* WAL store SQLite's read-only
//! access creates an empty `-wal` and a `-shm` that a read-only connection
//! cannot remove (the original's read-only handle does the same); that case
//! is checked for exactly that and nothing more (docs/DECISIONS.md).
#![allow(clippy::print_stderr)]

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use hermes_state::rusqlite::Connection;
use xtask::fixtures::sha256::sha256_hex;
use xtask::fixtures::{FixtureManifest, Shape, manifest, write_fixture};

use crate::common::{Env, Run};

/// The journal mode a closed store is left in, as its header records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Journal {
    Wal,
    Delete,
}

impl Journal {
    /// Header bytes 18 and 19 (file format write / read version).
    fn header(self) -> [u8; 2] {
        match self {
            Journal::Wal => [2, 2],
            Journal::Delete => [1, 1],
        }
    }
}

impl fmt::Display for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Journal::Wal => "wal",
            Journal::Delete => "delete",
        })
    }
}

/// What a reading command must not change.
#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    sha256: String,
    header: [u8; 2],
    folder: BTreeSet<String>,
    /// Length of the `-wal`, when there is one.
    wal_len: Option<u64>,
}

fn snapshot(db: &Path) -> Snapshot {
    let bytes = std::fs::read(db).expect("read the store");
    let folder = db.parent().expect("the store's folder");
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    Snapshot {
        sha256: sha256_hex(&bytes),
        header: [bytes[18], bytes[19]],
        folder: files_in(folder),
        wal_len: std::fs::metadata(PathBuf::from(wal)).ok().map(|m| m.len()),
    }
}

/// How the store is while the commands run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holder {
    /// Closed: nobody has it open.
    Closed,
    /// A running Hermes holds it open and has committed a write that is still
    /// only in the `-wal`.
    Live,
}

/// Plays a running Hermes: opens the store, commits one write (WAL: it stays
/// in the `-wal`, un-checkpointed) and keeps the connection open.
fn hold_live(db: &Path) -> Connection {
    let conn = Connection::open(db).expect("the running Hermes opens the store");
    conn.execute(
        "INSERT INTO state_meta (key, value) VALUES ('held_by_a_running_hermes', '1')",
        [],
    )
    .expect("the running Hermes writes");
    conn
}

fn files_in(folder: &Path) -> BTreeSet<String> {
    std::fs::read_dir(folder)
        .expect("list the folder")
        .map(|entry| {
            entry
                .expect("a folder entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// The v23 store as the original leaves it (closed), in `journal` mode, alone
/// in the folder `name`.
fn v23_store(env: &Env, name: &str, journal: Journal) -> (PathBuf, FixtureManifest) {
    let folder = env.path(name);
    std::fs::create_dir_all(&folder).expect("create the store's folder");
    let db = folder.join("state.db");
    let manifest = write_fixture(&db, Shape::V23).expect("write the v23 fixture");
    if journal == Journal::Delete {
        let conn = Connection::open(&db).expect("open the fixture");
        let mode: String = conn
            .query_row("PRAGMA journal_mode=DELETE", [], |row| row.get(0))
            .expect("switch to DELETE");
        assert_eq!(mode, "delete");
        conn.close().expect("close the fixture");
    }
    let before = snapshot(&db);
    assert_eq!(before.header, journal.header(), "fixture in {journal} mode");
    assert_eq!(
        before.folder,
        BTreeSet::from(["state.db".to_owned()]),
        "a closed store has no sidecar files"
    );
    (db, manifest)
}

/// Data of the fixture the commands are pointed at.
struct Picks {
    /// A session with a title and a parent (for `lineage`).
    child: String,
    /// A session with a title.
    titled: String,
    title: String,
    /// A word search finds.
    word: String,
}

fn picks(manifest: &FixtureManifest) -> Picks {
    let child = manifest
        .sessions
        .iter()
        .find(|s| s.parent_session_id.is_some())
        .expect("the fixture has a child session");
    let titled = manifest
        .sessions
        .iter()
        .find(|s| s.title.is_some())
        .expect("the fixture has a titled session");
    let search = manifest
        .search
        .iter()
        .find(|s| !s.message_ids.is_empty())
        .expect("the fixture has a search that finds something");
    Picks {
        child: child.id.clone(),
        titled: titled.id.clone(),
        title: titled.title.clone().unwrap_or_default(),
        word: search.query.to_owned(),
    }
}

/// A reading command and what it must show.
struct Reading {
    args: Vec<String>,
    /// A file it writes outside the store's folder (export, backup), which
    /// must exist and be non-empty afterwards; else stdout must be non-empty.
    writes: Option<PathBuf>,
}

fn readings(picks: &Picks, out: &Path) -> Vec<Reading> {
    let on_stdout = |args: &[&str]| Reading {
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        writes: None,
    };
    let to_file = |args: &[&str], file: &str| {
        let path = out.join(file);
        let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        args.push(path.display().to_string());
        Reading {
            args,
            writes: Some(path),
        }
    };
    vec![
        on_stdout(&["sessions", "list"]),
        on_stdout(&["--json", "sessions", "list"]),
        on_stdout(&["sessions", "show", &picks.titled]),
        on_stdout(&["--json", "sessions", "show", &picks.titled]),
        on_stdout(&["sessions", "lineage", &picks.child]),
        on_stdout(&["messages", "list", &picks.titled]),
        on_stdout(&["search", &picks.word]),
        on_stdout(&["--json", "search", &picks.word]),
        on_stdout(&["stats"]),
        on_stdout(&["--json", "stats"]),
        on_stdout(&["title", "get", &picks.titled]),
        on_stdout(&["title", "resolve", &picks.title]),
        on_stdout(&["title", "next", &picks.title]),
        on_stdout(&["export"]),
        on_stdout(&["export", "--format", "jsonl"]),
        to_file(&["export", "--output"], "export.json"),
        to_file(&["export", "--format", "jsonl", "-o"], "export.jsonl"),
        on_stdout(&["doctor"]),
        on_stdout(&["--json", "doctor"]),
        to_file(&["backup"], "backup.db"),
        on_stdout(&["schema"]),
        on_stdout(&["--json", "schema"]),
        on_stdout(&["migrate", "--dry-run"]),
        on_stdout(&["prune", "--older-than-days", "0", "--dry-run"]),
        on_stdout(&["--read-only", "sessions", "list"]),
    ]
}

/// Every reading command, on a fresh v23 store in `journal` mode each time;
/// returns what went wrong, one line per command.
fn check_readings(journal: Journal, holder: Holder) -> Vec<String> {
    let env = Env::new();
    let picks = picks(&manifest(Shape::V23).expect("the v23 manifest"));
    let mut problems = Vec::new();
    let count = readings(&picks, Path::new(".")).len();
    for index in 0..count {
        // Each command gets a fresh store, and an output folder of its own.
        let out = env.path(&format!("out-{index}"));
        std::fs::create_dir_all(&out).expect("create the output folder");
        let reading = readings(&picks, &out).swap_remove(index);
        let (db, _) = v23_store(&env, &format!("store-{index}"), journal);
        let _running_hermes = (holder == Holder::Live).then(|| hold_live(&db));
        let before = snapshot(&db);
        let args: Vec<&str> = reading.args.iter().map(String::as_str).collect();
        let run: Run = env.run(&db, &args);
        let shown = format!("{journal} `{}`", reading.args.join(" "));
        if run.code != 0 {
            problems.push(format!(
                "{shown}: exit {} ({})",
                run.code,
                run.stderr.trim()
            ));
        }
        match &reading.writes {
            Some(file) => {
                let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
                if size == 0 {
                    problems.push(format!("{shown}: wrote nothing to {}", file.display()));
                }
            }
            None if run.stdout.trim().is_empty() => {
                problems.push(format!("{shown}: printed nothing"));
            }
            None => {}
        }
        let after = snapshot(&db);
        if after.sha256 != before.sha256 {
            problems.push(format!("{shown}: changed the bytes of the store"));
        }
        if after.header != before.header {
            problems.push(format!(
                "{shown}: changed the journal mode (header {:?} -> {:?})",
                before.header, after.header
            ));
        }
        let closed_wal = journal == Journal::Wal && holder == Holder::Closed;
        let sidecars_of_a_closed_wal_read = closed_wal
            && after.folder
                == BTreeSet::from([
                    "state.db".to_owned(),
                    "state.db-shm".to_owned(),
                    "state.db-wal".to_owned(),
                ])
            && after.wal_len == Some(0);
        if after.folder != before.folder && !sidecars_of_a_closed_wal_read {
            problems.push(format!(
                "{shown}: changed the store's folder {:?} -> {:?}",
                before.folder, after.folder
            ));
        }
        if !closed_wal && after.wal_len != before.wal_len {
            problems.push(format!(
                "{shown}: changed the -wal ({:?} -> {:?} bytes)",
                before.wal_len, after.wal_len
            ));
        }
    }
    problems
}

#[test]
fn reading_commands_leave_a_live_wal_store_byte_for_byte_unchanged() {
    let problems = check_readings(Journal::Wal, Holder::Live);
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn reading_commands_leave_a_closed_wal_store_unchanged_but_for_empty_sidecars() {
    let problems = check_readings(Journal::Wal, Holder::Closed);
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn reading_commands_leave_a_delete_mode_store_byte_for_byte_unchanged() {
    let problems = check_readings(Journal::Delete, Holder::Closed);
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn reading_commands_leave_a_live_delete_mode_store_byte_for_byte_unchanged() {
    let problems = check_readings(Journal::Delete, Holder::Live);
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn a_delete_mode_store_stays_delete_after_writing_commands() {
    let env = Env::new();
    let (db, manifest) = v23_store(&env, "store", Journal::Delete);
    let picks = picks(&manifest);
    env.run(&db, &["title", "set", &picks.titled, "Renamed by a test"])
        .ok();
    env.run(
        &db,
        &[
            "messages",
            "append",
            &picks.titled,
            "--role",
            "user",
            "--content",
            "written in DELETE mode",
        ],
    )
    .ok();
    // The writes happened…
    assert_eq!(
        env.json(&db, &["title", "get", &picks.titled])["title"],
        "Renamed by a test"
    );
    assert!(
        !env.json(&db, &["search", "DELETE"])
            .as_array()
            .expect("an array")
            .is_empty()
    );
    // …and the file is still a DELETE-mode file with no WAL beside it.
    let after = snapshot(&db);
    assert_eq!(
        after.header,
        Journal::Delete.header(),
        "journal mode changed"
    );
    assert_eq!(
        after.folder,
        BTreeSet::from(["state.db".to_owned()]),
        "sidecar files left beside a DELETE-mode store"
    );
}

// ---------------------------------------------------------------------------
// Errors are errors

/// Makes the b-tree of `table` unreadable: its root page gets an invalid
/// page type, so SQLite reports the file as malformed when a query reaches
/// it, while the schema (page 1) still reads.
fn corrupt_table(db: &Path, table: &str) {
    let (root, page_size) = {
        let conn = Connection::open(db).expect("open");
        let _: String = conn
            .query_row("PRAGMA journal_mode=DELETE", [], |row| row.get(0))
            .expect("fold the WAL into the file");
        let root: i64 = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |row| row.get(0),
            )
            .expect("root page");
        let page_size: i64 = conn
            .query_row("PRAGMA page_size", [], |row| row.get(0))
            .expect("page size");
        (root, page_size)
    };
    let mut bytes = std::fs::read(db).expect("read");
    let at = usize::try_from((root - 1) * page_size).expect("offset");
    bytes[at] = 0x00;
    std::fs::write(db, bytes).expect("write");
}

/// A demo store whose `sessions` and `messages` tables cannot be read.
fn damaged_store(env: &Env) -> PathBuf {
    let db = env.demo("damaged.db");
    corrupt_table(&db, "messages");
    corrupt_table(&db, "sessions");
    db
}

/// Runs each command on `db` and checks it fails with one error line and no answer.
#[track_caller]
fn each_fails_without_an_answer(env: &Env, db: &Path, commands: &[&[&str]], hint: &str) {
    for args in commands {
        let run = env.run(db, args);
        assert_ne!(
            run.code,
            0,
            "`{}` on a damaged store succeeded\nstdout: {}\nstderr: {}",
            args.join(" "),
            run.stdout,
            run.stderr
        );
        let run = run.fails(1).one_error_line().stderr_has(hint);
        assert!(
            run.stdout.trim().is_empty(),
            "`{}` printed an answer with its error: {}",
            args.join(" "),
            run.stdout
        );
        assert!(
            !run.stderr.contains("no messages match") && !run.stderr.contains("no sessions"),
            "{}",
            run.stderr
        );
    }
}

const SEARCHES_LISTS_STATS: &[&[&str]] = &[
    &["search", "bike"],
    &["--json", "search", "bike"],
    &["search", "东京"],
    &["search", "bike", "--sort", "newest"],
    &["sessions", "list"],
    &["--json", "sessions", "list"],
    &["stats"],
    &["--json", "stats"],
];

#[test]
fn errors_of_a_damaged_store_are_never_empty_answers() {
    let env = Env::new();
    let db = damaged_store(&env);
    // "hermes-state doctor": the Corrupt kind's advice, so the error reached
    // the user as what it is.
    each_fails_without_an_answer(&env, &db, SEARCHES_LISTS_STATS, "hermes-state doctor");
}

#[test]
fn errors_of_a_store_missing_a_table_are_never_empty_answers() {
    let env = Env::new();
    let db = env.demo("no-sessions.db");
    {
        let conn = Connection::open(&db).expect("open");
        conn.execute_batch("PRAGMA foreign_keys = OFF; DROP TABLE sessions;")
            .expect("drop the sessions table");
    }
    each_fails_without_an_answer(&env, &db, SEARCHES_LISTS_STATS, "sessions");
}

// ---------------------------------------------------------------------------
// export --output

#[cfg(unix)]
fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o7777
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[test]
fn a_failing_export_leaves_its_output_as_it_was() {
    let env = Env::new();
    let db = damaged_store(&env);
    let out = env.path("out");
    std::fs::create_dir(&out).expect("create the output folder");
    let existing = out.join("existing.json");
    let old = b"the user's own file, not an export\n".to_vec();
    std::fs::write(&existing, &old).expect("write");
    #[cfg(unix)]
    set_mode(&existing, 0o644);
    let missing = out.join("missing.json");
    let folder_before = files_in(&out);
    for format in ["json", "jsonl"] {
        for target in [&existing, &missing] {
            let target_text = target.display().to_string();
            let run = env
                .run(&db, &["export", "--format", format, "-o", &target_text])
                .fails(1)
                .one_error_line();
            // It failed while exporting, after the output was prepared.
            assert!(!run.stderr.contains("cannot open"), "{}", run.stderr);
        }
        assert_eq!(
            std::fs::read(&existing).expect("read"),
            old,
            "--format {format}: the existing output was changed"
        );
        #[cfg(unix)]
        assert_eq!(mode_of(&existing), 0o644);
        assert_eq!(
            files_in(&out),
            folder_before,
            "--format {format}: a temporary file was left behind, or the missing output created"
        );
    }
}

#[test]
fn an_export_replaces_its_output_atomically() {
    let env = Env::new();
    let db = env.demo("demo.db");
    let out = env.path("out");
    std::fs::create_dir(&out).expect("create the output folder");
    let existing = out.join("export.json");
    std::fs::write(&existing, b"old contents").expect("write");
    #[cfg(unix)]
    set_mode(&existing, 0o640);
    #[cfg(unix)]
    let inode_before = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&existing).expect("stat").ino()
    };
    let text = existing.display().to_string();
    let summary = env.json(&db, &["export", "-o", &text]);
    assert_eq!(summary["sessions"], 8);
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&existing).expect("read")).expect("a JSON export");
    assert_eq!(written.as_array().map(Vec::len), Some(8));
    assert_eq!(
        summary["bytes"],
        std::fs::metadata(&existing).expect("stat").len()
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // A new file renamed over the old one, not the old one truncated…
        assert_ne!(
            std::fs::metadata(&existing).expect("stat").ino(),
            inode_before
        );
        // …that keeps the mode of the file it replaced.
        assert_eq!(mode_of(&existing), 0o640);
    }
    // A new export file is private.
    let fresh = out.join("fresh.jsonl");
    env.run(
        &db,
        &[
            "export",
            "--format",
            "jsonl",
            "-o",
            &fresh.display().to_string(),
        ],
    )
    .ok();
    #[cfg(unix)]
    assert_eq!(mode_of(&fresh), 0o600);
    assert_eq!(
        files_in(&out),
        BTreeSet::from(["export.json".to_owned(), "fresh.jsonl".to_owned()]),
        "no temporary file is left"
    );
    // A link to the output: the file it names is replaced, the link kept.
    #[cfg(unix)]
    {
        let link = out.join("link.json");
        std::os::unix::fs::symlink("export.json", &link).expect("symlink");
        env.run(
            &db,
            &[
                "export",
                "--session",
                "demo-paris",
                "-o",
                &link.display().to_string(),
            ],
        )
        .ok();
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("lstat")
                .file_type()
                .is_symlink()
        );
        let through: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&existing).expect("read")).expect("JSON");
        assert_eq!(through.as_array().map(Vec::len), Some(1));
    }
}

#[cfg(unix)]
#[test]
fn an_export_to_dev_null_keeps_the_device() {
    use std::os::unix::fs::FileTypeExt;
    let env = Env::new();
    let db = env.demo("demo.db");
    for format in ["json", "jsonl"] {
        env.run(&db, &["export", "--format", format, "-o", "/dev/null"])
            .ok();
        let meta = std::fs::symlink_metadata("/dev/null").expect("stat /dev/null");
        assert!(
            meta.file_type().is_char_device(),
            "/dev/null is no longer a character device"
        );
    }
}

#[test]
fn an_export_refuses_a_folder_and_a_missing_folder() {
    let env = Env::new();
    let db = env.demo("demo.db");
    let folder = env.path("a-folder");
    std::fs::create_dir(&folder).expect("mkdir");
    env.run(&db, &["export", "-o", &folder.display().to_string()])
        .fails(1)
        .one_error_line()
        .stderr_has("is a directory");
    assert!(files_in(&folder).is_empty());
    let nowhere = env.path("no-such-folder").join("x.json");
    env.run(&db, &["export", "-o", &nowhere.display().to_string()])
        .fails(1)
        .one_error_line()
        .stderr_has("x.json");
    assert!(!env.path("no-such-folder").exists());
}

/// A store of an old version is read as it is (no upgrade): listings, a
/// conversation, a search and statistics answer; what the version never
/// recorded is said in one note naming `migrate`; the file is unchanged.
#[test]
fn an_old_store_is_read_as_it_is_and_its_gaps_name_migrate() {
    let env = Env::new();
    let folder = env.path("old");
    std::fs::create_dir_all(&folder).expect("folder");
    let db = folder.join("state.db");
    let manifest = write_fixture(&db, Shape::Fresh(1)).expect("a v1 store");
    let before = snapshot(&db);
    let listed = env.run(&db, &["sessions", "list"]).ok();
    assert!(
        listed.stderr.contains("v1") && listed.stderr.contains("hermes-state migrate"),
        "one note names the version and `migrate`: {}",
        listed.stderr
    );
    assert_eq!(
        listed
            .stderr
            .lines()
            .filter(|l| l.contains("migrate"))
            .count(),
        1,
        "{}",
        listed.stderr
    );
    let first = &manifest.sessions[0];
    assert!(listed.stdout.contains(&first.id), "{}", listed.stdout);
    env.run(&db, &["sessions", "show", &first.id]).ok();
    env.run(&db, &["stats"]).ok();
    let searched = env.json(&db, &["search", "docker"]);
    assert!(
        searched.as_array().is_some_and(|hits| !hits.is_empty()),
        "a v1 store is searchable as it is: {searched}"
    );
    let after = snapshot(&db);
    assert_eq!(
        after.sha256, before.sha256,
        "the v1 file is not upgraded by reading"
    );
    assert_eq!(after.header, before.header);
}

/// A closed WAL store in a folder its reader cannot write: SQLite cannot set
/// up the shared-memory file for a read. The reading commands must fail with
/// the error, never answer "no messages match" or an empty list. Runs the
/// binary as `nobody` (needs root and `setpriv`; skipped with the reason
/// printed otherwise).
#[cfg(unix)]
#[test]
#[allow(clippy::print_stderr)] // a skip prints its reason into the test log
fn a_store_in_a_folder_the_reader_cannot_write_is_an_error_not_an_empty_answer() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let folder = env.path("locked");
    std::fs::create_dir_all(&folder).expect("folder");
    let db = folder.join("state.db");
    write_fixture(&db, Shape::V23).expect("a closed WAL store");
    let open_to_all = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod")
    };
    open_to_all(&env.path(""), 0o755);
    open_to_all(&db, 0o644);
    open_to_all(&folder, 0o555);
    for args in [&["search", "docker"][..], &["sessions", "list"][..]] {
        let output = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_hermes-state"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .env("HERMES_HOME", env.path(""))
            .output();
        let output = match output {
            Ok(output) if String::from_utf8_lossy(&output.stderr).contains("setpriv:") => {
                eprintln!(
                    "skipped: setpriv cannot switch to nobody: {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                );
                return;
            }
            Ok(output) => output,
            Err(error) => {
                eprintln!("skipped: setpriv is not available: {error}");
                return;
            }
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.success() {
            // SQLite managed a read without the -shm: then it must be a real answer.
            assert!(
                !stdout.trim().is_empty(),
                "{args:?}: empty answer\n{stderr}"
            );
            assert!(!stderr.contains("no messages match"), "{args:?}: {stderr}");
        } else {
            assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
            assert!(stdout.trim().is_empty(), "{args:?}: {stdout}");
            assert!(stderr.contains("error:"), "{args:?}: {stderr}");
            assert!(!stderr.contains("no messages match"), "{args:?}: {stderr}");
        }
    }
    open_to_all(&folder, 0o755);
}
