//! Full-text search on the facade.

use hermes_state_query::search::{self, FtsCapabilities, FtsObjects, SearchHit, SearchOptions};

use crate::db::SessionDb;
use crate::error::Result;

impl SessionDb {
    /// Searches the messages (`api.md` §8): FTS5 syntax (implicit AND,
    /// `"phrases"`, `OR`, `NOT`, `prefix*`), CJK and substring search, with
    /// source/role filters, paging and ordering as the original.
    ///
    /// A query FTS5 cannot parse gives no results, not an error; every other
    /// failure is an error, never an empty answer. Searching is a read: a
    /// corrupt FTS index is reported (kind [`crate::ErrorKind::Corrupt`]), not
    /// rebuilt here (the original rebuilds in place; here a read never
    /// writes). [`SessionDb::repair`] or [`SessionDb::rebuild_fts`] rebuild it,
    /// and the write path rebuilds it once when a write meets it.
    pub fn search_messages(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
        // One read transaction for the cookie, the markers and the whole search.
        self.snapshot_read(|conn| {
            search::in_read_snapshot(conn, || {
                let caps = FtsCapabilities::from_objects(conn, &self.fts_objects(conn)?)?;
                Ok(search::search_messages(conn, query, options, caps)?)
            })
        })
    }

    /// The FTS objects of the store, probed again only when the schema
    /// changed since the last search (another process may have dropped the
    /// CJK triggers, or finished a conversion).
    pub(crate) fn fts_objects(&self, conn: &rusqlite::Connection) -> Result<FtsObjects> {
        let cookie = FtsObjects::schema_cookie(conn);
        let mut cached = self.fts_objects.lock().unwrap_or_else(|p| p.into_inner());
        match *cached {
            Some(objects) if objects.schema_cookie == cookie && cookie >= 0 => Ok(objects),
            _ => {
                let objects = FtsObjects::probe(conn)?;
                *cached = Some(objects);
                Ok(objects)
            }
        }
    }
}
