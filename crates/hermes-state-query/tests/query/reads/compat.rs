//! `compat::adapt` and the FTS shape recognition on old files, and errors that
//! must stay errors.

use hermes_state_query::compat;
use hermes_state_query::search::{
    BaseLayout, FtsCapabilities, FtsObjects, SearchOptions, TrigramCoverage, search_messages,
};
use hermes_state_query::{MessagePage, messages, sessions};
use hermes_state_types::ErrorKind;
use rusqlite::Connection;
use xtask::fixtures::{Shape, write_fixture};

use super::shapes::read_only;

fn fixture(shape: Shape) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(shape.file_name());
    write_fixture(&path, shape).expect("fixture");
    (dir, path)
}

fn temp_objects(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_temp_master ORDER BY name")
        .expect("temp master");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn a_v1_file_gets_views_for_missing_columns_and_tables() {
    let (_dir, path) = fixture(Shape::Fresh(1));
    let conn = read_only(&path);
    let adaptation = compat::adapt(&conn).expect("adapt");
    assert_eq!(adaptation.schema_version, Some(1));
    assert!(adaptation.lacks("messages", "active"));
    assert!(adaptation.lacks("messages", "compacted"));
    assert!(adaptation.lacks("sessions", "title"));
    assert!(!adaptation.lacks("sessions", "source"));
    assert!(adaptation.shim("state_meta").is_some_and(|s| s.absent));
    assert!(
        adaptation
            .shim("session_model_usage")
            .is_some_and(|s| s.absent)
    );
    assert!(!adaptation.limitations().is_empty());
    assert_eq!(
        temp_objects(&conn),
        vec![
            compat::MARKER,
            "messages",
            "session_model_usage",
            "sessions",
            "state_meta"
        ]
    );
    // Defaults of the missing columns; real values of existing ones.
    let (active, compacted, role): (i64, i64, String) = conn
        .query_row(
            "SELECT active, compacted, role FROM messages WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("shimmed row");
    assert_eq!((active, compacted, role.as_str()), (1, 0, "user"));
    let session = sessions::get_session(&conn, "s-cli-root")
        .expect("get")
        .expect("row");
    assert_eq!(session.title, None);
    assert_eq!(session.api_call_count, Some(0));
}

#[test]
fn a_v23_file_needs_nothing_and_gets_nothing() {
    let (_dir, path) = fixture(Shape::V23);
    let conn = read_only(&path);
    let adaptation = compat::adapt(&conn).expect("adapt");
    assert!(adaptation.is_exact());
    assert!(adaptation.limitations().is_empty());
    assert!(temp_objects(&conn).is_empty());
}

#[test]
fn extra_columns_of_newer_files_are_ignored() {
    let (_dir, path) = fixture(Shape::Fresh(25));
    let conn = read_only(&path);
    assert!(compat::adapt(&conn).expect("adapt").is_exact());
    assert!(temp_objects(&conn).is_empty());
}

#[test]
fn a_schema_change_by_another_process_re_adapts() {
    let (_dir, path) = fixture(Shape::EraEnd(22));
    let reader = read_only(&path);
    let first = compat::adapt(&reader).expect("adapt");
    assert!(first.lacks("messages", "display_kind"));
    assert!(first.lacks("sessions", "pinned"));

    // Another process adds the late v23 columns (as the reconciler would).
    let writer = Connection::open(&path).expect("writer");
    writer
        .execute_batch(
            r#"ALTER TABLE messages ADD COLUMN "display_kind" TEXT;
               ALTER TABLE messages ADD COLUMN "display_metadata" TEXT;
               UPDATE messages SET display_kind = 'steer' WHERE id = 1;"#,
        )
        .expect("alter");
    writer.close().expect("close writer");

    let second = compat::adapt(&reader).expect("re-adapt");
    assert_ne!(second.schema_cookie, first.schema_cookie);
    assert!(!second.lacks("messages", "display_kind"));
    assert!(second.lacks("sessions", "pinned"));
    let kind: Option<String> = reader
        .query_row("SELECT display_kind FROM messages WHERE id = 1", [], |r| {
            r.get(0)
        })
        .expect("real value through the new view");
    assert_eq!(kind.as_deref(), Some("steer"));
    // The cached path answers the same.
    assert_eq!(compat::adapt(&reader).expect("again"), second);
}

#[test]
fn fts_shapes_are_recognised_by_their_stored_sql() {
    let cases = [
        (
            Shape::Fresh(1),
            BaseLayout::ContentOnly,
            false,
            TrigramCoverage::Unavailable,
        ),
        (
            Shape::Fresh(10),
            BaseLayout::ContentOnly,
            false,
            TrigramCoverage::Unavailable,
        ),
        (
            Shape::Fresh(11),
            BaseLayout::LegacyInline,
            true,
            TrigramCoverage::Full,
        ),
        (
            Shape::EraEnd(22),
            BaseLayout::LegacyInline,
            true,
            TrigramCoverage::Full,
        ),
        (
            Shape::V23,
            BaseLayout::External,
            true,
            TrigramCoverage::Full,
        ),
        (
            Shape::Fresh(25),
            BaseLayout::External,
            true,
            TrigramCoverage::Full,
        ),
    ];
    for (shape, base, fts, coverage) in cases {
        let (_dir, path) = fixture(shape);
        let conn = read_only(&path);
        let objects = FtsObjects::probe(&conn).expect("probe");
        assert_eq!(objects.base, base, "{shape}");
        assert_eq!(objects.fts, fts, "{shape}");
        assert_eq!(objects.trigram_coverage, coverage, "{shape}");
        assert!(!objects.cjk_maintained, "{shape}");
    }
}

#[test]
fn search_on_a_content_only_index_scans_with_fts_meaning() {
    let (_dir, path) = fixture(Shape::Fresh(9));
    let conn = read_only(&path);
    compat::adapt(&conn).expect("adapt");
    let caps = FtsCapabilities::detect(&conn).expect("caps");
    assert!(!caps.fts);
    let ids = |q: &str| {
        let mut ids: Vec<i64> = search_messages(&conn, q, &SearchOptions::default(), caps)
            .expect("search")
            .iter()
            .map(|h| h.id)
            .collect();
        ids.sort_unstable();
        ids
    };
    // Terms are AND-ed, OR splits, NOT excludes (as MATCH would).
    // Message 2 holds `docker build .` in its tool call arguments.
    assert_eq!(ids("docker build"), vec![1, 2]);
    assert_eq!(ids("docker OR nginx"), vec![1, 2, 16, 19, 20]);
    assert_eq!(ids("nginx NOT logs"), vec![19]);
    // Tool names are found although generation A never indexed them.
    assert!(ids("terminal").contains(&3));
}

#[test]
fn search_on_an_unadapted_old_file_is_an_error_not_an_empty_answer() {
    let (_dir, path) = fixture(Shape::Fresh(12));
    let conn = read_only(&path);
    let caps = FtsCapabilities::detect(&conn).expect("caps");
    assert!(caps.fts, "legacy inline index is served");
    let result = search_messages(&conn, "nginx", &SearchOptions::default(), caps);
    assert!(
        result.is_err(),
        "missing m.active must not read as no hits: {result:?}"
    );
    // And with the views it answers.
    compat::adapt(&conn).expect("adapt");
    let hits = search_messages(&conn, "nginx", &SearchOptions::default(), caps).expect("search");
    assert_eq!(hits.len(), 2);
}

#[test]
fn an_fts_syntax_error_is_still_no_results() {
    let (_dir, path) = fixture(Shape::V23);
    let conn = read_only(&path);
    let caps = FtsCapabilities::detect(&conn).expect("caps");
    // `api.md` §8.6: sanitized to an FTS5 syntax error.
    let hits = search_messages(&conn, "alice@example.com", &SearchOptions::default(), caps)
        .expect("a syntax error is not an error");
    assert!(hits.is_empty());
}

/// Overwrites the file's pages with garbage after the reader opened it (as a
/// damaged disk or a foreign process would).
fn clobber(path: &std::path::Path, from: usize) {
    let mut bytes = std::fs::read(path).expect("read");
    for (i, b) in bytes.iter_mut().enumerate().skip(from) {
        *b = (i * 7 + 13) as u8;
    }
    std::fs::write(path, bytes).expect("write garbage");
}

#[test]
fn a_file_replaced_by_garbage_is_an_error_for_every_read() {
    let (_dir, path) = fixture(Shape::V23);
    // Rollback-journal mode, so the reader reads the main file only.
    let conn = Connection::open(&path).expect("open");
    let _: String = conn
        .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
        .expect("delete mode");
    conn.close().expect("close");
    let conn = read_only(&path);
    clobber(&path, 0);

    let err = FtsObjects::probe(&conn).expect_err("probe must fail");
    assert!(
        matches!(err.kind(), ErrorKind::NotADatabase | ErrorKind::Corrupt),
        "{err}: {:?}",
        err.kind()
    );
    let err = compat::adapt(&conn).expect_err("adapt must fail");
    assert!(matches!(
        err.kind(),
        ErrorKind::NotADatabase | ErrorKind::Corrupt
    ));
    let caps = FtsCapabilities {
        fts: true,
        trigram: true,
        ..FtsCapabilities::default()
    };
    let result = search_messages(&conn, "nginx", &SearchOptions::default(), caps);
    let err = result.expect_err("search must fail, not answer []");
    assert!(matches!(
        err.kind(),
        ErrorKind::NotADatabase | ErrorKind::Corrupt
    ));
    let scan = search_messages(
        &conn,
        "nginx",
        &SearchOptions::default(),
        FtsCapabilities::default(),
    );
    assert!(scan.is_err(), "the scan must fail too: {scan:?}");
}

#[test]
fn a_corrupt_page_is_an_error_for_search_and_messages() {
    let (_dir, path) = fixture(Shape::V23);
    let conn = Connection::open(&path).expect("open");
    let _: String = conn
        .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
        .expect("delete mode");
    let page_size: usize = conn
        .query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))
        .expect("page size") as usize;
    conn.close().expect("close");
    let conn = read_only(&path);
    let caps = FtsCapabilities::detect(&conn).expect("caps before the damage");
    // Keep the header and schema page, damage every page after it.
    clobber(&path, page_size);

    let search = search_messages(&conn, "nginx", &SearchOptions::default(), caps);
    let err = search.expect_err("search on corrupt pages must fail");
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    let read = messages::get_messages(&conn, "s-discord", MessagePage::default());
    assert!(read.is_err(), "{read:?}");
}

#[test]
fn newer_fts_layouts_are_served_by_their_rules() {
    let cases = [
        (
            Shape::Upgraded26,
            BaseLayout::External,
            true,
            TrigramCoverage::Full,
            true,
        ),
        (
            Shape::FtsStale26,
            BaseLayout::External,
            false,
            TrigramCoverage::Unavailable,
            false,
        ),
        (
            Shape::V30Layout3,
            BaseLayout::ExternalView,
            true,
            TrigramCoverage::Restricted,
            true,
        ),
        (
            Shape::V30Layout2,
            BaseLayout::External,
            true,
            TrigramCoverage::Restricted,
            true,
        ),
        (
            Shape::V30TrigramDetached,
            BaseLayout::ExternalView,
            true,
            TrigramCoverage::Unavailable,
            false,
        ),
    ];
    for (shape, base, fts, coverage, trigram) in cases {
        let (_dir, path) = fixture(shape);
        let conn = read_only(&path);
        let objects = FtsObjects::probe(&conn).expect("probe");
        assert_eq!(objects.base, base, "{shape}");
        assert!(objects.newer_file, "{shape}");
        assert_eq!(objects.trigram_coverage, coverage, "{shape}");
        let caps = FtsCapabilities::from_objects(&conn, &objects).expect("caps");
        assert_eq!(caps.fts, fts, "{shape}");
        assert_eq!(caps.trigram, trigram, "{shape}");
        assert!(!caps.cjk_serving, "{shape}");
    }
}

/// `newer-versions.md` §5.3 item 3: a source filter naming a source the
/// restricted trigram index leaves out skips it and scans with LIKE.
#[test]
fn a_filter_on_an_unindexed_source_skips_a_restricted_trigram_index() {
    let (_dir, path) = fixture(Shape::V30Layout3);
    let conn = read_only(&path);
    compat::adapt(&conn).expect("adapt");
    let caps = FtsCapabilities::detect(&conn).expect("caps");
    assert!(caps.trigram_restricted);
    let unfiltered =
        search_messages(&conn, "桂林山水", &SearchOptions::default(), caps).expect("search");
    assert!(
        unfiltered.is_empty(),
        "cron rows are not in the trigram index"
    );
    let cron = SearchOptions {
        source_filter: Some(vec!["cron".to_owned()]),
        ..SearchOptions::default()
    };
    let hits = search_messages(&conn, "桂林山水", &cron, caps).expect("search");
    assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), vec![27]);
    // Tool rows: `role_filter=["tool"]` reaches the base index's text.
    let tool = SearchOptions {
        role_filter: Some(vec!["tool".to_owned()]),
        ..SearchOptions::default()
    };
    let hits = search_messages(&conn, "alphaprobe", &tool, caps).expect("search");
    assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), vec![26]);
}

#[test]
fn a_blob_display_identity_reads_without_error() {
    let (_dir, path) = fixture(Shape::V30Layout3);
    let conn = read_only(&path);
    assert!(compat::adapt(&conn).expect("adapt").is_exact());
    let read = messages::get_messages(&conn, "s-cli-root", MessagePage::default()).expect("read");
    assert_eq!(read.first().map(|m| m.id), Some(1));
    let session = sessions::get_session(&conn, "s-cli-child")
        .expect("get")
        .expect("row");
    assert_eq!(
        session.system_prompt, None,
        "v23 reads the inline column (prompt by hash)"
    );
}
