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
    // The moved store holds what the file held: the same export but for
    // its time. (Every command prints on PostgreSQL what it prints for a
    // file: `both_backends` compares them all.)
    let export = |run: crate::common::Run| {
        let text = run.ok().stdout;
        let lines = text.lines().filter(|l| !l.contains("\"exported_at\""));
        lines.collect::<Vec<_>>().join("\n")
    };
    let args = ["export", "--format", "jsonl"];
    assert_eq!(export(pg(&args)), export(env.run(&db, &args)));
    // The environment variable names the same store.
    let vars = [("HERMES_STATE_DATABASE_URL", schema.url())];
    let listed = env.raw_env(&["--json", "sessions", "list"], &vars, None);
    assert_eq!(listed.ok().json().as_array().unwrap().len(), 8);

    // And back to a new file, which then holds the PostgreSQL store's state.
    pg(&["title", "set", "demo-paris", "Paris by bike"]).ok();
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
    // (Every format of `export` writes the same bytes on both:
    // `both_backends` compares them.)
    let from_pg = env.path("from-pg.jsonl");
    let to = [
        "export",
        "--format",
        "jsonl",
        "-o",
        from_pg.to_str().unwrap(),
    ];
    on(moved.url(), &to).ok();
    let whole = std::fs::read_to_string(&from_pg).unwrap();
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
