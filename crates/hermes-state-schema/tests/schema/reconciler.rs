//! Existing files (`migrations.md` §2, §3.1, §4.6): the column reconciler
//! appends what is missing, keeps what is unknown, and heals old key shapes.

use std::collections::BTreeSet;

use crate::common::*;
use crate::spec;

#[test]
fn reconciler_appends_missing_columns_in_declared_order() {
    let (_dir, path) = temp_db();
    let v1_sessions = historical_table_ddl("sessions", &spec::V1_SESSIONS);
    let v1_messages = historical_table_ddl("messages", &spec::V1_MESSAGES);
    {
        let conn = plain(&path);
        conn.execute_batch(&historical_table_ddl("schema_version", &["version"]))
            .expect("schema_version");
        conn.execute_batch(&v1_sessions).expect("v1 sessions");
        conn.execute_batch(&v1_messages).expect("v1 messages");
        conn.execute_batch(
            "INSERT INTO schema_version (version) VALUES (23);
             INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1.5);
             INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'hello', 2.5);",
        )
        .expect("seed");
    }

    let (conn, report) = open(&path);
    assert_eq!(report.from_version, Some(23));
    let mut expected_added = Vec::new();
    for (table, v1) in [
        ("sessions", &spec::V1_SESSIONS[..]),
        ("messages", &spec::V1_MESSAGES[..]),
    ] {
        let spec_columns = spec::columns(table);
        let missing: Vec<&spec::Column> =
            spec_columns.iter().filter(|c| !v1.contains(&c.1)).collect();
        let order: Vec<&str> = v1
            .iter()
            .copied()
            .chain(missing.iter().map(|c| c.1))
            .collect();

        // Live order: the v1 columns, then the missing ones in declaration order,
        // each with the type / NOT NULL / default of the spec (schema-v23.md §9 item 1).
        let live = table_xinfo(&conn, table);
        let live_names: Vec<&str> = live.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(live_names, order, "column order of {table}");
        for (cid, name) in order.iter().enumerate() {
            let (_, _, ty, notnull, dflt, pk) = *spec_columns
                .iter()
                .find(|c| c.1 == *name)
                .expect("spec column");
            let want = (
                cid as i64,
                name.to_string(),
                ty.to_owned(),
                notnull,
                dflt.map(str::to_owned),
                pk,
                0,
            );
            assert_eq!(live[cid], want, "{table}.{name}");
        }

        // Stored text: `, "<name>" <definition>` spliced before the table
        // constraints, or before the closing parenthesis (§9 item 2).
        let spliced: String = missing
            .iter()
            .map(|c| format!(", \"{}\" {}", c.1, spec::reconciler_definition(c)))
            .collect();
        let stored_v1 = if table == "sessions" {
            &v1_sessions
        } else {
            &v1_messages
        }
        .replace(" IF NOT EXISTS", "");
        let expected_sql = match spec::constraint_line(table) {
            Some(constraint) => {
                let tail = format!(",\n    {constraint}\n)");
                format!(
                    "{}{spliced}{tail}",
                    stored_v1.strip_suffix(&tail).expect("v1 tail")
                )
            }
            None => format!(
                "{}{spliced})",
                stored_v1.strip_suffix(')').expect("v1 tail")
            ),
        };
        let stored: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .expect("sql");
        assert_eq!(stored, expected_sql, "stored CREATE TABLE text of {table}");
        expected_added.extend(missing.iter().map(|c| (table.to_owned(), c.1.to_owned())));
    }

    // Literal definitions from migrations.md §3.1 / schema-v23.md §9.
    let sessions_sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'sessions'",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    let messages_sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'messages'",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    for needle in [
        "output_tokens INTEGER DEFAULT 0, \"session_key\" TEXT, \"chat_id\" TEXT",
        "\"expiry_finalized\" INTEGER DEFAULT 0",
        "\"compression_fallback_streak\" INTEGER NOT NULL DEFAULT 0",
        "\"pinned\" INTEGER NOT NULL DEFAULT 0,\n    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)\n)",
    ] {
        assert!(
            sessions_sql.contains(needle),
            "sessions SQL lacks {needle:?}:\n{sessions_sql}"
        );
    }
    for needle in [
        "token_count INTEGER\n, \"effect_disposition\" TEXT, \"finish_reason\" TEXT, \"reasoning\" TEXT, \"reasoning_content\" TEXT",
        "\"observed\" INTEGER DEFAULT 0",
        "\"active\" INTEGER NOT NULL DEFAULT 1",
        "\"compacted\" INTEGER NOT NULL DEFAULT 0",
    ] {
        assert!(
            messages_sql.contains(needle),
            "messages SQL lacks {needle:?}:\n{messages_sql}"
        );
    }

    let added: Vec<(String, String)> = report
        .added_columns
        .iter()
        .map(|c| (c.table.clone(), c.column.clone()))
        .collect();
    assert_eq!(added, expected_added, "OpenReport.added_columns");

    // Existing rows take the defaults of the added columns.
    let (pinned, streak, expiry): (i64, i64, i64) = conn
        .query_row(
            "SELECT pinned, compression_fallback_streak, expiry_finalized FROM sessions WHERE id = 's1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("session");
    assert_eq!((pinned, streak, expiry), (0, 0, 0));
    let (active, compacted, observed): (i64, i64, i64) = conn
        .query_row(
            "SELECT active, compacted, observed FROM messages",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("message");
    assert_eq!((active, compacted, observed), (1, 0, 0));

    // Every v23 object exists now; the optional CJK index is not created
    // on an existing file (a running original may lack its tokenizer).
    let names: BTreeSet<String> = master(&conn).into_iter().map(|row| row.2).collect();
    for (_, _, name, _) in spec::INVENTORY.iter() {
        assert!(names.contains(*name), "{name} missing after the upgrade");
    }
    for (_, _, name, _) in spec::CJK_INVENTORY.iter() {
        assert!(!names.contains(*name), "{name} created on an existing file");
    }
    let sql_after_first = master(&conn);
    drop(conn);

    let (conn, report) = open(&path);
    assert!(
        report.added_columns.is_empty(),
        "second open adds nothing: {:?}",
        report.added_columns
    );
    assert_eq!(
        master(&conn),
        sql_after_first,
        "second open changes no schema object"
    );
}

#[test]
fn reconciler_keeps_unknown_columns_and_tables() {
    let (_dir, path) = store_edited_by_hand(
        "ALTER TABLE sessions ADD COLUMN last_activity_at REAL;
         CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
         INSERT INTO system_prompts VALUES ('h1', 'be nice');
         INSERT INTO sessions (id, source, started_at, last_activity_at) VALUES ('s1', 'cli', 1.0, 42.5);",
    );
    let (conn, report) = open(&path);
    assert!(
        report.added_columns.is_empty(),
        "{:?}",
        report.added_columns
    );
    let names: Vec<String> = table_xinfo(&conn, "sessions")
        .into_iter()
        .map(|c| c.1)
        .collect();
    assert_eq!(
        names.last().map(String::as_str),
        Some("last_activity_at"),
        "unknown column kept at the end"
    );
    assert_eq!(names.len(), spec::SESSIONS_COLUMNS.len() + 1);
    let value: f64 = conn
        .query_row(
            "SELECT last_activity_at FROM sessions WHERE id = 's1'",
            [],
            |r| r.get(0),
        )
        .expect("value");
    assert_eq!(value, 42.5);
    let prompt: String = conn
        .query_row(
            "SELECT prompt FROM system_prompts WHERE hash = 'h1'",
            [],
            |r| r.get(0),
        )
        .expect("table kept");
    assert_eq!(prompt, "be nice");
}

/// An early gateway_routing keyed on session_key alone (migrations.md §4.8).
const ROUTING_KEYED_BY_SESSION_KEY: &str = "DROP TABLE gateway_routing;
     CREATE TABLE gateway_routing (
         session_key TEXT PRIMARY KEY,
         entry_json TEXT NOT NULL,
         updated_at REAL NOT NULL
     );
     INSERT INTO gateway_routing VALUES ('k', '{}', 1.0);";

#[test]
fn reconciler_drops_not_null_on_primary_key_members() {
    // The reconciler adds `scope` without NOT NULL, as schema-v23.md §9 item 6
    // says. The open then heals this key shape (see the next test), which
    // replaces the table, so the reconciler step is checked on its own here.
    let (_dir, path) = store_edited_by_hand(ROUTING_KEYED_BY_SESSION_KEY);
    let conn = plain(&path);
    conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let added: Vec<(String, String)> = hermes_state_schema::reconcile::reconcile_columns(&conn)
        .expect("reconcile")
        .iter()
        .map(|c| (c.table.clone(), c.column.clone()))
        .collect();
    conn.execute_batch("COMMIT").expect("commit");
    assert_eq!(
        added,
        vec![("gateway_routing".to_owned(), "scope".to_owned())]
    );
    let sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'gateway_routing'",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    assert!(
        sql.ends_with(", \"scope\" TEXT DEFAULT '')"),
        "stored text: {sql}"
    );
    let scope = table_xinfo(&conn, "gateway_routing")
        .into_iter()
        .find(|c| c.1 == "scope")
        .expect("scope column");
    assert_eq!(
        scope,
        (
            3,
            "scope".to_owned(),
            "TEXT".to_owned(),
            0,
            Some("''".to_owned()),
            0,
            0
        )
    );
    let value: String = conn
        .query_row(
            "SELECT scope FROM gateway_routing WHERE session_key = 'k'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    assert_eq!(value, "");
}

#[test]
fn open_heals_routing_keyed_by_session_key() {
    // Through the open, the reconciler still reports `scope`, then the key heal
    // of later v23-era builds (migrations.md §4.8, §4.9) rebuilds the table
    // with the v23 text and key, keeping the row.
    let (_dir, path) = store_edited_by_hand(ROUTING_KEYED_BY_SESSION_KEY);
    let (conn, report) = open(&path);
    let added: Vec<(String, String)> = report
        .added_columns
        .iter()
        .map(|c| (c.table.clone(), c.column.clone()))
        .collect();
    assert_eq!(
        added,
        vec![("gateway_routing".to_owned(), "scope".to_owned())]
    );
    let sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'gateway_routing'",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    assert_eq!(sql, spec::object_sql("gateway_routing"));
    assert_eq!(
        table_xinfo(&conn, "gateway_routing"),
        expected_xinfo(spec::GATEWAY_ROUTING_COLUMNS)
    );
    assert!(
        strings(
            &conn,
            "SELECT name FROM sqlite_master WHERE name = 'gateway_routing_legacy_pk'"
        )
        .is_empty(),
        "the renamed old table is dropped"
    );
    let row: (String, String, String, f64) = conn
        .query_row(
            "SELECT scope, session_key, entry_json, updated_at FROM gateway_routing",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .expect("the row is kept");
    assert_eq!(row, (String::new(), "k".to_owned(), "{}".to_owned(), 1.0));
    assert_eq!(count(&conn, "gateway_routing"), 1);
}
