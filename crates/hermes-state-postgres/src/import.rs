//! Writing an import of the JSONL export (`docs/EXPORT-FORMAT.md`) in one
//! transaction, by the SQLite import's rules.
//!
//! The contract crate reads and checks the file and hands over its rows,
//! values in SQLite's storage classes ([`ImportRow`]); here they are
//! written all or nothing: one write transaction for the whole file, so a failure leaves
//! the store as it was. The rules are the SQLite import's
//! (`SessionDb::import_jsonl`): an existing session is skipped (or, with
//! `overwrite`, replaced: its row updated, its messages deleted and
//! written again); every exported column is kept, counters included; a
//! message keeps its id while that id is free and above the session's
//! previous one, and from the first taken id on the session's further
//! messages get new ids (so its order is kept); a missing parent, or one
//! that would close a cycle, is dropped (`orphaned`); a title another
//! session holds is dropped (`title_conflicts`). The message id sequence
//! is kept past every kept id, so later appends never collide.
//!
//! `session_list`: `import_sessions` of the original's export shape, also
//! in one transaction.

use std::collections::{HashMap, HashSet};

use hermes_state_core::export::{Cell, ImportOutcome, ImportRow};
use hermes_state_types::stored::StoredValue;
use postgres::types::ToSql;
use postgres::{Statement, Transaction};

use crate::PgStore;
use crate::content;
use crate::copy::{Column, ColumnKind, columns, param};
use crate::error::{Context, PgError, Result};

mod session_list;

/// Where the walk through the rows stands.
enum Cursor {
    Idle,
    /// The session exists and is kept: its messages are skipped.
    Skipping,
    /// The session was written; its messages follow.
    Writing {
        /// Still inserting the exported ids.
        explicit_ids: bool,
        last_id: i64,
    },
}

impl PgStore {
    /// The columns of a table of this store that an import may write (the
    /// generated search column left out), in table order.
    pub fn table_columns(&self, table: &str) -> Result<Vec<String>> {
        let schema = self.url().schema().to_owned();
        self.read(|tx| {
            Ok(columns(tx, &schema, table)?
                .into_iter()
                .map(|c| c.name)
                .collect())
        })
    }

    /// Writes the rows of an import in one transaction, by the rules in the
    /// module documentation. Errors: a value PostgreSQL cannot hold (a NUL
    /// in text, text in a number column) or a column the store lacks, as
    /// [`PgError::InvalidInput`] naming the row; nothing is written then.
    pub fn import_rows(&self, rows: &[ImportRow], overwrite: bool) -> Result<ImportOutcome> {
        let schema = self.url().schema().to_owned();
        self.write("importing sessions", |tx| {
            let mut import = Import {
                sessions: columns(tx, &schema, "sessions")?,
                messages: columns(tx, &schema, "messages")?,
                statements: HashMap::new(),
                sequence_behind: false,
                outcome: ImportOutcome::default(),
            };
            let mut cursor = Cursor::Idle;
            for row in rows {
                import.apply(tx, row, overwrite, &mut cursor)?;
            }
            import.sync_sequence(tx)?;
            Ok(import.outcome)
        })
    }
}

struct Import {
    sessions: Vec<Column>,
    messages: Vec<Column>,
    statements: HashMap<String, Statement>,
    /// A kept id may be at or past the sequence's next value.
    sequence_behind: bool,
    outcome: ImportOutcome,
}

impl Import {
    fn apply(
        &mut self,
        tx: &mut Transaction<'_>,
        row: &ImportRow,
        overwrite: bool,
        cursor: &mut Cursor,
    ) -> Result<()> {
        match row {
            ImportRow::Session { line, id, values } => {
                let exists = session_exists(tx, id)?;
                if exists && !overwrite {
                    self.outcome.skipped.push(id.clone());
                    *cursor = Cursor::Skipping;
                    return Ok(());
                }
                if exists {
                    tx.execute("DELETE FROM messages WHERE session_id = $1", &[id])
                        .context("replacing a session's messages")?;
                    self.outcome.replaced.push(id.clone());
                }
                let mut values = values.clone();
                for (column, value) in &mut values {
                    match (column.as_str(), value.as_text()) {
                        ("parent_session_id", Some(parent))
                            if !session_exists(tx, parent)? || closes_cycle(tx, id, parent)? =>
                        {
                            *value = Cell::Stored(StoredValue::Null);
                            self.outcome.orphaned.push(id.clone());
                        }
                        ("title", Some(title)) if title_taken(tx, title, id)? => {
                            self.outcome
                                .title_conflicts
                                .push((id.clone(), title.to_owned()));
                            *value = Cell::Stored(StoredValue::Null);
                        }
                        _ => {}
                    }
                }
                self.upsert_session(tx, *line, id, &values)?;
                self.outcome.imported += 1;
                *cursor = Cursor::Writing {
                    explicit_ids: true,
                    last_id: i64::MIN,
                };
                Ok(())
            }
            ImportRow::Message { line, id, values } => {
                let Cursor::Writing {
                    explicit_ids,
                    last_id,
                } = cursor
                else {
                    return Ok(());
                };
                // Under its own id while that id is free and keeps the order
                // (one statement: a taken id inserts nothing), else a new one.
                let kept = match id {
                    Some(id) if *explicit_ids && *id > *last_id => {
                        self.insert_message(tx, *line, Some(*id), values)?
                    }
                    _ => None,
                };
                *last_id = match kept {
                    Some(kept) => kept,
                    None => {
                        *explicit_ids = false;
                        if id.is_some() {
                            self.outcome.renumbered += 1;
                        }
                        self.insert_message(tx, *line, None, values)?
                            .ok_or_else(|| {
                                PgError::InvalidInput("a message was not inserted".into())
                            })?
                    }
                };
                self.outcome.messages += 1;
                Ok(())
            }
        }
    }

    /// `INSERT … ON CONFLICT (id) DO UPDATE` of every given column.
    fn upsert_session(
        &mut self,
        tx: &mut Transaction<'_>,
        line: u64,
        id: &str,
        values: &[(String, Cell)],
    ) -> Result<()> {
        let what = || format!("export line {line}: session {id:?}");
        let (names, params) = bind(&self.sessions, stored(values, &what)?, &what)?;
        let updates: Vec<String> = names
            .iter()
            .filter(|name| *name != "id")
            .map(|name| format!("{name} = excluded.{name}"))
            .collect();
        let on_conflict = if updates.is_empty() {
            "DO NOTHING".to_owned()
        } else {
            format!("DO UPDATE SET {}", updates.join(", "))
        };
        let sql = format!(
            "INSERT INTO sessions ({}) VALUES ({}) ON CONFLICT (id) {on_conflict}",
            names.join(", "),
            placeholders(names.len())
        );
        let statement = self.statement(tx, &sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        tx.execute(&statement, &refs)
            .context(&format!("importing {}", what()))?;
        Ok(())
    }

    /// Inserts a message (under `id` when given and free); returns its id,
    /// `None` when `id` was taken (and nothing was inserted).
    fn insert_message(
        &mut self,
        tx: &mut Transaction<'_>,
        line: u64,
        id: Option<i64>,
        values: &[(String, Cell)],
    ) -> Result<Option<i64>> {
        let what = || format!("export line {line}: a message");
        let (mut names, mut params) = bind(&self.messages, stored(values, &what)?, &what)?;
        match id {
            Some(id) => {
                names.push("id".to_owned());
                params.push(Box::new(id));
                self.sequence_behind = true;
            }
            None => self.sync_sequence(tx)?,
        }
        let on_conflict = if id.is_some() {
            " ON CONFLICT (id) DO NOTHING"
        } else {
            ""
        };
        let sql = format!(
            "INSERT INTO messages ({}) VALUES ({}){on_conflict} RETURNING id",
            names.join(", "),
            placeholders(names.len())
        );
        let statement = self.statement(tx, &sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        Ok(tx
            .query_opt(&statement, &refs)
            .context(&format!("importing {}", what()))?
            .map(|row| row.get(0)))
    }

    /// Moves the message id sequence past the highest id after ids were
    /// kept, never back.
    fn sync_sequence(&mut self, tx: &mut Transaction<'_>) -> Result<()> {
        if !std::mem::take(&mut self.sequence_behind) {
            return Ok(());
        }
        tx.execute(
            "SELECT setval(s, GREATEST((SELECT max(id) FROM messages), \
             pg_sequence_last_value(s::regclass)), true) \
             FROM pg_get_serial_sequence('messages', 'id') AS s",
            &[],
        )
        .context("moving the message id sequence")?;
        Ok(())
    }

    fn statement(&mut self, tx: &mut Transaction<'_>, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = tx.prepare(sql).context("preparing an import statement")?;
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

type Params = Vec<Box<dyn ToSql + Sync>>;

/// The quoted column names and parameters of `values`, each converted for
/// its column's type.
fn bind<'v>(
    table: &[Column],
    values: impl IntoIterator<Item = (&'v str, &'v StoredValue)>,
    what: &dyn Fn() -> String,
) -> Result<(Vec<String>, Params)> {
    let mut names = Vec::new();
    let mut params: Params = Vec::new();
    let mut seen = HashSet::new();
    for (name, value) in values {
        let Some(column) = table.iter().find(|c| c.name == name) else {
            return Err(PgError::InvalidInput(format!(
                "{}: the store has no column {name:?}",
                what()
            )));
        };
        if !seen.insert(name) {
            return Err(PgError::InvalidInput(format!(
                "{}: column {name:?} given twice",
                what()
            )));
        }
        // An import writes as an INSERT into SQLite would: a number given
        // as content becomes the text TEXT affinity makes of it.
        let written;
        let value = if column.kind == ColumnKind::Content {
            written = content::as_written(value.clone());
            &written
        } else {
            value
        };
        params.push(param(value, column, what)?);
        names.push(format!("\"{}\"", column.name.replace('"', "\"\"")));
    }
    Ok((names, params))
}

/// An import row's values as stored values: text that is not UTF-8 (which
/// a damaged SQLite file may hold) has no PostgreSQL form.
fn stored<'v>(
    values: &'v [(String, Cell)],
    what: &dyn Fn() -> String,
) -> Result<Vec<(&'v str, &'v StoredValue)>> {
    values
        .iter()
        .map(|(name, cell)| match cell {
            Cell::Stored(value) => Ok((name.as_str(), value)),
            Cell::RawText(_) => Err(PgError::InvalidInput(format!(
                "{}, column {name}: text that is not UTF-8 cannot be stored on PostgreSQL",
                what()
            ))),
        })
        .collect()
}

fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn session_exists(tx: &mut Transaction<'_>, id: &str) -> Result<bool> {
    Ok(tx
        .query_one(
            "SELECT EXISTS(SELECT 1 FROM sessions WHERE id = $1)",
            &[&id],
        )
        .context("checking a session")?
        .get(0))
}

fn title_taken(tx: &mut Transaction<'_>, title: &str, id: &str) -> Result<bool> {
    Ok(tx
        .query_one(
            "SELECT EXISTS(SELECT 1 FROM sessions WHERE title = $1 AND id <> $2)",
            &[&title, &id],
        )
        .context("checking a title")?
        .get(0))
}

/// Whether linking `id` under `parent` would close a parent cycle: `id` is
/// `parent` or one of its ancestors in the store.
fn closes_cycle(tx: &mut Transaction<'_>, id: &str, parent: &str) -> Result<bool> {
    let mut seen = HashSet::new();
    let mut current = Some(parent.to_owned());
    while let Some(node) = current {
        if node == id {
            return Ok(true);
        }
        if !seen.insert(node.clone()) {
            return Ok(false);
        }
        current = tx
            .query_opt(
                "SELECT parent_session_id FROM sessions WHERE id = $1",
                &[&node],
            )
            .context("following parents")?
            .and_then(|row| row.get(0));
    }
    Ok(false)
}
