//! `doctor` on counters written under Hermes's old tool-call counting rule
//! (before 2026-03-07, schema v1–v2 era: one per assistant message carrying
//! calls, one per `tool` result): labelled as such, not as damage.

use hermes_state::rusqlite::Connection;
use xtask::fixtures::{Shape, write_fixture};

use crate::common::*;

/// `s-cli-child` of the fixture dataset has one assistant row with two tool
/// calls (docs/FIXTURES.md).
const SESSION: &str = "s-cli-child";

fn old_rule_count(conn: &Connection, session: &str) -> i64 {
    conn.query_row(
        "SELECT count(*) FROM messages WHERE session_id = ?1
           AND (role = 'tool' OR (tool_calls IS NOT NULL AND tool_calls NOT IN ('[]', 'null')))",
        [session],
        |r| r.get(0),
    )
    .expect("count")
}

/// The doctor's first line after the file's path: `healthy` or `N problem(s) found`.
fn verdict(stdout: &str) -> &str {
    stdout.lines().nth(1).unwrap_or_default().trim()
}

fn stored(conn: &Connection, session: &str) -> (i64, i64) {
    conn.query_row(
        "SELECT message_count, tool_call_count FROM sessions WHERE id = ?1",
        [session],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .expect("counters")
}

/// A v2 store whose session was counted by the old rule (as the Hermes of
/// that era left it).
fn v2_store_counted_by_the_old_rule(env: &Env) -> (std::path::PathBuf, i64, i64, i64) {
    let db = env.path("v2.db");
    write_fixture(&db, Shape::EraEnd(2)).expect("a v2 store");
    let conn = Connection::open(&db).expect("open");
    let (messages, today) = stored(&conn, SESSION);
    let old = old_rule_count(&conn, SESSION);
    assert_ne!(old, today, "the dataset must tell the two rules apart");
    conn.execute(
        "UPDATE sessions SET tool_call_count = ?1 WHERE id = ?2",
        (old, SESSION),
    )
    .expect("old counter");
    (db, messages, old, today)
}

#[test]
fn counters_of_the_old_rule_are_labelled_not_damage_on_a_v2_store() {
    let env = Env::new();
    let (db, messages, old, today) = v2_store_counted_by_the_old_rule(&env);
    let line = format!(
        "note: counted by the old rule, not damage: {SESSION}: message_count {messages} (real {messages}), tool_call_count {old} (real {today})"
    );
    // Read as it is: a v2 file lacks v23's trigram index and title index by
    // design (a note says its upgrade adds them; not damage), and the
    // counter is labelled, not a problem: healthy.
    let as_is = env.run(&db, &["--read-only", "doctor"]).ok();
    assert_eq!(verdict(&as_is.stdout), "healthy", "{}", as_is.stdout);
    assert!(
        as_is
            .stdout
            .contains("note: older schema, not damage: its upgrade to v23")
            && as_is.stdout.contains("index idx_sessions_title_unique"),
        "{}",
        as_is.stdout
    );
    assert!(as_is.stdout.contains(&line), "{line}\n{}", as_is.stdout);
    assert!(!as_is.stdout.contains("wrong counters"), "{}", as_is.stdout);
    // Upgraded, the counter is kept as written: the store is healthy and the
    // counter labelled.
    env.run(&db, &["migrate"]).ok();
    let conn = Connection::open(&db).expect("open");
    assert_eq!(
        stored(&conn, SESSION),
        (messages, old),
        "migrations keep counters"
    );
    let run = env.run(&db, &["--read-only", "doctor"]).ok();
    assert_eq!(verdict(&run.stdout), "healthy", "{}", run.stdout);
    assert!(run.stdout.contains(&line), "{line}\n{}", run.stdout);
    assert!(!run.stdout.contains("wrong counters"), "{}", run.stdout);
    let json = env.json(&db, &["--read-only", "doctor"]);
    assert_eq!(json["healthy"], true, "{json}");
    assert_eq!(json["problems"], 0);
    let counters = json["counters"].as_array().expect("counters");
    assert_eq!(counters.len(), 1, "{json}");
    assert_eq!(counters[0]["session_id"], SESSION);
    assert_eq!(counters[0]["counted_by_old_rule"], true);
    // The repair recounts it by today's rule.
    env.run(&db, &["doctor", "--repair"]).ok();
    assert_eq!(stored(&conn, SESSION), (messages, today));
    let after = env.json(&db, &["--read-only", "doctor"]);
    assert_eq!(after["counters"], serde_json::json!([]));
}

#[test]
fn other_wrong_counters_stay_damage() {
    let env = Env::new();
    let db = env.path("v2.db");
    write_fixture(&db, Shape::EraEnd(2)).expect("a v2 store");
    env.run(&db, &["migrate"]).ok();
    {
        let conn = Connection::open(&db).expect("open");
        let old = old_rule_count(&conn, SESSION);
        // Neither rule gives old + 5; and the old rule with a wrong message
        // count is not the old rule's work either.
        conn.execute(
            "UPDATE sessions SET tool_call_count = ?1 WHERE id = ?2",
            (old + 5, SESSION),
        )
        .expect("damage");
        conn.execute(
            "UPDATE sessions SET message_count = message_count + 1, tool_call_count = ?1
             WHERE id = 's-cli-root'",
            [old_rule_count(&conn, "s-cli-root")],
        )
        .expect("damage");
    }
    let run = env.run(&db, &["--read-only", "doctor"]).fails(1);
    assert_eq!(verdict(&run.stdout), "2 problem(s) found", "{}", run.stdout);
    assert!(run.stdout.contains(&format!("wrong counters: {SESSION}:")));
    assert!(run.stdout.contains("wrong counters: s-cli-root:"));
    assert!(!run.stdout.contains("old rule"), "{}", run.stdout);
    env.run(&db, &["doctor", "--repair"]).ok();
    env.run(&db, &["--read-only", "doctor"])
        .ok()
        .stdout_has("healthy");
}
