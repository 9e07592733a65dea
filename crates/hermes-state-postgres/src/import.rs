//! Writing an import of the JSONL export (`docs/EXPORT-FORMAT.md`) in one
//! transaction, by the format's rules.
//!
//! The contract crate reads and checks the file and hands over its rows,
//! values in SQLite's storage classes ([`ImportRow`]); here they are
//! written all or nothing: one write transaction for the whole file, so a
//! failure leaves the store as it was. The rules (existing sessions,
//! parents, titles, message ids) are the contract's
//! ([`write_rows`]) over this module's statements ([`ImportWriter`]);
//! the message id sequence is moved past every kept id, so later appends
//! never collide.
//!
//! `session_list`: `import_sessions` of the original's export shape, also
//! in one transaction.

use std::collections::{HashMap, HashSet};

use hermes_state_core::export::{
    Cell, ImportCursor, ImportOutcome, ImportRow, ImportWriter, write_rows,
};
use hermes_state_types::stored::{StoredValue, StoredValueRef};
use postgres::types::ToSql;
use postgres::{Statement, Transaction};

use crate::PgStore;
use crate::content;
use crate::copy::{Column, ColumnKind, columns, param};
use crate::error::{Context, PgError, Result};

mod session_list;

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
                tx,
                statements: HashMap::new(),
                sequence_behind: false,
            };
            let outcome = write_rows(&mut import, rows, overwrite, &mut ImportCursor::Idle)?;
            import.sync_sequence()?;
            Ok(outcome)
        })
    }
}

/// The import's transaction, with the tables' columns and the statements
/// prepared on it.
struct Import<'a, 't> {
    tx: &'a mut Transaction<'t>,
    sessions: Vec<Column>,
    messages: Vec<Column>,
    statements: HashMap<String, Statement>,
    /// A kept id may be at or past the sequence's next value.
    sequence_behind: bool,
}

impl ImportWriter for Import<'_, '_> {
    type Error = PgError;

    fn session_exists(&mut self, id: StoredValueRef<'_>) -> Result<bool> {
        match id.to_text_lossy() {
            Some(id) => session_exists(self.tx, &id),
            None => Ok(false),
        }
    }

    fn parent_of(&mut self, id: &str) -> Result<Option<String>> {
        let sql = "SELECT parent_session_id FROM sessions WHERE id = $1";
        let row = self.tx.query_opt(sql, &[&id]);
        Ok(row.context("following parents")?.and_then(|row| row.get(0)))
    }

    fn title_taken(&mut self, title: &str, id: &str) -> Result<bool> {
        let sql = "SELECT EXISTS(SELECT 1 FROM sessions WHERE title = $1 AND id <> $2)";
        let row = self.tx.query_one(sql, &[&title, &id]);
        Ok(row.context("checking a title")?.get(0))
    }

    fn delete_messages(&mut self, session_id: &str) -> Result<()> {
        let sql = "DELETE FROM messages WHERE session_id = $1";
        self.tx
            .execute(sql, &[&session_id])
            .context("replacing a session's messages")?;
        Ok(())
    }

    /// `INSERT … ON CONFLICT (id) DO UPDATE` of every given column.
    fn upsert_session(&mut self, line: u64, values: &[(String, Cell)]) -> Result<()> {
        let what = || format!("export line {line}: a session");
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
        let statement = self.statement(&sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        self.tx
            .execute(&statement, &refs)
            .context(&format!("importing {}", what()))?;
        Ok(())
    }

    fn insert_message_as(&mut self, line: u64, id: i64, values: &[(String, Cell)]) -> Result<bool> {
        Ok(self.insert(line, Some(id), values)?.is_some())
    }

    fn insert_message(&mut self, line: u64, values: &[(String, Cell)]) -> Result<i64> {
        self.insert(line, None, values)?
            .ok_or_else(|| PgError::InvalidInput("a message was not inserted".into()))
    }
}

impl Import<'_, '_> {
    /// Inserts a message (under `id` when given and free; one statement: a
    /// taken id inserts nothing); returns its id, `None` when `id` was taken.
    fn insert(
        &mut self,
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
            None => self.sync_sequence()?,
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
        let statement = self.statement(&sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        Ok(self
            .tx
            .query_opt(&statement, &refs)
            .context(&format!("importing {}", what()))?
            .map(|row| row.get(0)))
    }

    /// Moves the message id sequence past the highest id after ids were
    /// kept, never back.
    fn sync_sequence(&mut self) -> Result<()> {
        if !std::mem::take(&mut self.sequence_behind) {
            return Ok(());
        }
        self.tx
            .execute(
                "SELECT setval(s, GREATEST((SELECT max(id) FROM messages), \
             pg_sequence_last_value(s::regclass)), true) \
             FROM pg_get_serial_sequence('messages', 'id') AS s",
                &[],
            )
            .context("moving the message id sequence")?;
        Ok(())
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self
            .tx
            .prepare(sql)
            .context("preparing an import statement")?;
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
