//! The Telegram topic tables' schema rows (`api.md` §12.4): the original's
//! statement texts, whitespace included, as its traces' final dumps hold
//! them (`sqlite_master` keeps a CREATE statement as written); and its
//! one-time rebuild of a version-1 bindings table whose `session_id` key
//! lacks `ON DELETE CASCADE`.

use hermes_state::rusqlite::types::Value as Sql;

use crate::common::Store;
use hermes_state_core::store::Coordination;

/// `head (` + one line per item at `indent` spaces + `)` at `close` spaces.
fn create(head: &str, items: &[&str], indent: usize, close: usize) -> String {
    let pad = " ".repeat(indent);
    let body: Vec<String> = items.iter().map(|item| format!("{pad}{item}")).collect();
    format!("{head} (\n{}\n{})", body.join(",\n"), " ".repeat(close))
}

const MODE_COLUMNS: [&str; 10] = [
    "chat_id TEXT PRIMARY KEY",
    "user_id TEXT NOT NULL",
    "enabled INTEGER NOT NULL DEFAULT 1",
    "activated_at REAL NOT NULL",
    "updated_at REAL NOT NULL",
    "has_topics_enabled INTEGER",
    "allows_users_to_create_topics INTEGER",
    "capability_checked_at REAL",
    "intro_message_id TEXT",
    "pinned_message_id TEXT",
];

const BINDING_COLUMNS: [&str; 9] = [
    "chat_id TEXT NOT NULL",
    "thread_id TEXT NOT NULL",
    "user_id TEXT NOT NULL",
    "session_key TEXT NOT NULL",
    "session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE",
    "managed_mode TEXT NOT NULL DEFAULT 'auto'",
    "linked_at REAL NOT NULL",
    "updated_at REAL NOT NULL",
    "PRIMARY KEY (chat_id, thread_id)",
];

/// The original's schema rows `(type, name, sql)` of the topic objects,
/// ordered by type and name as the traces' dumps are; `rebuilt` for the
/// shape its v1 → v2 rebuild leaves (table renamed, so its name quoted,
/// and the rebuild script's deeper indentation).
fn expected_rows(rebuilt: bool) -> Vec<(String, String, Option<String>)> {
    let (bindings, index_indent) = if rebuilt {
        (
            create(
                "CREATE TABLE \"telegram_dm_topic_bindings\"",
                &BINDING_COLUMNS,
                28,
                24,
            ),
            28,
        )
    } else {
        (
            create(
                "CREATE TABLE telegram_dm_topic_bindings",
                &BINDING_COLUMNS,
                20,
                16,
            ),
            16,
        )
    };
    let pad = " ".repeat(index_indent);
    let row = |kind: &str, name: &str, sql: Option<String>| (kind.into(), name.into(), sql);
    vec![
        row(
            "index",
            "idx_telegram_dm_topic_bindings_session",
            Some(format!(
                "CREATE UNIQUE INDEX idx_telegram_dm_topic_bindings_session\n{pad}ON telegram_dm_topic_bindings(session_id)"
            )),
        ),
        row(
            "index",
            "idx_telegram_dm_topic_bindings_user",
            Some(format!(
                "CREATE INDEX idx_telegram_dm_topic_bindings_user\n{pad}ON telegram_dm_topic_bindings(user_id, chat_id)"
            )),
        ),
        row(
            "index",
            "sqlite_autoindex_telegram_dm_topic_bindings_1",
            None,
        ),
        row("index", "sqlite_autoindex_telegram_dm_topic_mode_1", None),
        row("table", "telegram_dm_topic_bindings", Some(bindings)),
        row(
            "table",
            "telegram_dm_topic_mode",
            Some(create(
                "CREATE TABLE telegram_dm_topic_mode",
                &MODE_COLUMNS,
                20,
                16,
            )),
        ),
    ]
}

fn topic_rows(s: &Store) -> Vec<(String, String, Option<String>)> {
    s.rows(
        "SELECT type, name, sql FROM sqlite_master WHERE name LIKE '%telegram_dm_topic%' \
         ORDER BY type, name",
        [],
    )
    .into_iter()
    .map(|row| match row.as_slice() {
        [Sql::Text(kind), Sql::Text(name), sql] => (
            kind.clone(),
            name.clone(),
            match sql {
                Sql::Text(sql) => Some(sql.clone()),
                _ => None,
            },
        ),
        other => panic!("unexpected schema row {other:?}"),
    })
    .collect()
}

#[test]
fn the_topic_tables_carry_the_originals_statement_texts() {
    let s = Store::new();
    s.db.apply_telegram_topic_migration().unwrap();
    assert_eq!(topic_rows(&s), expected_rows(false));
    // Applying again changes nothing.
    s.db.apply_telegram_topic_migration().unwrap();
    assert_eq!(topic_rows(&s), expected_rows(false));
}

/// A version-1 bindings table (its key without `ON DELETE CASCADE`, as
/// the original's first release created it).
const V1_BINDINGS: &str = "CREATE TABLE telegram_dm_topic_bindings (
    chat_id TEXT NOT NULL, thread_id TEXT NOT NULL, user_id TEXT NOT NULL,
    session_key TEXT NOT NULL, session_id TEXT NOT NULL REFERENCES sessions(id),
    managed_mode TEXT NOT NULL DEFAULT 'auto', linked_at REAL NOT NULL,
    updated_at REAL NOT NULL, PRIMARY KEY (chat_id, thread_id))";

#[test]
fn a_version_1_bindings_table_is_rebuilt_once_with_cascade() {
    // (stored topic schema version, whether the original rebuilds)
    let cases: [(Option<&str>, bool); 6] = [
        (None, true),
        (Some("1"), true),
        (Some("0"), true),
        (Some("v1"), true),
        (Some("2"), false),
        (Some("10"), false),
    ];
    for (version, rebuilds) in cases {
        let s = Store::new();
        s.session("s1");
        s.exec(V1_BINDINGS, []);
        s.exec(
            "INSERT INTO telegram_dm_topic_bindings VALUES ('c', 't', 'u', 'k', 's1', 'auto', 1.0, 2.0)",
            [],
        );
        if let Some(version) = version {
            s.exec(
                "INSERT INTO state_meta (key, value) VALUES ('telegram_dm_topic_schema_version', ?1)",
                [version],
            );
        }
        s.db.apply_telegram_topic_migration().unwrap();
        let on_delete = s.rows(
            "SELECT on_delete FROM pragma_foreign_key_list('telegram_dm_topic_bindings')",
            [],
        );
        let want = if rebuilds { "CASCADE" } else { "NO ACTION" };
        assert_eq!(on_delete, [[Sql::Text(want.into())]], "{version:?}");
        assert_eq!(
            s.count(
                "SELECT count(*) FROM telegram_dm_topic_bindings WHERE session_id = 's1'",
                []
            ),
            1,
            "{version:?}: the binding is kept"
        );
        if rebuilds {
            assert_eq!(topic_rows(&s), expected_rows(true), "{version:?}");
        }
        assert_eq!(
            s.db.get_meta("telegram_dm_topic_schema_version")
                .unwrap()
                .as_deref(),
            Some("2"),
            "{version:?}"
        );
    }
}
