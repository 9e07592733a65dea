//! The command line on PostgreSQL: errors for bad or unreachable URLs
//! (never an empty answer, never a fall-back to a file), `migrate-to` to a
//! store that is not empty, imports into a new schema, and the doctor,
//! TLS and secrets. (Every command on a file and on PostgreSQL, the
//! environment variable and `migrate-to` both ways: `both_backends`.)
//! Needs the server `HERMES_STATE_TEST_PG_URL` names (else prints `skipped:`).

// The skip line is printed on purpose.
#![allow(clippy::print_stdout)]

use crate::common::Env;

mod doctor;
mod secrets;
mod tls;

use hermes_state_testkit::PgSchema;

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
