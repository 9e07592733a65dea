//! The API coverage table (`docs/API-COVERAGE.md`) cannot drift: every
//! operation `docs/spec/api.md` names has a row; a row names the `SessionDb`
//! method (under the operation's own name) and a test that exists, or says
//! `missing`, and a row says `missing` only while the facade really lacks
//! the method. So the table's `missing` rows are exactly the operations
//! still to build.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};

/// The behaviour reference whose operations are counted.
pub const SPEC: &str = "docs/spec/api.md";
/// The table.
pub const TABLE: &str = "docs/API-COVERAGE.md";

/// Names api.md writes as calls that are not operations of the store: SQL
/// and Python functions quoted in the text.
pub const NOT_OPERATIONS: [&str; 4] = ["len", "max", "snippet", "substr"];

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The operation's name in api.md.
    pub operation: String,
    /// The facade method, `None` when the row says `missing`.
    pub method: Option<String>,
    /// The test that calls it.
    pub test: Option<String>,
}

/// The operations api.md names: every backticked `name(`.
pub fn spec_operations(spec: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in spec.match_indices('`') {
        let rest = &spec[at + 1..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        if !name.is_empty()
            && rest[name.len()..].starts_with('(')
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && !NOT_OPERATIONS.contains(&name.as_str())
        {
            names.insert(name);
        }
    }
    names
}

/// The rows of the table: `| \`op\` | § | \`SessionDb::m\` or missing | \`test\` or — |`.
pub fn table_rows(table: &str) -> Vec<Row> {
    let unquote = |cell: &str| cell.trim().trim_matches('`').to_owned();
    table
        .lines()
        .filter(|line| line.starts_with("| `"))
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
            let [operation, _section, method, test] = cells.as_slice() else {
                return None;
            };
            let method = unquote(method);
            Some(Row {
                operation: unquote(operation),
                method: method
                    .strip_prefix("SessionDb::")
                    .map(str::to_owned)
                    .filter(|_| method != "missing"),
                test: Some(unquote(test)).filter(|t| !t.is_empty() && t != "—"),
            })
        })
        .collect()
}

/// What is wrong with the table, given the spec's operations, the facade's
/// public method names and the test function names.
pub fn table_problems(
    operations: &BTreeSet<String>,
    rows: &[Row],
    methods: &BTreeSet<String>,
    tests: &BTreeSet<String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let by_operation: BTreeMap<&str, &Row> =
        rows.iter().map(|r| (r.operation.as_str(), r)).collect();
    for operation in operations {
        if !by_operation.contains_key(operation.as_str()) {
            problems.push(format!("{TABLE}: no row for `{operation}` of {SPEC}"));
        }
    }
    for row in rows {
        let op = &row.operation;
        if !operations.contains(op) {
            problems.push(format!("{TABLE}: `{op}` is not an operation of {SPEC}"));
        }
        match (&row.method, &row.test) {
            (Some(method), Some(test)) => {
                if method != op {
                    problems.push(format!("{TABLE}: `{op}` is provided as `{method}`, not under its own name"));
                }
                if !methods.contains(method) {
                    problems.push(format!("{TABLE}: `SessionDb::{method}` does not exist"));
                }
                if !tests.contains(test) {
                    problems.push(format!("{TABLE}: test `{test}` (for `{op}`) does not exist"));
                }
            }
            (Some(_), None) => problems.push(format!("{TABLE}: `{op}` names no test")),
            (None, _) if methods.contains(op) => problems.push(format!(
                "{TABLE}: `{op}` is marked missing but `SessionDb::{op}` exists: give its row the method and a test"
            )),
            (None, _) => {}
        }
    }
    problems
}

/// The check on the workspace at `root`.
pub fn problems(root: &Path) -> Result<Vec<String>> {
    let read = |path: &str| {
        std::fs::read_to_string(root.join(path)).with_context(|| format!("reading {path}"))
    };
    let operations = spec_operations(&read(SPEC)?);
    let rows = table_rows(&read(TABLE)?);
    let mut methods = BTreeSet::new();
    for file in rust_files(&root.join("crates/hermes-state/src"))? {
        let text = std::fs::read_to_string(&file)?;
        methods.extend(names_after(&text, "pub fn "));
    }
    // The contract's operations are `SessionDb`'s too: it implements every
    // section (`open_store` hands it out as a `dyn SessionStore`).
    for file in rust_files(&root.join("crates/hermes-state-core/src/store"))? {
        let text = std::fs::read_to_string(&file)?;
        methods.extend(names_after(&text, "fn "));
    }
    // The conformance suite's cases are tests of `SessionDb` too: the
    // facade's test binary runs each of them on it.
    let mut tests = BTreeSet::new();
    for dir in [
        "crates/hermes-state/tests",
        "crates/hermes-state-cli/tests",
        "crates/hermes-state-testkit/src/conformance",
    ] {
        for file in rust_files(&root.join(dir))? {
            let text = std::fs::read_to_string(&file)?;
            tests.extend(names_after(&text, "fn "));
        }
    }
    let mut found = table_problems(&operations, &rows, &methods, &tests);
    let mut dispatch = String::new();
    for file in rust_files(&root.join(REPLAY_DISPATCH))? {
        dispatch.push_str(&std::fs::read_to_string(&file)?);
    }
    found.extend(replay_problems(&operations, &dispatch));
    Ok(found)
}

/// The calls by the original's names (`hermes_state::by_name`), through
/// which the replay of the original's traces makes each recorded call
/// (`crates/hermes-state/tests/facade/replay`) and the Python package
/// makes every call.
pub const REPLAY_DISPATCH: &str = "crates/hermes-state/src/by_name";

/// Every operation of the spec must have its arm in the replay's
/// dispatcher (`"name" =>`), so the replay of the original's traces is a
/// check of every operation, as docs/API-COVERAGE.md says.
pub fn replay_problems(operations: &BTreeSet<String>, dispatch: &str) -> Vec<String> {
    operations
        .iter()
        .filter(|operation| !dispatch.contains(&format!("\"{operation}\" =>")))
        .map(|operation| {
            format!("{REPLAY_DISPATCH}: no arm for `{operation}`: the replay of the original's traces cannot make it")
        })
        .collect()
}

/// Identifiers that follow `prefix` in `text`.
fn names_after(text: &str, prefix: &str) -> Vec<String> {
    text.match_indices(prefix)
        .map(|(at, _)| {
            text[at + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

fn rust_files(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(rust_files(&path)?);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn operations_are_the_backticked_calls_of_the_spec() {
        let spec = "### 2.1 `create_session(session_id)`\n| `end_session(id)` | uses `len(x)` and `snippet(` |";
        assert_eq!(
            spec_operations(spec),
            set(&["create_session", "end_session"])
        );
    }

    #[test]
    fn a_drifting_table_fails() {
        let table = "| `a` | 1 | `SessionDb::a` | `test_a` |\n| `b` | 2 | missing | — |\n| `c` | 3 | `SessionDb::c` | `nope` |";
        let rows = table_rows(table);
        let problems = table_problems(
            &set(&["a", "b", "c", "d"]),
            &rows,
            &set(&["a", "b", "c"]),
            &set(&["test_a"]),
        );
        assert_eq!(
            problems,
            [
                format!("{TABLE}: no row for `d` of {SPEC}"),
                format!(
                    "{TABLE}: `b` is marked missing but `SessionDb::b` exists: give its row the method and a test"
                ),
                format!("{TABLE}: test `nope` (for `c`) does not exist"),
            ]
        );
        let good = table_problems(&set(&["a"]), &rows[..1], &set(&["a"]), &set(&["test_a"]));
        assert!(good.is_empty(), "{good:?}");
    }

    #[test]
    fn an_operation_without_a_replay_arm_is_reported() {
        let dispatch = r#"match op { "a" => one(), "b_c" => two() }"#;
        assert!(replay_problems(&set(&["a", "b_c"]), dispatch).is_empty());
        let found = replay_problems(&set(&["a", "b"]), dispatch);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("`b`"), "{found:?}");
    }
}
