//! The command line on PostgreSQL: `--database-url` / `HERMES_STATE_DATABASE_URL`,
//! `migrate-to` both ways, errors for bad or unreachable URLs (never an
//! empty answer, never a fall-back to a file), and the note on a moved file.
//! Needs the server `HERMES_STATE_TEST_PG_URL` names (else prints `skipped:`).

// The skip line is printed on purpose.
#![allow(clippy::print_stdout)]

use crate::common::Env;

mod doctor;
mod secrets;
mod tls;

use hermes_state_testkit::PgSchema;

#[test]
fn a_store_moved_to_postgresql_is_read_and_written_there_and_moved_back() {
    let Some(schema) = PgSchema::new("cli", "migrate-to") else {
        return;
    };
    let env = Env::new();
    let db = env.demo("demo.db");
    env.run(&db, &["migrate-to", schema.url()])
        .ok()
        .stdout_has("copied and verified 8 sessions, 30 messages");
    // The old file says where its store went.
    env.run(&db, &["sessions", "list"])
        .ok()
        .stderr_has("note: this store was moved to postgresql://");

    let pg = |args: &[&str]| {
        let mut all = vec!["--database-url", schema.url()];
        all.extend_from_slice(args);
        env.raw(&all, None)
    };
    let listed = pg(&["--json", "sessions", "list"]).ok().json();
    assert_eq!(listed.as_array().unwrap().len(), 8);
    // Reports read the same on the file and on PostgreSQL (before any
    // write); search hits too, but for their snippets, whose windows
    // differ by design (docs/POSTGRES.md).
    let without_snippets = |mut hits: serde_json::Value| {
        for hit in hits.as_array_mut().unwrap() {
            hit.as_object_mut().unwrap().remove("snippet");
        }
        hits
    };
    for args in [
        &["--json", "stats"][..],
        &["--json", "sessions", "lineage", "demo-refactor"][..],
    ] {
        assert_eq!(
            pg(args).ok().json(),
            env.run(&db, args).ok().json(),
            "{args:?}"
        );
    }
    let search = ["--json", "search", "bike"];
    assert_eq!(
        without_snippets(pg(&search).ok().json()),
        without_snippets(env.run(&db, &search).ok().json())
    );
    // Time windows of stats and export, and the listing's filters: the
    // same as on the file.
    for args in [
        &[
            "--json", "sessions", "list", "--since", "30d", "--limit", "3",
        ][..],
        &["--json", "sessions", "list", "--pinned", "--children"][..],
        &[
            "--json",
            "sessions",
            "list",
            "--model",
            "gpt",
            "--min-messages",
            "2",
        ][..],
        &["--json", "stats", "--since", "30d"][..],
        &[
            "export", "--format", "jsonl", "--since", "30d", "--until", "1d",
        ][..],
    ] {
        let (server, file) = (pg(args).ok().stdout, env.run(&db, args).ok().stdout);
        let without_time = |text: &str| {
            text.lines()
                .filter(|l| !l.contains("\"exported_at\""))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(!file.is_empty(), "{args:?}");
        assert_eq!(without_time(&server), without_time(&file), "{args:?}");
    }
    // By conversation, in a session's lineage, in a time window: the same
    // hits (every snippet left out of the comparison; in time order, since
    // relevance ranks may differ between the backends, docs/POSTGRES.md).
    fn no_snippets(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                map.remove("snippet");
                map.values_mut().for_each(no_snippets);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(no_snippets),
            _ => {}
        }
    }
    for args in [
        &[
            "--json",
            "search",
            "parser",
            "--by-conversation",
            "--sort",
            "newest",
        ][..],
        &["--json", "search", "parser", "--session", "demo-refactor"][..],
        &[
            "--json", "search", "parser", "--since", "30d", "--sort", "newest",
        ][..],
    ] {
        let (mut server, mut file) = (pg(args).ok().json(), env.run(&db, args).ok().json());
        no_snippets(&mut server);
        no_snippets(&mut file);
        assert!(
            !file.as_array().unwrap().is_empty(),
            "{args:?} finds something"
        );
        assert_eq!(server, file, "{args:?}");
    }
    pg(&["search", "bike"]).ok().stdout_has(">>>bike<<<");
    pg(&["sessions", "show", "demo-paris", "--no-pager"])
        .ok()
        .stdout_has("Weather in Paris");
    pg(&["sessions", "show", "Weather in Paris", "--no-pager"])
        .ok()
        .stdout_has("demo-paris");
    pg(&["title", "set", "demo-paris", "Paris by bike"])
        .ok()
        .stdout_has("Paris by bike");
    pg(&["title", "resolve", "Paris by bike"])
        .ok()
        .stdout_has("demo-paris");
    let rows = pg(&["--json", "messages", "list", "demo-paris"])
        .ok()
        .json();
    assert_eq!(rows.as_array().unwrap().len(), 6);
    // The environment variable names the same store.
    let mut cmd = env.command();
    cmd.env("HERMES_STATE_DATABASE_URL", schema.url())
        .args(["--json", "sessions", "list"]);
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        8
    );
    // Reading commands open read-only; --read-only refuses writes.
    pg(&["--read-only", "title", "set", "demo-paris", "x"]).fails(2);
    // The file's own maintenance is refused, naming the server's tools.
    pg(&["vacuum"])
        .fails(2)
        .stderr_has("works on a SQLite file, not on a PostgreSQL store");

    // And back to a new file, which then holds the PostgreSQL store's state.
    let back = env.path("back.db");
    pg(&["migrate-to", &format!("sqlite:{}", back.display())])
        .ok()
        .stdout_has("copied and verified");
    env.run(&back, &["title", "get", "demo-paris"])
        .ok()
        .stdout_has("Paris by bike");
    env.run(&back, &["search", "bike"])
        .ok()
        .stdout_has("demo-paris");
    // The PostgreSQL store now says, on every command, where it went.
    for args in [&["sessions", "list"][..], &["title", "get", "demo-paris"]] {
        pg(args)
            .ok()
            .stderr_has("note: this store was moved to sqlite:")
            .stderr_has("this PostgreSQL store holds it as it was then");
    }
    // A write to the old file is refused before anything is written, so
    // the two copies cannot drift apart; `--write-moved` writes all the same.
    let before = std::fs::read(&db).unwrap(); // tidy: not the live database (a test's own copy, no process holds it)
    env.run(
        &db,
        &["sessions", "create", "--source", "cli", "--id", "late"],
    )
    .fails(2)
    .stderr_has("this store was moved to postgresql://")
    .stderr_has("--write-moved");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the refused write changed the file"
    ); // tidy: not the live database
    env.run(
        &db,
        &[
            "--write-moved",
            "sessions",
            "create",
            "--source",
            "cli",
            "--id",
            "late",
        ],
    )
    .ok()
    .stdout_has("late");
}

#[test]
fn bad_and_unreachable_urls_are_errors_never_a_file() {
    let env = Env::new();
    env.raw(
        &["--database-url", "mysql://h/db", "sessions", "list"],
        None,
    )
    .fails(2)
    .stderr_has("unknown database URL scheme");
    env.raw(
        &[
            "--database-url",
            "postgres://h/db?schema=Bad-Name",
            "sessions",
            "list",
        ],
        None,
    )
    .fails(2)
    .stderr_has("schema name");
    let unreachable = env
        .raw(
            &[
                "--database-url",
                "postgresql://nobody:secret@127.0.0.1:1/none?connect_timeout=2",
                "search",
                "x",
            ],
            None,
        )
        .fails(1);
    assert!(
        !unreachable.stderr.contains("secret"),
        "the password is never printed: {}",
        unreachable.stderr
    );
    assert!(
        unreachable.stdout.is_empty(),
        "an error is not an empty answer"
    );
    assert!(
        std::fs::read_dir(env.dir.path()).unwrap().next().is_none(),
        "no file was created"
    );
    env.raw(
        &[
            "--db",
            "x.db",
            "--database-url",
            "sqlite:y.db",
            "sessions",
            "list",
        ],
        None,
    )
    .fails(2);
}

/// `migrate-to` into a schema that already holds a store is refused before
/// the file is touched: an older file is not upgraded for a copy that
/// cannot happen (docs/DECISIONS.md, "A refused write changes nothing").
#[test]
fn migrate_to_a_store_that_is_not_empty_leaves_an_older_file_as_it_was() {
    let Some(schema) = PgSchema::new("cli", "migrate-to a non-empty store") else {
        return;
    };
    let env = Env::new();
    let demo = env.demo("demo.db");
    env.run(&demo, &["migrate-to", schema.url()]).ok();
    let old = env.path("v17.db");
    xtask::fixtures::write_fixture(&old, xtask::fixtures::Shape::Fresh(17))
        .expect("write the v17 fixture");
    let before = std::fs::read(&old).expect("read the fixture");
    let run = env
        .run(&old, &["migrate-to", schema.url()])
        .fails(1)
        .one_error_line()
        .stderr_has("the target store is not empty");
    assert!(!run.stderr.contains("note: upgraded"), "{}", run.stderr);
    assert_eq!(std::fs::read(&old).expect("read the fixture"), before);
}

/// A JSONL export without its header's `exported_at` (each backend's clock).
fn without_export_time(text: &str) -> String {
    let (header, rest) = text.split_once('\n').unwrap();
    let mut header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(header).unwrap();
    assert!(header.remove("exported_at").is_some());
    format!("{}\n{rest}", serde_json::Value::Object(header))
}

#[test]
fn export_and_import_on_postgresql_write_what_the_file_case_writes() {
    let (Some(moved), Some(imported)) = (
        PgSchema::new("cli", "export on PostgreSQL"),
        PgSchema::new("cli", "import on PostgreSQL"),
    ) else {
        return;
    };
    let env = Env::new();
    let db = env.demo("demo.db");
    env.run(&db, &["migrate-to", moved.url()]).ok();
    let on = |url: &str, args: &[&str]| {
        let mut all = vec!["--database-url", url];
        all.extend_from_slice(args);
        env.raw(&all, None)
    };
    // Every format, with and without a session or a source: the same bytes.
    for args in [
        &["export", "--format", "json"][..],
        &["export", "--format", "json", "--source", "telegram"][..],
        &["export", "--format", "json", "--session", "demo-paris"][..],
        &["export", "--format", "markdown", "--session", "demo-paris"][..],
        &["export", "--format", "jsonl", "--session", "demo-paris"][..],
        &["export", "--format", "jsonl", "--source", "cli"][..],
    ] {
        let file = env.run(&db, args).ok().stdout;
        let pg = on(moved.url(), args).ok().stdout;
        assert!(!file.is_empty(), "{args:?}");
        if args.contains(&"jsonl") {
            assert_eq!(
                without_export_time(&pg),
                without_export_time(&file),
                "{args:?}"
            );
        } else {
            assert_eq!(pg, file, "{args:?}");
        }
    }
    // To a file, as on a file.
    let from_pg = env.path("from-pg.jsonl");
    on(
        moved.url(),
        &[
            "export",
            "--format",
            "jsonl",
            "-o",
            from_pg.to_str().unwrap(),
        ],
    )
    .ok()
    .stderr_has("exported 8 session(s), 30 message(s)");
    let whole = std::fs::read_to_string(&from_pg).unwrap();
    let file_whole = env.run(&db, &["export", "--format", "jsonl"]).ok().stdout;
    assert_eq!(
        without_export_time(&whole),
        without_export_time(&file_whole)
    );
    // A time window, as on the file.
    assert_eq!(
        on(moved.url(), &["export", "--since", "2d"]).ok().stdout,
        env.run(&db, &["export", "--since", "2d"]).ok().stdout
    );
    on(moved.url(), &["export", "--session", "nope"]).fails(1);

    // A file that is not an export, or breaks off, leaves the new store empty.
    let broken = env.path("broken.jsonl");
    let lines: Vec<&str> = whole.lines().collect();
    std::fs::write(&broken, lines[..lines.len() - 1].join("\n")).unwrap();
    // (The store is made first, and said so, as in a new file.)
    let refused = on(imported.url(), &["import", broken.to_str().unwrap()]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    refused
        .stderr_has("created a new store at postgresql://")
        .stderr_has("\nerror: import: ");
    on(imported.url(), &["--json", "stats"]).ok();
    assert_eq!(
        on(imported.url(), &["--json", "sessions", "list"])
            .ok()
            .json(),
        serde_json::json!([])
    );
    // Import into a new PostgreSQL store: the same report as into a new
    // file, and the store exports the same lines back.
    let path = from_pg.to_str().unwrap();
    let report = on(imported.url(), &["--json", "import", path]).ok().json();
    let file_copy = env.path("copy.db");
    let file_report = env.run(&file_copy, &["--json", "import", path]).ok().json();
    assert_eq!(report, file_report);
    assert_eq!(report["imported"], 8);
    let back = on(imported.url(), &["export", "--format", "jsonl"])
        .ok()
        .stdout;
    assert_eq!(without_export_time(&back), without_export_time(&whole));
    // The original's JSON shape imports too; existing sessions are skipped.
    let json = env.path("all.json");
    std::fs::write(
        &json,
        on(moved.url(), &["export", "--format", "json"]).ok().stdout,
    )
    .unwrap();
    on(imported.url(), &["import", json.to_str().unwrap()])
        .ok()
        .stdout_has("skipped 8 session(s)");
    on(imported.url(), &["--read-only", "import", path]).fails(2);
}

/// `demo` fills a new PostgreSQL store as it fills a file, names the store
/// again in the commands it suggests, and refuses a store that has sessions.
#[test]
fn demo_makes_a_sample_store_on_postgresql() {
    let Some(schema) = PgSchema::new("cli", "demo on PostgreSQL") else {
        return;
    };
    let env = Env::new();
    let on = |args: &[&str]| {
        let mut all = vec!["--database-url", schema.url()];
        all.extend_from_slice(args);
        env.raw(&all, None)
    };
    on(&["demo"])
        .ok()
        .stdout_has("with a sample: 8 sessions")
        .stdout_has(&format!(
            "hermes-state --database-url '{}' search bike",
            schema.url()
        ));
    on(&["search", "bike"]).ok().stdout_has("demo-paris");
    on(&["demo"])
        .fails(1)
        .stderr_has("already has 8 session(s)")
        .stderr_has("?schema=");
}
