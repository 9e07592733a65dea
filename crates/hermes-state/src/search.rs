//! Full-text search on the facade.

use hermes_state_query::search::{self, FtsCapabilities, SearchHit, SearchOptions};
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
                let caps = FtsCapabilities::detect(conn);
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

    fn should_repair_fts(&self, error: &Error) -> bool {
        error.kind() == ErrorKind::Corrupt
            && !self.is_read_only()
            && hermes_state_schema::is_fts_corruption_text(&error.to_string().to_ascii_lowercase())
            && self.claim_fts_repair()
    }
}
