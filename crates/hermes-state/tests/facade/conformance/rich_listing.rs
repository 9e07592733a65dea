//! Listings for dashboards and cleanups through the seam: every session by
//! last activity (`api.md` §10.1), the prune candidates and archiving them
//! (§10.4, §11.3), and the count of empty sessions (§11.6).

use hermes_state::{ErrorKind, NewMessage, NewSession, PruneFilters, PruneOptions, StoreLocation};

use super::backends::{Backend, backends};

/// Sets a session's `started_at`, raw on either backend (the seam has no
/// call for it), so that orders do not hang on the clock.
fn set_started(b: &Backend, id: &str, at: f64) {
    if let Some(mut client) = b.pg_client() {
        client
            .execute(
                "UPDATE sessions SET started_at = $1 WHERE id = $2",
                &[&at, &id],
            )
            .unwrap();
        return;
    }
    let StoreLocation::Sqlite(path) = &b.location else {
        unreachable!("a SQLite backend has a path")
    };
    hermes_state::rusqlite::Connection::open(path)
        .unwrap()
        .execute(
            "UPDATE sessions SET started_at = ?1 WHERE id = ?2",
            hermes_state::rusqlite::params![at, id],
        )
        .unwrap();
}

fn add(b: &Backend, id: &str, source: &str, started_at: f64) {
    b.store
        .create_session(&NewSession::new(id, source))
        .unwrap();
    set_started(b, id, started_at);
}

fn ids(rows: &[hermes_state::SessionActivity]) -> Vec<&str> {
    rows.iter().map(|r| r.session.id.as_str()).collect()
}

#[test]
fn sessions_by_last_activity_and_empty_counts_alike() {
    for b in backends("rich_listing") {
        let s = &b.store;
        let n = b.name();
        add(&b, "a", "cli", 100.0);
        add(&b, "b", "telegram", 200.0);
        add(&b, "c", "cli", 300.0);
        add(&b, "d", "cli", 300.0);
        s.append_message(
            &NewMessage::new("a", "user")
                .content("late")
                .timestamp(900.0),
        )
        .unwrap();

        let all = s.search_sessions(None, 10, 0).unwrap();
        // Activity first; equal starts by id, descending.
        assert_eq!(ids(&all), ["a", "d", "c", "b"], "{n}");
        assert_eq!(
            (all[0].last_active, all[3].last_active),
            (900.0, 200.0),
            "{n}"
        );
        assert_eq!(all[0].session.message_count, Some(1), "{n}");
        assert_eq!(
            ids(&s.search_sessions(Some("cli"), 10, 0).unwrap()),
            ["a", "d", "c"],
            "{n}"
        );
        assert_eq!(
            ids(&s.search_sessions(Some(""), 2, 1).unwrap()),
            ["d", "c"],
            "{n}"
        );
        assert!(
            s.search_sessions(Some("nope"), 10, 0).unwrap().is_empty(),
            "{n}"
        );

        // Empty: no message, ended, not archived.
        assert_eq!(s.count_empty_sessions().unwrap(), 0, "{n}");
        for id in ["a", "b", "c", "d"] {
            s.end_session(id, "user_exit").unwrap();
        }
        assert_eq!(s.count_empty_sessions().unwrap(), 3, "{n}");
        s.set_session_archived("b", true).unwrap();
        assert_eq!(s.count_empty_sessions().unwrap(), 2, "{n}");
    }
}

#[test]
fn prune_candidates_list_and_archive_alike() {
    for b in backends("rich_listing") {
        let s = &b.store;
        let n = b.name();
        add(&b, "old-a", "cli", 100.0);
        add(&b, "old-b", "telegram", 50.0);
        add(&b, "old-c", "cli", 150.0);
        add(&b, "live", "cli", 10.0);
        s.append_message(
            &NewMessage::new("old-a", "user")
                .content("hi")
                .timestamp(120.0),
        )
        .unwrap();
        for id in ["old-a", "old-b", "old-c"] {
            s.end_session(id, "user_exit").unwrap();
        }
        let options = |source: Option<&str>, dry_run: bool| PruneOptions {
            older_than_days: Some(1.0),
            source: source.map(str::to_owned),
            dry_run,
            ..PruneOptions::default()
        };

        let listed = s.list_prune_candidates(&options(None, false)).unwrap();
        // Ended only, oldest start first, with last activity.
        assert_eq!(ids(&listed), ["old-b", "old-a", "old-c"], "{n}");
        assert_eq!(
            listed.iter().map(|r| r.last_active).collect::<Vec<_>>(),
            [50.0, 120.0, 150.0],
            "{n}"
        );
        assert_eq!(
            ids(&s
                .list_prune_candidates(&options(Some("cli"), true))
                .unwrap()),
            ["old-a", "old-c"],
            "{n}"
        );

        s.set_session_archived("old-c", true).unwrap();
        // A dry run counts what would change and writes nothing.
        assert_eq!(s.archive_sessions(&options(None, true)).unwrap(), 2, "{n}");
        assert_eq!(s.get_session("old-a").unwrap().unwrap().archived, 0, "{n}");
        assert_eq!(
            s.archive_sessions(&options(Some("cli"), false)).unwrap(),
            1,
            "{n}"
        );
        let archived: Vec<i64> = ["old-a", "old-b", "old-c", "live"]
            .iter()
            .map(|id| s.get_session(id).unwrap().unwrap().archived)
            .collect();
        assert_eq!(archived, [1, 0, 1, 0], "{n}");
        assert_eq!(s.archive_sessions(&options(None, false)).unwrap(), 1, "{n}");
        assert_eq!(s.archive_sessions(&options(None, false)).unwrap(), 0, "{n}");

        // Filters apply: only archived ones listed.
        let archived_only = PruneOptions {
            older_than_days: None,
            filters: PruneFilters {
                archived: Some(true),
                ..PruneFilters::default()
            },
            ..PruneOptions::default()
        };
        assert_eq!(
            ids(&s.list_prune_candidates(&archived_only).unwrap()).len(),
            3,
            "{n}"
        );

        let bad = PruneOptions {
            older_than_days: Some(f64::NAN),
            ..PruneOptions::default()
        };
        assert_eq!(
            s.list_prune_candidates(&bad).unwrap_err().kind(),
            ErrorKind::InvalidInput,
            "{n}"
        );
        assert_eq!(
            s.archive_sessions(&bad).unwrap_err().kind(),
            ErrorKind::InvalidInput,
            "{n}"
        );
    }
}
