//! Full-text search on the facade.

use hermes_state_query::search::{self, FtsCapabilities, FtsObjects, SearchHit, SearchOptions};
use hermes_state_types::ErrorKind;

use crate::db::SessionDb;
use crate::error::{Error, Result};

impl SessionDb {
    /// Searches the messages (`api.md` §8): FTS5 syntax (implicit AND,
    /// `"phrases"`, `OR`, `NOT`, `prefix*`), CJK and substring search, with
    /// source/role filters, paging and ordering as the original.
    ///
    /// A query FTS5 cannot parse gives no results, not an error. A corrupt
    /// FTS index is rebuilt in place once per handle and the search retried.
    pub fn search_messages(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
        let run = || {
            self.read(|conn| {
                let caps = FtsCapabilities::from_objects(conn, &self.fts_objects(conn));
                Ok(search::search_messages(conn, query, options, caps)?)
            })
        };
        match run() {
            Err(error) if self.should_repair_fts(&error) => {
                self.rebuild_fts_indexes()?;
                run()
            }
            result => result,
        }
    }

    /// The FTS objects of the store, probed again only when the schema
    /// changed since the last search (another process may have dropped the
    /// CJK triggers, or finished a conversion).
    fn fts_objects(&self, conn: &rusqlite::Connection) -> FtsObjects {
        let cookie = FtsObjects::schema_cookie(conn);
        let mut cached = self.fts_objects.lock().unwrap_or_else(|p| p.into_inner());
        match *cached {
            Some(objects) if objects.schema_cookie == cookie && cookie >= 0 => objects,
            _ => {
                let objects = FtsObjects::probe(conn);
                *cached = Some(objects);
                objects
            }
        }
    }

    fn should_repair_fts(&self, error: &Error) -> bool {
        error.kind() == ErrorKind::Corrupt
            && !self.is_read_only()
            && hermes_state_schema::is_fts_corruption_text(&error.to_string().to_ascii_lowercase())
            && self.claim_fts_repair()
    }
}
