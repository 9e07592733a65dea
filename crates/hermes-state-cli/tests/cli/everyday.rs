//! The everyday command line: shell completions, the man page, confirmation
//! of commands that delete, and the closed set of `--role` values.

use hermes_state::prelude::*;
use std::path::Path;

use hermes_state::{NewSession, SessionDb};

use crate::common::Env;

fn session_count(db: &Path) -> i64 {
    SessionDb::open_read_only(db)
        .expect("open")
        .session_count(&hermes_state::SessionCountOptions::all())
        .expect("count")
}

fn message_count(db: &Path, id: &str) -> i64 {
    SessionDb::open_read_only(db)
        .expect("open")
        .message_count(Some(id))
        .expect("count")
}

#[test]
fn completion_scripts_name_the_commands() {
    let env = Env::new();
    // No store is needed, nor created.
    let db = env.path("none.db");
    for shell in ["bash", "zsh", "fish"] {
        let run = env.run(&db, &["completions", shell]).ok();
        assert!(run.stdout.len() > 1000, "{shell}: {}", run.stdout);
        for word in [
            "hermes-state",
            "sessions",
            "prune",
            "search",
            "--older-than-days",
        ] {
            assert!(run.stdout.contains(word), "{shell} completion lacks {word}");
        }
    }
    env.run(&db, &["completions", "cmd.exe"]).fails(2);
    assert!(!db.exists());
}

#[test]
fn the_man_page_is_roff_naming_every_command() {
    let env = Env::new();
    let db = env.path("none.db");
    let page = env.run(&db, &["man"]).ok().stdout;
    assert!(page.contains(".TH hermes-state 1"), "{page}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH COMMANDS"] {
        assert!(page.contains(section), "no {section}");
    }
    for command in [
        "hermes\\-state sessions delete",
        "hermes\\-state prune",
        "hermes\\-state search",
        "hermes\\-state completions",
    ] {
        assert!(page.contains(command), "the page lacks {command}");
    }
    assert!(page.contains("\\-\\-yes"));
    // Only one page: no pointers to per-command pages that do not exist.
    assert!(!page.contains("hermes\\-state\\-sessions(1)"));
    assert!(!db.exists());
}

#[test]
fn prune_without_yes_deletes_nothing_when_it_cannot_ask() {
    let env = Env::new();
    let db = env.demo("d.db");
    let before = session_count(&db);
    for args in [
        &["prune", "--any-age"][..],
        &["--json", "prune", "--any-age"],
        &["-q", "prune", "--older-than-days", "0"],
    ] {
        env.run(&db, args)
            .fails(2)
            .one_error_line()
            .stderr_has("--yes")
            .stderr_has("not a terminal");
    }
    assert_eq!(session_count(&db), before);
    // A dry run deletes nothing, so it needs no consent.
    env.run(&db, &["prune", "--any-age", "--dry-run"])
        .ok()
        .stdout_has("would prune");
    env.run(&db, &["prune", "--any-age", "-y"])
        .ok()
        .stdout_has("pruned");
    assert!(session_count(&db) < before);
}

#[test]
fn delete_and_clear_without_yes_delete_nothing() {
    let env = Env::new();
    let db = env.demo("d.db");
    let before = session_count(&db);
    let messages = message_count(&db, "demo-paris");
    assert!(messages > 0);
    for args in [
        &["sessions", "delete", "demo-paris"][..],
        &["sessions", "rm", "demo-paris", "demo-tokyo"],
        &["sessions", "clear", "demo-paris"],
    ] {
        env.run(&db, args)
            .fails(2)
            .one_error_line()
            .stderr_has("pass --yes");
    }
    assert_eq!(session_count(&db), before);
    assert_eq!(message_count(&db, "demo-paris"), messages);
    // --read-only is the first thing said, --yes or not.
    env.run(&db, &["--read-only", "sessions", "clear", "demo-paris"])
        .fails(2)
        .stderr_has("--read-only");
}

#[test]
fn import_overwrite_without_yes_replaces_nothing() {
    let env = Env::new();
    let db = env.demo("d.db");
    let export = env.path("all.jsonl");
    let export_arg = export.to_str().expect("utf-8");
    env.run(&db, &["export", "--format", "jsonl", "-o", export_arg])
        .ok();
    env.run(&db, &["title", "set", "demo-paris", "Changed meanwhile"])
        .ok();
    env.run(&db, &["import", "--overwrite", export_arg])
        .fails(2)
        .one_error_line()
        .stderr_has("--yes");
    let text = std::fs::read_to_string(&export).expect("read");
    env.run_stdin(&db, &["import", "--overwrite", "-"], Some(&text))
        .fails(2)
        .one_error_line()
        .stderr_has("--yes");
    env.run(&db, &["title", "get", "demo-paris"])
        .ok()
        .stdout_has("Changed meanwhile");
    // Without --overwrite nothing is replaced, so nothing is asked.
    env.run(&db, &["import", export_arg]).ok();
    env.run(&db, &["import", "--overwrite", "--yes", export_arg])
        .ok();
    let title = env.run(&db, &["title", "get", "demo-paris"]).ok().stdout;
    assert!(!title.contains("Changed meanwhile"), "{title}");
}

#[test]
fn many_pruned_sessions_are_summarised_not_listed() {
    let env = Env::new();
    let db = env.path("many.db");
    {
        let store = SessionDb::open(&db).expect("open");
        for i in 0..13 {
            let id = format!("old-{i:02}");
            store
                .create_session(&NewSession::new(&id, "cli"))
                .expect("create");
            store.end_session(&id, "user_exit").expect("end");
        }
    }
    let run = env.run(&db, &["prune", "--any-age", "--yes"]).ok();
    assert!(
        run.stdout
            .contains("pruned 13 ended sessions of any age: first 10 ids old-"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("; 3 more"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("old-").count(), 10, "{}", run.stdout);
    assert_eq!(session_count(&db), 0);
}

#[test]
fn roles_are_the_agents_four_unless_role_any() {
    let env = Env::new();
    let db = env.demo("d.db");
    for args in [
        &[
            "messages",
            "append",
            "demo-paris",
            "--role",
            "asistant",
            "--content",
            "x",
        ][..],
        &["search", "paris", "--role", "User"],
        &["messages", "append", "demo-paris", "--content", "x"],
        &[
            "messages",
            "append",
            "demo-paris",
            "--role",
            "user",
            "--role-any",
            "x",
            "--content",
            "x",
        ],
    ] {
        env.run(&db, args).fails(2);
    }
    for role in ["system", "user", "assistant", "tool"] {
        env.run(
            &db,
            &[
                "messages",
                "append",
                "demo-paris",
                "--role",
                role,
                "--content",
                "hello",
            ],
        )
        .ok();
    }
    env.run(
        &db,
        &[
            "messages",
            "append",
            "demo-paris",
            "--role-any",
            "session_meta",
            "--content",
            "zanzibar marker",
        ],
    )
    .ok();
    let hits = env.json(&db, &["search", "zanzibar", "--role-any", "session_meta"]);
    assert_eq!(hits.as_array().map(Vec::len), Some(1), "{hits}");
    let none = env.json(&db, &["search", "zanzibar", "--role", "user"]);
    assert_eq!(none.as_array().map(Vec::len), Some(0), "{none}");
}

#[test]
fn no_color_keeps_piped_output_plain() {
    let env = Env::new();
    let db = env.demo("d.db");
    // Piped output never has styles; NO_COLOR must not change what is printed.
    let plain = env.run(&db, &["search", "paris"]).ok().stdout;
    let mut cmd = env.command();
    cmd.env("NO_COLOR", "1")
        .args(["--db", db.to_str().expect("utf-8"), "search", "paris"]);
    let output = cmd.output().expect("run");
    assert!(output.status.success());
    let no_color = String::from_utf8_lossy(&output.stdout);
    assert_eq!(no_color, plain);
    assert!(!no_color.contains('\x1b'));
}
