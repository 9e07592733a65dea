//! The original's FTS maintenance calls on the gate's `state_meta` marks:
//! `fts_rebuild_status`/`_step`, their CJK pair, `fts_optimize_available`
//! and `optimize_fts_storage` with its summary and progress reports.

use hermes_state::serde_json::{self, json};
use hermes_state::{NewMessage, NewSession, OriginalError, SessionDb, StoragePhase};
use xtask::fixtures::{Shape, write_fixture};

use super::Clocked;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

fn store_with_messages() -> Clocked {
    let s = Clocked::at(1000.0);
    s.db.create_session(&NewSession::new("s", "cli")).unwrap();
    for text in ["alpha", "beta", "gamma"] {
        s.db.append_message(&NewMessage::new("s", "user").content(text))
            .unwrap();
    }
    s
}

fn marks(db: &SessionDb, high_water: Option<&str>, progress: Option<&str>) {
    db.write_raw(|conn| {
        conn.execute(
            "DELETE FROM state_meta WHERE key IN ('fts_rebuild_high_water', 'fts_rebuild_progress')",
            [],
        )
        .unwrap();
        for (key, value) in [
            ("fts_rebuild_high_water", high_water),
            ("fts_rebuild_progress", progress),
        ] {
            if let Some(value) = value {
                conn.execute(
                    "INSERT INTO state_meta (key, value) VALUES (?1, ?2)",
                    [key, value],
                )
                .unwrap();
            }
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_store_without_a_pending_backfill_has_nothing_to_do() {
    let s = store_with_messages();
    let db = &s.db;
    assert_eq!(db.fts_rebuild_status().unwrap(), None);
    assert_eq!(db.fts_cjk_rebuild_status().unwrap(), None);
    assert!(!db.fts_rebuild_step().unwrap());
    assert!(!db.fts_cjk_rebuild_step().unwrap());
    assert!(!db.fts_optimize_available().unwrap());
    let report = db.optimize_fts_storage_in_phases(false, |_| {}).unwrap();
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        json!({"ok": true, "vacuumed": null})
    );
    let mut phases = Vec::new();
    let report = db
        .optimize_fts_storage_in_phases(true, |phase| phases.push(phase))
        .unwrap();
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        json!({"ok": true, "vacuumed": true})
    );
    let names: Vec<&str> = phases.iter().map(|p| p.phase).collect();
    assert_eq!(
        names,
        ["backfill", "backfill", "teardown", "vacuum", "done"]
    );
    assert_eq!(
        serde_json::to_value(phases[0]).unwrap(),
        json!({"phase": "backfill", "percent": 100, "indexed": 0, "total": 0})
    );
    assert_eq!(
        db.get_meta("fts_storage_version").unwrap(),
        Some("1".into())
    );
}

#[test]
fn the_status_and_the_steps_read_the_marks_as_the_original() {
    let s = store_with_messages();
    let db = &s.db;
    // (high water, progress) → status as (total, indexed, percent).
    let statuses = [
        (Some("0"), Some("0"), None),
        (Some("-5"), None, None),
        (Some(" 1000 "), Some(""), Some((1000, 0, 0))),
        (Some("1000"), None, Some((1000, 0, 0))),
        (Some("1000"), Some("999"), Some((1000, 999, 99))),
        (Some("3"), Some("7"), Some((3, 7, 100))),
        (Some("1000"), Some("-20"), Some((1000, -20, -2))),
        (None, Some("5"), None),
    ];
    for (high_water, progress, expected) in statuses {
        marks(db, high_water, progress);
        let status = db.fts_rebuild_status().unwrap();
        assert_eq!(
            status.map(|st| (st.total, st.indexed, st.percent)),
            expected,
            "{high_water:?} {progress:?}"
        );
        if let Some(status) = status {
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                json!({"pending": true, "total": status.total,
                       "indexed": status.indexed, "percent": status.percent})
            );
        }
    }
    marks(db, Some("abc"), Some("0"));
    let error = db.fts_rebuild_status().unwrap_err();
    assert_eq!(error.original_class(), Some(OriginalError::InvalidValue));
    assert_eq!(
        error.to_string(),
        "invalid literal for int() with base 10: 'abc'"
    );
    assert!(db.fts_rebuild_step().is_err());

    // A step without a progress mark, or at a high-water mark of 0, does
    // nothing (the original's backfill never ends there).
    for (high_water, progress) in [(Some("10"), None), (Some("0"), Some("0"))] {
        marks(db, high_water, progress);
        assert!(!db.fts_rebuild_step().unwrap());
        assert!(
            db.fts_optimize_available().unwrap(),
            "a pending mark is work"
        );
        assert_eq!(
            db.get_meta("fts_rebuild_high_water").unwrap().as_deref(),
            high_water
        );
    }
    // Chunks of 500 ids up to the mark; the last one deletes both marks.
    marks(db, Some("1900"), Some("900"));
    let mut steps = Vec::new();
    loop {
        let more = db.fts_rebuild_step().unwrap();
        steps.push((more, db.get_meta("fts_rebuild_progress").unwrap()));
        if !more {
            break;
        }
    }
    assert_eq!(steps, [(true, Some("1400".to_owned())), (false, None),]);
    assert_eq!(db.fts_rebuild_status().unwrap(), None);
    assert!(!db.fts_optimize_available().unwrap());
    assert_eq!(
        fts_hits(db, "beta"),
        1,
        "indexed rows are not indexed twice"
    );
}

fn fts_hits(db: &SessionDb, word: &str) -> i64 {
    let sql = "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1";
    db.read(|conn| Ok(conn.query_row(sql, [word], |r| r.get(0)).unwrap()))
        .unwrap()
}

#[test]
fn a_read_only_handle_steps_nothing_and_its_optimisation_is_refused() {
    let s = store_with_messages();
    marks(&s.db, Some("1900"), Some("900"));
    s.db.close().unwrap();
    let before = std::fs::read(&s.path).unwrap();
    let ro = SessionDb::open_read_only(&s.path).unwrap();
    assert!(ro.fts_rebuild_status().unwrap().is_some());
    assert!(!ro.fts_rebuild_step().unwrap());
    assert!(!ro.fts_cjk_rebuild_step().unwrap());
    assert!(!ro.fts_optimize_available().unwrap());
    let mut phases: Vec<StoragePhase> = Vec::new();
    let report = ro
        .optimize_fts_storage_in_phases(true, |p| phases.push(p))
        .unwrap();
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        json!({"ok": false, "reason": "read_only"})
    );
    assert!(phases.is_empty());
    drop(ro);
    assert!(std::fs::read(&s.path).unwrap() == before);
}

#[test]
fn a_legacy_layout_is_optimised_with_the_originals_reports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    write_fixture(&path, Shape::EraEnd(22)).expect("a v22 file");
    let db = SessionDb::open(&path).unwrap();
    assert!(
        db.fts_optimize_available().unwrap(),
        "a legacy layout is work"
    );
    let mut phases = Vec::new();
    let report = db
        .optimize_fts_storage_in_phases(false, |p| phases.push(p))
        .unwrap();
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        json!({"ok": true, "vacuumed": null})
    );
    let names: Vec<&str> = phases.iter().map(|p| p.phase).collect();
    assert_eq!(names.first(), Some(&"backfill"));
    assert_eq!(names.last(), Some(&"done"));
    assert!(names.contains(&"teardown"));
    assert!(!names.contains(&"vacuum"));
    let backfill = phases.first().unwrap();
    assert_eq!(backfill.indexed, 0, "the backfill starts at 0: {phases:?}");
    assert!(!db.fts_optimize_available().unwrap());
    assert_eq!(db.fts_rebuild_status().unwrap(), None);
}
