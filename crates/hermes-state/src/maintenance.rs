//! Maintenance: pruning old sessions, giving the space back, FTS upkeep and
//! online backups (`api.md` §11.3–11.4).

use std::path::{Path, PathBuf};

use hermes_state_schema::{SchemaError, retry};
use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use crate::db::{SessionDb, existing_fts_tables};
use crate::error::{Error, Result, WriteContext};

/// Which sessions [`SessionDb::prune_sessions`] removes.
#[derive(Debug, Clone, PartialEq)]
pub struct PruneOptions {
    /// Only sessions started more than this many days ago; `None` means no
    /// age bound. Default 90, as the original. Must be finite. Ignored when
    /// [`PruneFilters::started_before`] is given.
    pub older_than_days: Option<f64>,
    /// Only sessions of this source (when `Some` and non-empty).
    pub source: Option<String>,
    /// The original's optional keyword filters (`api.md` §11.3).
    pub filters: PruneFilters,
    /// List what would be pruned without writing anything.
    pub dry_run: bool,
    /// Where the agent keeps transcripts: after pruning, `<dir>/<id>.json`,
    /// `<dir>/<id>.jsonl` and `<dir>/request_dump_<id>_*.json` of each pruned
    /// session are deleted (errors ignored).
    pub sessions_dir: Option<PathBuf>,
}

impl Default for PruneOptions {
    fn default() -> Self {
        PruneOptions {
            older_than_days: Some(90.0),
            source: None,
            filters: PruneFilters::default(),
            dry_run: false,
            sessions_dir: None,
        }
    }
}

/// The optional filters of `prune_sessions` (`api.md` §11.3), every one the
/// original accepts; `None` (and, for text, the empty string) means "no
/// filter". The original refuses unknown filter names at run time; here a
/// filter that does not exist cannot be spelled.
///
/// Text filters ending in `_like` match a substring, case-insensitively for
/// ASCII (SQL `LIKE '%value%'`, with `%`, `_` and `\` in the value taken
/// literally). Bounds are inclusive (`min_* <= value <= max_*`), except the
/// start times, which are strict. Floats must be finite.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PruneFilters {
    /// `started_at < started_before` (Unix seconds); replaces the
    /// `older_than_days` bound.
    pub started_before: Option<f64>,
    /// `started_at > started_after` (Unix seconds).
    pub started_after: Option<f64>,
    /// `title` contains this text.
    pub title_like: Option<String>,
    /// `end_reason` equals this.
    pub end_reason: Option<String>,
    /// `cwd` is this folder or inside it (trailing `/` and `\` ignored), as
    /// `list_sessions_rich` (`api.md` §10.3).
    pub cwd_prefix: Option<String>,
    /// `message_count >= min_messages`.
    pub min_messages: Option<i64>,
    /// `message_count <= max_messages`.
    pub max_messages: Option<i64>,
    /// Tri-state: `Some(true)` only archived sessions, `Some(false)` only
    /// unarchived ones, `None` both.
    pub archived: Option<bool>,
    /// `model` contains this text.
    pub model_like: Option<String>,
    /// `billing_provider` equals this.
    pub provider: Option<String>,
    /// `user_id` equals this.
    pub user_id: Option<String>,
    /// `chat_id` equals this.
    pub chat_id: Option<String>,
    /// `chat_type` equals this.
    pub chat_type: Option<String>,
    /// `git_branch` contains this text.
    pub branch_like: Option<String>,
    /// `input_tokens + output_tokens >= min_tokens`.
    pub min_tokens: Option<i64>,
    /// `input_tokens + output_tokens <= max_tokens`.
    pub max_tokens: Option<i64>,
    /// `COALESCE(actual_cost_usd, estimated_cost_usd, 0) >= min_cost`.
    pub min_cost: Option<f64>,
    /// `COALESCE(actual_cost_usd, estimated_cost_usd, 0) <= max_cost`.
    pub max_cost: Option<f64>,
    /// `tool_call_count >= min_tool_calls`.
    pub min_tool_calls: Option<i64>,
    /// `tool_call_count <= max_tool_calls`.
    pub max_tool_calls: Option<i64>,
}

/// What [`SessionDb::prune_sessions`] removed (or, in a dry run, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Number of sessions.
    pub count: usize,
    /// Their ids, oldest start first.
    pub ids: Vec<String>,
}

/// The candidates' query: a `WHERE` built by [`PruneQuery::new`] from bound
/// parameters only.
#[derive(Debug, Clone)]
struct PruneQuery {
    sql: String,
    params: Vec<SqlValue>,
}

impl PruneQuery {
    /// Ended sessions matching the options, oldest start first.
    fn new(options: &PruneOptions, now: f64) -> Result<Self> {
        let f = &options.filters;
        for (name, value) in [
            ("older_than_days", options.older_than_days),
            ("started_before", f.started_before),
            ("started_after", f.started_after),
            ("min_cost", f.min_cost),
            ("max_cost", f.max_cost),
        ] {
            if let Some(v) = value
                && !v.is_finite()
            {
                return Err(Error::InvalidInput(format!(
                    "{name} must be finite, got {v}"
                )));
            }
        }
        let mut query = PruneQuery {
            sql: "SELECT id FROM sessions WHERE ended_at IS NOT NULL".to_owned(),
            params: Vec::new(),
        };
        let text = |value: &Option<String>| value.clone().filter(|s| !s.is_empty());
        let cutoff = f
            .started_before
            .or(options.older_than_days.map(|days| now - days * 86_400.0));
        query.real("started_at < ?", cutoff);
        query.real("started_at > ?", f.started_after);
        query.text("source = ?", text(&options.source));
        query.text(
            "title LIKE ? ESCAPE '\\'",
            text(&f.title_like).map(contains),
        );
        query.text("end_reason = ?", text(&f.end_reason));
        if let Some(prefix) = text(&f.cwd_prefix) {
            let prefix = prefix.trim_end_matches(['/', '\\']).to_owned();
            let escaped = escape_like(&prefix);
            query
                .sql
                .push_str(" AND (cwd = ? OR cwd LIKE ? ESCAPE '\\' OR cwd LIKE ? ESCAPE '\\')");
            query.params.push(SqlValue::Text(prefix));
            query.params.push(SqlValue::Text(format!("{escaped}/%")));
            query.params.push(SqlValue::Text(format!("{escaped}\\\\%")));
        }
        query.integer("message_count >= ?", f.min_messages);
        query.integer("message_count <= ?", f.max_messages);
        query.integer("archived = ?", f.archived.map(i64::from));
        query.text(
            "model LIKE ? ESCAPE '\\'",
            text(&f.model_like).map(contains),
        );
        query.text("billing_provider = ?", text(&f.provider));
        query.text("user_id = ?", text(&f.user_id));
        query.text("chat_id = ?", text(&f.chat_id));
        query.text("chat_type = ?", text(&f.chat_type));
        query.text(
            "git_branch LIKE ? ESCAPE '\\'",
            text(&f.branch_like).map(contains),
        );
        const TOKENS: &str = "(COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0))";
        query.integer(&format!("{TOKENS} >= ?"), f.min_tokens);
        query.integer(&format!("{TOKENS} <= ?"), f.max_tokens);
        const COST: &str = "COALESCE(actual_cost_usd, estimated_cost_usd, 0)";
        query.real(&format!("{COST} >= ?"), f.min_cost);
        query.real(&format!("{COST} <= ?"), f.max_cost);
        query.integer("tool_call_count >= ?", f.min_tool_calls);
        query.integer("tool_call_count <= ?", f.max_tool_calls);
        query.sql.push_str(" ORDER BY started_at, id");
        Ok(query)
    }

    fn push(&mut self, clause: &str, value: Option<SqlValue>) {
        if let Some(value) = value {
            self.sql.push_str(" AND ");
            self.sql.push_str(clause);
            self.params.push(value);
        }
    }

    fn text(&mut self, clause: &str, value: Option<String>) {
        self.push(clause, value.map(SqlValue::Text));
    }

    fn integer(&mut self, clause: &str, value: Option<i64>) {
        self.push(clause, value.map(SqlValue::Integer));
    }

    fn real(&mut self, clause: &str, value: Option<f64>) {
        self.push(clause, value.map(SqlValue::Real));
    }

    fn candidates(&self, conn: &Connection) -> Result<Vec<String>> {
        let mut stmt = conn
            .prepare_cached(&self.sql)
            .context("finding sessions to prune")?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(&self.params), |row| row.get(0))
            .context("finding sessions to prune")?;
        rows.collect::<Result<_, _>>()
            .context("finding sessions to prune")
            .map_err(Into::into)
    }
}

/// `value` with the `LIKE` wildcards and the escape character taken literally.
fn escape_like(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// The `LIKE` pattern of "contains `value`".
fn contains(value: String) -> String {
    format!("%{}%", escape_like(&value))
}

impl SessionDb {
    /// Removes old ended sessions with their messages (`api.md` §11.3).
    ///
    /// Only **ended** sessions are candidates. In one write transaction,
    /// every session whose parent is a candidate is orphaned
    /// (`parent_session_id = NULL`; children are never deleted by a prune,
    /// delegate children included, unless they are candidates themselves);
    /// then each candidate's messages and row are deleted. Usage rows go with
    /// their session and the FTS indexes follow through the triggers. With
    /// `dry_run` the candidates are listed and nothing is written.
    ///
    /// Errors: a non-finite `older_than_days` or float filter is
    /// [`crate::ErrorKind::InvalidInput`].
    pub fn prune_sessions(&self, options: &PruneOptions) -> Result<PruneReport> {
        let query = PruneQuery::new(options, self.now())?;
        let ids = if options.dry_run {
            self.read(|conn| query.candidates(conn))?
        } else {
            self.write("pruning sessions", |conn| {
                let ids = query.candidates(conn)?;
                for id in &ids {
                    conn.prepare_cached(
                        "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
                    )
                    .and_then(|mut stmt| stmt.execute([id]))
                    .context("orphaning children of pruned sessions")?;
                }
                for id in &ids {
                    conn.prepare_cached("DELETE FROM messages WHERE session_id = ?1")
                        .and_then(|mut stmt| stmt.execute([id]))
                        .context("deleting messages of pruned sessions")?;
                    conn.prepare_cached("DELETE FROM sessions WHERE id = ?1")
                        .and_then(|mut stmt| stmt.execute([id]))
                        .context("deleting pruned sessions")?;
                }
                Ok(ids)
            })?
        };
        if !options.dry_run
            && let Some(dir) = &options.sessions_dir
        {
            remove_transcripts(dir, &ids);
        }
        Ok(PruneReport {
            count: ids.len(),
            ids,
        })
    }

    /// Gives the space of deleted rows back to the file system (`api.md`
    /// §11.4): FTS5 `'optimize'` on each existing FTS table, a TRUNCATE
    /// checkpoint, `VACUUM`, and one more TRUNCATE checkpoint (in WAL mode the
    /// file only shrinks when the vacuumed pages are checkpointed). Returns the
    /// number of FTS tables optimised.
    ///
    /// `VACUUM` cannot run inside a transaction, so these statements run one
    /// by one on the writable connection, each retried on lock errors with
    /// the write path's policy. It rewrites the whole file: it
    /// needs free disk space of about the file's size and blocks other
    /// writers while it runs.
    pub fn vacuum(&self) -> Result<usize> {
        if self.is_read_only() {
            return Err(Error::ReadOnly("vacuuming".to_owned()));
        }
        let tables = self.read(|conn| Ok(existing_fts_tables(conn)))?;
        for table in &tables {
            self.write_statement(
                "optimizing an FTS index",
                &format!("INSERT INTO {table}({table}) VALUES('optimize')"),
            )?;
        }
        self.write_statement("checkpointing", "PRAGMA wal_checkpoint(TRUNCATE)")?;
        self.write_statement("vacuuming", "VACUUM")?;
        self.write_statement("checkpointing", "PRAGMA wal_checkpoint(TRUNCATE)")?;
        Ok(tables.len())
    }

    /// FTS5 `'optimize'` (merge the index segments) on each existing FTS
    /// table, in one write transaction; returns how many.
    pub fn optimize_fts(&self) -> Result<usize> {
        self.fts_command("optimizing the FTS indexes", "optimize")
    }

    /// FTS5 `'rebuild'` (re-index from the messages) of each existing FTS
    /// table, in one write transaction, clearing any pending gated-backfill
    /// markers (the rebuild completes it); returns how many tables.
    pub fn rebuild_fts(&self) -> Result<usize> {
        let tables = self.read(|conn| Ok(existing_fts_tables(conn)))?;
        self.rebuild_fts_indexes()?;
        Ok(tables.len())
    }

    /// Writes a consistent copy of the live store to `target`, a file that
    /// must not exist yet ([`crate::ErrorKind::InvalidInput`] otherwise).
    ///
    /// The copy is made with `VACUUM INTO` on a dedicated read-only
    /// connection: it is one read snapshot, so it is consistent while this
    /// handle, other handles or other processes keep writing, and the handle
    /// is not blocked meanwhile. The copy is compact (no free pages), in
    /// rollback-journal mode until a store opens it, and private (0600 from
    /// its creation on). On failure the partial copy is removed.
    pub fn backup_to(&self, target: impl AsRef<Path>) -> Result<()> {
        self.read(|_| Ok(()))?;
        let target = std::path::absolute(target.as_ref())
            .map_err(|source| io_error(target.as_ref(), source))?;
        // An absolute path never starts with `file:`, so SQLite cannot take it for a URI.
        let target_text = target.to_str().ok_or_else(|| {
            Error::InvalidInput(format!(
                "backup path {} is not valid UTF-8",
                target.display()
            ))
        })?;
        create_private_file(&target)?;
        let result = self.copy_into(&target, target_text);
        if result.is_err() {
            let _ = std::fs::remove_file(&target);
        }
        result
    }

    fn copy_into(&self, target: &Path, target_text: &str) -> Result<()> {
        let conn = hermes_state_schema::open_read_only(self.path())?;
        retry::with_retries(
            || {
                // A failed attempt may have left a partial copy; VACUUM INTO
                // only writes into an empty file.
                let file = std::fs::OpenOptions::new() // tidy: not the live database (the backup target)
                    .write(true)
                    .open(target)
                    .map_err(|source| io_error(target, source))?;
                file.set_len(0).map_err(|source| io_error(target, source))?;
                drop(file);
                conn.execute("VACUUM INTO ?1", [target_text])
                    .context("backing up the store")?;
                Ok(())
            },
            Error::kind,
        )
        .map_err(|error| gave_up("backing up the store", error))?;
        drop(conn);
        hermes_state_schema::permissions::restrict(target)?;
        Ok(())
    }

    fn fts_command(&self, what: &str, command: &str) -> Result<usize> {
        self.write(what, |conn: &Connection| {
            let tables = existing_fts_tables(conn);
            for table in &tables {
                conn.execute_batch(&format!("INSERT INTO {table}({table}) VALUES('{command}')"))
                    .context(what)?;
            }
            Ok(tables.len())
        })
    }
}

/// Deletes the transcript files of pruned sessions, as the original:
/// `<id>.json`, `<id>.jsonl`, `request_dump_<id>_*.json`. Ids holding a path
/// separator are skipped (they would name files outside `dir`).
pub(crate) fn remove_transcripts(dir: &Path, ids: &[String]) {
    let ids: Vec<&String> = ids
        .iter()
        .filter(|id| !id.contains(['/', '\\', '\0']))
        .collect();
    for id in &ids {
        let _ = std::fs::remove_file(dir.join(format!("{id}.json")));
        let _ = std::fs::remove_file(dir.join(format!("{id}.jsonl")));
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name
            .strip_prefix("request_dump_")
            .filter(|rest| rest.ends_with(".json"))
        else {
            continue;
        };
        if ids.iter().any(|id| {
            rest.strip_prefix(id.as_str())
                .is_some_and(|r| r.starts_with('_'))
        }) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Creates an empty file readable by its owner only; an existing path is refused.
fn create_private_file(path: &Path) -> Result<()> {
    let mut options = std::fs::OpenOptions::new(); // tidy: not the live database (the backup target)
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt; // tidy: not the live database
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Err(
            Error::InvalidInput(format!("backup target {} already exists", path.display())),
        ),
        Err(source) => Err(io_error(path, source)),
    }
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Schema(SchemaError::Io {
        path: path.to_owned(),
        source,
    })
}

/// A lock error that outlasted every retry, as the write path reports it.
fn gave_up(what: &str, error: Error) -> Error {
    match error {
        Error::Sqlite(hermes_state_sqlite::SqliteError { source, .. })
            if hermes_state_sqlite::sqlite_error_kind(&source)
                == hermes_state_types::ErrorKind::Busy =>
        {
            Error::Busy {
                context: what.to_owned(),
                attempts: retry::MAX_ATTEMPTS,
                source,
            }
        }
        other => other,
    }
}
