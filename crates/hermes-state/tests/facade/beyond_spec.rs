//! The original's public methods that `api.md` does not list (its Telegram
//! topic mode, the FTS maintenance steps, the resume and anchored views,
//! the lineage export), each case a class of input with the original's
//! answer and its effect on the file as the expected values. The answers
//! were also compared with the original's, call by call, by replaying
//! traces it recorded (docs/DECISIONS.md, "The original's methods beyond
//! api.md").
mod conversation_views;
mod fts_steps;
mod lineage_export;
mod telegram_topics;

use std::sync::Arc;

use hermes_state::{Clock, FixedClock, SessionDb, StoreOptions};

/// A store whose clock is fixed (and can be moved).
pub struct Clocked {
    pub db: SessionDb,
    pub clock: Arc<FixedClock>,
    pub path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Clocked {
    pub fn at(seconds: f64) -> Clocked {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = FixedClock::new(seconds);
        let options = StoreOptions {
            clock: Some(clock.clone() as Arc<dyn Clock>),
            ..StoreOptions::default()
        };
        let path = dir.path().join("state.db");
        let db = SessionDb::open_with(&path, &options).expect("open");
        Clocked {
            db,
            clock,
            path,
            _dir: dir,
        }
    }
}
