//! A fresh file (`schema-v23.md` §2–§8): inventory, stored SQL, columns,
//! contents, and the FTS storage stamp of the second open.

use std::collections::BTreeSet;

use crate::common::*;
use crate::spec;

#[test]
fn fresh_inventory_matches_spec() {
    let (_dir, path) = temp_db();
    let (conn, report) = open(&path);
    let rows = inventory(&conn);
    // Rows 1-48 of the spec, then the CJK objects of §6.6 (49-57).
    let expected: Vec<(i64, String, String, String)> = spec::INVENTORY
        .iter()
        .chain(&spec::CJK_INVENTORY)
        .map(|&(rowid, ty, name, tbl)| (rowid, ty.to_owned(), name.to_owned(), tbl.to_owned()))
        .collect();
    assert!(
        rows.len() >= expected.len(),
        "sqlite_master too short: {rows:#?}"
    );
    for (actual, wanted) in rows.iter().zip(&expected) {
        assert_eq!(actual, wanted, "sqlite_master row");
    }
    // By design, refinery's history table follows (with its autoindex, if any).
    let tail = &rows[expected.len()..];
    let history = |rowid: i64, ty: &str, name: &str| {
        (
            rowid,
            ty.to_owned(),
            name.to_owned(),
            HISTORY_TABLE.to_owned(),
        )
    };
    assert!(
        !tail.is_empty() && tail.len() <= 2,
        "unexpected objects after rowid 57: {tail:#?}"
    );
    assert_eq!(tail[0], history(58, "table", HISTORY_TABLE));
    if let Some(autoindex) = tail.get(1) {
        assert_eq!(
            *autoindex,
            history(59, "index", "sqlite_autoindex_refinery_schema_history_1")
        );
    }

    assert!(report.created, "a fresh file is created: {report:?}");
    assert_eq!(report.from_version, None);
    assert_eq!(report.to_version, 23);
    assert!(
        report.added_columns.is_empty(),
        "nothing to reconcile on a fresh file: {report:?}"
    );
    assert!(
        report.fts.rebuilt,
        "the first open rebuilds both FTS indexes (§3)"
    );
    assert!(
        report.fts.cjk_rebuilt,
        "the first open builds the CJK index: {report:?}"
    );
    assert!(!report.fts.cjk_marked_stale, "{report:?}");
    assert!(report.history.baselined);
    drop(conn);

    let (conn, report) = open(&path);
    assert!(
        !report.fts.cjk_rebuilt,
        "a healthy CJK index is left alone: {report:?}"
    );
    assert!(!report.fts.cjk_marked_stale, "{report:?}");
    assert_eq!(inventory(&conn), rows, "the second open adds no object");
}

#[test]
fn cjk_sql_follows_the_replacement_rule() {
    // schema-v23.md §6.6: the CJK view equals the trigram view with the name
    // replaced; the triggers equal the trigram triggers with the table name
    // and the two gate keys replaced. Checks the hand-written CJK texts.
    let from_trigram = |name: &str| -> String {
        spec::object_sql(name)
            .replace("messages_fts_trigram", "messages_fts_cjk")
            .replace("'fts_rebuild_high_water'", "'fts_cjk_rebuild_high_water'")
            .replace("'fts_rebuild_progress'", "'fts_cjk_rebuild_progress'")
    };
    for (trigram, cjk) in [
        ("messages_fts_trigram_src", "messages_fts_cjk_src"),
        ("messages_fts_trigram_insert", "messages_fts_cjk_insert"),
        ("messages_fts_trigram_delete", "messages_fts_cjk_delete"),
        ("messages_fts_trigram_update", "messages_fts_cjk_update"),
    ] {
        assert_eq!(spec::cjk_object_sql(cjk), from_trigram(trigram), "{cjk}");
    }
    assert_eq!(
        spec::cjk_object_sql("messages_fts_cjk"),
        from_trigram("messages_fts_trigram")
            .replace("tokenize='trigram'", "tokenize='cjk_unicode61'")
    );
}

#[test]
fn fresh_stored_sql_is_verbatim() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    let shadow_shapes = [
        ("_data", "(id INTEGER PRIMARY KEY, block BLOB)"),
        (
            "_idx",
            "(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID",
        ),
        ("_docsize", "(id INTEGER PRIMARY KEY, sz BLOB)"),
        ("_config", "(k PRIMARY KEY, v) WITHOUT ROWID"),
    ];
    let mut checked = BTreeSet::new();
    for (_, ty, name, tbl, _, sql) in master(&conn) {
        if tbl == HISTORY_TABLE || name == "sqlite_sequence" {
            continue;
        }
        if spec::AUTOINDEXES.contains(&name.as_str()) {
            assert_eq!(sql, None, "autoindex {name} has no SQL");
        } else if let Some((_, want)) = spec::INDEX_SQL.iter().find(|(n, _)| *n == name) {
            assert_eq!(ty, "index");
            assert_eq!(sql.as_deref(), Some(*want), "stored SQL of index {name}");
        } else if let Some((_, want)) = spec::OBJECT_SQL
            .iter()
            .chain(&spec::CJK_OBJECT_SQL)
            .find(|(n, _)| *n == name)
        {
            assert_eq!(sql.as_deref(), Some(*want), "stored SQL of {ty} {name}");
        } else if spec::SHADOW_TABLES
            .iter()
            .chain(&spec::CJK_SHADOW_TABLES)
            .any(|n| *n == name)
        {
            let (_, shape) = shadow_shapes
                .iter()
                .find(|(suffix, _)| name.ends_with(suffix))
                .expect("shadow suffix");
            let sql = sql.expect("shadow tables have SQL");
            assert!(
                sql.ends_with(shape),
                "shadow table {name}: {sql:?} does not end with {shape:?}"
            );
        } else {
            panic!("object not in the spec: {ty} {name}");
        }
        checked.insert(name);
    }
    let wanted: BTreeSet<String> = spec::AUTOINDEXES
        .iter()
        .chain(spec::INDEX_SQL.iter().map(|(n, _)| n))
        .chain(spec::OBJECT_SQL.iter().map(|(n, _)| n))
        .chain(spec::SHADOW_TABLES.iter())
        .chain(spec::CJK_OBJECT_SQL.iter().map(|(n, _)| n))
        .chain(spec::CJK_SHADOW_TABLES.iter())
        .map(|n| (*n).to_owned())
        .collect();
    assert_eq!(checked, wanted, "every object of the spec was found");
}

#[test]
fn fresh_table_info_matches_spec() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    for (table, columns) in spec::TABLE_COLUMNS {
        let actual = table_xinfo(&conn, table);
        let expected = expected_xinfo(columns);
        for (live, want) in actual.iter().zip(&expected) {
            assert_eq!(live, want, "PRAGMA table_xinfo({table}) row {}", want.0);
        }
        assert_eq!(actual.len(), expected.len(), "number of columns of {table}");
    }

    for (table, _) in spec::TABLE_COLUMNS {
        let mut stmt = conn
            .prepare(
                "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?1) ORDER BY name",
            )
            .expect("prepare");
        let actual: Vec<(String, bool, String, bool)> = stmt
            .query_map([table], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        let mut expected: Vec<(String, bool, String, bool)> = spec::INDEXES
            .iter()
            .filter(|i| i.table == table)
            .map(|i| (i.name.to_owned(), i.unique, i.origin.to_owned(), i.partial))
            .collect();
        expected.sort();
        assert_eq!(actual, expected, "PRAGMA index_list({table})");
    }

    for index in &spec::INDEXES {
        let mut stmt = conn
            .prepare(
                "SELECT cid, name, \"desc\", coll, key FROM pragma_index_xinfo(?1) ORDER BY seqno",
            )
            .expect("prepare");
        let actual: Vec<(i64, Option<String>, bool, String, bool)> = stmt
            .query_map([index.name], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        let (keys, rest): (Vec<_>, Vec<_>) = actual.into_iter().partition(|row| row.4);
        let keys: Vec<(Option<String>, bool, String)> =
            keys.into_iter().map(|(_, n, d, c, _)| (n, d, c)).collect();
        let expected: Vec<(Option<String>, bool, String)> = index
            .columns
            .iter()
            .map(|&(n, desc)| (Some(n.to_owned()), desc, "BINARY".to_owned()))
            .collect();
        assert_eq!(keys, expected, "key columns of {}", index.name);
        // Rowid tables only: the one auxiliary column is the rowid.
        assert_eq!(
            rest.len(),
            1,
            "auxiliary columns of {}: {rest:?}",
            index.name
        );
        assert_eq!(
            rest[0].0, -1,
            "auxiliary column of {} is the rowid",
            index.name
        );
    }

    for (table, keys) in spec::FOREIGN_KEYS {
        let mut stmt = conn
            .prepare(
                "SELECT id, seq, \"table\", \"from\", \"to\", on_update, on_delete, \"match\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
            )
            .expect("prepare");
        type Fk = (i64, i64, String, String, String, String, String, String);
        let actual: Vec<Fk> = stmt
            .query_map([table], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        let expected: Vec<Fk> = keys
            .iter()
            .map(|&(id, seq, t, from, to, upd, del, m)| {
                (
                    id,
                    seq,
                    t.to_owned(),
                    from.to_owned(),
                    to.to_owned(),
                    upd.to_owned(),
                    del.to_owned(),
                    m.to_owned(),
                )
            })
            .collect();
        assert_eq!(actual, expected, "PRAGMA foreign_key_list({table})");
    }
}

#[test]
fn fresh_contents_match_spec() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);

    assert_eq!(
        schema_versions(&conn),
        vec![23],
        "schema_version holds exactly one row (23)"
    );
    assert!(
        meta(&conn).is_empty(),
        "state_meta is empty after the first open: {:?}",
        meta(&conn)
    );

    for fts in ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"] {
        let config: Vec<(String, i64)> = {
            let mut stmt = conn
                .prepare(&format!("SELECT k, v FROM {fts}_config ORDER BY k"))
                .expect("prepare");
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows")
        };
        assert_eq!(config, vec![("version".to_owned(), 4)], "{fts}_config");
        let data: Vec<(i64, Vec<u8>)> = {
            let mut stmt = conn
                .prepare(&format!("SELECT id, block FROM {fts}_data ORDER BY id"))
                .expect("prepare");
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows")
        };
        assert_eq!(
            data,
            vec![(1, vec![0u8; 4]), (10, vec![0u8; 7])],
            "{fts}_data (FTS5 'rebuild' on the first open)"
        );
    }

    // "every other table is empty"
    for table in strings(
        &conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY rowid",
    ) {
        let expected = match table.as_str() {
            "schema_version" | HISTORY_TABLE => 1,
            t if t.ends_with("_data") => 2,
            t if t.ends_with("_config") => 1,
            _ => 0,
        };
        assert_eq!(count(&conn, &table), expected, "rows in {table}");
    }

    assert_eq!(pragma_i64(&conn, "foreign_keys"), 1, "foreign_keys");
    assert_eq!(pragma_i64(&conn, "busy_timeout"), 1000, "busy_timeout");
    assert_eq!(
        pragma_string(&conn, "journal_mode"),
        "wal",
        "journal_mode (SQLite 3.54.1 is not affected)"
    );
    assert_eq!(pragma_i64(&conn, "page_size"), 4096, "page_size");
    assert_eq!(pragma_i64(&conn, "user_version"), 0, "user_version");
    assert_eq!(pragma_i64(&conn, "application_id"), 0, "application_id");
    assert_eq!(pragma_i64(&conn, "auto_vacuum"), 0, "auto_vacuum");
    assert_eq!(pragma_string(&conn, "encoding"), "UTF-8", "encoding");
    assert_eq!(
        pragma_i64(&conn, "synchronous"),
        2,
        "synchronous is not set (compiled default FULL)"
    );
    assert!(
        conn.is_autocommit(),
        "the returned connection is in autocommit mode"
    );

    // Header bytes 18-19 are 2,2 for a WAL database (§2.2).
    let header = std::fs::read(&path).expect("read db");
    assert_eq!(&header[..16], b"SQLite format 3\0");
    assert_eq!((header[18], header[19]), (2, 2), "WAL header bytes");
}

#[test]
fn second_open_stamps_fts_storage_version() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    let first = master(&conn);
    drop(conn);

    let (conn, report) = open(&path);
    assert_eq!(
        meta(&conn),
        vec![("fts_storage_version".to_owned(), Some("1".to_owned()))]
    );
    assert_eq!(
        master(&conn),
        first,
        "the second open changes no schema object"
    );
    assert!(!report.fts.rebuilt, "all six triggers existed: no rebuild");
    assert!(
        !report.fts.cjk_rebuilt,
        "the CJK index is healthy: no rebuild"
    );
    let second = dump(&conn);
    drop(conn);

    let (conn, _) = open(&path);
    assert_eq!(
        master(&conn),
        first,
        "the third open changes no schema object"
    );
    assert_eq!(dump(&conn), second, "the third open changes no row");
}
