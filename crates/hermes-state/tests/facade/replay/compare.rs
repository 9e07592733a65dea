//! The comparison rules of the apidiff `compare.py` (its README, section 6): the same
//! script; per op, success against success by value (key order ignored,
//! number type kept, float text not) or error against error by kind; the
//! final file by pragmas, schema rows, FTS digests and per table columns and
//! row multisets. Tables named in `ignored_tables` are left out, with their
//! schema rows.

use std::collections::BTreeMap;

use serde_json::Value;

/// The differences found, described for a person.
pub fn findings(
    expected: &Value,
    ops: &[Value],
    final_dump: &Value,
    ignored_tables: &[&str],
) -> Vec<String> {
    let mut found = Vec::new();
    let recorded = expected["ops"].as_array().expect("the trace's ops");
    if recorded.len() != ops.len() {
        found.push(format!(
            "op count: trace {} vs replay {}",
            recorded.len(),
            ops.len()
        ));
    }
    for (theirs, ours) in recorded.iter().zip(ops) {
        for key in ["op", "args", "clock"] {
            if theirs[key] != ours[key] {
                found.push(format!("op {}: the script differs at {key}", theirs["i"]));
            }
        }
        let (a, b) = (&theirs["outcome"], &ours["outcome"]);
        let same = match (a["ok"].as_bool(), b["ok"].as_bool()) {
            (Some(true), Some(true)) => a["value"] == b["value"],
            (Some(false), Some(false)) => a["error"]["kind"] == b["error"]["kind"],
            _ => false,
        };
        if !same {
            found.push(format!(
                "op {} {} {}\n    original: {}\n    replay:   {}",
                theirs["i"],
                theirs["op"].as_str().unwrap_or_default(),
                shorten(&theirs["args"].to_string(), 300),
                shorten(&a.to_string(), 600),
                shorten(&b.to_string(), 600),
            ));
        }
    }
    compare_final(&expected["final"], final_dump, ignored_tables, &mut found);
    found
}

fn compare_final(theirs: &Value, ours: &Value, ignored: &[&str], found: &mut Vec<String>) {
    if theirs["pragmas"] != ours["pragmas"] {
        found.push(format!(
            "final pragmas: {} vs {}",
            theirs["pragmas"], ours["pragmas"]
        ));
    }
    let schema = |dump: &Value| -> Vec<Value> {
        dump["schema"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .filter(|row| !ignored.iter().any(|t| row[1] == *t || row[2] == *t))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (schema(theirs), schema(ours));
    for row in &a {
        if !b.contains(row) {
            found.push(format!("final schema: the original has {row}"));
        }
    }
    for row in &b {
        if !a.contains(row) {
            found.push(format!("final schema: the replay has {row}"));
        }
    }
    if theirs["fts_index"] != ours["fts_index"] {
        found.push(format!(
            "final fts_index: {} vs {}",
            theirs["fts_index"], ours["fts_index"]
        ));
    }
    let tables = |dump: &Value| -> BTreeMap<String, Value> {
        dump["tables"]
            .as_object()
            .map(|map| {
                map.iter()
                    .filter(|(name, _)| !ignored.contains(&name.as_str()))
                    .map(|(name, table)| (name.clone(), table.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (tables(theirs), tables(ours));
    for name in a
        .keys()
        .chain(b.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (Some(x), Some(y)) = (a.get(name), b.get(name)) else {
            found.push(format!("final table {name}: present on one side only"));
            continue;
        };
        if x["columns"] != y["columns"] {
            found.push(format!(
                "final table {name} columns: {} vs {}",
                x["columns"], y["columns"]
            ));
            continue;
        }
        let rows = |t: &Value| -> BTreeMap<String, (Value, usize)> {
            let mut counted = BTreeMap::new();
            for row in t["rows"].as_array().into_iter().flatten() {
                counted
                    .entry(row.to_string())
                    .or_insert_with(|| (row.clone(), 0))
                    .1 += 1;
            }
            counted
        };
        let (ra, rb) = (rows(x), rows(y));
        let missing: Vec<&Value> = multiset_minus(&ra, &rb, x, y);
        let extra: Vec<&Value> = multiset_minus(&rb, &ra, x, y);
        for row in missing.iter().take(5) {
            found.push(format!(
                "final table {name}: only the original has {}",
                shorten(&row.to_string(), 500)
            ));
        }
        for row in extra.iter().take(5) {
            found.push(format!(
                "final table {name}: only the replay has {}",
                shorten(&row.to_string(), 500)
            ));
        }
        if missing.len() + extra.len() > 10 {
            found.push(format!(
                "final table {name}: {} rows only in the original, {} only in the replay",
                missing.len(),
                extra.len()
            ));
        }
    }
}

/// Rows of `a` not matched by an equal row of `b` (equality of parsed
/// values, so `1e16` equals `1e+16`).
fn multiset_minus<'v>(
    a: &'v BTreeMap<String, (Value, usize)>,
    b: &BTreeMap<String, (Value, usize)>,
    _: &Value,
    _: &Value,
) -> Vec<&'v Value> {
    let mut out = Vec::new();
    for (key, (row, count)) in a {
        let theirs = b.get(key).map_or(0, |(_, n)| *n);
        for _ in theirs..*count {
            out.push(row);
        }
    }
    out
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}
