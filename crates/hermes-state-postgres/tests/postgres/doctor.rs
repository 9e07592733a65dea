//! The doctor on PostgreSQL: a healthy store reports nothing; a store
//! damaged on purpose (an index dropped, a counter skewed, an orphan
//! inserted behind the foreign keys' back, …) reports each damage; the
//! doctor never writes; the counter repair fixes counters in one write.

use hermes_state_core::prelude::*;
use hermes_state_postgres::health::TrigramIndex;
use hermes_state_postgres::{PgStore, TRIGRAM_INDEX, known_step};
use hermes_state_types::{NewMessage, NewSession};
use serde_json::json;

use crate::common::TestSchema;

/// A store with a lineage, a title, tool calls and tool results.
fn populated(schema: &TestSchema) -> PgStore {
    let store = PgStore::open(&schema.url).unwrap();
    store
        .create_session(&NewSession::new("root", "cli"))
        .unwrap();
    store
        .create_session(&NewSession::new("child", "cli").parent_session_id("root"))
        .unwrap();
    store.set_session_title("root", Some("Root")).unwrap();
    store
        .append_message(&NewMessage::new("root", "user").content("hello"))
        .unwrap();
    store
        .append_message(&NewMessage::new("root", "assistant").tool_calls(json!([
            {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "pwd", "arguments": "{}"}},
            {"id": "c", "type": "function", "function": {"name": "df", "arguments": "{}"}}
        ])))
        .unwrap();
    store
        .append_message(
            &NewMessage::new("root", "tool")
                .content("files")
                .tool_result("ls", "a"),
        )
        .unwrap();
    store
        .append_message(&NewMessage::new("child", "user").content("more"))
        .unwrap();
    store
}

/// Runs SQL on the test schema as the server's superuser.
fn damage(schema: &TestSchema, sql: &str) {
    schema
        .client()
        .batch_execute(&format!(
            "SET search_path TO \"{}\"; {sql}",
            schema.url.schema()
        ))
        .unwrap();
}

#[test]
fn a_healthy_store_reports_nothing() {
    let Some(schema) = TestSchema::new("doctor healthy") else {
        return;
    };
    let store = populated(&schema);
    let report = store.doctor().unwrap();
    assert!(report.is_healthy(), "{report:#?}");
    assert_eq!(report.problem_count(), 0);
    assert!(report.missing.is_empty() && report.wrong.is_empty());
    assert!(report.counters.is_empty(), "{:?}", report.counters);
    assert_eq!(report.steps.applied, Some(known_step()));
    assert_eq!(report.steps.known, known_step());
    assert!(!report.steps.too_new());
    assert_eq!(report.steps.data_model, [23]);
    assert_eq!(report.trigram, TrigramIndex::Present);
    assert_eq!(report.rows_skipped, None);
    assert_eq!(report.superseded, None);
    assert_eq!(report.schema, schema.url.schema());
    // It serialises, as the SQLite doctor's report does.
    let value = serde_json::to_value(&report).unwrap();
    assert_eq!(value["steps"]["data_model"], json!([23]));
}

#[test]
fn dropped_indexes_and_the_duplicate_titles_they_let_in_are_reported() {
    let Some(schema) = TestSchema::new("doctor indexes") else {
        return;
    };
    let store = populated(&schema);
    damage(
        &schema,
        "DROP INDEX idx_messages_search_vector; DROP INDEX idx_sessions_title_unique; \
         UPDATE sessions SET title = 'Root' WHERE id = 'child'",
    );
    let report = store.doctor().unwrap();
    assert_eq!(
        report.missing,
        [
            "index idx_sessions_title_unique",
            "index idx_messages_search_vector"
        ]
    );
    assert_eq!(report.duplicate_titles.len(), 1);
    assert_eq!(report.duplicate_titles[0].title, "Root");
    assert_eq!(report.duplicate_titles[0].holders, ["root", "child"]);
    assert_eq!(report.problem_count(), 3);
}

#[test]
fn an_index_of_the_wrong_kind_and_a_plain_search_column_are_reported() {
    let Some(schema) = TestSchema::new("doctor wrong objects") else {
        return;
    };
    let store = populated(&schema);
    damage(
        &schema,
        "DROP INDEX idx_sessions_title_unique; \
         CREATE INDEX idx_sessions_title_unique ON sessions USING hash (title); \
         ALTER TABLE messages DROP COLUMN search_vector; \
         ALTER TABLE messages ADD COLUMN search_vector TEXT",
    );
    let report = store.doctor().unwrap();
    assert_eq!(
        report.missing,
        ["index idx_messages_search_vector"],
        "the GIN index went with the column"
    );
    assert_eq!(report.wrong.len(), 2, "{:?}", report.wrong);
    assert!(
        report
            .wrong
            .iter()
            .any(|w| w == "index idx_sessions_title_unique is not unique, uses hash, not btree"),
        "{:?}",
        report.wrong
    );
    assert!(
        report
            .wrong
            .iter()
            .any(|w| w
                .starts_with("column messages.search_vector is text, not a generated tsvector")),
        "{:?}",
        report.wrong
    );
}

#[test]
fn a_missing_or_wrong_gram_index_is_reported() {
    let Some(schema) = TestSchema::new("doctor gram index") else {
        return;
    };
    let store = populated(&schema);
    damage(&schema, "DROP INDEX idx_messages_cjk_grams");
    let report = store.doctor().unwrap();
    assert_eq!(report.missing, ["index idx_messages_cjk_grams"]);
    assert!(report.wrong.is_empty(), "{:?}", report.wrong);
    damage(
        &schema,
        "CREATE INDEX idx_messages_cjk_grams ON messages (content)",
    );
    let report = store.doctor().unwrap();
    assert!(report.missing.is_empty(), "{:?}", report.missing);
    assert_eq!(
        report.wrong,
        ["index idx_messages_cjk_grams uses btree, not gin"]
    );
}

#[test]
fn a_missing_column_a_key_and_a_table_are_reported_and_row_checks_skipped() {
    let Some(schema) = TestSchema::new("doctor missing objects") else {
        return;
    };
    let store = populated(&schema);
    damage(
        &schema,
        "ALTER TABLE messages DROP CONSTRAINT messages_session_id_fkey; \
         ALTER TABLE sessions DROP COLUMN pinned; \
         DROP TABLE compression_locks; \
         ALTER TABLE sessions DROP COLUMN tool_call_count",
    );
    let report = store.doctor().unwrap();
    for expected in [
        "foreign key messages (session_id) -> sessions",
        "column sessions.pinned",
        "column sessions.tool_call_count",
        "table compression_locks",
    ] {
        assert!(
            report.missing.iter().any(|m| m == expected),
            "{expected} not in {:?}",
            report.missing
        );
    }
    assert!(
        report
            .rows_skipped
            .as_deref()
            .is_some_and(|why| why.contains("sessions.tool_call_count")),
        "{:?}",
        report.rows_skipped
    );
    assert!(!report.is_healthy());
}

#[test]
fn skewed_counters_are_reported_and_the_old_rule_is_told_apart() {
    let Some(schema) = TestSchema::new("doctor counters") else {
        return;
    };
    let store = populated(&schema);
    // `root`: 3 live rows, 3 tool calls by today's rule; the old rule
    // counted 2 (one message with calls, one tool result).
    damage(
        &schema,
        "UPDATE sessions SET message_count = 99 WHERE id = 'child'; \
         UPDATE sessions SET tool_call_count = 2 WHERE id = 'root'",
    );
    let report = store.doctor().unwrap();
    assert_eq!(report.counters.len(), 2, "{:?}", report.counters);
    let child = report
        .counters
        .iter()
        .find(|c| c.session_id == "child")
        .unwrap();
    assert_eq!(
        (child.message_count, child.real_message_count),
        (Some(99), 1)
    );
    assert!(!child.counted_by_old_rule);
    let root = report
        .counters
        .iter()
        .find(|c| c.session_id == "root")
        .unwrap();
    assert_eq!(
        (root.tool_call_count, root.real_tool_call_count),
        (Some(2), 3)
    );
    assert!(root.counted_by_old_rule, "{root:?}");
    assert_eq!(report.problem_count(), 1, "the old rule is not damage");
}

#[test]
fn orphans_dangling_parents_and_cycles_are_reported() {
    let Some(schema) = TestSchema::new("doctor lineage") else {
        return;
    };
    let store = populated(&schema);
    store.create_session(&NewSession::new("a", "cli")).unwrap();
    store.create_session(&NewSession::new("b", "cli")).unwrap();
    // Behind the foreign keys' back, as a restore with triggers disabled does.
    damage(
        &schema,
        "SET session_replication_role = replica; \
         INSERT INTO messages (session_id, role, content, timestamp) VALUES ('gone', 'user', 'x', 1), ('gone', 'user', 'y', 2); \
         UPDATE sessions SET parent_session_id = 'missing' WHERE id = 'child'; \
         SET session_replication_role = origin; \
         UPDATE sessions SET parent_session_id = 'b' WHERE id = 'a'; \
         UPDATE sessions SET parent_session_id = 'a' WHERE id = 'b'",
    );
    let report = store.doctor().unwrap();
    assert_eq!(report.orphaned_messages.len(), 1);
    assert_eq!(report.orphaned_messages[0].session_id, "gone");
    assert_eq!(report.orphaned_messages[0].messages, 2);
    assert_eq!(report.dangling_parents.len(), 1);
    assert_eq!(report.dangling_parents[0].session_id, "child");
    assert_eq!(report.dangling_parents[0].missing_parent, "missing");
    assert_eq!(report.cycles.len(), 1);
    let mut members = report.cycles[0].sessions.clone();
    members.sort();
    assert_eq!(members, ["a", "b"]);
    assert_eq!(report.cycles[0].closing, "a", "the older one closes it");
    assert_eq!(report.problem_count(), 3);
}

#[test]
fn a_newer_a_divergent_and_a_moved_store_are_told() {
    let Some(schema) = TestSchema::new("doctor steps") else {
        return;
    };
    let store = populated(&schema);
    store
        .set_meta("superseded_by", Some("sqlite:/srv/hermes/state.db"))
        .unwrap();
    store.set_meta("superseded_at", Some("1767225600")).unwrap();
    damage(
        &schema,
        &format!(
            "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) \
             VALUES ({}, 'from_the_future', 'now', '1')",
            known_step() + 1
        ),
    );
    let report = store.doctor().unwrap();
    assert!(report.steps.too_new());
    assert_eq!(report.steps.applied, Some(known_step() + 1));
    let moved = report.superseded.clone().unwrap();
    assert_eq!(moved.by, "sqlite:/srv/hermes/state.db");
    assert_eq!(moved.at, Some(1_767_225_600.0));
    assert!(report.is_healthy(), "newer and moved are facts, not damage");

    damage(
        &schema,
        "UPDATE refinery_schema_history SET checksum = '12345' WHERE version = 1; \
         INSERT INTO schema_version (version) VALUES (24)",
    );
    let report = store.doctor().unwrap();
    assert_eq!(report.steps.divergent.len(), 1, "{:?}", report.steps);
    assert!(report.steps.divergent[0].starts_with("1 "));
    assert_eq!(report.steps.data_model, [23, 24]);
    assert_eq!(report.problem_count(), 2);
}

#[test]
fn a_missing_trigram_index_is_a_note_with_its_reason() {
    let Some(schema) = TestSchema::new("doctor trigram") else {
        return;
    };
    let store = populated(&schema);
    damage(&schema, &format!("DROP INDEX {TRIGRAM_INDEX}"));
    let report = store.doctor().unwrap();
    let TrigramIndex::Absent(why) = &report.trigram else {
        panic!("the index was dropped: {:?}", report.trigram);
    };
    assert!(why.contains("the next writable open creates it"), "{why}");
    assert!(report.is_healthy());
}

#[test]
fn the_doctor_runs_on_a_read_only_handle_and_writes_nothing() {
    let Some(schema) = TestSchema::new("doctor read-only") else {
        return;
    };
    let writer = populated(&schema);
    damage(
        &schema,
        "UPDATE sessions SET message_count = 7 WHERE id = 'root'",
    );
    let reader = PgStore::open_read_only(&schema.url).unwrap();
    let stored = || -> i64 {
        schema
            .client()
            .query_one(
                &format!(
                    "SELECT message_count FROM \"{}\".sessions WHERE id = 'root'",
                    schema.url.schema()
                ),
                &[],
            )
            .unwrap()
            .get(0)
    };
    let report = reader.doctor().unwrap();
    assert_eq!(report.counters.len(), 1);
    assert_eq!(stored(), 7, "the doctor repaired nothing");
    // A writable handle's doctor reads in a read-only transaction too.
    let report = writer.doctor().unwrap();
    assert_eq!(report.counters.len(), 1);
    assert_eq!(stored(), 7, "the doctor repaired nothing");
    // The counter repair is a write: refused on a read-only handle.
    let error = reader.repair_counters().unwrap_err();
    assert_eq!(error.kind(), hermes_state_types::ErrorKind::ReadOnly);
}

#[test]
fn the_counter_repair_recounts_in_one_write_and_leaves_a_healthy_store() {
    let Some(schema) = TestSchema::new("doctor repair") else {
        return;
    };
    let store = populated(&schema);
    damage(
        &schema,
        "UPDATE sessions SET message_count = 99 WHERE id = 'child'; \
         UPDATE sessions SET tool_call_count = 2 WHERE id = 'root'",
    );
    let fixed = store.repair_counters().unwrap();
    let mut ids: Vec<&str> = fixed.iter().map(|c| c.session_id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        ["child", "root"],
        "the old rule's count is recounted too"
    );
    let report = store.doctor().unwrap();
    assert!(report.counters.is_empty(), "{:?}", report.counters);
    let root = store.get_session("root").unwrap().unwrap();
    assert_eq!(
        (root.message_count, root.tool_call_count),
        (Some(3), Some(3))
    );
    assert!(store.repair_counters().unwrap().is_empty());
}
