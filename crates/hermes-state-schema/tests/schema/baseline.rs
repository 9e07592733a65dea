//! The refinery baseline: `V1__v23_baseline.sql` equals what the open
//! creates, is recorded once, and the migration files are well formed.

use std::collections::BTreeSet;
use std::path::Path;

use hermes_state_schema::rusqlite::Connection;

use crate::common::*;
use crate::spec;

/// `(type, name, sql)` of every object except FTS shadow tables and refinery's.
fn schema_objects(conn: &Connection) -> BTreeSet<(String, String, Option<String>)> {
    master(conn)
        .into_iter()
        .filter(|(_, _, name, tbl, _, _)| {
            !spec::SHADOW_TABLES.contains(&name.as_str()) && tbl != HISTORY_TABLE
        })
        .map(|(_, ty, name, _, _, sql)| (ty, name, sql))
        .collect()
}

#[test]
fn v1_baseline_migration_equals_open() {
    let baseline = include_str!("../../migrations/V1__v23_baseline.sql");
    let scripted = Connection::open_in_memory().expect("memory db");
    scripted.execute_batch(baseline).expect("V1 baseline runs");

    let (_dir, path) = temp_db();
    let (opened, _) = open(&path);

    // The open adds the optional CJK objects of `schema-v23.md` §6.6 (the baseline is the
    // spec's default schema without them): exactly these nine.
    let cjk_objects: Vec<(String, String)> = master(&opened)
        .into_iter()
        .filter(|(_, _, name, _, _, _)| spec::is_cjk_object(name))
        .map(|(_, ty, name, _, _, _)| (ty, name))
        .collect();
    let expected_cjk: Vec<(String, String)> = spec::CJK_INVENTORY
        .iter()
        .map(|&(_, ty, name, _)| (ty.to_owned(), name.to_owned()))
        .collect();
    assert_eq!(cjk_objects, expected_cjk, "CJK objects of the opened store");

    let (scripted, opened) = (schema_objects(&scripted), schema_objects(&opened));
    let scripted_cjk: Vec<_> = scripted
        .iter()
        .filter(|(_, name, _)| spec::is_cjk_object(name))
        .collect();
    assert!(
        scripted_cjk.is_empty(),
        "the V1 baseline has no CJK object: {scripted_cjk:#?}"
    );
    let opened: BTreeSet<_> = opened
        .into_iter()
        .filter(|(_, name, _)| !spec::is_cjk_object(name))
        .collect();
    let only_in_script: Vec<_> = scripted.difference(&opened).collect();
    let only_in_open: Vec<_> = opened.difference(&scripted).collect();
    assert!(
        only_in_script.is_empty() && only_in_open.is_empty(),
        "V1 baseline and open_writable differ.\nonly in V1: {only_in_script:#?}\nonly after open: {only_in_open:#?}"
    );
    assert_eq!(
        scripted.len(),
        spec::INVENTORY.len() - spec::SHADOW_TABLES.len()
    );
}

#[test]
fn refinery_history_records_the_baseline_once() {
    let (_dir, path) = temp_db();
    drop(open(&path));
    let (conn, report) = open(&path);
    assert!(
        !report.history.baselined,
        "the baseline is recorded on the first open only"
    );
    assert!(report.history.applied.is_empty(), "{report:?}");
    let rows: Vec<(i64, String)> = {
        let mut stmt = conn
            .prepare("SELECT version, name FROM refinery_schema_history")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    assert_eq!(rows, vec![(1, "v23_baseline".to_owned())]);
}

#[test]
fn migration_files_are_lf_only_and_well_named() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("migrations dir") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 file name")
            .to_owned();
        let stem = name
            .strip_suffix(".sql")
            .unwrap_or_else(|| panic!("{name}: not a .sql file"));
        let rest = stem
            .strip_prefix('V')
            .unwrap_or_else(|| panic!("{name}: does not start with V"));
        let (number, label) = rest
            .split_once("__")
            .unwrap_or_else(|| panic!("{name}: no `__` separator"));
        assert!(
            !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
                && !number.starts_with('0'),
            "{name}: version must be a positive number"
        );
        assert!(
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "{name}: name must be [A-Za-z0-9_]+"
        );
        let bytes = std::fs::read(&path).expect("read migration");
        assert!(
            !bytes.contains(&b'\r'),
            "{name}: contains a carriage return"
        );
        seen += 1;
    }
    assert!(seen >= 1, "no migration files found in {}", dir.display());
}
