//! Backfilling the repository roots of sessions (`api.md` §2.5) on
//! PostgreSQL, with the SQLite backend's rule: a root is written only where
//! none is known (NULL or empty), never over one.

use crate::PgStore;
use crate::error::{Context, Result};

const BACKFILL_REPO_ROOT: &str =
    "UPDATE sessions SET git_repo_root = $1 WHERE cwd = $2 AND COALESCE(git_repo_root, '') = ''";

impl PgStore {
    /// For each `(cwd, root)` pair with both non-empty, sets `git_repo_root
    /// = root` on the sessions of that `cwd` (compared exactly) whose root
    /// is NULL or empty, all in one transaction; pairs are applied in
    /// order, so of two roots for one `cwd` the first wins. No pair left:
    /// no write.
    pub fn backfill_repo_roots<C, R>(&self, roots: impl IntoIterator<Item = (C, R)>) -> Result<()>
    where
        C: AsRef<str>,
        R: AsRef<str>,
    {
        const WHAT: &str = "backfilling repository roots";
        let pairs: Vec<(String, String)> = roots
            .into_iter()
            .filter(|(cwd, root)| !cwd.as_ref().is_empty() && !root.as_ref().is_empty())
            .map(|(cwd, root)| (cwd.as_ref().to_owned(), root.as_ref().to_owned()))
            .collect();
        if pairs.is_empty() {
            return Ok(());
        }
        self.write(WHAT, |tx| {
            let update = tx.prepare(BACKFILL_REPO_ROOT).context(WHAT)?;
            for (cwd, root) in &pairs {
                tx.execute(&update, &[root, cwd]).context(WHAT)?;
            }
            Ok(())
        })
    }
}
