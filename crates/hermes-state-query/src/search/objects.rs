//! Which FTS indexes of a file may be served, recognised by their stored SQL
//! (`newer-versions.md` §5.1), never by version numbers alone.
//!
//! An index is served only when its shape is one this crate knows how to
//! query, its three triggers exist (otherwise rows written since are missing:
//! newer code detaches an index on purpose by dropping them) and no
//! `state_meta` marker says it is stale. Probing reads `sqlite_master`,
//! `schema_version`, `state_meta` and prepares one statement per FTS table;
//! an object that does not exist or cannot be used here (an unknown
//! tokenizer: `SQLITE_ERROR`) is "absent", while every other failure (busy,
//! corrupt, not a database, I/O) is returned as an error: a file that cannot
//! be read must never look like a file without indexes.

use rusqlite::{Connection, OptionalExtension};

use crate::error::{QueryContext, QueryError, is_sql_error};
use hermes_state_sqlite::names;

/// The stored texts of the v23 CJK view and table (`schema-v23.md` §6.6),
/// compared with whitespace collapsed.
// tidy: DDL text compared, never run
const CJK_VIEW_SQL: &str = "CREATE VIEW messages_fts_cjk_src AS
    SELECT id, role, content, tool_name, tool_calls
    FROM messages
    WHERE role <> 'tool'";
// tidy: DDL text compared, never run
const CJK_TABLE_SQL: &str = "CREATE VIRTUAL TABLE messages_fts_cjk USING fts5(
    content,
    tool_name,
    tool_calls,
    content='messages_fts_cjk_src',
    content_rowid='id',
    tokenize='cjk_unicode61'
)";

/// The layout of the base index `messages_fts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseLayout {
    /// No such table: search scans `messages`.
    Absent,
    /// Generation A/A′ (v1–v10): external content over `content` only, so
    /// tool names and arguments are not indexed; not served (scan instead).
    ContentOnly,
    /// Generation B (v11–v22 and upgraded files): inline, one column holding
    /// `content ‖ tool_name ‖ tool_calls`; queried by MATCH as v23 does.
    LegacyInline,
    /// Generation C over `content='messages'` (v23, layouts 1 and 2).
    External,
    /// Layout 3 (v30): external content over the truncating view
    /// `messages_fts_src`; queried like v23.
    ExternalView,
    /// Any other text: not served.
    Unknown,
}

/// What the trigram index covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrigramCoverage {
    /// No usable trigram index.
    Unavailable,
    /// Every non-tool row (v23 gen C), or every row (legacy inline, ≤ v23).
    Full,
    /// Newer layouts: no `tool_calls` column, or a source view joining
    /// `sessions` that leaves out cron/subagent/delegate sessions
    /// (`newer-versions.md` §5.3 item 3).
    Restricted,
}

/// Which FTS objects a connection can query, as of one schema version.
///
/// Probing prepares a statement on each FTS table (instantiating the virtual
/// table), which is the costly part of [`FtsCapabilities::detect`]; the
/// objects only change with the schema, so a caller may keep this value while
/// [`FtsObjects::schema_cookie`] is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FtsObjects {
    /// `PRAGMA schema_version` when probed.
    pub schema_cookie: i64,
    /// `messages_fts` has a served layout, is queryable and its three
    /// triggers exist.
    pub fts: bool,
    /// `messages_fts_trigram` is served (coverage not `Unavailable`),
    /// queryable, with its three triggers.
    pub trigram: bool,
    /// `messages_fts_cjk` has the v23 texts, is queryable here and its three
    /// triggers exist.
    pub cjk_maintained: bool,
    /// Layout of the base index.
    pub base: BaseLayout,
    /// Coverage of the trigram index.
    pub trigram_coverage: TrigramCoverage,
    /// `schema_version` is above 23: a newer release wrote the file
    /// (`newer-versions.md` §5: leg errors fall through, nothing is repaired).
    pub newer_file: bool,
}

impl FtsObjects {
    /// Probes the FTS objects of the connection's main database.
    pub fn probe(conn: &Connection) -> Result<FtsObjects, QueryError> {
        let schema_cookie = crate::compat::schema_cookie(conn)?;
        let master = Master::read(conn)?;
        let newer_file = stamp(conn)?.is_some_and(|v| v > 23);

        let base = master
            .sql(names::FTS_BASE)
            .map_or(BaseLayout::Absent, |sql| {
                let sql = normalize(sql);
                if !sql.contains("tool_name") {
                    if sql.contains("content=") {
                        BaseLayout::ContentOnly
                    } else {
                        BaseLayout::LegacyInline
                    }
                } else if sql.contains("content='messages'") || sql.contains("content=messages,") {
                    BaseLayout::External
                } else if sql.contains("content='messages_fts_src'") {
                    BaseLayout::ExternalView
                } else {
                    BaseLayout::Unknown
                }
            });
        let base_shape_ok = matches!(
            base,
            BaseLayout::LegacyInline | BaseLayout::External | BaseLayout::ExternalView
        );
        let fts = base_shape_ok
            && master.has_triggers(names::FTS_BASE)
            && queryable(conn, names::FTS_BASE)?;

        let trigram_coverage = master
            .sql(names::FTS_TRIGRAM)
            .map_or(TrigramCoverage::Unavailable, |sql| {
                trigram_coverage(&normalize(sql), &master, newer_file)
            });
        let trigram = trigram_coverage != TrigramCoverage::Unavailable
            && master.has_triggers(names::FTS_TRIGRAM)
            && queryable(conn, names::FTS_TRIGRAM)?;

        let cjk_texts = master.sql(names::FTS_CJK_SOURCE_VIEW).map(collapse)
            == Some(collapse(CJK_VIEW_SQL))
            && master.sql(names::FTS_CJK).map(collapse) == Some(collapse(CJK_TABLE_SQL));
        let cjk_maintained =
            cjk_texts && master.has_triggers(names::FTS_CJK) && queryable(conn, names::FTS_CJK)?;

        Ok(FtsObjects {
            schema_cookie,
            fts,
            trigram,
            cjk_maintained,
            base,
            trigram_coverage: if trigram {
                trigram_coverage
            } else {
                TrigramCoverage::Unavailable
            },
            newer_file,
        })
    }

    /// The schema cookie, which SQLite changes on every schema change by any
    /// connection; `-1` when it cannot be read (never matches a cached value,
    /// so the next [`FtsObjects::probe`] runs and reports the error).
    pub fn schema_cookie(conn: &Connection) -> i64 {
        crate::compat::schema_cookie(conn).unwrap_or(-1)
    }
}

fn trigram_coverage(sql: &str, master: &Master, newer_file: bool) -> TrigramCoverage {
    if !sql.contains("tokenize='trigram'") {
        return TrigramCoverage::Unavailable;
    }
    if !sql.contains("content=") {
        // Legacy inline (gen B): every row, served as v23 does; on a newer
        // file only gen-C shapes are known (§5.1 "any other shape").
        return if newer_file {
            TrigramCoverage::Unavailable
        } else {
            TrigramCoverage::Full
        };
    }
    if !sql.contains("content='messages_fts_trigram_src'") {
        // Generation A′ over `content=messages`: content only.
        return TrigramCoverage::Unavailable;
    }
    let Some(view) = master.sql("messages_fts_trigram_src").map(normalize) else {
        return TrigramCoverage::Unavailable;
    };
    if sql.contains("tool_calls") && !view.contains("join") {
        TrigramCoverage::Full
    } else {
        TrigramCoverage::Restricted
    }
}

/// Lower case, without whitespace and double quotes: options such as
/// `content='messages'` compare whatever the spacing and quoting.
fn normalize(sql: &str) -> String {
    sql.chars()
        .filter(|c| !c.is_whitespace() && *c != '"')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Runs of whitespace as one space, trimmed.
fn collapse(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A statement on the table compiles (the virtual table is instantiated: its
/// module and tokenizer exist here). `SQLITE_ERROR` means "cannot be used";
/// anything else is the file failing and is returned.
fn queryable(conn: &Connection, table: &str) -> Result<bool, QueryError> {
    match conn.prepare(&format!("SELECT rowid FROM main.{table} LIMIT 0")) {
        Ok(_) => Ok(true),
        Err(e) if is_sql_error(&e) => Ok(false),
        Err(e) => Err(e)
            .context(&format!("probing {table}"))
            .map_err(Into::into),
    }
}

/// `schema_version` of the main database, `None` without table or row.
fn stamp(conn: &Connection) -> Result<Option<i64>, QueryError> {
    match conn
        .query_row("SELECT version FROM main.schema_version LIMIT 1", [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .optional()
    {
        Ok(v) => Ok(v.flatten()),
        Err(e) if is_sql_error(&e) => Ok(None),
        Err(e) => Err(e).context("reading schema_version").map_err(Into::into),
    }
}

/// The FTS-related rows of `sqlite_master`.
struct Master {
    rows: Vec<(String, String, Option<String>)>,
}

impl Master {
    fn read(conn: &Connection) -> Result<Master, QueryError> {
        let what = "reading sqlite_master";
        let mut stmt = conn
            .prepare(
                "SELECT type, name, sql FROM main.sqlite_master
                 WHERE name LIKE 'messages\\_fts%' ESCAPE '\\'",
            )
            .context(what)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .context(what)?
            .collect::<Result<Vec<_>, _>>()
            .context(what)?;
        Ok(Master { rows })
    }

    /// The stored SQL of a table or view.
    fn sql(&self, name: &str) -> Option<&str> {
        self.rows
            .iter()
            .find(|(kind, n, _)| n == name && kind != "trigger" && kind != "index")
            .and_then(|(_, _, sql)| sql.as_deref())
    }

    /// `<table>_insert`, `_delete` and `_update` triggers all exist.
    fn has_triggers(&self, table: &str) -> bool {
        ["insert", "delete", "update"].iter().all(|suffix| {
            let name = format!("{table}_{suffix}");
            self.rows
                .iter()
                .any(|(kind, n, _)| kind == "trigger" && *n == name)
        })
    }
}

/// Which indexes a search may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FtsCapabilities {
    /// `messages_fts` is served; otherwise search scans `messages`.
    pub fts: bool,
    /// `messages_fts_trigram` is served.
    pub trigram: bool,
    /// `messages_fts_cjk` is served: v23 texts, queryable, complete and
    /// maintained (not stale, no pending backfill, triggers live).
    pub cjk_serving: bool,
    /// The trigram index leaves out some rows (`newer-versions.md` §5.3
    /// item 3): queries that want those rows skip it.
    pub trigram_restricted: bool,
    /// A newer release wrote the file: any failure of a trigram or CJK leg
    /// sends the search to the next step.
    pub newer_file: bool,
}

impl FtsCapabilities {
    /// Probes the connection: a table counts only if a statement on it compiles
    /// (the CJK table needs the tokenizer registered on this connection).
    pub fn detect(conn: &Connection) -> Result<FtsCapabilities, QueryError> {
        FtsCapabilities::from_objects(conn, &FtsObjects::probe(conn)?)
    }

    /// The capabilities given already probed objects: only the cheap
    /// `state_meta` markers are read — `fts_stale` (newer releases detached
    /// every index), `fts_cjk_stale` and `fts_cjk_rebuild_high_water`
    /// (`schema-v23.md` §6.6: the CJK index is stale or still back-filling).
    pub fn from_objects(
        conn: &Connection,
        objects: &FtsObjects,
    ) -> Result<FtsCapabilities, QueryError> {
        let markers = meta_keys(
            conn,
            &[
                names::FTS_STALE_KEY,
                names::CJK_STALE_KEY,
                names::CJK_HIGH_WATER_KEY,
            ],
        )?;
        let stale = markers.iter().any(|k| k == names::FTS_STALE_KEY);
        let cjk_blocked = markers
            .iter()
            .any(|k| k == names::CJK_STALE_KEY || k == names::CJK_HIGH_WATER_KEY);
        Ok(FtsCapabilities {
            fts: objects.fts && !stale,
            trigram: objects.trigram && !stale,
            cjk_serving: objects.cjk_maintained && !stale && !cjk_blocked,
            trigram_restricted: objects.trigram_coverage == TrigramCoverage::Restricted,
            newer_file: objects.newer_file,
        })
    }
}

/// Which of `keys` exist in `state_meta`; none when the file has no such
/// table (v1–v7) and no compatibility view stands in for it.
fn meta_keys(conn: &Connection, keys: &[&str]) -> Result<Vec<String>, QueryError> {
    let placeholders = (1..=keys.len())
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!("SELECT key FROM state_meta WHERE key IN ({placeholders})");
    // Cached: read before every search.
    let mut stmt = match conn.prepare_cached(&sql) {
        Ok(stmt) => stmt,
        Err(e) if is_sql_error(&e) => return Ok(Vec::new()),
        Err(e) => return Err(e).context("reading state_meta").map_err(Into::into),
    };
    let rows = stmt
        .query_map(rusqlite::params_from_iter(keys), |r| r.get::<_, String>(0))
        .context("reading state_meta")?;
    rows.collect::<Result<_, _>>()
        .context("reading state_meta")
        .map_err(Into::into)
}

/// The sources a restricted trigram view leaves out (`… NOT IN ('cron',
/// 'subagent')`), read from its stored SQL.
pub(crate) fn trigram_excluded_sources(conn: &Connection) -> Result<Vec<String>, QueryError> {
    let sql: Option<String> = conn
        .query_row(
            "SELECT sql FROM main.sqlite_master WHERE name = 'messages_fts_trigram_src'",
            [],
            |r| r.get(0),
        )
        .optional()
        .context("reading the trigram view")?
        .flatten();
    let Some(sql) = sql else {
        return Ok(Vec::new());
    };
    let lower = sql.to_ascii_lowercase();
    let Some(start) = lower.find("not in") else {
        return Ok(Vec::new());
    };
    let rest = &sql[start..];
    let (Some(open), Some(close)) = (rest.find('('), rest.find(')')) else {
        return Ok(Vec::new());
    };
    if close < open {
        return Ok(Vec::new());
    }
    Ok(rest[open + 1..close]
        .split(',')
        .map(|s| s.trim().trim_matches('\'').to_owned())
        .filter(|s| !s.is_empty())
        .collect())
}
