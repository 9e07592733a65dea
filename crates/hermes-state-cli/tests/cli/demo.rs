//! `demo`, and the README's quick start.

use serde_json::Value;

use crate::common::*;

#[test]
fn demo_fills_a_fresh_store_and_refuses_a_used_one() {
    let env = Env::new();
    let db = env.path("demo.db");
    env.run(&db, &["demo"])
        .ok()
        .stdout_has("8 sessions")
        .stdout_has("search");
    // A second demo would mix the sample into real data: refused.
    env.run(&db, &["demo"])
        .fails(1)
        .one_error_line()
        .stderr_has("already has 8 session(s)")
        .stderr_has("--force");
    // --force replaces the sample's own sessions: still 8, not 16.
    let forced = env.json(&db, &["demo", "--force"]);
    assert_eq!(forced["sessions"].as_array().map(Vec::len), Some(8));
    assert_eq!(forced["messages"], 30);
    let listed = env.json(&db, &["sessions", "list", "--limit", "100"]);
    assert_eq!(ids(&listed).len(), 8);
}

#[test]
fn readme_quick_start_works_as_written() {
    // README: hermes-state --db demo.db demo && hermes-state --db demo.db search bike
    let env = Env::new();
    env.raw(&["--db", "demo.db", "demo"], None).ok();
    env.raw(&["--db", "demo.db", "search", "bike"], None)
        .ok()
        .stdout_has("demo-paris")
        .stdout_has(">>>bike<<<");
    env.raw(&["--db", "demo.db", "sessions", "show", "demo-paris"], None)
        .ok()
        .stdout_has("weather(");
}

#[test]
fn the_default_store_is_hermes_home_state_db() {
    let env = Env::new();
    env.raw(&["demo"], None).ok();
    assert!(env.path("state.db").is_file());
    let listed: Value =
        serde_json::from_str(&env.raw(&["--json", "sessions", "list"], None).ok().stdout)
            .expect("json");
    assert!(ids(&listed).contains(&"demo-paris".to_owned()));
}
