//! The automatic runs on a store several hosts share: the stamp check, the
//! work and the new stamp are one write under the store's writer lock, so
//! handles racing each other run each sweep once per interval between them.

use hermes_state_core::prelude::*;
use std::sync::{Arc, Barrier};

use hermes_state_postgres::{AutoRun, LAST_AUTO_ARCHIVE, LAST_AUTO_PRUNE, PgStore};
use hermes_state_types::NewSession;

use crate::common::TestSchema;

const HOSTS: usize = 4;

#[test]
fn racing_hosts_run_each_automatic_sweep_once_per_interval() {
    let Some(schema) = TestSchema::new("racing automatic sweeps") else {
        return;
    };
    let first = PgStore::open(&schema.url).unwrap();
    let now = first.now();
    for id in ["idle", "old"] {
        first.create_session(&NewSession::new(id, "cli")).unwrap();
    }
    first.end_session("old", "user_exit").unwrap();
    let mut client = schema.client();
    client
        .batch_execute(&format!(
            "SET search_path TO \"{s}\";
             UPDATE sessions SET started_at = {idle} WHERE id = 'idle';
             UPDATE sessions SET started_at = {old} WHERE id = 'old';",
            s = schema.url.schema(),
            idle = now - 10.0 * 86_400.0,
            old = now - 100.0 * 86_400.0,
        ))
        .unwrap();

    // Each handle has its own pool, as a host would.
    let hosts: Vec<PgStore> = (0..HOSTS)
        .map(|_| PgStore::open(&schema.url).unwrap())
        .collect();
    let start = Arc::new(Barrier::new(HOSTS));
    let runs: Vec<(AutoRun, AutoRun)> = std::thread::scope(|scope| {
        let threads: Vec<_> = hosts
            .iter()
            .map(|host| {
                let start = Arc::clone(&start);
                scope.spawn(move || {
                    start.wait();
                    let archive = host.maybe_auto_archive(3.0, 24.0, true).unwrap();
                    let prune = host.maybe_auto_prune(90.0, 24.0, None).unwrap();
                    (archive, prune)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });

    let archives: Vec<AutoRun> = runs.iter().map(|(a, _)| *a).collect();
    let prunes: Vec<AutoRun> = runs.iter().map(|(_, p)| *p).collect();
    // Both sessions are idle; the ended old one is then pruned.
    for (name, outcomes, expected) in [
        ("archive", &archives, AutoRun::Ran(2)),
        ("prune", &prunes, AutoRun::Ran(1)),
    ] {
        let ran: Vec<&AutoRun> = outcomes
            .iter()
            .filter(|o| **o != AutoRun::Skipped)
            .collect();
        assert_eq!(ran, [&expected], "{name}: {outcomes:?}");
    }
    let idle = first.get_session("idle").unwrap().unwrap();
    assert_eq!(idle.archived, 1);
    assert!(first.get_session("old").unwrap().is_none());
    for key in [LAST_AUTO_ARCHIVE, LAST_AUTO_PRUNE] {
        let stamp: f64 = first.get_meta(key).unwrap().unwrap().parse().unwrap();
        assert!((now..=first.now()).contains(&stamp), "{key}: {stamp}");
    }
}
