//! `doctor [--repair]` on a PostgreSQL store: the file doctor's shape and
//! words, damage reported, counters repaired, the rest left and said.

use hermes_state::rusqlite::Connection;

use crate::common::Env;
use hermes_state_testkit::PgSchema;

/// The doctor's first line after the store's name: `healthy` or `N problem(s) found`.
fn verdict(stdout: &str) -> &str {
    stdout.lines().nth(1).unwrap_or_default().trim()
}

/// The `wrong counters:` lines of a doctor's output.
fn counter_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("wrong counters:"))
        .collect()
}

#[test]
fn doctor_on_postgresql_reports_damage_as_the_file_doctor_does_and_repairs_counters() {
    let Some(schema) = PgSchema::new("cli", "doctor") else {
        return;
    };
    let env = Env::new();
    let moved = env.demo("moved.db");
    env.run(&moved, &["migrate-to", schema.url()]).ok();
    // The same demo store in a file that stays one (a moved file notes
    // its move on stderr), to compare with.
    let db = env.demo("demo.db");
    let pg = |args: &[&str]| {
        let mut all = vec!["--database-url", schema.url()];
        all.extend_from_slice(args);
        env.raw(&all, None)
    };

    let healthy = pg(&["doctor"]).ok();
    assert_eq!(verdict(&healthy.stdout), "healthy", "{}", healthy.stdout);
    assert!(
        healthy.stdout.starts_with("postgresql://") || healthy.stdout.starts_with("postgres://"),
        "the store is named by its URL first: {}",
        healthy.stdout
    );
    assert!(
        healthy.stdout.contains(&format!(
            "schema {}: PostgreSQL step 3 (this build knows 3), data model v23",
            schema.name()
        )),
        "{}",
        healthy.stdout
    );
    // The test server has no TLS: `prefer` asked, and talks in cleartext.
    assert!(
        healthy.stdout.contains(
            "connection: not encrypted (sslmode=prefer and the server does not offer TLS)"
        ),
        "{}",
        healthy.stdout
    );
    let file = env.run(&db, &["doctor"]).ok();
    assert_eq!(verdict(&file.stdout), "healthy");

    // The same damage on both: a skewed counter. And on PostgreSQL an index
    // dropped behind its back.
    let conn = Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE sessions SET message_count = 99 WHERE id = 'demo-paris'",
        [],
    )
    .unwrap();
    drop(conn);
    let mut admin = postgres::Client::connect(schema.admin(), postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!(
            "SET search_path TO \"{}\"; \
             UPDATE sessions SET message_count = 99 WHERE id = 'demo-paris'; \
             DROP INDEX idx_messages_search_vector",
            schema.name()
        ))
        .unwrap();

    let file = env.run(&db, &["doctor"]).fails(1);
    let damaged = pg(&["doctor"])
        .fails(1)
        .stderr_has("doctor: 2 problem(s) found in postgres")
        .stderr_has("--repair");
    assert_eq!(verdict(&damaged.stdout), "2 problem(s) found");
    assert!(
        damaged
            .stdout
            .lines()
            .any(|l| l.trim() == "missing: index idx_messages_search_vector"),
        "{}",
        damaged.stdout
    );
    let lines = counter_lines(&damaged.stdout);
    assert_eq!(lines.len(), 1, "{}", damaged.stdout);
    assert_eq!(
        lines,
        counter_lines(&file.stdout),
        "the counter line reads as on a file"
    );
    assert!(lines[0].starts_with("wrong counters: demo-paris: message_count 99 (real 6)"));

    // JSON: the file doctor's field names where they apply.
    let json = pg(&["--json", "doctor"]).fails(1).json();
    let file_json = env.run(&db, &["--json", "doctor"]).fails(1).json();
    assert_eq!(json["healthy"], false);
    assert_eq!(json["problems"], 2);
    assert_eq!(json["counters"], file_json["counters"]);
    assert_eq!(
        json["missing"],
        serde_json::json!(["index idx_messages_search_vector"])
    );
    assert_eq!(json["trigram"]["present"], true);
    assert_eq!(json["steps"]["too_new"], false);

    // The repair is a write: refused under --read-only.
    pg(&["--read-only", "doctor", "--repair"]).fails(2);
    // It recounts the counter, says so, and leaves the index for a person.
    let repaired = pg(&["doctor", "--repair"])
        .fails(1)
        .stderr_has("doctor --repair: 1 problem(s) remain")
        .stdout_has("fixed counters: demo-paris: message_count 99 (real 6)")
        .stdout_has("after repair: 1 problem(s) found");
    assert!(
        counter_lines(&repaired.stdout).is_empty(),
        "{}",
        repaired.stdout
    );
    let paris = pg(&["--json", "sessions", "show", "demo-paris"])
        .ok()
        .json();
    assert_eq!(paris["message_count"], 6);
    // A schema without a store is an error, and stays without one.
    let other = format!("{}x", schema.url());
    env.raw(&["--database-url", &other, "doctor"], None)
        .fails(1)
        .stderr_has("holds no hermes-state store");
}
