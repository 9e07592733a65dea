//! Expected values, transcribed from the specification (`schema-v23.md`,
//! `migrations.md`), never taken from `hermes_state_schema::ddl`: the point
//! of these tests is to check those constants (and the open algorithm)
//! against the spec. One file per kind of value; the lookups are here.

mod columns;
mod indexes;
mod inventory;
mod object_sql;

pub use columns::*;
pub use indexes::*;
pub use inventory::*;
pub use object_sql::*;

/// One column as `PRAGMA table_xinfo` reports it: `(cid, name, type, notnull, dflt_value, pk)`.
pub type Column = (
    i64,
    &'static str,
    &'static str,
    i64,
    Option<&'static str>,
    i64,
);

/// Whether an object belongs to the optional CJK index of `schema-v23.md` §6.6.
pub fn is_cjk_object(name: &str) -> bool {
    name.starts_with("messages_fts_cjk")
}

/// The stored SQL of a table/view/trigger/virtual table from [`OBJECT_SQL`].
pub fn object_sql(name: &str) -> &'static str {
    OBJECT_SQL
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, sql)| *sql)
        .expect("object in the spec")
}

/// The stored SQL of a CJK object from [`CJK_OBJECT_SQL`].
pub fn cjk_object_sql(name: &str) -> &'static str {
    CJK_OBJECT_SQL
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, sql)| *sql)
        .expect("CJK object in the spec")
}

/// The spec's column line of `column` in the stored DDL of `table`
/// (`migrations.md` §1.1: one definition text per column, for life).
pub fn column_line(table: &str, column: &str) -> &'static str {
    object_sql(table)
        .lines()
        .map(|line| line.trim().trim_end_matches(','))
        .find(|line| line.split_whitespace().next() == Some(column))
        .expect("column in the spec DDL")
}

/// The table constraint line of a table, if any (`migrations.md` §1.1).
pub fn constraint_line(table: &str) -> Option<&'static str> {
    object_sql(table)
        .lines()
        .map(|line| line.trim().trim_end_matches(','))
        .find(|line| line.starts_with("FOREIGN KEY") || line.starts_with("PRIMARY KEY"))
}

/// The columns of a table per [`TABLE_COLUMNS`].
pub fn columns(table: &str) -> &'static [Column] {
    TABLE_COLUMNS
        .iter()
        .find(|(n, _)| *n == table)
        .map(|(_, c)| *c)
        .expect("table in the spec")
}

/// The definition an `ADD COLUMN` gives a column (`migrations.md` §3.1):
/// type, then `NOT NULL` unless a primary-key member, then `DEFAULT x`.
pub fn reconciler_definition(column: &Column) -> String {
    let (_, _, ty, notnull, default, pk) = *column;
    let mut parts = vec![ty.to_owned()];
    if notnull == 1 && pk == 0 {
        parts.push("NOT NULL".to_owned());
    }
    if let Some(default) = default {
        parts.push(format!("DEFAULT {default}"));
    }
    parts.join(" ")
}
