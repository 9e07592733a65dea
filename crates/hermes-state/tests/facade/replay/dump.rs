//! The dump of a closed store that a trace's `final` records
//! (the apidiff README, section 5.3), read with plain SQL on a read-only
//! connection: pragmas, every `sqlite_master` row, every table but the FTS
//! tables and their segment shadows, and a digest of each FTS index.

use std::collections::BTreeSet;
use std::path::Path;

use hermes_state::rusqlite::types::ValueRef;
use hermes_state::rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The FTS5 shadows whose content is segment layout, not data.
const SKIPPED_SHADOWS: [&str; 2] = ["_data", "_idx"];

pub fn dump_file(path: &Path) -> Value {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open the replayed store read-only");
    let mut pragmas = serde_json::Map::new();
    for pragma in [
        "journal_mode",
        "user_version",
        "application_id",
        "encoding",
        "auto_vacuum",
    ] {
        let value = conn
            .query_row(&format!("PRAGMA {pragma}"), [], |row| {
                Ok(cell(row.get_ref(0)?))
            })
            .expect("pragma");
        pragmas.insert(pragma.to_owned(), value);
    }
    let master: Vec<[Value; 4]> = query(
        &conn,
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name",
    )
    .into_iter()
    .map(|row| row.try_into().expect("four columns"))
    .collect();
    let fts_tables: Vec<String> = master
        .iter()
        .filter(|[kind, _, _, sql]| {
            let sql = sql.as_str().unwrap_or_default().to_uppercase();
            kind == "table" && sql.starts_with("CREATE VIRTUAL TABLE") && sql.contains("USING FTS5")
        })
        .map(|row| row[1].as_str().expect("name").to_owned())
        .collect();
    let skipped: BTreeSet<String> = fts_tables
        .iter()
        .flat_map(|table| SKIPPED_SHADOWS.map(|suffix| format!("{table}{suffix}")))
        .collect();
    let mut tables = serde_json::Map::new();
    for [kind, name, _, _] in &master {
        let name = name.as_str().expect("name");
        if kind != "table" || fts_tables.iter().any(|t| t == name) || skipped.contains(name) {
            continue;
        }
        let mut statement = conn
            .prepare(&format!("SELECT * FROM \"{name}\""))
            .expect("select a table");
        let columns: Vec<String> = statement.column_names().map(str::to_owned).collect();
        let mut rows: Vec<Value> = statement
            .query_map([], |row| {
                (0..columns.len())
                    .map(|at| Ok(cell(row.get_ref(at)?)))
                    .collect::<Result<Vec<Value>, _>>()
                    .map(Value::Array)
            })
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("rows");
        rows.sort_by_cached_key(canonical);
        tables.insert(name.to_owned(), json!({"columns": columns, "rows": rows}));
    }
    let mut fts = serde_json::Map::new();
    for (n, table) in fts_tables.iter().enumerate() {
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE temp.apidiff_vocab_{n} USING fts5vocab(main, '{table}', 'instance')"
        ))
        .expect("fts5vocab");
        let mut rows: Vec<(String, i64, String, i64)> = conn
            .prepare(&format!(
                "SELECT term, doc, col, offset FROM temp.apidiff_vocab_{n}"
            ))
            .expect("vocab")
            .query_map([], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })
            .expect("vocab rows")
            .collect::<Result<_, _>>()
            .expect("vocab rows");
        rows.sort_by(|a, b| {
            (a.0.as_bytes(), a.1, &a.2, a.3).cmp(&(b.0.as_bytes(), b.1, &b.2, b.3))
        });
        let mut hash = Sha256::new();
        let mut terms = BTreeSet::new();
        for (term, doc, col, offset) in &rows {
            let line = serde_json::to_string(&json!([term, doc, col, offset])).expect("json");
            hash.update(line.as_bytes());
            hash.update(b"\n");
            terms.insert(term.clone());
        }
        let digest: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        fts.insert(
            table.clone(),
            json!({"instances": rows.len(), "terms": terms.len(), "sha256": digest}),
        );
    }
    let present: BTreeSet<&str> = master.iter().filter_map(|row| row[1].as_str()).collect();
    let skipped_tables: Vec<&String> = skipped
        .iter()
        .filter(|t| present.contains(t.as_str()))
        .collect();
    json!({
        "pragmas": pragmas,
        "schema": master,
        "tables": tables,
        "fts_index": fts,
        "skipped_tables": skipped_tables,
    })
}

fn query(conn: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut statement = conn.prepare(sql).expect("prepare");
    let width = statement.column_count();
    statement
        .query_map([], |row| {
            (0..width).map(|at| Ok(cell(row.get_ref(at)?))).collect()
        })
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// A stored value as the trace writes it (its section 5.1).
fn cell(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(integer) => json!(integer),
        ValueRef::Real(real) if real.is_nan() => json!({"$float": "nan"}),
        ValueRef::Real(real) if real.is_infinite() => {
            json!({"$float": if real > 0.0 { "inf" } else { "-inf" }})
        }
        ValueRef::Real(real) => json!(real),
        ValueRef::Text(bytes) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
        ValueRef::Blob(bytes) => {
            json!({"$bytes": bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()})
        }
    }
}

/// The canonical text rows are sorted by (sorted keys, compact).
fn canonical(row: &Value) -> String {
    serde_json::to_string(row).expect("json")
}
