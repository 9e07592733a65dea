//! Every historical and newer file shape (`xtask::fixtures`), read through a
//! `mode=ro` connection after `compat::adapt`, never migrated: each seeded
//! session, the recent-session listing, messages and conversations, the
//! manifest's search expectations and statistics read back the stored values,
//! and the file's bytes, journal mode and sidecar set are unchanged.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hermes_state_query::compat::{self, READ_TABLES};
use hermes_state_query::listing::{ListFilter, recent_sessions};
use hermes_state_query::search::{FtsCapabilities, SearchOptions, search_messages};
use hermes_state_query::{MessagePage, messages, sessions, stats};
use hermes_state_types::Content;
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use xtask::fixtures::{FixtureManifest, Shape, all_shapes, newer_shapes, sha256, write_fixture};

/// How the file is found on disk when the reader opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Journal {
    /// Converted to rollback-journal mode: the reader must create no sidecar
    /// (no `-journal`).
    Delete,
    /// WAL, held open by another connection (a running agent), so `-wal` and
    /// `-shm` exist before and after the read.
    WalHeld,
}

/// The state of the file a reader must leave alone.
#[derive(Debug, PartialEq, Eq)]
struct FileState {
    sha256: String,
    /// Header bytes 18–19: (1, 1) rollback journal, (2, 2) WAL.
    journal_bytes: (u8, u8),
}

fn file_state(path: &Path) -> FileState {
    // Test-only: the file is read while no connection of this process is open
    // on it, so no POSIX lock can be dropped.
    let bytes = std::fs::read(path).expect("read the fixture");
    FileState {
        sha256: sha256::sha256_hex(&bytes),
        journal_bytes: (bytes[18], bytes[19]),
    }
}

fn sidecars(path: &Path) -> BTreeSet<String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    std::fs::read_dir(path.parent().expect("parent"))
        .expect("list the folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| f.starts_with(&name) && *f != name)
        .collect()
}

pub fn read_only(path: &Path) -> Connection {
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open mode=ro")
}

fn fixture(shape: Shape) -> (tempfile::TempDir, PathBuf, FixtureManifest) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(shape.file_name());
    let manifest = write_fixture(&path, shape).unwrap_or_else(|e| panic!("{shape}: {e}"));
    (dir, path, manifest)
}

fn every_shape() -> Vec<Shape> {
    let mut shapes = all_shapes();
    shapes.extend(newer_shapes());
    shapes
}

#[test]
fn every_shape_reads_read_only_in_delete_mode() {
    for shape in every_shape() {
        check_shape(shape, Journal::Delete);
    }
}

#[test]
fn every_shape_reads_read_only_while_an_agent_holds_the_wal() {
    for shape in every_shape() {
        check_shape(shape, Journal::WalHeld);
    }
}

fn check_shape(shape: Shape, journal: Journal) {
    let (_dir, path, manifest) = fixture(shape);
    if journal == Journal::Delete {
        let conn = Connection::open(&path).expect("open to switch the journal");
        let mode: String = conn
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
            .expect("journal_mode");
        assert_eq!(mode, "delete");
        conn.close().expect("close");
    }
    let before = file_state(&path);
    assert_eq!(
        before.journal_bytes,
        match journal {
            Journal::Delete => (1, 1),
            Journal::WalHeld => (2, 2),
        },
        "{shape}"
    );
    let holder = (journal == Journal::WalHeld).then(|| {
        let conn = Connection::open(&path).expect("agent connection");
        let _: i64 = conn
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .expect("agent read");
        conn
    });
    let sidecars_before = sidecars(&path);
    if journal == Journal::WalHeld {
        assert!(
            sidecars_before.iter().any(|s| s.ends_with("-wal")),
            "{shape}"
        );
    }

    let conn = read_only(&path);
    read_and_check(&conn, &manifest);
    conn.close().expect("close the reader");

    assert_eq!(
        sidecars(&path),
        sidecars_before,
        "{shape} {journal:?}: sidecars"
    );
    if let Some(holder) = holder {
        holder.close().expect("close the agent");
    }
    assert_eq!(
        file_state(&path),
        before,
        "{shape} {journal:?}: file changed"
    );
}

fn read_and_check(conn: &Connection, manifest: &FixtureManifest) {
    let shape = manifest.shape;
    let adaptation = compat::adapt(conn).unwrap_or_else(|e| panic!("{shape}: adapt: {e}"));
    check_adaptation(&adaptation, manifest);
    assert_eq!(
        compat::adapt(conn).expect("adapt again"),
        adaptation,
        "{shape}: a second adapt is a no-op"
    );

    // Sessions, one by one.
    for seeded in &manifest.sessions {
        let session = sessions::get_session(conn, &seeded.id)
            .unwrap_or_else(|e| panic!("{shape}: get_session: {e}"))
            .unwrap_or_else(|| panic!("{shape}: {} missing", seeded.id));
        assert_eq!(session.source, seeded.source, "{shape} {}", seeded.id);
        assert_eq!(session.title, seeded.title, "{shape} {}", seeded.id);
        assert_eq!(
            session.parent_session_id, seeded.parent_session_id,
            "{shape}"
        );
        assert_eq!(session.started_at, seeded.started_at, "{shape}");
        assert_eq!(session.ended_at, seeded.ended_at, "{shape}");
        assert_eq!(session.end_reason, seeded.end_reason, "{shape}");
        assert_eq!(session.model, seeded.model, "{shape}");
        assert_eq!(session.model_config, seeded.model_config, "{shape}");
        assert_eq!(session.system_prompt, seeded.system_prompt, "{shape}");
        assert_eq!(session.message_count, Some(seeded.message_count), "{shape}");
        assert_eq!(
            session.tool_call_count,
            Some(seeded.tool_call_count),
            "{shape}"
        );
        assert_eq!(session.input_tokens, Some(seeded.input_tokens), "{shape}");
        assert_eq!(session.output_tokens, Some(seeded.output_tokens), "{shape}");
        let stored = |column: &str| {
            seeded
                .row
                .iter()
                .find(|(c, _)| c == column)
                .map(|(_, v)| v.clone())
        };
        // A column the version lacks reads as its v23 default.
        let pinned = match stored("pinned") {
            Some(Value::Integer(i)) => i,
            _ => 0,
        };
        assert_eq!(session.pinned, pinned, "{shape}");
        let archived = match stored("archived") {
            Some(Value::Integer(i)) => i,
            _ => 0,
        };
        assert_eq!(session.archived, archived, "{shape}");
    }

    // The recent-session listing: every session, newest first, with previews.
    let listed = recent_sessions(
        conn,
        &ListFilter {
            limit: Some(100),
            ..ListFilter::default()
        },
    )
    .unwrap_or_else(|e| panic!("{shape}: recent_sessions: {e}"));
    let mut expected: Vec<&xtask::fixtures::SeedSession> = manifest.sessions.iter().collect();
    expected.sort_by(|a, b| b.started_at.total_cmp(&a.started_at));
    assert_eq!(
        listed
            .iter()
            .map(|l| l.session.id.as_str())
            .collect::<Vec<_>>(),
        expected.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        "{shape}"
    );
    for listing in &listed {
        let mut own: Vec<_> = manifest
            .messages
            .iter()
            .filter(|m| m.session_id == listing.session.id)
            .collect();
        own.sort_by(|a, b| a.timestamp.total_cmp(&b.timestamp).then(a.id.cmp(&b.id)));
        let preview = own
            .iter()
            .find(|m| m.role == "user" && m.content.is_some())
            .and_then(|m| m.content.as_deref())
            .map_or(String::new(), |c| {
                if c.starts_with('\0') {
                    String::new()
                } else {
                    c.chars().take(63).collect()
                }
            });
        assert_eq!(listing.preview, preview, "{shape} {}", listing.session.id);
        let last = own
            .last()
            .map_or(listing.session.started_at, |m| m.timestamp);
        assert_eq!(listing.last_active, last, "{shape}");
    }

    // Messages and the conversation of each session.
    for seeded in &manifest.sessions {
        let own: Vec<_> = manifest
            .messages
            .iter()
            .filter(|m| m.session_id == seeded.id)
            .collect();
        let read = messages::get_messages(conn, &seeded.id, MessagePage::default())
            .unwrap_or_else(|e| panic!("{shape}: get_messages: {e}"));
        assert_eq!(
            read.iter().map(|m| m.id).collect::<Vec<_>>(),
            own.iter().map(|m| m.id).collect::<Vec<_>>(),
            "{shape} {}",
            seeded.id
        );
        for (message, seed) in read.iter().zip(&own) {
            assert_eq!(message.role, seed.role, "{shape}");
            assert_eq!(
                message.content,
                seed.content.as_deref().map(content),
                "{shape} {}",
                seed.id
            );
            assert_eq!(message.tool_name, seed.tool_name, "{shape}");
            assert_eq!(message.timestamp, seed.timestamp, "{shape}");
        }
        let conversation = messages::get_messages_as_conversation(conn, &seeded.id, false, false)
            .unwrap_or_else(|e| panic!("{shape}: conversation: {e}"));
        let users: Vec<Option<Content>> = conversation
            .iter()
            .filter(|m| m.role == "user")
            .map(|m| m.content.clone())
            .collect();
        let seeded_users: Vec<Option<Content>> = own
            .iter()
            .filter(|m| m.role == "user")
            .map(|m| m.content.as_deref().map(content))
            .collect();
        assert_eq!(users, seeded_users, "{shape} {}", seeded.id);
    }
    assert_eq!(
        messages::message_count(conn, None).expect("count"),
        manifest.messages.len() as i64,
        "{shape}"
    );

    // Search: the manifest's expectations, through whatever index serves.
    let caps = FtsCapabilities::detect(conn).unwrap_or_else(|e| panic!("{shape}: detect: {e}"));
    for expectation in &manifest.search {
        let hits = search_messages(conn, expectation.query, &SearchOptions::default(), caps)
            .unwrap_or_else(|e| panic!("{shape}: search {}: {e}", expectation.query));
        let mut ids: Vec<i64> = hits.iter().map(|h| h.id).collect();
        ids.sort_unstable();
        assert_eq!(
            ids, expectation.message_ids,
            "{shape}: search {:?} ({caps:?})",
            expectation.query
        );
    }

    // Statistics.
    let totals = stats::model_totals(conn).unwrap_or_else(|e| panic!("{shape}: totals: {e}"));
    for total in &totals {
        let input: i64 = manifest
            .sessions
            .iter()
            .filter(|s| s.model.as_deref() == Some(total.model.as_str()))
            .map(|s| s.input_tokens)
            .sum();
        assert_eq!(total.total_input, Some(input), "{shape} {}", total.model);
    }
    let usage =
        stats::usage_by_model_and_task(conn).unwrap_or_else(|e| panic!("{shape}: usage: {e}"));
    let seeded_input: i64 = manifest
        .rows_of("session_model_usage")
        .iter()
        .filter_map(|r| r.row.iter().find(|(c, _)| c == "input_tokens"))
        .map(|(_, v)| if let Value::Integer(i) = v { *i } else { 0 })
        .sum();
    assert_eq!(
        usage.iter().map(|u| u.input_tokens).sum::<i64>(),
        seeded_input,
        "{shape}"
    );
}

/// What a stored content text reads as.
fn content(stored: &str) -> Content {
    match stored.strip_prefix("\0json:") {
        Some(json) => Content::Structured(serde_json::from_str(json).expect("seeded JSON")),
        None => Content::Text(stored.to_owned()),
    }
}

fn check_adaptation(adaptation: &compat::Adaptation, manifest: &FixtureManifest) {
    let shape = manifest.shape;
    assert_eq!(
        adaptation.schema_version,
        Some(manifest.schema_version),
        "{shape}"
    );
    let layout = shape.layout().expect("layout");
    for (table, columns) in READ_TABLES {
        let present: Option<Vec<String>> = match *table {
            "sessions" => Some(manifest.session_columns.clone()),
            "messages" => Some(manifest.message_columns.clone()),
            _ => manifest.tables.iter().any(|t| t == table).then(|| {
                layout
                    .table(table)
                    .map(|t| t.columns.iter().map(|c| (*c).to_owned()).collect())
                    .unwrap_or_default()
            }),
        };
        match present {
            None => {
                let shim = adaptation
                    .shim(table)
                    .unwrap_or_else(|| panic!("{shape}: {table}"));
                assert!(shim.absent, "{shape}: {table} should be absent");
            }
            Some(present) => {
                for column in *columns {
                    assert_eq!(
                        adaptation.lacks(table, column.name),
                        !present.iter().any(|p| p == column.name),
                        "{shape}: {table}.{}",
                        column.name
                    );
                }
            }
        }
    }
    if manifest.schema_version >= 23 && shape != Shape::Fresh(23) {
        assert!(adaptation.is_exact(), "{shape}: {adaptation:?}");
    }
}
