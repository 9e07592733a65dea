//! Hostile input: the JSONL importer fed any bytes, and stores damaged by
//! bit flips and truncations. The checks live in `import_input` and
//! `damaged_store_input`, which the fuzz targets `import_jsonl` and
//! `damaged_store` include as source (`fuzz/README.md`); here their corpora
//! are replayed, and a deterministic walk damages every page of a store.
//! The walks print what the reads answered (`--nocapture`).
#![allow(clippy::print_stderr)]

mod damaged_store_input;
mod import_input;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use damaged_store_input::{Damage, DamagedStore};
use import_input::ImportTarget;

/// The committed corpus files (`seed-*`; what libFuzzer adds locally is
/// ignored by git, and left out here so every checkout tests the same
/// inputs), in name order.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("the corpus {}: {e}", folder.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("seed-"))
        })
        .map(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            (
                name.unwrap_or_default(),
                std::fs::read(&path).expect("a corpus file"),
            )
        })
        .collect();
    files.sort();
    files
}

/// Runs `case` on every corpus file; a finding names its file.
fn replay(target: &str, mut case: impl FnMut(&[u8])) {
    let files = corpus(target);
    assert!(
        files.len() >= 10,
        "the committed seeds of {target} are there"
    );
    let failed: Vec<&String> = files
        .iter()
        .filter(|(_, bytes)| catch_unwind(AssertUnwindSafe(|| case(bytes))).is_err())
        .map(|(name, _)| name)
        .collect();
    assert!(
        failed.is_empty(),
        "{target} corpus files failing (panics above): {failed:?}"
    );
}

#[test]
fn the_import_corpus_replays_without_a_finding() {
    let target = ImportTarget::new();
    replay("import_jsonl", |bytes| target.run(bytes));
}

#[test]
fn the_damaged_store_corpus_replays_without_a_finding() {
    let store = DamagedStore::new();
    replay("damaged_store", |bytes| store.run(bytes));
}

#[test]
fn the_undamaged_store_reads_without_an_error() {
    let store = DamagedStore::new();
    let outcomes = store.check(store.pristine());
    let errors: Vec<_> = outcomes
        .iter()
        .filter(|(_, o)| o.as_str() != "ok")
        .collect();
    assert!(
        errors.is_empty(),
        "the pristine store must read cleanly: {errors:?}"
    );
}

/// Found by the truncation walk: SQLite reads a 1-byte file as an empty
/// database, and `open` made a new store over it.
#[test]
fn a_store_truncated_to_one_byte_is_refused_untouched_by_both_opens() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let path = folder.path().join("state.db");
    std::fs::write(&path, b"S").expect("write");
    for read_only in [true, false] {
        let opened = if read_only {
            hermes_state::SessionDb::open_read_only(&path)
        } else {
            hermes_state::SessionDb::open(&path)
        };
        let error = opened.expect_err("a 1-byte file is refused");
        assert_eq!(
            error.kind(),
            hermes_state::ErrorKind::NotADatabase,
            "{error}"
        );
        assert_eq!(
            std::fs::read(&path).expect("read"),
            b"S",
            "the byte is kept"
        );
    }
}

/// Found by the flip walk: header byte 47 ^ 0x80 makes the schema format
/// number 132, and SQLite's "unsupported file format" (a generic
/// `SQLITE_ERROR`) came out as kind `Other`.
#[test]
fn a_header_with_an_unknown_schema_format_is_corrupt() {
    let store = DamagedStore::new();
    let bytes = store.damaged(&[Damage::Flip {
        offset: 47,
        mask: 0x80,
    }]);
    let folder = tempfile::tempdir().expect("a temporary folder");
    let path = folder.path().join("state.db");
    std::fs::write(&path, &bytes).expect("write");
    for read_only in [true, false] {
        let opened = if read_only {
            hermes_state::SessionDb::open_read_only(&path)
        } else {
            hermes_state::SessionDb::open(&path)
        };
        let error = opened.expect_err("an unreadable header is refused");
        assert_eq!(error.kind(), hermes_state::ErrorKind::Corrupt, "{error}");
    }
    assert!(
        std::fs::read(&path).expect("read") == bytes,
        "the file is kept"
    );
}

/// Found by the flip walk: a flip in `schema_version`'s row made its value
/// NULL, and the classification's failed conversion came out as `Other`.
/// (NULL itself only comes from damage, the column is NOT NULL: the corpus
/// files `seed-18-*` and `seed-19-*` of `damaged_store` replay that flip.)
#[test]
fn a_store_whose_schema_version_is_not_a_number_is_corrupt() {
    for damaged in ["'twenty-three'", "x'17'", "23.5"] {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let path = folder.path().join("state.db");
        let db = hermes_state::SessionDb::open(&path).expect("a new store");
        db.close().expect("close");
        drop(db);
        {
            let conn = hermes_state::rusqlite::Connection::open(&path).expect("a plain connection");
            conn.execute_batch(&format!("UPDATE schema_version SET version = {damaged}"))
                .expect("damage the version");
        }
        let bytes = std::fs::read(&path).expect("read");
        for read_only in [true, false] {
            let opened = if read_only {
                hermes_state::SessionDb::open_read_only(&path)
            } else {
                hermes_state::SessionDb::open(&path)
            };
            let error = opened.expect_err("a damaged version is refused");
            assert_eq!(
                error.kind(),
                hermes_state::ErrorKind::Corrupt,
                "{damaged}: {error}"
            );
        }
        assert!(
            std::fs::read(&path).expect("read") == bytes,
            "the file is kept"
        );
    }
}

/// Runs every case, collecting findings instead of stopping at the first,
/// and counts what the reads answered: (operation, outcome) → cases.
fn walk(store: &DamagedStore, cases: &[(String, Vec<Damage>)]) -> BTreeMap<String, usize> {
    let mut findings = Vec::new();
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for (name, damage) in cases {
        let bytes = store.damaged(damage);
        match catch_unwind(AssertUnwindSafe(|| store.check(&bytes))) {
            Ok(outcomes) => {
                let opened = outcomes.get("ro open").map_or("ro opens", |o| o.as_str());
                *tally.entry(opened.to_owned()).or_default() += 1;
                if outcomes.values().all(|o| o == "ok") {
                    *tally.entry("every read answered".to_owned()).or_default() += 1;
                }
            }
            Err(_) => findings.push(name.clone()),
        }
    }
    assert!(
        findings.is_empty(),
        "cases failing (panics above): {findings:?}"
    );
    tally
}

/// Header fields (SQLite's file format, "the database header"): magic, page size, write/read
/// versions, reserved bytes, payload fractions, change counter, size in
/// pages, freelist, schema cookie and format, cache size, vacuum, text
/// encoding, user version, application id, version-valid-for, SQLite
/// version; then page 1's b-tree header (100..108).
const HEADER_FIELDS: [usize; 28] = [
    0, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 28, 31, 32, 36, 40, 44, 47, 48, 52, 56, 60, 64, 68,
    92, 96, 100, 103,
];

/// The flips of the walk: every header field, then `per_page` positions of
/// every other page, spread over the page (b-tree header, cell pointers,
/// cell content near the end, overflow and FTS segment data in between).
fn flip_cases(store: &DamagedStore, per_page: usize) -> Vec<(String, Vec<Damage>)> {
    let page = store.page_size();
    let size = store.pristine().len();
    let mut cases: Vec<(String, Vec<Damage>)> = HEADER_FIELDS
        .iter()
        .map(|&offset| {
            let mask = 1 << (offset % 8);
            (
                format!("flip {offset} ^{mask:#04x}"),
                vec![Damage::Flip { offset, mask }],
            )
        })
        .collect();
    let positions = [0, 3, 8, page - 1, page / 2, 5, 9, page - 2, 1, 7];
    for (index, start) in (page..size).step_by(page).enumerate() {
        for k in 0..per_page.min(positions.len()) {
            // Rotate through the positions so neighbouring pages differ.
            let within = positions[(index + k) % positions.len()];
            let offset = start + within;
            let mask = 1 << (offset % 7);
            cases.push((
                format!("page {} byte {within} ^{mask:#04x}", start / page + 1),
                vec![Damage::Flip { offset, mask }],
            ));
        }
    }
    cases
}

/// Truncations at every page boundary and inside every page.
fn truncation_cases(store: &DamagedStore, inside: &[usize]) -> Vec<(String, Vec<Damage>)> {
    let page = store.page_size();
    let size = store.pristine().len();
    let mut cases = Vec::new();
    for start in (0..size).step_by(page) {
        for len in std::iter::once(start).chain(inside.iter().map(|k| start + k)) {
            cases.push((format!("truncate to {len}"), vec![Damage::Truncate { len }]));
        }
    }
    cases
}

#[test]
fn bit_flips_on_every_page_give_typed_errors_or_answers_and_reads_never_write() {
    let store = DamagedStore::new();
    let cases = flip_cases(&store, 1);
    let tally = walk(&store, &cases);
    eprintln!("{} flip cases: {tally:?}", cases.len());
}

#[test]
fn truncations_at_and_inside_every_page_give_typed_errors_or_answers() {
    let store = DamagedStore::new();
    let cases = truncation_cases(&store, &[store.page_size() / 2]);
    let tally = walk(&store, &cases);
    eprintln!("{} truncations: {tally:?}", cases.len());
}

/// The long walk (`docs/RELIABILITY.md`): ten flips on every page and four
/// truncations per page.
#[test]
#[ignore = "long: about 3 minutes in a debug build"]
fn soak_damaged_store_walk() {
    let store = DamagedStore::new();
    let page = store.page_size();
    let mut cases = flip_cases(&store, 10);
    cases.extend(truncation_cases(&store, &[1, 100, page / 2]));
    let tally = walk(&store, &cases);
    eprintln!("{} cases: {tally:?}", cases.len());
}
