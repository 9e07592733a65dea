//! The store's objects against the v23 data model this build creates
//! (`migrations/V1__v23_data_model.sql`), read from the system catalogs.
//!
//! The expected objects are listed here once more, on purpose: a second
//! statement of the schema the doctor holds the store to. The test that a
//! freshly created store reports nothing keeps the two in step.

use std::collections::{BTreeMap, BTreeSet};

use postgres::Transaction;

use super::{SchemaSteps, TrigramIndex};
use crate::error::{Context, Result};
use crate::migrate::{TRIGRAM_INDEX, known_steps};
use crate::rows::{MESSAGE_COLUMNS, SESSION_COLUMNS};

/// The tables of the data model with the columns each needs (`sessions`
/// and `messages` from the row mappings; `messages.search_vector` apart).
fn tables() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("schema_version", vec!["version"]),
        ("sessions", SESSION_COLUMNS.to_vec()),
        ("messages", MESSAGE_COLUMNS.to_vec()),
        (
            "session_model_usage",
            vec![
                "session_id",
                "model",
                "billing_provider",
                "billing_base_url",
                "billing_mode",
                "task",
                "api_call_count",
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "reasoning_tokens",
                "estimated_cost_usd",
                "actual_cost_usd",
                "cost_status",
                "cost_source",
                "first_seen",
                "last_seen",
            ],
        ),
        ("state_meta", vec!["key", "value"]),
        (
            "gateway_routing",
            vec!["scope", "session_key", "entry_json", "updated_at"],
        ),
        (
            "compression_locks",
            vec!["session_id", "holder", "acquired_at", "expires_at"],
        ),
        (
            "async_delegations",
            vec![
                "delegation_id",
                "origin_session",
                "origin_ui_session_id",
                "parent_session_id",
                "state",
                "dispatched_at",
                "completed_at",
                "updated_at",
                "event_json",
                "result_json",
                "delivery_state",
                "delivery_attempts",
                "delivered_at",
                "owner_pid",
                "owner_started_at",
                "task_json",
                "delivery_claim",
                "delivery_claimed_at",
            ],
        ),
    ]
}

/// An index the store needs: name, table, unique, access method.
struct WantedIndex {
    name: &'static str,
    table: &'static str,
    unique: bool,
    method: &'static str,
}

const fn btree(name: &'static str, table: &'static str) -> WantedIndex {
    WantedIndex {
        name,
        table,
        unique: false,
        method: "btree",
    }
}

/// Every named index of the migration (primary keys are checked as keys).
const INDEXES: [WantedIndex; 18] = [
    btree("idx_sessions_source", "sessions"),
    btree("idx_sessions_source_id", "sessions"),
    btree("idx_sessions_parent", "sessions"),
    btree("idx_sessions_started", "sessions"),
    btree("idx_messages_session", "messages"),
    btree("idx_compression_locks_expires", "compression_locks"),
    btree("idx_session_model_usage_session", "session_model_usage"),
    btree("idx_session_model_usage_model", "session_model_usage"),
    btree("idx_async_delegations_delivery", "async_delegations"),
    btree("idx_messages_platform_msg_id", "messages"),
    btree("idx_messages_session_active", "messages"),
    btree("idx_messages_active_null", "messages"),
    btree("idx_sessions_session_key", "sessions"),
    btree("idx_sessions_gateway_peer", "sessions"),
    btree("idx_sessions_handoff_state", "sessions"),
    WantedIndex {
        name: "idx_sessions_title_unique",
        table: "sessions",
        unique: true,
        method: "btree",
    },
    WantedIndex {
        name: "idx_messages_search_vector",
        table: "messages",
        unique: false,
        method: "gin",
    },
    WantedIndex {
        name: "idx_messages_cjk_grams",
        table: "messages",
        unique: false,
        method: "gin",
    },
];

/// The keys: `(table, columns)` primary keys and `(table, column, target)`
/// foreign keys.
const PRIMARY_KEYS: [(&str, &str); 7] = [
    ("sessions", "id"),
    ("messages", "id"),
    (
        "session_model_usage",
        "session_id, model, billing_provider, billing_base_url, billing_mode, task",
    ),
    ("state_meta", "key"),
    ("gateway_routing", "scope, session_key"),
    ("compression_locks", "session_id"),
    ("async_delegations", "delegation_id"),
];
const FOREIGN_KEYS: [(&str, &str, &str); 3] = [
    ("sessions", "parent_session_id", "sessions"),
    ("messages", "session_id", "sessions"),
    ("session_model_usage", "session_id", "sessions"),
];

/// The columns the row checks read, with the types they read them as;
/// without them (or with another type) the row checks are skipped.
const ROW_CHECK_COLUMNS: [(&str, &str, &str); 10] = [
    ("sessions", "id", "text"),
    ("sessions", "parent_session_id", "text"),
    ("sessions", "started_at", "double precision"),
    ("sessions", "title", "text"),
    ("sessions", "message_count", "bigint"),
    ("sessions", "tool_call_count", "bigint"),
    ("messages", "session_id", "text"),
    ("messages", "role", "text"),
    ("messages", "tool_calls", "text"),
    ("messages", "compacted", "bigint"),
];

/// What the catalogs say.
pub(super) struct CatalogCheck {
    pub steps: SchemaSteps,
    pub missing: Vec<String>,
    pub wrong: Vec<String>,
    pub trigram: TrigramIndex,
    pub rows_skipped: Option<String>,
    /// `state_meta` exists with its columns (the move marker can be read).
    pub state_meta: bool,
}

/// Reads the catalogs of `schema` and compares them with the data model.
pub(super) fn check(tx: &mut Transaction<'_>, schema: &str) -> Result<CatalogCheck> {
    let columns = live_columns(tx, schema)?;
    let has = |table: &str, column: &str| {
        columns
            .get(table)
            .is_some_and(|cols| cols.contains_key(column))
    };
    let mut missing = Vec::new();
    let mut wrong = Vec::new();
    for (table, wanted) in tables() {
        if !columns.contains_key(table) {
            missing.push(format!("table {table}"));
            continue;
        }
        for column in wanted {
            if !has(table, column) {
                missing.push(format!("column {table}.{column}"));
            }
        }
    }
    match columns
        .get("messages")
        .and_then(|cols| cols.get("search_vector"))
    {
        None if columns.contains_key("messages") => {
            missing.push("column messages.search_vector".to_owned());
        }
        Some((kind, generated)) if kind != "tsvector" || !generated => {
            wrong.push(format!(
                "column messages.search_vector is {}{kind}, not a generated tsvector \
                 (full-text search needs it)",
                if *generated { "a generated " } else { "" }
            ));
        }
        _ => {}
    }
    check_indexes(tx, schema, &mut missing, &mut wrong)?;
    check_keys(tx, schema, &mut missing)?;
    let steps = steps(tx, schema, columns.contains_key("schema_version"))?;
    let trigram = trigram(tx, schema)?;
    let mut lacking = Vec::new();
    for (table, column, wanted) in ROW_CHECK_COLUMNS {
        match columns.get(table).and_then(|cols| cols.get(column)) {
            None => lacking.push(format!("{table}.{column}")),
            Some((kind, _)) if kind != wanted => {
                wrong.push(format!("column {table}.{column} is {kind}, not {wanted}"));
                lacking.push(format!("{table}.{column} as {wanted}"));
            }
            Some(_) => {}
        }
    }
    let rows_skipped = (!lacking.is_empty()).then(|| {
        format!(
            "the row checks need {}, which the store lacks",
            lacking.join(", ")
        )
    });
    Ok(CatalogCheck {
        steps,
        missing,
        wrong,
        trigram,
        rows_skipped,
        state_meta: has("state_meta", "key") && has("state_meta", "value"),
    })
}

/// A table's columns: name → (type as `format_type` spells it, generated).
type Columns = BTreeMap<String, (String, bool)>;

/// Table → its columns, for the store's ordinary tables.
fn live_columns(tx: &mut Transaction<'_>, schema: &str) -> Result<BTreeMap<String, Columns>> {
    let mut tables: BTreeMap<String, Columns> = BTreeMap::new();
    for row in tx
        .query(
            "SELECT c.relname::TEXT, a.attname::TEXT, format_type(a.atttypid, a.atttypmod), \
                    a.attgenerated <> '' \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped \
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')",
            &[&schema],
        )
        .context("reading the store's tables")?
    {
        let columns = tables.entry(row.get(0)).or_default();
        if let Some(column) = row.get::<_, Option<String>>(1) {
            columns.insert(column, (row.get(2), row.get(3)));
        }
    }
    Ok(tables)
}

fn check_indexes(
    tx: &mut Transaction<'_>,
    schema: &str,
    missing: &mut Vec<String>,
    wrong: &mut Vec<String>,
) -> Result<()> {
    let live: BTreeMap<String, (String, bool, String, bool)> = tx
        .query(
            "SELECT i.relname::TEXT, t.relname::TEXT, x.indisunique, am.amname::TEXT, x.indisvalid \
             FROM pg_index x \
             JOIN pg_class i ON i.oid = x.indexrelid \
             JOIN pg_class t ON t.oid = x.indrelid \
             JOIN pg_namespace n ON n.oid = i.relnamespace \
             JOIN pg_am am ON am.oid = i.relam \
             WHERE n.nspname = $1",
            &[&schema],
        )
        .context("reading the store's indexes")?
        .iter()
        .map(|row| (row.get(0), (row.get(1), row.get(2), row.get(3), row.get(4))))
        .collect();
    let mut wanted: Vec<&WantedIndex> = INDEXES.iter().collect();
    let trigram = WantedIndex {
        name: TRIGRAM_INDEX,
        table: "messages",
        unique: false,
        method: "gin",
    };
    if live.contains_key(TRIGRAM_INDEX) {
        // Optional, but when it exists it must be what search expects.
        wanted.push(&trigram);
    }
    for index in wanted {
        let Some((table, unique, method, valid)) = live.get(index.name) else {
            missing.push(format!("index {}", index.name));
            continue;
        };
        let mut faults = Vec::new();
        if table != index.table {
            faults.push(format!("is on {table}, not {}", index.table));
        }
        if *unique != index.unique {
            faults.push(
                if index.unique {
                    "is not unique"
                } else {
                    "is unique"
                }
                .to_owned(),
            );
        }
        if method != index.method {
            faults.push(format!("uses {method}, not {}", index.method));
        }
        if !valid {
            faults.push("is invalid (a failed build; drop and recreate it)".to_owned());
        }
        if !faults.is_empty() {
            wrong.push(format!("index {} {}", index.name, faults.join(", ")));
        }
    }
    Ok(())
}

fn check_keys(tx: &mut Transaction<'_>, schema: &str, missing: &mut Vec<String>) -> Result<()> {
    let live: BTreeSet<String> = tx
        .query(
            "SELECT c.contype::TEXT, t.relname::TEXT, \
                    array_to_string(ARRAY(SELECT a.attname::TEXT FROM unnest(c.conkey) WITH ORDINALITY k(num, pos) \
                        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.num ORDER BY k.pos), ', '), \
                    coalesce(r.relname::TEXT, '') \
             FROM pg_constraint c \
             JOIN pg_class t ON t.oid = c.conrelid \
             JOIN pg_namespace n ON n.oid = t.relnamespace \
             LEFT JOIN pg_class r ON r.oid = c.confrelid \
             WHERE n.nspname = $1 AND c.contype IN ('p', 'f')",
            &[&schema],
        )
        .context("reading the store's keys")?
        .iter()
        .map(|row| {
            let (kind, table, columns, target): (String, String, String, String) =
                (row.get(0), row.get(1), row.get(2), row.get(3));
            key_name(&kind, &table, &columns, &target)
        })
        .collect();
    let wanted = PRIMARY_KEYS
        .iter()
        .map(|(table, columns)| key_name("p", table, columns, ""))
        .chain(
            FOREIGN_KEYS
                .iter()
                .map(|(table, column, target)| key_name("f", table, column, target)),
        );
    for key in wanted {
        if !live.contains(&key) {
            missing.push(key);
        }
    }
    Ok(())
}

fn key_name(kind: &str, table: &str, columns: &str, target: &str) -> String {
    if kind == "p" {
        format!("primary key {table} ({columns})")
    } else {
        format!("foreign key {table} ({columns}) -> {target}")
    }
}

/// The ledger against this build's steps, and `schema_version`.
fn steps(tx: &mut Transaction<'_>, schema: &str, data_model: bool) -> Result<SchemaSteps> {
    let known = known_steps();
    let mut steps = SchemaSteps {
        known: known.iter().map(|(v, ..)| *v).max().unwrap_or(0),
        ..SchemaSteps::default()
    };
    let ledger: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 \
             AND tablename = 'refinery_schema_history')",
            &[&schema],
        )
        .context("looking for the migration ledger")?
        .get(0);
    if ledger {
        let recorded: Vec<(i64, String, String)> = tx
            .query(
                "SELECT version::BIGINT, coalesce(name, ''), coalesce(checksum, '') \
                 FROM refinery_schema_history ORDER BY version",
                &[],
            )
            .context("reading the migration ledger")?
            .iter()
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .collect();
        steps.applied = recorded.iter().map(|(v, ..)| *v).max();
        for (version, name, checksum) in &known {
            match recorded.iter().find(|(v, ..)| v == version) {
                Some((_, found_name, found_sum))
                    if found_name != name || *found_sum != checksum.to_string() =>
                {
                    steps
                        .divergent
                        .push(format!("{version} {found_name} (this build: {name})"));
                }
                Some(_) => {}
                None if steps.applied.is_some_and(|applied| applied >= *version) => {
                    steps.missing.push(*version);
                }
                None => {}
            }
        }
    }
    if data_model {
        steps.data_model = tx
            .query("SELECT version FROM schema_version ORDER BY version", &[])
            .context("reading schema_version")?
            .iter()
            .map(|row| row.get(0))
            .collect();
    }
    Ok(steps)
}

/// The trigram index, or why it is absent.
fn trigram(tx: &mut Transaction<'_>, schema: &str) -> Result<TrigramIndex> {
    let row = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = $2), \
                    (SELECT n.nspname::TEXT FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace \
                     WHERE e.extname = 'pg_trgm'), \
                    EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')",
            &[&schema, &TRIGRAM_INDEX],
        )
        .context("looking for the trigram index")?;
    let (present, installed, available): (bool, Option<String>, bool) =
        (row.get(0), row.get(1), row.get(2));
    Ok(if present {
        TrigramIndex::Present
    } else if let Some(extension_schema) = installed {
        TrigramIndex::Absent(format!(
            "pg_trgm is installed (schema {extension_schema}) but the index is missing; \
             the next writable open creates it"
        ))
    } else if available {
        TrigramIndex::Absent(
            "pg_trgm is not installed in this database; a writable open by a role that may \
             create it installs it (substring search scans meanwhile)"
                .to_owned(),
        )
    } else {
        TrigramIndex::Absent(
            "the server does not offer pg_trgm (install PostgreSQL's contrib package); \
             substring search scans"
                .to_owned(),
        )
    })
}
