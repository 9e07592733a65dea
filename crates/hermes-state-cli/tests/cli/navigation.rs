//! Navigation: session arguments (`latest`, id prefixes, titles) resolved
//! the same way by every command, `--since` / `--until` on `sessions list`,
//! `search`, `stats`, `export` and `prune`, and `search --session` over a
//! compression lineage.

use std::path::{Path, PathBuf};

use hermes_state::rusqlite::Connection;
use serde_json::Value;

use crate::common::*;

const A: &str = "20260101_100000_aaaaaa";
const B: &str = "20260101_110000_aaaabb";
const C: &str = "20260301_090000_cccccc";
const D: &str = "20260401_080000_dddddd";

/// Unix seconds of 2026-01-01T00:00Z.
const JAN_1: f64 = 1_767_225_600.0;
const DAY: f64 = 86_400.0;

/// A (cli, "Paris trip", ended by compression) → B (its continuation), both
/// on 2026-01-01; C (telegram, "Budget") on 2026-03-01; D (cli) on 2026-04-01.
/// Each has one user message five minutes after its start mentioning paris.
fn store(env: &Env) -> PathBuf {
    let db = env.path("nav.db");
    let sessions = [
        (A, "cli", None, JAN_1 + 10.0 * 3600.0),
        (B, "cli", Some(A), JAN_1 + 11.0 * 3600.0),
        (C, "telegram", None, JAN_1 + 59.0 * DAY + 9.0 * 3600.0),
        (D, "cli", None, JAN_1 + 90.0 * DAY + 8.0 * 3600.0),
    ];
    for (id, source, parent, _) in sessions {
        let mut args = vec!["sessions", "create", "--id", id, "--source", source];
        if let Some(parent) = parent {
            args.extend(["--parent", parent]);
        }
        env.run(&db, &args).ok();
        let text = format!("paris note of {id}");
        env.run(
            &db,
            &[
                "messages",
                "append",
                id,
                "--role",
                "user",
                "--content",
                &text,
            ],
        )
        .ok();
    }
    env.run(&db, &["sessions", "end", A, "--reason", "compression"])
        .ok();
    env.run(&db, &["title", "set", A, "Paris trip"]).ok();
    env.run(&db, &["title", "set", C, "Budget"]).ok();
    let conn = Connection::open(&db).expect("open");
    for (id, _, _, started) in sessions {
        conn.execute(
            "UPDATE sessions SET started_at = ?2 WHERE id = ?1",
            (id, started),
        )
        .expect("started_at");
        conn.execute(
            "UPDATE messages SET timestamp = ?2 WHERE session_id = ?1",
            (id, started + 300.0),
        )
        .expect("timestamp");
    }
    conn.execute(
        "UPDATE sessions SET ended_at = ?2 WHERE id = ?1",
        (A, JAN_1 + 10.5 * 3600.0),
    )
    .expect("ended_at");
    db
}

fn title_of(env: &Env, db: &Path, arg: &str) -> String {
    env.run(db, &["title", "get", arg])
        .ok()
        .stdout
        .trim()
        .to_owned()
}

fn hit_sessions(hits: &Value) -> Vec<String> {
    let mut ids: Vec<String> = hits
        .as_array()
        .expect("hits")
        .iter()
        .map(|hit| hit["session_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    ids.sort();
    ids
}

#[test]
fn session_arguments_take_ids_prefixes_titles_and_latest() {
    let env = Env::new();
    let db = store(&env);
    // An exact id, a unique prefix (case-insensitive), a title.
    assert_eq!(title_of(&env, &db, C), "Budget");
    assert_eq!(title_of(&env, &db, "2026030"), "Budget");
    assert_eq!(title_of(&env, &db, "20260301_090000_CCC"), "Budget");
    let messages = env.json(&db, &["messages", "list", "Budget"]);
    assert_eq!(messages[0]["session_id"], C);
    // `latest`: the newest start; of one source with --latest-source.
    env.run(&db, &["title", "set", "latest", "Newest"]).ok();
    assert_eq!(title_of(&env, &db, D), "Newest");
    assert_eq!(
        title_of(&env, &db, "latest"),
        "Newest",
        "latest is D, the newest start"
    );
    env.run(
        &db,
        &["--latest-source", "telegram", "title", "get", "latest"],
    )
    .ok()
    .stdout_has("Budget");
    env.run(
        &db,
        &["--latest-source", "discord", "title", "get", "latest"],
    )
    .fails(1)
    .one_error_line()
    .stderr_has("no latest session from \"discord\"");
    // An ambiguous prefix: one line naming the candidates.
    env.run(&db, &["sessions", "show", "20260101_1"])
        .fails(1)
        .one_error_line()
        .stderr_has("several session ids")
        .stderr_has(A)
        .stderr_has(B);
    // Nothing matches: the command's own "does not exist".
    env.run(&db, &["title", "get", "nope"])
        .fails(1)
        .one_error_line()
        .stderr_has("does not exist");
    // A writing command resolves too.
    env.run(&db, &["sessions", "pin", "2026040"]).ok();
    env.run(&db, &["--json", "sessions", "list", "--pinned"])
        .ok()
        .stdout_has(D);
}

#[test]
fn sessions_list_filters_on_the_start_with_paging() {
    let env = Env::new();
    let db = store(&env);
    let since = env.json(&db, &["sessions", "list", "--since", "2026-02-01"]);
    assert_eq!(ids(&since), [D, C]);
    let until = env.json(&db, &["sessions", "list", "--until", "2026-02-01"]);
    assert_eq!(ids(&until), [B, A]);
    let between = env.json(
        &db,
        &[
            "sessions",
            "list",
            "--since",
            "2026-01-01T10:30",
            "--until",
            "2026-03-01",
        ],
    );
    assert_eq!(ids(&between), [B]);
    let paged = env.json(
        &db,
        &[
            "sessions",
            "list",
            "--until",
            "2026-04-01",
            "--limit",
            "1",
            "--offset",
            "1",
        ],
    );
    assert_eq!(ids(&paged), [B]);
    // The picker view takes the window too.
    let picker = env.json(
        &db,
        &["sessions", "list", "--children", "--since", "2026-03-01"],
    );
    let mut picked = ids(&picker);
    picked.sort();
    assert_eq!(picked, [C, D]);
    // A relative age: nothing started in the last hour (the store is of 2026).
    let recent = env.json(
        &db,
        &["sessions", "list", "--since", "1h", "--until", "2026-05-01"],
    );
    assert_eq!(ids(&recent), Vec::<String>::new());
    env.run(&db, &["sessions", "list", "--since", "the day before"])
        .fails(2)
        .stderr_has("expected YYYY-MM-DD");
}

#[test]
fn search_filters_by_message_time_and_lineage() {
    let env = Env::new();
    let db = store(&env);
    let all = env.json(&db, &["search", "paris"]);
    assert_eq!(hit_sessions(&all), [A, B, C, D]);
    let march = env.json(&db, &["search", "paris", "--since", "2026-03-01"]);
    assert_eq!(hit_sessions(&march), [C, D]);
    let paged = env.json(
        &db,
        &[
            "search",
            "paris",
            "--sort",
            "newest",
            "--until",
            "2026-04-01",
            "--limit",
            "1",
            "--offset",
            "1",
        ],
    );
    assert_eq!(hit_sessions(&paged), [B]);
    // --session takes the whole compression lineage, --segment-only itself.
    let lineage = env.json(&db, &["search", "paris", "--session", B]);
    assert_eq!(hit_sessions(&lineage), [A, B]);
    let segment = env.json(&db, &["search", "paris", "--session", B, "--segment-only"]);
    assert_eq!(hit_sessions(&segment), [B]);
    let by_title = env.json(&db, &["search", "paris", "--session", "Paris trip"]);
    assert_eq!(hit_sessions(&by_title), [A, B]);
    // `latest` of the search's own --source.
    let latest = env.json(
        &db,
        &[
            "search",
            "paris",
            "--session",
            "latest",
            "--source",
            "telegram",
        ],
    );
    assert_eq!(hit_sessions(&latest), [C]);
    env.run(&db, &["search", "paris", "--session", "nope"])
        .fails(1)
        .stderr_has("does not exist");
}

#[test]
fn export_stats_and_prune_take_the_window() {
    let env = Env::new();
    let db = store(&env);
    let jsonl = env
        .run(
            &db,
            &["export", "--format", "jsonl", "--since", "2026-03-01"],
        )
        .ok()
        .stdout;
    let exported: Vec<String> = jsonl
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .filter(|line| line["type"] == "session")
        .map(|line| line["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    let mut exported = exported;
    exported.sort();
    assert_eq!(exported, [C, D]);
    let json = env.json(&db, &["export", "--until", "2026-02-01"]);
    let mut exported = ids(&json);
    exported.sort();
    assert_eq!(exported, [A, B]);
    let stats = env.json(&db, &["stats", "--since", "2026-03-01"]);
    assert_eq!(stats["sessions"], 2);
    assert_eq!(stats["messages"], 2);
    let pruned = env.json(&db, &["prune", "--until", "2026-02-01", "--dry-run"]);
    assert_eq!(pruned["ids"], serde_json::json!([A]));
    let none = env.json(&db, &["prune", "--since", "2026-01-02", "--dry-run"]);
    assert_eq!(none["count"], 0);
    env.run(&db, &["prune", "--until", "1d", "--older-than-days", "3"])
        .fails(2);
}
