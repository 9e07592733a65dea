//! Gateway routing.

use super::*;
use hermes_state_core::store::Coordination;

fn routing_rows(db: &SessionDb) -> Vec<(String, String, String, f64)> {
    db.read(|conn| {
        let mut stmt = conn
            .prepare("SELECT scope, session_key, entry_json, updated_at FROM gateway_routing ORDER BY scope, session_key")
            .expect("prepare");
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        Ok(rows)
    })
    .expect("read")
}

fn pairs(map: &std::collections::BTreeMap<String, String>) -> Vec<(&str, &str)> {
    map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

#[test]
fn gateway_routing_save_load_and_upsert() {
    let (_dir, db) = temp_db();
    db.save_gateway_routing_entry("k2", r#"{"session_id":"b"}"#, "")
        .expect("save");
    db.save_gateway_routing_entry("k1", r#"{"session_id":"a"}"#, "")
        .expect("save");
    db.save_gateway_routing_entry("k1", r#"{"session_id":"c"}"#, "/scope")
        .expect("save");
    let default = db.load_gateway_routing_entries("").expect("load");
    assert_eq!(
        pairs(&default),
        [
            ("k1", r#"{"session_id":"a"}"#),
            ("k2", r#"{"session_id":"b"}"#)
        ],
        "key order"
    );
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("/scope").expect("load")),
        [("k1", r#"{"session_id":"c"}"#)]
    );
    assert!(
        db.load_gateway_routing_entries("other")
            .expect("load")
            .is_empty()
    );

    // Upsert: the entry and updated_at change, the row stays one.
    let before = routing_rows(&db);
    std::thread::sleep(Duration::from_millis(20));
    db.save_gateway_routing_entry("k1", r#"{"session_id":"a2"}"#, "")
        .expect("save");
    let after = routing_rows(&db);
    assert_eq!(after.len(), 3);
    let old = before
        .iter()
        .find(|r| r.0.is_empty() && r.1 == "k1")
        .expect("old");
    let new = after
        .iter()
        .find(|r| r.0.is_empty() && r.1 == "k1")
        .expect("new");
    assert_eq!(new.2, r#"{"session_id":"a2"}"#);
    assert!(new.3 > old.3, "updated_at moved");

    // Empty key or entry: nothing written.
    db.save_gateway_routing_entry("", "{}", "").expect("save");
    db.save_gateway_routing_entry("k9", "", "").expect("save");
    assert_eq!(routing_rows(&db).len(), 3);
}

#[test]
fn gateway_routing_replace_is_per_scope_and_skips_empty_pairs() {
    let (_dir, db) = temp_db();
    db.save_gateway_routing_entry("old", "{}", "a")
        .expect("save");
    db.save_gateway_routing_entry("keep", "{}", "b")
        .expect("save");

    let mut entries = std::collections::BTreeMap::new();
    entries.insert("x".to_owned(), r#"{"n":1}"#.to_owned());
    entries.insert("y".to_owned(), r#"{"n":2}"#.to_owned());
    entries.insert(String::new(), r#"{"n":3}"#.to_owned());
    entries.insert("z".to_owned(), String::new());
    db.replace_gateway_routing_entries(&entries, "a")
        .expect("replace");

    let rows = routing_rows(&db);
    let scope_a: Vec<_> = rows.iter().filter(|r| r.0 == "a").collect();
    assert_eq!(
        scope_a.iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
        ["x", "y"],
        "old is gone, empty keys and entries are skipped"
    );
    assert_eq!(scope_a[0].3, scope_a[1].3, "one updated_at for the batch");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("b").expect("load")),
        [("keep", "{}")],
        "other scopes untouched"
    );

    // A later duplicate key wins, as in a dict; slices of pairs work too.
    let list = [("d", "first"), ("d", "second"), ("e", "1")];
    db.replace_gateway_routing_entries(list, "a")
        .expect("replace");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("a").expect("load")),
        [("d", "second"), ("e", "1")]
    );
    let owned: Vec<(String, String)> = vec![("f".into(), "2".into())];
    db.replace_gateway_routing_entries(owned.iter().map(|(k, v)| (k, v)), "a")
        .expect("replace");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("a").expect("load")),
        [("f", "2")]
    );

    // Replacing with nothing empties the scope.
    db.replace_gateway_routing_entries(Vec::<(String, String)>::new(), "a")
        .expect("replace");
    assert!(
        db.load_gateway_routing_entries("a")
            .expect("load")
            .is_empty()
    );
    assert_eq!(routing_rows(&db).len(), 1);
}

#[test]
fn gateway_routing_delete() {
    let (_dir, db) = temp_db();
    for key in ["a", "b", "c"] {
        db.save_gateway_routing_entry(key, "{}", "").expect("save");
        db.save_gateway_routing_entry(key, "{}", "s").expect("save");
    }
    db.delete_gateway_routing_entries(["a", "c", "missing"], "")
        .expect("delete");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("").expect("load")),
        [("b", "{}")]
    );
    assert_eq!(
        db.load_gateway_routing_entries("s").expect("load").len(),
        3,
        "other scopes untouched"
    );
    db.delete_gateway_routing_entries(Vec::<String>::new(), "s")
        .expect("no keys");
    assert_eq!(db.load_gateway_routing_entries("s").expect("load").len(), 3);
    let keys = vec!["a".to_owned(), "b".to_owned()];
    db.delete_gateway_routing_entries(&keys, "s")
        .expect("delete");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("s").expect("load")),
        [("c", "{}")]
    );
}

#[test]
fn gateway_routing_writes_fail_on_a_read_only_handle() {
    let (dir, db) = temp_db();
    db.save_gateway_routing_entry("k", "{}", "").expect("save");
    let read_only = SessionDb::open_read_only(dir.path().join("state.db")).expect("ro");
    let error = read_only
        .save_gateway_routing_entry("k2", "{}", "")
        .expect_err("read-only");
    assert_eq!(error.kind(), ErrorKind::ReadOnly);
    assert_eq!(
        read_only
            .replace_gateway_routing_entries([("k", "{}")], "")
            .expect_err("read-only")
            .kind(),
        ErrorKind::ReadOnly
    );
    assert_eq!(
        pairs(&read_only.load_gateway_routing_entries("").expect("load")),
        [("k", "{}")]
    );
}
