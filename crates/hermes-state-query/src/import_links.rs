//! Which parent links of an `import_sessions` (`api.md` §11.2) are made on
//! a SQLite store: the rule of `hermes_state_core::import_links` over this
//! crate's two reads.

pub use hermes_state_core::import_links::{StoredLinks, plan_parent_links};
use rusqlite::Connection;

use crate::error::QueryError;
use crate::sessions::{parent_of, session_exists};

/// A SQLite connection (inside the import's write transaction) as
/// [`StoredLinks`].
pub struct SqliteLinks<'c>(pub &'c Connection);

impl StoredLinks for SqliteLinks<'_> {
    type Error = QueryError;

    fn session_exists(&mut self, id: &str) -> Result<bool, QueryError> {
        session_exists(self.0, id)
    }

    fn parent_of(&mut self, id: &str) -> Result<Option<String>, QueryError> {
        parent_of(self.0, id)
    }
}
