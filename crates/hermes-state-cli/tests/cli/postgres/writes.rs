//! The writing commands on a PostgreSQL store print what they print for a
//! file: the same demo store on both, the same commands, the same stdout.

use crate::common::{Env, Run};
use hermes_state_testkit::PgSchema;

#[test]
fn writing_commands_on_postgresql_print_what_they_print_for_a_file() {
    let Some(schema) = PgSchema::new("cli", "writes") else {
        return;
    };
    let env = Env::new();
    // The same demo store twice (one clock for both): one moved to
    // PostgreSQL, one that stays a file.
    let demo = |name: &str| {
        let path = env.path(name);
        env.run_env(&path, &[("HERMES_STATE_NOW", "1767225600")], &["demo"]);
        path
    };
    let moved = demo("moved.db");
    env.run(&moved, &["migrate-to", schema.url()]).ok();
    let db = demo("demo.db");
    let pg = |args: &[&str]| {
        let mut all = vec!["--database-url", schema.url()];
        all.extend_from_slice(args);
        env.raw(&all, None)
    };
    let both = |args: &[&str]| -> (Run, Run) {
        let (file, server) = (env.run(&db, args), pg(args));
        assert_eq!(
            (file.code, &file.stdout),
            (server.code, &server.stdout),
            "{args:?}\nfile stderr: {}\nPostgreSQL stderr: {}",
            file.stderr,
            server.stderr
        );
        (file, server)
    };

    // Session arguments resolve as on a file: `latest`, an id prefix, an
    // ambiguous prefix (an error naming the candidates).
    both(&["sessions", "pin", "latest"]).1.ok();
    both(&["title", "get", "demo-refactor-s"])
        .1
        .ok()
        .stdout_has("serde experiment");
    both(&["title", "get", "demo-ref"])
        .1
        .fails(1)
        .stderr_has("is the start of several session ids");
    both(&["sessions", "create", "--id", "new-one", "--source", "cli"])
        .1
        .ok();
    both(&["sessions", "create", "--id", "new-one", "--source", "cli"])
        .1
        .ok()
        .stderr_has("already existed");
    both(&[
        "messages",
        "append",
        "new-one",
        "--role",
        "user",
        "--content",
        "hi",
    ])
    .1
    .ok();
    both(&[
        "--json",
        "messages",
        "append",
        "new-one",
        "--role",
        "assistant",
        "--tool-calls",
        r#"[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]"#,
    ])
    .1
    .ok();
    both(&[
        "messages",
        "append",
        "ghost",
        "--role",
        "user",
        "--content",
        "x",
    ])
    .1
    .fails(1)
    .stderr_has("does not exist");
    both(&["sessions", "end", "new-one", "--reason", "user_exit"])
        .1
        .ok()
        .stdout_has("ended session new-one (user_exit)");
    both(&["sessions", "end", "new-one", "--reason", "again"])
        .1
        .ok();
    both(&["sessions", "reopen", "new-one"]).1.ok();
    for args in [
        &["sessions", "archive", "demo-refactor"][..],
        &["--json", "sessions", "archive", "demo-refactor"][..],
        &["sessions", "unarchive", "demo-refactor"][..],
        &["sessions", "pin", "demo-paris"][..],
        &["sessions", "unpin", "demo-paris"][..],
        &["title", "next", "Weather in Paris"][..],
    ] {
        both(args).1.ok();
    }
    // Rewind to the first user message of a session, then restore it.
    let rows = pg(&["--json", "messages", "list", "demo-paris"])
        .ok()
        .json();
    let first_user = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()["id"]
        .to_string();
    both(&["sessions", "rewind", "demo-paris", "--to", &first_user])
        .1
        .ok()
        .stdout_has("rewound session demo-paris");
    both(&["sessions", "restore", "demo-paris"]).1.ok();
    both(&["sessions", "clear", "new-one", "--yes"])
        .1
        .ok()
        .stdout_has("2 message(s) deleted");
    both(&["sessions", "clear", "new-one"]).1.fails(2);
    // Prune: what would go, then going.
    both(&["sessions", "end", "demo-paris", "--reason", "done"])
        .1
        .ok();
    both(&["prune", "--any-age", "--dry-run"])
        .1
        .ok()
        .stdout_has("would prune");
    // (The JSON of a dry run holds whole rows, with the times each store's
    // own writes stamped: compared by what would go.)
    let dry = ["--json", "prune", "--any-age", "--dry-run"];
    let (file, server) = (env.run(&db, &dry).ok().json(), pg(&dry).ok().json());
    assert_eq!(
        (&file["ids"], &file["count"]),
        (&server["ids"], &server["count"])
    );
    both(&["prune", "--any-age", "--title-like", "Paris", "--yes"])
        .1
        .ok()
        .stdout_has("pruned");
    both(&["sessions", "delete", "new-one", "ghost", "--yes"])
        .1
        .fails(1)
        .stderr_has("\"ghost\" does not exist");
    both(&["--json", "sessions", "delete", "new-one", "--yes"])
        .1
        .ok();
    // Several at once, a delegate child going with its parent.
    both(&["sessions", "create", "--id", "x1", "--source", "cli"])
        .1
        .ok();
    both(&["sessions", "create", "--id", "x2", "--source", "cli"])
        .1
        .ok();
    both(&["sessions", "delete", "x1", "x2", "demo-refactor-2", "--yes"])
        .1
        .ok()
        .stdout_has("and 1 delegate session(s)");
    let ids = |list: serde_json::Value| crate::common::ids(&list);
    assert_eq!(
        ids(env.run(&db, &["--json", "sessions", "list"]).ok().json()),
        ids(pg(&["--json", "sessions", "list"]).ok().json())
    );

    // `--sessions-dir` removes the transcripts of what went, on both.
    let transcripts = |name: &str| {
        let dir = env.path(name);
        std::fs::create_dir(&dir).unwrap();
        for file in ["demo-refactor.json", "keep.json"] {
            std::fs::write(dir.join(file), "{}").unwrap();
        }
        dir
    };
    let (file_dir, pg_dir) = (
        transcripts("file-transcripts"),
        transcripts("pg-transcripts"),
    );
    let delete = |dir: &std::path::Path| {
        vec![
            "sessions".to_owned(),
            "delete".to_owned(),
            "demo-refactor".to_owned(),
            "--sessions-dir".to_owned(),
            dir.to_str().unwrap().to_owned(),
            "--yes".to_owned(),
        ]
    };
    let file_args = delete(&file_dir);
    let file = env.run(
        &db,
        &file_args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let mut pg_args = vec!["--database-url".to_owned(), schema.url().to_owned()];
    pg_args.extend(delete(&pg_dir));
    let server = env.raw(
        &pg_args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    assert_eq!((file.code, &file.stdout), (server.code, &server.stdout));
    server.ok();
    for dir in [&file_dir, &pg_dir] {
        assert!(
            !dir.join("demo-refactor.json").exists(),
            "{}",
            dir.display()
        );
        assert!(dir.join("keep.json").exists(), "{}", dir.display());
    }

    // The periodic upkeep, run by hand: the same report; then skipped on
    // the server, whose stamps are in its own state_meta.
    // (Without --no-vacuum the file says "then vacuumed" and the server
    // that autovacuum reclaims the space: the one difference.)
    both(&["maintenance", "auto", "--no-vacuum"])
        .1
        .ok()
        .stdout_has("auto prune: ran: pruned")
        .stdout_has("auto archive: ran: archived");
    pg(&["maintenance", "auto"])
        .ok()
        .stdout_has("auto prune: skipped: last ran")
        .stdout_has("auto archive: skipped: last ran");
    // Writes need a store and no --read-only.
    pg(&[
        "--read-only",
        "sessions",
        "end",
        "demo-refactor",
        "--reason",
        "x",
    ])
    .fails(2);
    let elsewhere = format!("{}x", schema.url());
    env.raw(
        &[
            "--database-url",
            &elsewhere,
            "sessions",
            "end",
            "a",
            "--reason",
            "x",
        ],
        None,
    )
    .fails(1)
    .stderr_has("holds no hermes-state store");
}
