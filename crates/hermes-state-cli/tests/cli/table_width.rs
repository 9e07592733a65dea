//! `sessions list` adapts to the width (`COLUMNS`): the title and preview
//! shrink first, then the model loses its provider prefix (never its
//! name), then the status, last-active and source columns go.

use std::path::Path;

use crate::common::*;

const MODEL: &str = "anthropic/claude-sonnet-4-5";
const TITLE: &str = "Autumn bike trip along the Loire";

fn store(env: &Env) -> std::path::PathBuf {
    let db = env.path("w.db");
    for id in ["w1", "w2"] {
        env.run(
            &db,
            &[
                "sessions", "create", "--source", "cli", "--id", id, "--model", MODEL,
            ],
        )
        .ok();
        env.run(
            &db,
            &[
                "messages",
                "append",
                id,
                "--role",
                "user",
                "--content",
                "Which bridges can bikes cross?",
            ],
        )
        .ok();
    }
    env.run(&db, &["title", "set", "w1", TITLE]).ok();
    env.run(
        &db,
        &[
            "sessions", "create", "--source", "cli", "--id", "w3", "--model", "gpt-5",
        ],
    )
    .ok();
    db
}

fn list(env: &Env, db: &Path, columns: &str) -> Vec<String> {
    let run = env
        .run_env(db, &[("COLUMNS", columns)], &["sessions", "list"])
        .ok();
    run.stdout.lines().map(str::to_owned).collect()
}

fn width(line: &str) -> usize {
    line.chars().count()
}

#[test]
fn at_60_columns_the_model_keeps_its_name_and_lines_fit() {
    let env = Env::new();
    let db = store(&env);
    let lines = list(&env, &db, "60");
    assert_eq!(lines.len(), 4, "{lines:#?}");
    for line in &lines {
        assert!(width(line) <= 60, "{} columns: {line:?}", width(line));
    }
    let w1 = lines.iter().find(|l| l.starts_with("w1 ")).expect("w1");
    assert!(w1.contains("…/claude-sonnet-4-5"), "{w1}");
    assert!(!w1.contains("anthropic"), "{w1}");
    // The title is there, cut.
    assert!(w1.contains("Autumn bike"), "{w1}");
    assert!(w1.ends_with('…'), "{w1}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("w3 ") && l.contains("gpt-5"))
    );
    // Columns that do not fit are left out rather than squeezed.
    assert!(!lines[0].contains("LAST ACTIVE"), "{}", lines[0]);
    assert!(lines[0].contains("AGE"), "{}", lines[0]);
}

#[test]
fn at_120_columns_everything_shows_whole() {
    let env = Env::new();
    let db = store(&env);
    let lines = list(&env, &db, "120");
    for line in &lines {
        assert!(width(line) <= 120, "{} columns: {line:?}", width(line));
    }
    let header = &lines[0];
    for column in [
        "ID",
        "SOURCE",
        "MODEL",
        "MSGS",
        "LAST ACTIVE (UTC)",
        "AGE",
        "STATUS",
    ] {
        assert!(header.contains(column), "{column}: {header}");
    }
    let w1 = lines.iter().find(|l| l.starts_with("w1 ")).expect("w1");
    assert!(w1.contains(MODEL), "{w1}");
    assert!(w1.contains(TITLE), "{w1}");
    let w2 = lines.iter().find(|l| l.starts_with("w2 ")).expect("w2");
    assert!(w2.contains("Which bridges can bikes cross?"), "{w2}");
}

#[test]
fn between_the_two_the_title_shrinks_before_the_model() {
    let env = Env::new();
    let db = store(&env);
    let lines = list(&env, &db, "100");
    let w1 = lines.iter().find(|l| l.starts_with("w1 ")).expect("w1");
    assert!(w1.contains(MODEL), "{w1}");
    assert!(!w1.contains(TITLE), "{w1}");
    assert!(width(w1) <= 100, "{w1}");
    // Without COLUMNS and not on a terminal: 100.
    let default = env.run(&db, &["sessions", "list"]).ok();
    assert_eq!(
        default
            .stdout
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>(),
        lines
    );
}

#[test]
fn stats_never_cut_a_models_own_name() {
    let env = Env::new();
    let db = env.path("s.db");
    let long = "openrouter/anthropic/claude-sonnet-4-5-20250929";
    env.run(
        &db,
        &[
            "sessions", "create", "--source", "cli", "--id", "m1", "--model", long,
        ],
    )
    .ok();
    let run = env.run(&db, &["stats"]).ok();
    let row = run
        .stdout
        .lines()
        .find(|l| l.contains("claude"))
        .unwrap_or_else(|| panic!("no model row: {}", run.stdout));
    assert!(row.contains("…/claude-sonnet-4-5-20250929"), "{row}");
    assert!(!row.contains("openrouter"), "{row}");
}
