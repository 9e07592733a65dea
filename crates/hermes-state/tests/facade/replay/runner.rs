//! Replays a script on a fresh store (the apidiff README, sections 2 to 4): "now" is
//! each call's recorded clock, `$ref`s resolve from this replay's own
//! answers, and every answer or error is recorded as the trace records it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use hermes_state::{FixedClock, SessionDb, SessionStore, StoreOptions};
use serde_json::{Map, Value, json};

use hermes_state::by_name::{self, CallError};

use super::errors;
use hermes_state::AsSqlite;

/// Every op record of the script with this replay's `outcome` (and
/// `resolved` where refs were substituted), then the final dump.
pub struct Replayed {
    pub ops: Vec<Value>,
    pub final_dump: Value,
}

pub fn replay(script: &Value, dir: &Path) -> Replayed {
    let path = dir.join("state.db");
    let ops = replay_on(script, |clock| {
        let options = StoreOptions {
            clock: Some(clock.clone()),
            ..StoreOptions::default()
        };
        Box::new(SessionDb::open_with(&path, &options).expect("open the replay's store"))
    });
    Replayed {
        ops,
        final_dump: super::dump::dump_file(&path),
    }
}

/// Replays the script on stores `open` gives (a new handle at the start and
/// at each `$reopen`, after the previous one was closed and dropped); every
/// op record with its outcome.
pub fn replay_on(
    script: &Value,
    mut open: impl FnMut(&Arc<FixedClock>) -> Box<dyn SessionStore>,
) -> Vec<Value> {
    let clock = FixedClock::new(open_clock(script));
    let mut db = open(&clock);
    let mut saved: BTreeMap<String, Value> = BTreeMap::new();
    let mut records = Vec::new();
    for op in script["ops"].as_array().expect("ops") {
        let mut record = op.clone();
        let name = op["op"].as_str().expect("op name");
        clock.set(op["clock"].as_f64().expect("clock"));
        if name == "$reopen" {
            close(db.as_ref());
            drop(db);
            db = open(&clock);
            record["outcome"] = json!({"ok": true, "value": null});
            records.push(record);
            continue;
        }
        let mut used = Map::new();
        let args = resolve(&op["args"], &saved, &mut used);
        if !used.is_empty() {
            record["resolved"] = Value::Object(used);
        }
        let args_map = args.as_object().expect("args is an object");
        let outcome = match by_name::call(db.as_ref(), name, args_map) {
            Ok(value) => json!({"ok": true, "value": value}),
            Err(error) => {
                let (kind, message) = match &error {
                    CallError::Library(error) => (errors::trace_kind(error), error.to_string()),
                    CallError::Boundary { kind, message } => ((*kind).to_owned(), message.clone()),
                    other => panic!("the replay cannot make `{name}`: {other}"),
                };
                json!({"ok": false, "error": {"kind": kind, "message": message, "type": "rust"}})
            }
        };
        if let Some(name) = op.get("save").and_then(Value::as_str) {
            let value = if outcome["ok"] == json!(true) {
                outcome["value"].clone()
            } else {
                Value::Null
            };
            saved.insert(name.to_owned(), value);
        }
        record["outcome"] = outcome;
        records.push(record);
    }
    close(db.as_ref());
    records
}

/// Closes a SQLite handle (a server store has nothing to close but its
/// pool, which dropping the handle closes).
fn close(store: &dyn SessionStore) {
    if let Some(db) = store.as_sqlite() {
        let _ = db.close();
    }
}

/// Replaces every `{"$ref": name}` by the saved answer (`null` when that
/// call raised), noting what was substituted.
fn resolve(value: &Value, saved: &BTreeMap<String, Value>, used: &mut Map<String, Value>) -> Value {
    match value {
        Value::Object(map) if map.len() == 1 && map.contains_key("$ref") => {
            let name = map["$ref"].as_str().expect("a ref names a saved result");
            let resolved = saved.get(name).cloned().unwrap_or(Value::Null);
            used.insert(name.to_owned(), resolved.clone());
            resolved
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| (key.clone(), resolve(item, saved, used)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| resolve(item, saved, used))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The replay as a trace file, for a person or `compare.py` to read.
pub fn trace_text(script: &Value, replayed: &Replayed) -> String {
    let trace = json!({
        "format": "apidiff-trace/1",
        "script": {
            "format": script["format"],
            "generator": script["generator"],
            "seed": script["seed"],
            "typed_only": script["typed_only"],
            "n_ops": script["n_ops"],
        },
        "open": {"clock": open_clock(script), "from_db": null},
        "env": {"port": "hermes-state"},
        "ops": replayed.ops,
        "final": replayed.final_dump,
    });
    serde_json::to_string_pretty(&trace).expect("a trace serialises")
}

/// The clock while opening: a script names it `open_clock`, a trace (also a
/// valid script) `open.clock`.
fn open_clock(script: &Value) -> f64 {
    script["open_clock"]
        .as_f64()
        .or_else(|| script["open"]["clock"].as_f64())
        .expect("the clock while opening")
}
