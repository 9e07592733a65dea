//! Full-text objects at open (`migrations.md` §2 step 14, `schema-v23.md` §6).

use rusqlite::Connection;

use crate::ddl;
use crate::detect::{self, FtsLayout};
use crate::error::SchemaError;
use hermes_state_sqlite::Context as SqliteContext;

/// The `state_meta` keys of the FTS gates (defined once, in the SQLite base).
pub use hermes_state_sqlite::names::{
    CJK_HIGH_WATER_KEY, CJK_PROGRESS_KEY, CJK_STALE_KEY, REBUILD_HIGH_WATER_KEY,
    REBUILD_PROGRESS_KEY,
};

/// What the FTS step found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FtsSetup {
    /// The layout after the step.
    pub layout: FtsLayout,
    /// Whether both indexes were rebuilt (fewer than six triggers were found).
    pub rebuilt: bool,
    /// Whether the CJK index was (re)built by this open.
    pub cjk_rebuilt: bool,
    /// Whether a CJK index was disabled (marked stale) because the tokenizer is absent.
    pub cjk_marked_stale: bool,
}

/// The CJK view, table and triggers (`schema-v23.md` §6.6): the trigram
/// objects with `messages_fts_cjk`, its tokenizer and its own gate keys.
pub fn cjk_ddl() -> Vec<String> {
    ddl::FTS_TRIGRAM
        .iter()
        .map(|statement| {
            statement
                .replace("messages_fts_trigram", "messages_fts_cjk")
                .replace("tokenize='trigram'", "tokenize='cjk_unicode61'")
                .replace("'fts_rebuild_high_water'", "'fts_cjk_rebuild_high_water'")
                .replace("'fts_rebuild_progress'", "'fts_cjk_rebuild_progress'")
        })
        .collect()
}

/// Whether the CJK index exists, is maintained by its three triggers, and
/// is complete (no stale marker, no pending backfill).
pub fn cjk_index_healthy(conn: &Connection) -> Result<bool, SchemaError> {
    if !detect::object_exists(conn, "table", "messages_fts_cjk")?
        || !detect::object_exists(conn, "view", "messages_fts_cjk_src")?
    {
        return Ok(false);
    }
    for name in ddl::CJK_TRIGGER_NAMES {
        if !detect::object_exists(conn, "trigger", name)? {
            return Ok(false);
        }
    }
    let blocked: i64 = conn
        .query_row(
            "SELECT count(*) FROM state_meta WHERE key IN (?1, ?2)",
            [CJK_STALE_KEY, CJK_HIGH_WATER_KEY],
            |row| row.get(0),
        )
        .context("reading the CJK markers")?;
    Ok(blocked == 0)
}

/// (Re)creates the CJK index from scratch and fills it, in the caller's
/// transaction: drops its triggers, table, view and markers, creates them
/// again (view, table, triggers, in the original's order) and rebuilds.
///
/// Used for a new store and by the explicit CJK rebuild; the cost is one pass
/// over `messages`. Every other writer of the file needs the tokenizer
/// afterwards (a Hermes without it marks the index stale on its next open).
pub fn reset_cjk_index(conn: &Connection) -> Result<(), SchemaError> {
    drop_cjk_index(conn)?;
    conn.execute(
        "DELETE FROM state_meta WHERE key IN (?1, ?2, ?3)",
        [CJK_STALE_KEY, CJK_HIGH_WATER_KEY, CJK_PROGRESS_KEY],
    )
    .context("clearing the CJK markers")?;
    for statement in cjk_ddl() {
        conn.execute_batch(&statement)
            .context("creating the CJK index")?;
    }
    rebuild(conn, "messages_fts_cjk")
}

/// Whether the CJK index is live: its three triggers exist and it is not
/// marked stale. Only a live index may be reset or rebuilt by maintenance
/// that is not the explicit CJK rebuild, because resetting recreates its
/// triggers, which every other writer of the file then needs the tokenizer for.
pub fn cjk_index_live(conn: &Connection) -> Result<bool, SchemaError> {
    for name in ddl::CJK_TRIGGER_NAMES {
        if !detect::object_exists(conn, "trigger", name)? {
            return Ok(false);
        }
    }
    let stale: bool = conn
        .query_row(
            "SELECT EXISTS(SELECT 1 FROM state_meta WHERE key = ?1)",
            [CJK_STALE_KEY],
            |row| row.get(0),
        )
        .context("reading the CJK markers")?;
    Ok(!stale)
}

/// Counts the six named FTS triggers (fewer than six means "needs repair").
pub fn count_fts_triggers(conn: &Connection) -> Result<usize, SchemaError> {
    let mut count = 0;
    for name in ddl::FTS_TRIGGER_NAMES {
        if detect::object_exists(conn, "trigger", name)? {
            count += 1;
        }
    }
    Ok(count)
}

/// Creates whatever FTS objects are missing for the file's layout and rebuilds
/// the indexes when triggers were missing, as the original's open does.
///
/// `triggers_before` is the trigger count taken before any DDL of this open;
/// `cjk_tokenizer` says whether `cjk_unicode61` is registered on `conn`;
/// `new_store` whether this open created the store.
///
/// The optional CJK index follows `schema-v23.md` §6.6 with one restriction
/// (docs/DECISIONS.md, "CJK index"): it is created only in a store this open
/// creates. On an existing file it is never created, its triggers are never
/// recreated and it is never rebuilt here, because a Hermes process without
/// the tokenizer may hold the file open: CJK triggers created under it make
/// its next message insert fail with `no such tokenizer`. Only the explicit
/// storage optimisation or the explicit CJK rebuild brings it back. Without
/// the tokenizer, live CJK triggers are dropped and the index marked stale,
/// as the original does, so that our own writes keep working.
pub fn set_up(
    conn: &Connection,
    triggers_before: usize,
    cjk_tokenizer: bool,
    new_store: bool,
) -> Result<FtsSetup, SchemaError> {
    let layout = detect::fts_layout(conn)?;
    let needs_repair = triggers_before < ddl::FTS_TRIGGER_NAMES.len();
    if layout.is_legacy() {
        run_all(conn, &ddl::LEGACY_FTS_BASE)?;
        run_all(conn, &ddl::LEGACY_FTS_TRIGRAM)?;
        if needs_repair {
            refill_legacy_inline(conn, "messages_fts")?;
            refill_legacy_inline(conn, "messages_fts_trigram")?;
        }
    } else {
        run_all(conn, &ddl::FTS_BASE)?;
        run_all(conn, &ddl::FTS_TRIGRAM)?;
        if needs_repair {
            rebuild(conn, "messages_fts")?;
            rebuild(conn, "messages_fts_trigram")?;
            delete_meta(conn, REBUILD_HIGH_WATER_KEY)?;
            delete_meta(conn, REBUILD_PROGRESS_KEY)?;
        }
    }
    let mut cjk_rebuilt = false;
    let cjk_marked_stale = if cjk_tokenizer {
        if new_store && !layout.is_legacy() && !cjk_index_healthy(conn)? {
            reset_cjk_index(conn)?;
            cjk_rebuilt = true;
        }
        false
    } else {
        disable_cjk_without_tokenizer(conn)?
    };
    Ok(FtsSetup {
        cjk_rebuilt,
        layout: detect::fts_layout(conn)?,
        rebuilt: needs_repair,
        cjk_marked_stale,
    })
}

/// The tokenizer-absent rule of `schema-v23.md` §6.6: a file that another host
/// equipped with `messages_fts_cjk` would make every message write fail here
/// (`no such tokenizer`), so its three triggers are dropped and the index is
/// marked stale, leaving the table and view in place for a host that can
/// rebuild it.
fn disable_cjk_without_tokenizer(conn: &Connection) -> Result<bool, SchemaError> {
    if !detect::object_exists(conn, "table", "messages_fts_cjk")? {
        return Ok(false);
    }
    let mut live = Vec::new();
    for name in ddl::CJK_TRIGGER_NAMES {
        if detect::object_exists(conn, "trigger", name)? {
            live.push(name);
        }
    }
    if live.is_empty() {
        return Ok(false);
    }
    conn.execute(ddl::UPSERT_META, [CJK_STALE_KEY, "1"])
        .context("marking the CJK index stale")?;
    for name in live {
        conn.execute_batch(&format!("DROP TRIGGER IF EXISTS {name}"))
            .context("dropping a CJK trigger")?;
    }
    Ok(true)
}

/// Drops the v1–v10 external-content FTS objects (generation A/A′: indexing
/// `content` only). They hold no text of their own, so nothing is lost; the
/// v23 objects created afterwards are rebuilt from `messages`.
pub fn drop_content_only_layout(conn: &Connection) -> Result<(), SchemaError> {
    for name in ddl::FTS_TRIGGER_NAMES {
        conn.execute_batch(&format!("DROP TRIGGER IF EXISTS {name}"))
            .context("dropping a legacy FTS trigger")?;
    }
    conn.execute_batch(
        "DROP TABLE IF EXISTS messages_fts_trigram; DROP TABLE IF EXISTS messages_fts;",
    )
    .context("dropping the legacy FTS tables")
    .map_err(Into::into)
}

/// Drops the CJK index: its three triggers, its table and its view.
pub fn drop_cjk_index(conn: &Connection) -> Result<(), SchemaError> {
    for name in ddl::CJK_TRIGGER_NAMES {
        conn.execute_batch(&format!("DROP TRIGGER IF EXISTS {name}"))
            .context("dropping a CJK trigger")?;
    }
    conn.execute_batch(
        "DROP TABLE IF EXISTS messages_fts_cjk; DROP VIEW IF EXISTS messages_fts_cjk_src;",
    )
    .context("dropping the CJK index")
    .map_err(Into::into)
}

/// Rebuilds an external-content FTS5 index from its content table or view.
pub fn rebuild(conn: &Connection, table: &str) -> Result<(), SchemaError> {
    conn.execute_batch(&format!("INSERT INTO {table}({table}) VALUES('rebuild')"))
        .context(&format!("rebuilding {table}"))
        .map_err(Into::into)
}

fn refill_legacy_inline(conn: &Connection, table: &str) -> Result<(), SchemaError> {
    conn.execute_batch(&format!(
        "DELETE FROM {table};
         INSERT INTO {table}(rowid, content) SELECT id, COALESCE(content,'') || ' ' || COALESCE(tool_name,'') || ' ' || COALESCE(tool_calls,'') FROM messages;"
    ))
    .context(&format!("refilling {table}")).map_err(Into::into)
}

fn run_all(conn: &Connection, statements: &[&str]) -> Result<(), SchemaError> {
    for statement in statements {
        conn.execute_batch(statement)
            .context("creating FTS objects")?;
    }
    Ok(())
}

fn delete_meta(conn: &Connection, key: &str) -> Result<(), SchemaError> {
    conn.execute("DELETE FROM state_meta WHERE key = ?1", [key])
        .context("clearing an FTS marker")?;
    Ok(())
}
