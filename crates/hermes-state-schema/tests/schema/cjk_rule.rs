//! The CJK index rules at open (`schema-v23.md` §6.6, §10): the
//! tokenizer-absent rule, a stale index kept stale until the explicit reset,
//! a pending backfill left alone.

use hermes_state_schema::rusqlite::{self, Connection};

use crate::common::*;
use crate::spec;

/// Inserts a message through `conn` and returns its id.
fn insert_message(conn: &Connection, role: &str, content: &str) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', ?1, ?2, 1.0)",
        [role, content],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Rowids the CJK index returns for an FTS5 query, in rowid order.
fn cjk_hits(conn: &Connection, query: &str) -> Vec<i64> {
    let mut stmt = conn
        .prepare(
            "SELECT rowid FROM messages_fts_cjk WHERE messages_fts_cjk MATCH ?1 ORDER BY rowid",
        )
        .expect("prepare");
    stmt.query_map([query], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn cjk_triggers(conn: &Connection) -> Vec<String> {
    strings(
        conn,
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name IN ('messages_fts_cjk_insert', 'messages_fts_cjk_delete', 'messages_fts_cjk_update') ORDER BY rowid",
    )
}

fn cjk_meta(conn: &Connection) -> Vec<(String, Option<String>)> {
    meta(conn)
        .into_iter()
        .filter(|(k, _)| k.starts_with("fts_cjk_"))
        .collect()
}

#[test]
fn cjk_rule_without_tokenizer_marks_stale() {
    let (_dir, path) = temp_db();
    drop(open(&path));

    // A process without the tokenizer (plain connection): every message write
    // fails because of the live CJK triggers (schema-v23.md §6.6, §10).
    let conn = plain(&path);
    conn.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1.0)",
        [],
    )
    .expect("sessions have no CJK trigger");
    let error = insert_message(&conn, "user", "before the rule")
        .expect_err("a message write reaches messages_fts_cjk");
    assert!(
        error
            .to_string()
            .contains("no such tokenizer: cjk_unicode61"),
        "error: {error}"
    );
    assert_eq!(count(&conn, "messages"), 0);

    // The tokenizer-absent rule, as the open would run it without the tokenizer.
    conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let setup = hermes_state_schema::fts::set_up(&conn, 6, false, false).expect("set_up");
    conn.execute_batch("COMMIT").expect("commit");
    assert!(setup.cjk_marked_stale, "{setup:?}");
    assert!(!setup.cjk_rebuilt, "{setup:?}");
    assert!(!setup.rebuilt, "all six triggers existed: {setup:?}");

    assert_eq!(
        cjk_meta(&conn),
        vec![("fts_cjk_stale".to_owned(), Some("1".to_owned()))]
    );
    assert!(
        cjk_triggers(&conn).is_empty(),
        "cjk triggers dropped: {:?}",
        cjk_triggers(&conn)
    );
    let kept: Vec<(String, String)> = master(&conn)
        .into_iter()
        .filter(|(_, ty, name, _, _, _)| spec::is_cjk_object(name) && ty != "trigger")
        .map(|(_, ty, name, _, _, _)| (ty, name))
        .collect();
    let expected_kept: Vec<(String, String)> = spec::CJK_INVENTORY
        .iter()
        .filter(|(_, ty, _, _)| *ty != "trigger")
        .map(|&(_, ty, name, _)| (ty.to_owned(), name.to_owned()))
        .collect();
    assert_eq!(
        kept, expected_kept,
        "the view and table (with shadows) are kept"
    );

    // Message writes work again on the tokenizer-less connection.
    let id = insert_message(&conn, "user", "after the rule").expect("message write");
    assert_eq!(count(&conn, "messages"), 1);
    let hits: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'rule'",
            [],
            |r| r.get(0),
        )
        .expect("fts query");
    assert_eq!((id, hits), (1, 1), "the base index still follows the write");

    // Nothing left to do for the rule the next time.
    conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let setup = hermes_state_schema::fts::set_up(&conn, 6, false, false).expect("set_up");
    conn.execute_batch("COMMIT").expect("commit");
    assert!(!setup.cjk_marked_stale, "{setup:?}");
    assert_eq!(
        cjk_meta(&conn),
        vec![("fts_cjk_stale".to_owned(), Some("1".to_owned()))]
    );
}

#[test]
fn stale_cjk_index_stays_stale_at_open_until_the_explicit_reset() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    conn.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1.0)",
        [],
    )
    .expect("session");
    let first = insert_message(&conn, "user", "数据库优化").expect("message");
    insert_message(&conn, "assistant", "plain english reply").expect("message");
    insert_message(&conn, "tool", "数据库 tool output").expect("message");
    assert_eq!(
        cjk_hits(&conn, "\"据库\""),
        vec![first],
        "the live index follows library writes (tool rows excluded)"
    );
    drop(conn);

    // The original without the tokenizer touched the file: it marked the
    // index stale, dropped the triggers, and wrote a message.
    let conn = plain(&path);
    conn.execute_batch(
        "INSERT INTO state_meta (key, value) VALUES ('fts_cjk_stale', '1');
         DROP TRIGGER messages_fts_cjk_insert;
         DROP TRIGGER messages_fts_cjk_delete;
         DROP TRIGGER messages_fts_cjk_update;",
    )
    .expect("stale by hand");
    let while_stale =
        insert_message(&conn, "user", "我们的数据库").expect("write without the tokenizer");

    // Our writable open (the original's connection still open) leaves it as it is.
    let master_before = master(&conn);
    let (ours, report) = open(&path);
    assert!(!report.fts.cjk_rebuilt, "{report:?}");
    assert!(!report.fts.cjk_marked_stale, "{report:?}");
    assert!(
        !report.fts.rebuilt,
        "the six base/trigram triggers are intact"
    );
    assert!(cjk_triggers(&ours).is_empty(), "no CJK trigger recreated");
    assert_eq!(
        cjk_meta(&ours),
        vec![("fts_cjk_stale".to_owned(), Some("1".to_owned()))]
    );
    let after_open = master(&ours);
    assert_eq!(
        after_open
            .iter()
            .filter(|row| row.2.contains("cjk"))
            .collect::<Vec<_>>(),
        master_before
            .iter()
            .filter(|row| row.2.contains("cjk"))
            .collect::<Vec<_>>(),
        "CJK objects unchanged"
    );
    // So the original keeps writing.
    insert_message(&conn, "user", "又一个数据库").expect("the original still writes");
    drop(conn);

    // Only the explicit reset rebuilds it, complete.
    ours.execute_batch("BEGIN IMMEDIATE").expect("begin");
    hermes_state_schema::fts::reset_cjk_index(&ours).expect("explicit reset");
    ours.execute_batch("COMMIT").expect("commit");
    assert!(cjk_meta(&ours).is_empty(), "markers: {:?}", cjk_meta(&ours));
    assert_eq!(cjk_triggers(&ours), spec::CJK_TRIGGERS.to_vec());
    for name in spec::CJK_TRIGGERS {
        let sql: String = ours
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .expect("trigger sql");
        assert_eq!(sql, spec::cjk_object_sql(name), "stored SQL of {name}");
    }
    let hits = cjk_hits(&ours, "\"据库\"");
    assert_eq!(
        hits.len(),
        3,
        "rows written while stale are indexed: {hits:?}"
    );
    assert_eq!(hits[..2], [first, while_stale]);
    ours.execute_batch("INSERT INTO messages_fts_cjk(messages_fts_cjk) VALUES('integrity-check')")
        .expect("integrity-check");
    let master_after = master(&ours);
    drop(ours);
    let (conn, report) = open(&path);
    assert!(!report.fts.cjk_rebuilt, "{report:?}");
    assert_eq!(master(&conn), master_after);
}

#[test]
fn pending_cjk_backfill_is_not_rebuilt_at_open() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    conn.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1.0)",
        [],
    )
    .expect("session");
    for (role, content) in [
        ("user", "数据库优化"),
        ("assistant", "hello"),
        ("user", "数据库迁移"),
    ] {
        insert_message(&conn, role, content).expect("message");
    }
    // A half-done backfill (schema-v23.md §6.6, §8): the index emptied, the
    // gate keys set, the triggers in place.
    conn.execute_batch(
        "INSERT INTO messages_fts_cjk(messages_fts_cjk) VALUES('delete-all');
         INSERT INTO state_meta (key, value) VALUES ('fts_cjk_rebuild_high_water', '3');
         INSERT INTO state_meta (key, value) VALUES ('fts_cjk_rebuild_progress', '0');",
    )
    .expect("pending backfill");
    let meta_before = cjk_meta(&conn);
    drop(conn);

    let (conn, report) = open(&path);
    assert!(!report.fts.cjk_rebuilt, "{report:?}");
    assert!(!report.fts.cjk_marked_stale, "{report:?}");
    assert_eq!(
        cjk_meta(&conn),
        meta_before,
        "the backfill is left to the explicit optimisation"
    );
    assert!(cjk_hits(&conn, "\"据库\"").is_empty());
    // Rows written now, above the high-water mark, are indexed by the live triggers.
    let later = insert_message(&conn, "user", "数据库备份").expect("message");
    assert_eq!(cjk_hits(&conn, "\"据库\""), vec![later]);
}
