//! The original's public methods that `api.md` does not list, where the
//! file shows more than the contract: the FTS maintenance steps (SQLite's
//! own), and the Telegram topic mode on a read-only file and by name. The
//! rest of those methods (the topic calls, the resume and anchored views,
//! the lineage export) are conformance cases on every backend
//! (`telegram_topics`, `conversation_views`, `lineage`). The answers were
//! also compared with the original's, call by call, by replaying traces it
//! recorded (docs/DECISIONS.md, "The original's methods beyond api.md").
mod fts_steps;
mod telegram_topics;

use std::sync::Arc;

use hermes_state::{Clock, FixedClock, SessionDb, StoreOptions};

/// A store whose clock is fixed.
pub struct Clocked {
    pub db: SessionDb,
    pub path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Clocked {
    pub fn at(seconds: f64) -> Clocked {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = StoreOptions {
            clock: Some(FixedClock::new(seconds) as Arc<dyn Clock>),
            ..StoreOptions::default()
        };
        let path = dir.path().join("state.db");
        let db = SessionDb::open_with(&path, &options).expect("open");
        Clocked {
            db,
            path,
            _dir: dir,
        }
    }
}
