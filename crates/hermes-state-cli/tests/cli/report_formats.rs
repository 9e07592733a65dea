//! `--format table|json|jsonl|csv` of `stats` (with `--rows`) and
//! `sessions lineage`.

use serde_json::Value;

use crate::common::Env;
use crate::row_formats::csv_rows;

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn stats_rows_come_out_as_jsonl_and_csv_matching_the_report() {
    let env = Env::new();
    let db = env.demo("s.db");
    let report = env.json(&db, &["stats"]);
    // --format json is --json: the whole report.
    assert_eq!(
        env.run(&db, &["stats", "--format", "json"]).ok().json(),
        report
    );
    for (rows, key) in [
        ("models", "models"),
        ("tasks", "usage"),
        ("top", "top_sessions"),
    ] {
        let expected = report[key].as_array().expect("array").clone();
        assert!(!expected.is_empty(), "{key}");
        let jsonl = env
            .run(&db, &["stats", "--format", "jsonl", "--rows", rows])
            .ok();
        assert_eq!(lines(&jsonl.stdout), expected, "--rows {rows}");
        let array = env
            .run(&db, &["stats", "--format", "json", "--rows", rows])
            .ok()
            .json();
        assert_eq!(array, Value::Array(expected.clone()), "--rows {rows}");
        let csv = env
            .run(&db, &["stats", "--format", "csv", "--rows", rows])
            .ok();
        let parsed = csv_rows(&csv.stdout);
        assert_eq!(parsed.len(), expected.len(), "--rows {rows}");
        for (row, object) in parsed.iter().zip(&expected) {
            let header: Vec<&str> = row.iter().map(|(k, _)| k.as_str()).collect();
            let keys: Vec<&str> = object
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(header, keys, "--rows {rows}");
            for (column, cell) in row {
                let want = match &object[column] {
                    Value::Null => String::new(),
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                assert_eq!(cell, &want, "--rows {rows}, column {column}");
            }
        }
    }
    // Without --rows the row formats print the per-model table.
    let default = env.run(&db, &["stats", "--format", "jsonl"]).ok();
    assert_eq!(
        lines(&default.stdout),
        report["models"].as_array().unwrap().clone()
    );
}

#[test]
fn stats_table_with_rows_shows_that_section_only() {
    let env = Env::new();
    let db = env.demo("t.db");
    let whole = env.run(&db, &["stats"]).ok();
    for heading in [
        "sessions, ",
        "Per model\n",
        "Per model and task",
        "Top sessions by tokens",
    ] {
        assert!(
            whole.stdout.contains(heading),
            "{heading}: {}",
            whole.stdout
        );
    }
    let top = env.run(&db, &["stats", "--rows", "top"]).ok();
    assert!(top.stdout.contains("Top sessions by tokens"));
    for absent in ["sessions, ", "Per model"] {
        assert!(!top.stdout.contains(absent), "{absent}: {}", top.stdout);
    }
    let models = env.run(&db, &["stats", "--rows", "models"]).ok();
    assert!(models.stdout.contains("Per model\n"));
    assert!(!models.stdout.contains("Top sessions"));
    assert!(!models.stdout.contains("Per model and task"));
    // --json and another --format contradict each other.
    env.run(&db, &["--json", "stats", "--format", "csv"])
        .fails(2)
        .stderr_has("--json means --format json");
}

#[test]
fn lineage_rows_name_each_sessions_relation_root_first() {
    let env = Env::new();
    let db = env.demo("l.db");
    let document = env.json(&db, &["sessions", "lineage", "demo-refactor-2"]);
    assert_eq!(
        env.run(
            &db,
            &["sessions", "lineage", "demo-refactor-2", "--format", "json"]
        )
        .ok()
        .json(),
        document
    );
    let rows = lines(
        &env.run(
            &db,
            &[
                "sessions",
                "lineage",
                "demo-refactor-2",
                "--format",
                "jsonl",
            ],
        )
        .ok()
        .stdout,
    );
    let pairs: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["relation"].as_str().unwrap()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("demo-refactor", "ancestor"),
            ("demo-refactor-2", "self"),
            ("demo-refactor-docs", "descendant"),
        ]
    );
    assert_eq!(rows[2]["parent_session_id"], "demo-refactor-2");
    assert_eq!(rows[0]["title"], "Refactor the config parser");
    let csv = csv_rows(
        &env.run(
            &db,
            &["sessions", "lineage", "demo-refactor", "--format", "csv"],
        )
        .ok()
        .stdout,
    );
    let header: Vec<&str> = csv[0].iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        header,
        [
            "id",
            "relation",
            "title",
            "started_at",
            "started_at_iso",
            "parent_session_id"
        ]
    );
    let ids: Vec<(&str, &str)> = csv
        .iter()
        .map(|row| (row[0].1.as_str(), row[1].1.as_str()))
        .collect();
    assert_eq!(ids[0], ("demo-refactor", "self"));
    assert!(
        ids[1..]
            .iter()
            .all(|(_, relation)| *relation == "descendant")
    );
    let mut descendants: Vec<&str> = ids[1..].iter().map(|(id, _)| *id).collect();
    descendants.sort_unstable();
    assert_eq!(
        descendants,
        [
            "demo-refactor-2",
            "demo-refactor-docs",
            "demo-refactor-serde"
        ]
    );
    // Its time as ISO 8601 UTC next to the number.
    assert!(
        csv[0][4].1.ends_with('Z') && csv[0][4].1.contains('T'),
        "{:?}",
        csv[0][4]
    );
    // The root's own row has no parent: an empty field.
    assert_eq!(csv[0][5].1, "");
}
