//! Bad input: unknown sessions, files that are not stores, duplicate titles,
//! unreadable paths, newer stores, bad usage, and quiet output.

use hermes_state::rusqlite::Connection;

use crate::common::*;

#[test]
fn unknown_sessions_fail_with_one_line_naming_them() {
    let env = Env::new();
    let db = env.demo("u.db");
    let cases: &[&[&str]] = &[
        &["sessions", "show", "nope-123"],
        &["sessions", "end", "nope-123", "--reason", "x"],
        &["sessions", "reopen", "nope-123"],
        &["sessions", "delete", "nope-123", "--yes"],
        &["sessions", "clear", "nope-123", "--yes"],
        &["sessions", "lineage", "nope-123"],
        &[
            "messages",
            "append",
            "nope-123",
            "--role",
            "user",
            "--content",
            "hi",
        ],
        &["messages", "list", "nope-123"],
        &["title", "set", "nope-123", "A title"],
        &["title", "get", "nope-123"],
        &["export", "--session", "nope-123"],
        &[
            "sessions", "create", "--source", "cli", "--parent", "nope-123",
        ],
    ];
    for args in cases {
        for json in [false, true] {
            let mut all: Vec<&str> = Vec::new();
            if json {
                all.push("--json");
            }
            all.extend_from_slice(args);
            let run = env
                .run(&db, &all)
                .fails(1)
                .one_error_line()
                .stderr_has("\"nope-123\"");
            assert!(run.stdout.is_empty(), "{args:?} printed {}", run.stdout);
        }
    }
}

#[test]
fn a_file_that_is_not_a_database_is_refused_untouched() {
    let env = Env::new();
    let junk = env.path("junk.db");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&junk, &bytes).expect("write");
    for args in [
        &["sessions", "list"][..],
        &["--json", "search", "x"],
        &["sessions", "create", "--source", "cli"],
        &["schema"],
        &["migrate"],
        &["migrate", "--dry-run"],
        &["--read-only", "stats"],
        &["demo"],
        &["doctor"],
        &["doctor", "--repair"],
    ] {
        env.run(&junk, args)
            .fails(1)
            .one_error_line()
            .stderr_has("not a database")
            .stderr_has("junk.db")
            .stderr_has("is this the right file?");
    }
    assert_eq!(std::fs::read(&junk).expect("read"), bytes);

    // Another application's SQLite file.
    let foreign = env.path("foreign.db");
    {
        let conn = Connection::open(&foreign).expect("open");
        conn.execute_batch("CREATE TABLE photos(id INTEGER PRIMARY KEY, path TEXT);")
            .expect("create");
    }
    let before = std::fs::read(&foreign).expect("read");
    env.run(&foreign, &["sessions", "list"])
        .fails(1)
        .one_error_line()
        .stderr_has("another application");
    env.run(&foreign, &["schema"]).fails(1).one_error_line();
    assert_eq!(std::fs::read(&foreign).expect("read"), before);
}

#[test]
fn a_duplicate_title_is_refused() {
    let env = Env::new();
    let db = env.demo("d.db");
    for json in [false, true] {
        let mut args = vec!["title", "set", "demo-dinner", "Weather in Paris"];
        if json {
            args.insert(0, "--json");
        }
        env.run(&db, &args)
            .fails(1)
            .one_error_line()
            .stderr_has("already in use by session demo-paris")
            .stderr_has("title next");
    }
    let too_long = "x".repeat(101);
    env.run(&db, &["title", "set", "demo-dinner", &too_long])
        .fails(1)
        .one_error_line()
        .stderr_has("too long");
}

#[test]
fn unreadable_paths_fail_cleanly() {
    let env = Env::new();
    let file = env.path("plain-file");
    std::fs::write(&file, "x").expect("write");
    let under_a_file = file.join("state.db");
    for args in [
        &["sessions", "list"][..],
        &["--json", "stats"],
        &["sessions", "create", "--source", "cli"],
        &["demo"],
    ] {
        env.run(&under_a_file, args)
            .fails(1)
            .one_error_line()
            .stderr_has("plain-file");
    }
    // An import into such a path fails on the store, after reading a valid file.
    let export = env.path("one.jsonl");
    let demo = env.demo("src.db");
    env.run(
        &demo,
        &[
            "export",
            "--format",
            "jsonl",
            "-o",
            export.to_str().expect("utf-8"),
        ],
    )
    .ok();
    env.run(&under_a_file, &["import", export.to_str().expect("utf-8")])
        .fails(1)
        .one_error_line()
        .stderr_has("plain-file");
    // A directory given as the store.
    env.run(env.dir.path(), &["sessions", "list"])
        .fails(1)
        .one_error_line()
        .stderr_has("is a directory");
    env.run(env.dir.path(), &["sessions", "create", "--source", "cli"])
        .fails(1)
        .one_error_line()
        .stderr_has("is a directory");

    // A folder without permission (meaningless as root, who may read anything).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = env.path("locked");
        std::fs::create_dir(&locked).expect("mkdir");
        let inside = locked.join("state.db");
        env.run(&inside, &["sessions", "create", "--source", "cli"])
            .ok();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
        let root = std::fs::read_dir(&locked).is_ok();
        if !root {
            env.run(&inside, &["sessions", "list"])
                .fails(1)
                .one_error_line()
                .stderr_has("locked");
            env.run(&inside, &["sessions", "create", "--source", "cli"])
                .fails(1)
                .one_error_line();
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    }
}

#[test]
fn read_commands_never_create_a_store() {
    let env = Env::new();
    let missing = env.path("missing.db");
    for args in [
        &["sessions", "list"][..],
        &["sessions", "show", "x"],
        &["search", "x"],
        &["stats"],
        &["export"],
        &["schema"],
        &["--read-only", "sessions", "list"],
        &["sessions", "end", "x", "--reason", "y"],
        &[
            "messages",
            "append",
            "x",
            "--role",
            "user",
            "--content",
            "c",
        ],
        &["prune", "--older-than-days", "1", "--yes"],
        &["backup", "b.db"],
    ] {
        env.run(&missing, args)
            .fails(1)
            .one_error_line()
            .stderr_has("no store at")
            .stderr_has("--db PATH or set HERMES_HOME")
            // The sample goes to a file of its own, never the agent's store.
            .stderr_has("hermes-state --db demo.db demo");
        assert!(!missing.exists(), "{args:?} created the store");
    }
}

#[test]
fn read_only_reads_and_refuses_writes() {
    let env = Env::new();
    let db = env.demo("ro.db");
    let listed = env.json(&db, &["--read-only", "sessions", "list"]);
    assert_eq!(ids(&listed).len(), 8);
    env.run(&db, &["--read-only", "search", "bike"])
        .ok()
        .stdout_has("demo-paris");
    env.run(&db, &["--read-only", "-v", "stats"])
        .ok()
        .stderr_has("read-only");
    for args in [
        &[
            "--read-only",
            "sessions",
            "end",
            "demo-dinner",
            "--reason",
            "x",
        ][..],
        &["--read-only", "title", "set", "demo-dinner", "X"],
        &["--read-only", "prune", "--older-than-days", "1"],
        &["--read-only", "migrate"],
        &["--read-only", "demo", "--force"],
    ] {
        env.run(&db, args)
            .fails(2)
            .one_error_line()
            .stderr_has("--read-only");
    }
}

#[test]
fn a_store_from_a_newer_release_is_read_only() {
    let env = Env::new();
    let db = env.demo("new.db");
    {
        let conn = Connection::open(&db).expect("open");
        conn.execute_batch("UPDATE schema_version SET version = 99")
            .expect("bump");
    }
    // A writing command says it once: what, which version, what still works.
    let refused = env
        .run(&db, &["sessions", "end", "demo-dinner", "--reason", "x"])
        .fails(1)
        .one_error_line()
        .stderr_has("newer Hermes release")
        .stderr_has("schema_version 99")
        .stderr_has("reading commands")
        .stderr_has("still work")
        .stderr;
    for once in ["newer", "upgrade hermes-state", &db.display().to_string()] {
        assert_eq!(
            refused.matches(once).count(),
            1,
            "{once:?} not said once: {refused}"
        );
    }
    assert!(
        !refused.contains("--read-only"),
        "reads need no flag: {refused}"
    );
    // Reading commands work on it without --read-only (they open read-only anyway).
    env.run(&db, &["sessions", "show", "demo-dinner"])
        .ok()
        .stdout_has("Dinner ideas");
    env.run(&db, &["--read-only", "sessions", "show", "demo-dinner"])
        .ok()
        .stdout_has("Dinner ideas");
    assert_eq!(env.json(&db, &["schema"])["schema_version"], 99);
    // The doctor examines it, read-only.
    env.run(&db, &["doctor"]).ok().stdout_has("index only");
    env.run(&db, &["doctor", "--repair"])
        .fails(1)
        .stderr_has("newer");
}

#[test]
fn bad_usage_exits_2() {
    let env = Env::new();
    let db = env.demo("bad.db");
    let cases: &[&[&str]] = &[
        &["bogus"],
        &["sessions"],
        &["sessions", "show"],
        &["sessions", "end", "demo-dinner"],
        &["sessions", "create"],
        &["search"],
        &["search", "x", "--limit", "many"],
        &["export", "--format", "xml"],
        &["prune"],
        &["prune", "--older-than-days", "-3"],
        &[
            "messages",
            "append",
            "demo-dinner",
            "--role",
            "user",
            "--tool-calls",
            "[{",
        ],
        &[
            "messages",
            "append",
            "demo-dinner",
            "--role",
            "user",
            "--content",
            "a",
            "--content-file",
            "f",
        ],
        &["export", "--session", "a", "--source", "b"],
        &["-q", "-v", "stats"],
    ];
    for args in cases {
        let run = env.run(&db, args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        // clap answers a missing subcommand with the group's help, else with one error.
        assert!(
            run.stderr.starts_with("error: ") || run.stderr.contains("Usage:"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // Help and version are not errors.
    env.raw(&["--help"], None).ok().stdout_has("sessions");
    env.raw(&["sessions", "--help"], None)
        .ok()
        .stdout_has("lineage");
    env.raw(&["--version"], None)
        .ok()
        .stdout_has("hermes-state");
}

#[test]
fn quiet_and_json_keep_stderr_clean() {
    let env = Env::new();
    let db = env.demo("quiet.db");
    let out = env.path("q.jsonl");
    let quiet = env.run(
        &db,
        &[
            "-q",
            "export",
            "--format",
            "jsonl",
            "-o",
            out.to_str().expect("utf-8"),
        ],
    );
    let quiet = quiet.ok();
    assert!(quiet.stderr.is_empty() && quiet.stdout.is_empty());
    let json = env
        .run(
            &db,
            &["--json", "prune", "--older-than-days", "1000", "--yes"],
        )
        .ok();
    assert!(json.stderr.is_empty(), "{}", json.stderr);
    let q = env
        .run(
            &db,
            &["-q", "sessions", "end", "demo-dinner", "--reason", "x"],
        )
        .ok();
    assert!(q.stdout.is_empty() && q.stderr.is_empty());
}
