//! An empty file at the store's path — 0 bytes, or a SQLite database
//! without a table — is named as what it is, never called damaged, and
//! never turned into a store by a reading command, by `doctor` (with or
//! without `--repair`) or by a writing command that needs an existing store.
//! The commands that make a store (`sessions create`, `import`, `migrate`,
//! `demo`) make one in it, as in a missing file (docs/DECISIONS.md, "An
//! empty file").

use std::path::{Path, PathBuf};

use hermes_state::rusqlite::Connection;

use crate::common::Env;

/// A 0-byte file, and a database of one page without tables.
fn empty_files(env: &Env) -> Vec<(PathBuf, &'static str)> {
    let zero = env.path("zero.db");
    std::fs::write(&zero, b"").expect("an empty file");
    let tableless = env.path("tableless.db");
    let conn = Connection::open(&tableless).expect("open");
    conn.execute_batch("PRAGMA user_version = 7")
        .expect("a database of one page");
    conn.close().expect("close");
    vec![
        (zero, "is an empty file (0 bytes), not a Hermes store"),
        (
            tableless,
            "is an empty database (no tables), not a Hermes store",
        ),
    ]
}

/// The file's bytes and the names of the files in its folder.
fn state(db: &Path) -> (Vec<u8>, Vec<String>) {
    let mut names: Vec<String> = std::fs::read_dir(db.parent().expect("folder"))
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    (std::fs::read(db).expect("read"), names)
}

#[test]
fn an_empty_file_is_named_and_left_alone_by_every_command_that_needs_a_store() {
    let env = Env::new();
    let refused: &[&[&str]] = &[
        &["sessions", "list"],
        &["sessions", "show", "x"],
        &["search", "x"],
        &["stats"],
        &["export"],
        &["doctor"],
        &["doctor", "--repair"],
        &["sessions", "end", "x", "--reason", "y"],
        &["title", "set", "x", "A title"],
        &[
            "messages",
            "append",
            "x",
            "--role",
            "user",
            "--content",
            "hi",
        ],
        &["vacuum"],
        &["fts", "rebuild"],
        &["maintenance", "auto"],
        &["prune", "--any-age", "--yes"],
    ];
    for (db, named) in empty_files(&env) {
        let before = state(&db);
        for args in refused {
            let run = env
                .run(&db, args)
                .fails(1)
                .one_error_line()
                .stderr_has(named);
            assert!(
                !run.stderr.contains("damaged") && !run.stderr.contains("doctor`"),
                "{args:?}: {}",
                run.stderr
            );
            assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
            assert_eq!(state(&db), before, "{args:?} changed {}", db.display());
        }
        // `schema` and `migrate --dry-run` describe it.
        env.run(&db, &["schema"])
            .ok()
            .stdout_has("schema version:   none (an empty file)");
        env.run(&db, &["migrate", "--dry-run"])
            .ok()
            .stdout_has("would create the schema");
        assert_eq!(state(&db), before);
    }
}

#[test]
fn the_commands_that_make_a_store_make_it_in_an_empty_file() {
    let env = Env::new();
    for (db, _) in empty_files(&env) {
        env.run(
            &db,
            &["sessions", "create", "--source", "cli", "--id", "s1"],
        )
        .ok()
        .stderr_has("created a new store at")
        .stderr_has("(in the empty file)");
        env.run(&db, &["sessions", "show", "s1"]).ok();
    }
    let (zero, _) = empty_files(&env).swap_remove(0);
    env.run(&zero, &["migrate"])
        .ok()
        .stdout_has("created a new store");
    env.run(&zero, &["doctor"]).ok().stdout_has("healthy");
}
