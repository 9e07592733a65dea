//! Replays a script on a fresh store (`apidiff/README.md` §2–§4): "now" is
//! each call's recorded clock, `$ref`s resolve from this replay's own
//! answers, and every answer or error is recorded as the trace records it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use hermes_state::{FixedClock, SessionDb, StoreOptions};
use serde_json::{Map, Value, json};

use super::args::{Args, CallError};
use super::{dispatch, errors};

/// Every op record of the script with this replay's `outcome` (and
/// `resolved` where refs were substituted), then the final dump.
pub struct Replayed {
    pub ops: Vec<Value>,
    pub final_dump: Value,
}

pub fn replay(script: &Value, dir: &Path) -> Replayed {
    let path = dir.join("state.db");
    // A script names it `open_clock`; a trace (also a valid script) `open.clock`.
    let open_clock = open_clock(script);
    let clock = FixedClock::new(open_clock);
    let open = |clock: &Arc<FixedClock>| {
        let options = StoreOptions {
            clock: Some(clock.clone()),
            ..StoreOptions::default()
        };
        SessionDb::open_with(&path, &options).expect("open the replay's store")
    };
    let mut db = open(&clock);
    let mut saved: BTreeMap<String, Value> = BTreeMap::new();
    let mut records = Vec::new();
    for op in script["ops"].as_array().expect("ops") {
        let mut record = op.clone();
        let name = op["op"].as_str().expect("op name");
        clock.set(op["clock"].as_f64().expect("clock"));
        if name == "$reopen" {
            let _ = db.close();
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
        let outcome = match dispatch::call(&db, name, &Args::new(name, args_map)) {
            Ok(value) => json!({"ok": true, "value": value}),
            Err(error) => {
                let (kind, message) = match &error {
                    CallError::Library(error) => (errors::trace_kind(error), error.to_string()),
                    CallError::Boundary { kind, message } => ((*kind).to_owned(), message.clone()),
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
    let _ = db.close();
    drop(db);
    Replayed {
        ops: records,
        final_dump: super::dump::dump_file(&path),
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
