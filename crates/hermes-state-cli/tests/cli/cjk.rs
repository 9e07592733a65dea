//! The optional CJK index from the command line: created only in stores this
//! tool creates, never on an existing store except by `fts rebuild-cjk`
//! (which warns first), and never at all under `HERMES_CJK_FTS=0`.

use std::path::Path;

use hermes_state::rusqlite::{Connection, OpenFlags};
use xtask::fixtures::{Shape, write_fixture};

use crate::common::Env;

/// Names of the CJK objects in the store (view, table, triggers).
fn cjk_objects(db: &Path) -> Vec<String> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("inspect");
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE name IN ('messages_fts_cjk', 'messages_fts_cjk_src', 'messages_fts_cjk_insert', 'messages_fts_cjk_delete', 'messages_fts_cjk_update') ORDER BY name")
        .expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

const CJK_OBJECTS: [&str; 5] = [
    "messages_fts_cjk",
    "messages_fts_cjk_delete",
    "messages_fts_cjk_insert",
    "messages_fts_cjk_src",
    "messages_fts_cjk_update",
];

#[test]
fn a_store_this_tool_creates_carries_the_cjk_index_unless_switched_off() {
    let env = Env::new();
    let with = env.demo("with.db");
    assert_eq!(cjk_objects(&with), CJK_OBJECTS);

    for off in ["0", "false", " OFF ", "no"] {
        let db = env.path(&format!("without-{}.db", off.trim()));
        let mut cmd = env.command();
        cmd.env("HERMES_CJK_FTS", off)
            .args(["--db", db.to_str().expect("utf-8"), "demo"]);
        let output = cmd.output().expect("run");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(cjk_objects(&db).is_empty(), "HERMES_CJK_FTS={off:?}");
    }
}

#[test]
fn writing_to_an_existing_store_never_creates_the_cjk_index_only_rebuild_cjk_does() {
    let env = Env::new();
    let db = env.path("state.db");
    write_fixture(&db, Shape::V23).expect("a v23 store as the original leaves it");
    env.run(
        &db,
        &["sessions", "create", "--source", "cli", "--id", "mine"],
    )
    .ok();
    env.run(
        &db,
        &[
            "messages",
            "append",
            "mine",
            "--role",
            "user",
            "--content",
            "数据库迁移",
        ],
    )
    .ok();
    assert!(
        cjk_objects(&db).is_empty(),
        "no CJK index on an existing store"
    );

    let run = env.run(&db, &["fts", "rebuild-cjk"]).ok();
    assert!(
        run.stderr.contains("needs the cjk_unicode61 tokenizer"),
        "the opt-in warns first: {}",
        run.stderr
    );
    assert_eq!(cjk_objects(&db), CJK_OBJECTS);
    // A 2-character CJK query is served by the new index (marked snippets;
    // the LIKE route, the only other one for it, returns raw text).
    let found = env.json(&db, &["search", "据库"]);
    let hits = found.as_array().expect("hits");
    let mine = hits
        .iter()
        .find(|hit| hit["session_id"] == "mine")
        .unwrap_or_else(|| panic!("our message is found: {found}"));
    assert_eq!(mine["snippet"], "数>>>据库<<<迁移", "{found}");
}

#[test]
fn rebuild_cjk_is_refused_when_the_tokenizer_is_switched_off() {
    let env = Env::new();
    let db = env.path("state.db");
    write_fixture(&db, Shape::V23).expect("fixture");
    let mut cmd = env.command();
    cmd.env("HERMES_CJK_FTS", "off").args([
        "--db",
        db.to_str().expect("utf-8"),
        "fts",
        "rebuild-cjk",
    ]);
    let output = cmd.output().expect("run");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("HERMES_CJK_FTS"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(cjk_objects(&db).is_empty());
}
