//! `search --by-conversation` with `--session` (a lineage or one segment)
//! and `--since` / `--until`: the hits are narrowed first, then grouped.
//!
//! The demo's refactoring conversation: `demo-refactor` (6 days ago, ended by
//! compression) → `demo-refactor-2`, plus a delegate (`demo-refactor-docs`,
//! ~5.94 days ago) and a branch (`demo-refactor-serde`, 5 days ago) that are
//! conversations of their own.

use serde_json::Value;

use crate::common::*;

fn roots(found: &Value) -> Vec<&str> {
    found
        .as_array()
        .expect("array")
        .iter()
        .map(|c| c["root_session_id"].as_str().expect("root"))
        .collect()
}

#[test]
fn session_limits_the_conversations_to_its_lineage() {
    let env = Env::new();
    let db = env.demo("s.db");
    let all = env.json(&db, &["search", "parse*", "--by-conversation"]);
    assert_eq!(roots(&all).len(), 3);
    // Any segment of the lineage names the whole conversation.
    for id in ["demo-refactor", "demo-refactor-2"] {
        let found = env.json(
            &db,
            &["search", "parse*", "--by-conversation", "--session", id],
        );
        assert_eq!(roots(&found), ["demo-refactor"], "--session {id}");
        assert_eq!(found[0], all[0], "--session {id}: same counts as unscoped");
        assert_eq!(
            found[0]["session_ids"],
            serde_json::json!(["demo-refactor", "demo-refactor-2"])
        );
    }
    env.run(
        &db,
        &[
            "search",
            "parse*",
            "--by-conversation",
            "--session",
            "demo-refactor-2",
        ],
    )
    .ok()
    .stdout_has("6 hits in 2 segments")
    .stderr_has("1 conversation");
}

#[test]
fn segment_only_counts_that_segment_under_its_conversation() {
    let env = Env::new();
    let db = env.demo("g.db");
    let plain = env.json(
        &db,
        &[
            "search",
            "parse*",
            "--session",
            "demo-refactor-2",
            "--segment-only",
        ],
    );
    let found = env.json(
        &db,
        &[
            "search",
            "parse*",
            "--by-conversation",
            "--session",
            "demo-refactor-2",
            "--segment-only",
        ],
    );
    assert_eq!(roots(&found), ["demo-refactor"]);
    assert_eq!(
        found[0]["session_ids"],
        serde_json::json!(["demo-refactor-2"])
    );
    assert_eq!(
        found[0]["hits"].as_u64(),
        plain.as_array().map(|a| a.len() as u64)
    );
    assert_eq!(found[0]["best"], plain[0]);
}

#[test]
fn since_and_until_count_only_the_hits_in_the_window() {
    let env = Env::new();
    let db = env.demo("w.db");
    // The branch is 5 days old; the lineage and the delegate about 6.
    let recent = env.json(
        &db,
        &["search", "parse*", "--by-conversation", "--since", "5.5d"],
    );
    assert_eq!(roots(&recent), ["demo-refactor-serde"]);
    let older = env.json(
        &db,
        &["search", "parse*", "--by-conversation", "--until", "5.5d"],
    );
    let mut older_roots = roots(&older);
    older_roots.sort_unstable();
    assert_eq!(older_roots, ["demo-refactor", "demo-refactor-docs"]);
    for conversation in older.as_array().expect("array") {
        assert!(conversation["last_timestamp"].as_f64() < recent[0]["first_timestamp"].as_f64());
    }
    // The same window with the lineage: its hits, none of the others'.
    let both = env.json(
        &db,
        &[
            "search",
            "parse*",
            "--by-conversation",
            "--session",
            "demo-refactor",
            "--until",
            "5.5d",
            "--sort",
            "newest",
        ],
    );
    assert_eq!(roots(&both), ["demo-refactor"]);
    assert_eq!(both[0]["hits"], 6);
    // A window holding none of the lineage's hits finds no conversation.
    env.run(
        &db,
        &[
            "search",
            "parse*",
            "--by-conversation",
            "--session",
            "demo-refactor",
            "--since",
            "5.5d",
        ],
    )
    .ok()
    .stderr_has("no conversations match");
}
