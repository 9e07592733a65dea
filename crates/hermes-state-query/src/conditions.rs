//! The one builder of dynamic `WHERE` clauses: clauses joined by `AND`,
//! values bound as numbered parameters, never spliced into the SQL.

use rusqlite::types::Value as SqlValue;

use crate::lookups::escape_like;
use crate::prune::cwd_folder;

/// A `WHERE` clause under construction, with its bound parameters.
#[derive(Debug, Clone, Default)]
pub(crate) struct Conditions {
    clauses: Vec<String>,
    pub(crate) params: Vec<SqlValue>,
}

impl Conditions {
    /// Adds `clause`, whose `?` placeholders take `values` in order.
    pub(crate) fn push(&mut self, clause: &str, values: impl IntoIterator<Item = SqlValue>) {
        let mut numbered = String::with_capacity(clause.len() + 4);
        let mut values = values.into_iter();
        for c in clause.chars() {
            if c == '?' {
                let value = values.next().unwrap_or(SqlValue::Null);
                self.params.push(value);
                numbered.push_str(&format!("?{}", self.params.len()));
            } else {
                numbered.push(c);
            }
        }
        self.clauses.push(numbered);
    }

    /// ` WHERE …` (empty when there is no clause).
    pub(crate) fn where_clause(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.clauses.join(" AND "))
        }
    }

    /// `LIMIT ? OFFSET ?` with the next placeholders.
    pub(crate) fn limit(&mut self, limit: u32, offset: u32) -> String {
        self.params.push(SqlValue::Integer(i64::from(limit)));
        self.params.push(SqlValue::Integer(i64::from(offset)));
        format!(
            " LIMIT ?{} OFFSET ?{}",
            self.params.len() - 1,
            self.params.len()
        )
    }

    /// `s.cwd` is the folder or lies below it (`api.md` §10.3, §11.3), the
    /// original's clause: trailing `/` and `\` are stripped (unless nothing
    /// would be left), then `cwd = p OR cwd LIKE 'p/%' OR cwd LIKE 'p\%'`.
    /// As there, the `LIKE`s have no `ESCAPE`: `%` and `_` in the folder are
    /// wildcards, `\` is literal, ASCII letters match either case.
    pub(crate) fn push_cwd_prefix(&mut self, prefix: &str) {
        let folder = cwd_folder(prefix);
        self.push(
            "(s.cwd = ? OR s.cwd LIKE ? OR s.cwd LIKE ?)",
            [
                text_value(folder),
                SqlValue::Text(format!("{folder}/%")),
                SqlValue::Text(format!("{folder}\\%")),
            ],
        );
    }
}

/// A text parameter.
pub(crate) fn text_value(value: &str) -> SqlValue {
    SqlValue::Text(value.to_owned())
}

/// The `LIKE … ESCAPE '\'` parameter of "contains `value`" (ASCII
/// case-insensitive, wildcards literal).
pub(crate) fn contains(value: &str) -> SqlValue {
    SqlValue::Text(format!("%{}%", escape_like(value)))
}
