//! `--format table|json|jsonl|csv` of `sessions list` and `search`.

use serde_json::Value;

use crate::common::Env;

/// An RFC 4180 reader: records of fields, CRLF or LF line ends, quoted
/// fields with doubled quotes and embedded line breaks.
pub(crate) fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                other => field.push(other),
            }
            continue;
        }
        match c {
            '"' => {
                assert!(field.is_empty(), "a quote inside an unquoted field: {text}");
                quoted = true;
            }
            ',' => record.push(std::mem::take(&mut field)),
            '\r' => assert_eq!(chars.next(), Some('\n'), "a bare CR"),
            '\n' => panic!("records end with CRLF"),
            other => field.push(other),
        }
        if c == '\r' {
            record.push(std::mem::take(&mut field));
            records.push(std::mem::take(&mut record));
        }
    }
    assert!(
        !quoted && field.is_empty() && record.is_empty(),
        "unterminated: {text}"
    );
    records
}

/// The CSV as one JSON-like map per row, keyed by the header.
pub(crate) fn csv_rows(text: &str) -> Vec<Vec<(String, String)>> {
    let records = parse_csv(text);
    let (header, rows) = records.split_first().expect("a header row");
    rows.iter()
        .map(|row| {
            assert_eq!(row.len(), header.len(), "{row:?} under {header:?}");
            header.iter().cloned().zip(row.iter().cloned()).collect()
        })
        .collect()
}

fn cell<'a>(row: &'a [(String, String)], column: &str) -> &'a str {
    row.iter()
        .find(|(name, _)| name == column)
        .map(|(_, value)| value.as_str())
        .unwrap_or_else(|| panic!("no column {column} in {row:?}"))
}

/// Every machine format of one listing agrees with `--json`.
fn check_formats(env: &Env, db: &std::path::Path, args: &[&str], id_column: &str, id_key: &[&str]) {
    let with = |format: &str| {
        let mut all = args.to_vec();
        all.extend(["--format", format]);
        env.run(db, &all).ok().stdout
    };
    let mut json_args = vec!["--json"];
    json_args.extend_from_slice(args);
    let json = env.run(db, &json_args).ok().stdout;
    assert_eq!(with("json"), json, "--format json is --json");
    let list: Value = serde_json::from_str(&json).expect("json");
    let list = list.as_array().expect("an array");
    assert!(!list.is_empty(), "{args:?} found nothing");

    let jsonl = with("jsonl");
    let lines: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).expect("each JSONL line parses"))
        .collect();
    assert_eq!(&lines, list);

    let rows = csv_rows(&with("csv"));
    assert_eq!(rows.len(), list.len());
    for (row, item) in rows.iter().zip(list) {
        let id = id_key.iter().fold(item, |v, k| &v[*k]);
        assert_eq!(cell(row, id_column), id.as_str().expect("id"));
    }

    assert_eq!(with("table"), env.run(db, args).ok().stdout);
}

#[test]
fn sessions_list_in_every_format() {
    let env = Env::new();
    let db = env.demo("demo.db");
    let probe = env.json(&db, &["sessions", "list"]);
    let (column, key): (&str, Vec<&str>) = if probe[0]["id"].is_string() {
        ("id", vec!["id"])
    } else {
        ("session.id", vec!["session", "id"])
    };
    check_formats(&env, &db, &["sessions", "list"], column, &key);
    let probe = env.json(&db, &["sessions", "list", "--children"]);
    let (column, key): (&str, Vec<&str>) = if probe[0]["id"].is_string() {
        ("id", vec!["id"])
    } else {
        ("session.id", vec!["session", "id"])
    };
    check_formats(&env, &db, &["sessions", "list", "--children"], column, &key);
}

#[test]
fn search_in_every_format() {
    let env = Env::new();
    let db = env.demo("demo.db");
    check_formats(
        &env,
        &db,
        &["search", "weather"],
        "session_id",
        &["session_id"],
    );
    // Snippets hold quotes and line breaks: the CSV keeps them exactly.
    let json = env.json(&db, &["search", "weather"]);
    let rows = csv_rows(
        &env.run(&db, &["search", "weather", "--format", "csv"])
            .ok()
            .stdout,
    );
    for (row, hit) in rows.iter().zip(json.as_array().expect("array")) {
        assert_eq!(
            cell(row, "snippet"),
            hit["snippet"].as_str().unwrap_or_default()
        );
    }
    // One row per conversation with --by-conversation too.
    let args = ["search", "weather", "--by-conversation"];
    let json = env.json(&db, &args);
    let count = json.as_array().expect("array").len();
    let run = |format: &str| {
        let mut all = args.to_vec();
        all.extend(["--format", format]);
        env.run(&db, &all).ok().stdout
    };
    assert_eq!(run("jsonl").lines().count(), count);
    assert_eq!(csv_rows(&run("csv")).len(), count);
}

#[test]
fn no_rows_is_an_empty_output_in_every_machine_format() {
    let env = Env::new();
    let db = env.demo("demo.db");
    let search = |format: &str| {
        env.run(&db, &["search", "zzzznothing", "--format", format])
            .ok()
            .stdout
    };
    assert_eq!(search("json"), "[]\n");
    assert_eq!(search("jsonl"), "");
    assert_eq!(search("csv"), "");
}

#[test]
fn json_flag_with_another_format_is_a_usage_error() {
    let env = Env::new();
    let db = env.demo("demo.db");
    env.run(&db, &["--json", "sessions", "list", "--format", "csv"])
        .fails(2)
        .stderr_has("--json");
    env.run(&db, &["--json", "search", "weather", "--format", "json"])
        .ok();
}
