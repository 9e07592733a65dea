//! Compression locks, gateway routing, async delegations and `state_meta`
//! writes (`api.md` §12), one module each; the lock contention between
//! processes has its own. The helpers are here.

mod compression_locks;
mod delegations;
mod gateway_routing;
mod lock_processes;
mod state_meta;

use std::path::Path;
use std::time::Duration;

use hermes_state::{Delegation, DelegationFilter, ErrorKind, NewDelegation, NewSession, SessionDb};

use crate::common::unix_now;

fn temp_db() -> (tempfile::TempDir, SessionDb) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    (dir, db)
}

fn lock_row(db: &SessionDb, session_id: &str) -> Option<(String, f64, f64)> {
    db.read(|conn| {
        Ok(conn
            .query_row(
                "SELECT holder, acquired_at, expires_at FROM compression_locks WHERE session_id = ?1",
                [session_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .ok())
    })
    .expect("read lock")
}
