//! The scan used when the base index is not served (absent, a v1–v10
//! content-only index, a trigger missing, or `fts_stale`):
//! `newer-versions.md` §5.3 item 1, the newer release's own fallback.
//!
//! Chosen over the simpler `api.md` §8.4 LIKE route because it keeps the
//! meaning of the FTS query the user typed: terms are AND-ed as MATCH does,
//! `OR` splits alternatives and `NOT` excludes, so `docker build` on an old
//! file finds what it finds on a v23 file (minus stemming-free tokenisation
//! differences: a term matches as a substring). The LIKE route would OR the
//! terms and return many more rows.
//!
//! Rules: the tokens of the sanitized query (`"[^"]+"|\S+`) form groups split
//! at `OR`; within a group `NOT` negates the next term and `AND`/`NEAR` are
//! dropped; a term is the token without surrounding `"` and `*`, and must
//! occur (LIKE, escaped) in `content`, `tool_name` or `tool_calls`. The v23
//! visibility and filters apply; the snippet is the raw text around the first
//! positive term; newest first (`ASC` for `sort = "oldest"`), ties by id.

use rusqlite::types::Value as SqlValue;

use crate::titles::escape_like;

/// One alternative: every positive term must occur, no negative one.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) positive: Vec<String>,
    pub(crate) negative: Vec<String>,
}

/// The groups of a sanitized query; groups without a positive term are
/// dropped (a lone `NOT x` would match almost everything).
pub(crate) fn groups(q: &str) -> Vec<Group> {
    let mut groups = vec![Group::default()];
    let mut negate = false;
    for token in tokens(q) {
        match token {
            "OR" => {
                groups.push(Group::default());
                negate = false;
            }
            "AND" | "NEAR" => {}
            "NOT" => negate = true,
            _ => {
                let term = token.trim_matches(|c| c == '"' || c == '*');
                if term.is_empty() {
                    continue;
                }
                if let Some(group) = groups.last_mut() {
                    if negate {
                        group.negative.push(term.to_owned());
                    } else {
                        group.positive.push(term.to_owned());
                    }
                }
                negate = false;
            }
        }
    }
    groups.retain(|g| !g.positive.is_empty());
    groups
}

/// Tokens of `"[^"]+"|\S+` (Python whitespace), as the original's scans and
/// its rebuild supplement split a query.
pub(super) fn tokens(q: &str) -> Vec<&str> {
    use hermes_state_types::text::is_python_whitespace;
    let mut out = Vec::new();
    let mut rest = q;
    while let Some(start) = rest.find(|c: char| !is_python_whitespace(c)) {
        rest = &rest[start..];
        let end = if let Some(quoted) = rest.strip_prefix('"') {
            match quoted.find('"') {
                Some(close) if close > 0 => close + 2,
                _ => rest.find(is_python_whitespace).unwrap_or(rest.len()),
            }
        } else {
            rest.find(is_python_whitespace).unwrap_or(rest.len())
        };
        out.push(&rest[..end]);
        rest = &rest[end..];
    }
    out
}

/// The `WHERE` condition of the groups, pushing its LIKE patterns to `params`.
pub(crate) fn condition(groups: &[Group], params: &mut Vec<SqlValue>) -> String {
    let term = |t: &str, params: &mut Vec<SqlValue>| {
        params.push(SqlValue::Text(format!("%{}%", escape_like(t))));
        let n = params.len();
        format!(
            "(COALESCE(m.content, '') LIKE ?{n} ESCAPE '\\' OR COALESCE(m.tool_name, '') LIKE ?{n} ESCAPE '\\' OR COALESCE(m.tool_calls, '') LIKE ?{n} ESCAPE '\\')"
        )
    };
    let alternatives: Vec<String> = groups
        .iter()
        .map(|g| {
            let mut parts: Vec<String> = g.positive.iter().map(|t| term(t, params)).collect();
            parts.extend(
                g.negative
                    .iter()
                    .map(|t| format!("NOT {}", term(t, params))),
            );
            format!("({})", parts.join(" AND "))
        })
        .collect();
    alternatives.join(" OR ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(positive: &[&str], negative: &[&str]) -> Group {
        Group {
            positive: positive.iter().map(|s| (*s).to_owned()).collect(),
            negative: negative.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn groups_follow_or_not_and_quotes() {
        assert_eq!(groups("docker build"), vec![g(&["docker", "build"], &[])]);
        assert_eq!(
            groups("docker OR nginx"),
            vec![g(&["docker"], &[]), g(&["nginx"], &[])]
        );
        assert_eq!(groups("docker NOT build"), vec![g(&["docker"], &["build"])]);
        assert_eq!(
            groups("\"base image\" AND dock*"),
            vec![g(&["base image", "dock"], &[])]
        );
        assert_eq!(groups("NOT docker"), vec![]);
        assert_eq!(groups(""), vec![]);
    }
}
