//! Every `hermes-state …` command the documentation and the program's own
//! messages name exists: `hermes-state COMMAND [SUBCOMMAND] --help` succeeds
//! for each. (Hints once sent users to a `hermes-state repair` that never
//! existed; the command is `doctor --repair`.)
//!
//! Read: the README at the repository's root and the Markdown under
//! `docs/` (backquoted spans, and the command lines of fenced blocks), and
//! every backquoted span in the library and program sources of the crates
//! (`crates/*/src`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::Env;

/// Global options that take a value.
const VALUED: &[&str] = &["--db", "--database-url", "--latest-source"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_under(dir: &Path, ext: &str, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                files_under(&path, ext, into);
            }
        } else if path.extension().is_some_and(|e| e == ext) {
            into.push(path);
        }
    }
}

/// The text after `hermes-state ` of every backquoted span, and (Markdown)
/// of every command line of a fenced block.
fn invocations(text: &str, markdown: bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("`hermes-state ") {
        rest = &rest[at + "`hermes-state ".len()..];
        let end = rest.find('`').unwrap_or(rest.len());
        found.push(rest[..end].to_owned());
    }
    if markdown {
        let mut fenced = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if !fenced {
                continue;
            }
            let line = line.trim().trim_start_matches("$ ");
            // Leading environment assignments (`TZ=UTC hermes-state …`).
            let words: Vec<&str> = line
                .split_whitespace()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .collect();
            if words.first() == Some(&"hermes-state") {
                found.push(words[1..].join(" "));
            }
        }
    }
    found
}

/// The command path an invocation names: up to two lowercase words after
/// the global options (`sessions list`, `doctor`, `search bike`).
fn command_path(invocation: &str) -> Vec<String> {
    let mut words = invocation.split_whitespace().peekable();
    let mut path = Vec::new();
    while let Some(word) = words.next() {
        if word.starts_with('-') {
            if VALUED.contains(&word) {
                words.next();
            }
            if path.is_empty() {
                continue;
            }
            break;
        }
        let is_word = word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !is_word || path.len() == 2 {
            break;
        }
        path.push(word.to_owned());
    }
    path
}

#[test]
fn every_command_the_docs_and_messages_name_exists() {
    let root = repository();
    let mut markdown = vec![root.join("README.md")];
    files_under(&root.join("docs"), "md", &mut markdown);
    let mut sources = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).expect("list the crates") {
        files_under(
            &krate.expect("a crate").path().join("src"),
            "rs",
            &mut sources,
        );
    }
    let mut named: BTreeSet<(Vec<String>, String)> = BTreeSet::new();
    for (files, is_markdown) in [(&markdown, true), (&sources, false)] {
        for file in files {
            let text = std::fs::read_to_string(file).expect("read a file");
            let shown = file
                .strip_prefix(&root)
                .unwrap_or(file)
                .display()
                .to_string();
            for invocation in invocations(&text, is_markdown) {
                let path = command_path(&invocation);
                if !path.is_empty() {
                    named.insert((path, shown.clone()));
                }
            }
        }
    }
    assert!(
        named.iter().any(|(path, _)| path == &["doctor"]),
        "the scan found the commands: {named:?}"
    );
    let env = Env::new();
    let mut checked = BTreeSet::new();
    let mut missing = Vec::new();
    for (path, file) in &named {
        if !checked.insert(path.clone()) {
            continue;
        }
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let run = env.raw(&args, None);
        if run.code != 0 {
            missing.push(format!(
                "`hermes-state {}` (named in {file}): {}",
                path.join(" "),
                run.stderr.lines().next().unwrap_or_default()
            ));
        }
    }
    assert!(missing.is_empty(), "\n{}", missing.join("\n"));
}

/// `where` (alias `path`) prints the store's location and opens nothing:
/// the file's absolute path (nothing created for a missing one), or the
/// server URL without its password.
#[test]
fn where_prints_the_location_and_opens_nothing() {
    let env = Env::new();
    let db = env.demo("here.db");
    let shown = env.run(&db, &["where"]).ok().stdout;
    assert_eq!(
        shown.trim(),
        std::path::absolute(&db).unwrap().display().to_string()
    );
    let value = env.json(&db, &["path"]);
    assert_eq!(value["backend"], "sqlite");
    assert_eq!(value["exists"], true);
    let missing = env.path("not-yet.db");
    env.run(&missing, &["where"])
        .ok()
        .stderr_has("no store there yet");
    assert!(!missing.exists(), "where created the file");
    let url = "postgresql://alice:s3cret@127.0.0.1:1/db?schema=x";
    let run = env.raw(&["--database-url", url, "where"], None).ok();
    assert_eq!(
        run.stdout.trim(),
        "postgresql://alice@127.0.0.1:1/db?schema=x"
    );
    assert!(!run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"));
}

/// `query "SQL"` runs one statement that only reads, on a read-only
/// connection: rows as a table or JSON; a statement that could write, or
/// more than one, is refused and the file stays byte-identical.
#[test]
fn query_runs_one_read_only_statement_and_refuses_writes() {
    let env = Env::new();
    let db = env.demo("q.db");
    let table = env
        .run(
            &db,
            &[
                "query",
                "SELECT id, message_count FROM sessions WHERE id = 'demo-paris'",
            ],
        )
        .ok()
        .stdout;
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["id", "message_count"]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["demo-paris", "6"]
    );
    let rows = env.json(
        &db,
        &["query", "SELECT count(*) AS n, x'00ff' AS b FROM messages"],
    );
    assert_eq!(
        rows,
        serde_json::json!([{"n": 30, "b": {"blob_hex": "00ff"}}])
    );
    let before = std::fs::read(&db).unwrap(); // tidy: not the live database (a test's closed copy)
    for refused in [
        "DELETE FROM sessions",
        "PRAGMA journal_mode=DELETE",
        "SELECT 1; DELETE FROM sessions",
        "ATTACH 'other.db' AS o",
    ] {
        env.run(&db, &["query", refused]).fails(1);
    }
    env.run(&db, &["query", "SELEC 1"])
        .fails(1)
        .stderr_has("syntax error");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "a refused query changed the file"
    ); // tidy: not the live database
    let capped = env.json(&db, &["query", "SELECT id FROM messages", "--limit", "5"]);
    assert_eq!(capped.as_array().map(Vec::len), Some(5));
}

/// A session the agent ended by compression says where its conversation
/// goes on; `--lineage` shows the whole chain, root to tip, as one
/// conversation (JSON: one export-shaped object per segment).
#[test]
fn a_compressed_session_points_to_its_continuation_and_lineage_shows_the_chain() {
    let env = Env::new();
    let db = env.demo("l.db");
    env.run(&db, &["sessions", "show", "demo-refactor", "--no-pager"])
        .ok()
        .stdout_has("continues in demo-refactor-2 (`hermes-state sessions show demo-refactor-2`");
    let tip = env
        .run(&db, &["sessions", "show", "demo-refactor-2", "--no-pager"])
        .ok()
        .stdout;
    assert!(
        !tip.contains("continues in"),
        "the tip has no continuation: {tip}"
    );
    let whole = env
        .run(
            &db,
            &[
                "sessions",
                "show",
                "demo-refactor-2",
                "--lineage",
                "--no-pager",
            ],
        )
        .ok()
        .stdout;
    let first = whole
        .find("segment 1 of 2: demo-refactor ")
        .expect("the root first");
    let second = whole
        .find("segment 2 of 2: demo-refactor-2")
        .expect("then the tip");
    assert!(first < second, "{whole}");
    let segments = env.json(&db, &["sessions", "show", "demo-refactor", "--lineage"]);
    let ids: Vec<&str> = segments
        .as_array()
        .expect("an array")
        .iter()
        .map(|s| s["id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(ids, ["demo-refactor", "demo-refactor-2"]);
    assert!(
        segments[0]["messages"]
            .as_array()
            .is_some_and(|m| !m.is_empty())
    );
}

/// `export --session ID --lineage` writes the whole compression chain:
/// Markdown, one document per segment root first; JSON Lines, each
/// segment's session record; plain JSON refuses (exit 2).
#[test]
fn export_of_a_lineage_writes_every_segment_root_first() {
    let env = Env::new();
    let db = env.demo("e.db");
    let markdown = env
        .run(
            &db,
            &[
                "export",
                "--session",
                "demo-refactor-2",
                "--lineage",
                "--format",
                "markdown",
            ],
        )
        .ok()
        .stdout;
    let root = markdown
        .find("# Refactor the config parser\n")
        .expect("the root's document");
    let tip = markdown
        .find("# Refactor the config parser #2\n")
        .expect("the tip's document");
    assert!(root < tip, "{markdown}");
    assert!(
        markdown[root..tip].contains("\n---\n"),
        "segments under a rule"
    );
    let lines = env
        .run(
            &db,
            &[
                "export",
                "--session",
                "demo-refactor",
                "--lineage",
                "--format",
                "jsonl",
            ],
        )
        .ok()
        .stdout;
    let sessions: Vec<String> = lines
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|record| record["type"] == "session")
        .filter_map(|record| record["id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(sessions, ["demo-refactor", "demo-refactor-2"], "{lines}");
    env.run(&db, &["export", "--session", "demo-refactor", "--lineage"])
        .fails(2);
}
