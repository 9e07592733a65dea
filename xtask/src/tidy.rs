//! Checks of the workspace's architecture invariants (see docs/ARCHITECTURE.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use serde_json::Value;

pub mod api_coverage;
pub mod conformance;
pub mod references;

/// The crates in dependency order: each may depend only on those before it
/// (and `schema` and `query`, siblings on `sqlite`, not on each other: see
/// [`sibling_problems`]; the PostgreSQL backend stands on the contract crate
/// alone: see [`postgres_problems`]).
pub const LAYERS: [&str; 8] = [
    "hermes-state-types",
    CORE,
    "hermes-state-sqlite",
    "hermes-state-schema",
    "hermes-state-query",
    "hermes-state-postgres",
    "hermes-state",
    "hermes-state-cli",
];

/// The library crates (everything but the binary, which may open files of its own).
pub const LIBRARIES: [&str; 7] = [
    LAYERS[0], LAYERS[1], LAYERS[2], LAYERS[3], LAYERS[4], LAYERS[5], LAYERS[6],
];

/// The contract crate: the operations, types and rules of a store, linking
/// no database.
pub const CORE: &str = "hermes-state-core";

/// The crates that link a database: SQLite (the bindings and the bundled
/// library) and the PostgreSQL client.
pub const DATABASE_CRATES: [&str; 4] = ["rusqlite", "libsqlite3-sys", "postgres", "tokio-postgres"];

/// What the PostgreSQL backend must not stand on: the SQLite crates of the
/// workspace, the facade, and SQLite itself.
pub const NOT_UNDER_POSTGRES: [&str; 5] = [
    "hermes-state-sqlite",
    "hermes-state-schema",
    "hermes-state-query",
    "hermes-state",
    "libsqlite3-sys",
];

/// The crates that issue DDL: the schema crate for SQLite files, the
/// PostgreSQL backend for its own server schema (its migrations and the
/// optional trigram index); no other crate creates or changes a schema.
pub const DDL_CRATES: [&str; 2] = ["hermes-state-schema", "hermes-state-postgres"];

/// The workspace root (the parent of `xtask/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// `cargo metadata` of the workspace, with the resolved dependency graph.
pub fn metadata() -> Result<Value> {
    serde_json::from_slice(&cargo(&["metadata", "--format-version", "1"])?)
        .context("parsing cargo metadata")
}

/// The standard output of `cargo <args>` run at the workspace root (the
/// cargo running this, when there is one).
fn cargo(args: &[&str]) -> Result<Vec<u8>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(args)
        .current_dir(workspace_root())
        .output()
        .with_context(|| format!("running cargo {}", args.join(" ")))?;
    anyhow::ensure!(
        output.status.success(),
        "cargo {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(output.stdout)
}

/// Package names of the normal (non-dev, non-build) dependency closure of a package.
pub fn normal_closure(metadata: &Value, package: &str) -> BTreeSet<String> {
    let packages: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let nodes: BTreeMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let Some(start) = packages
        .iter()
        .find(|(_, name)| **name == package)
        .map(|(id, _)| *id)
    else {
        return BTreeSet::new();
    };
    let mut seen = BTreeSet::new();
    let mut stack = vec![start];
    while let Some(id) = stack.pop() {
        for dep in nodes
            .get(id)
            .and_then(|n| n["deps"].as_array())
            .into_iter()
            .flatten()
        {
            let normal = dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|k| k["kind"].is_null());
            if let (true, Some(dep_id)) = (normal, dep["pkg"].as_str())
                && seen.insert(dep_id)
            {
                stack.push(dep_id);
            }
        }
    }
    seen.into_iter()
        .filter_map(|id| packages.get(id).map(|n| (*n).to_owned()))
        .collect()
}

/// Every problem found; empty when the workspace is tidy.
pub fn check_all() -> Result<Vec<String>> {
    let metadata = metadata()?;
    let mut problems = layering_problems(&metadata);
    problems.extend(sibling_problems(&metadata));
    problems.extend(cli_boundary_problems(&metadata)?);
    problems.extend(single_sqlite_problems(&metadata));
    problems.extend(test_kit_problems(&metadata));
    problems.extend(core_problems(&linked(CORE)?));
    problems.extend(postgres_problems(&linked("hermes-state-postgres")?));
    problems.extend(live_file_problems()?);
    problems.extend(ddl_problems()?);
    problems.extend(read_side_write_problems()?);
    problems.extend(query_crate_problems()?);
    problems.extend(seam_macro_problems()?);
    problems.extend(references::problems(&workspace_root())?);
    problems.extend(api_coverage::problems(&workspace_root())?);
    problems.extend(conformance::problems(&workspace_root())?);
    Ok(problems)
}

/// The test kit (`hermes-state-testkit`) is test support: no library or
/// binary of the workspace reaches it through normal dependencies.
pub fn test_kit_problems(metadata: &Value) -> Vec<String> {
    LAYERS
        .iter()
        .filter(|layer| normal_closure(metadata, layer).contains(TEST_KIT))
        .map(|layer| format!("{layer} depends on {TEST_KIT} outside its tests"))
        .collect()
}

/// The packages a build of `package` alone links (`cargo tree -e normal -p`):
/// its normal dependencies with the features it asks for itself. Not `cargo
/// metadata`'s graph, which unifies features across the workspace (there
/// refinery carries the schema crate's `rusqlite` to every user).
pub fn linked(package: &str) -> Result<BTreeSet<String>> {
    let tree = cargo(&["tree", "-e", "normal", "--prefix", "none", "-p", package])?;
    Ok(String::from_utf8_lossy(&tree)
        .lines()
        .filter_map(|line| line.split(' ').next())
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect())
}

/// The contract crate links no database (`linked` is what it links), so a
/// PostgreSQL-only deployment, a protocol crate or a dashboard can use the
/// contract without SQLite or a PostgreSQL client.
pub fn core_problems(linked: &BTreeSet<String>) -> Vec<String> {
    DATABASE_CRATES
        .iter()
        .filter(|name| linked.contains(**name))
        .map(|name| format!("{CORE} links {name}"))
        .collect()
}

/// The PostgreSQL backend (`linked` is what it links) stands on the contract
/// crate, not on the SQLite crates or the facade, and links no SQLite.
pub fn postgres_problems(linked: &BTreeSet<String>) -> Vec<String> {
    NOT_UNDER_POSTGRES
        .iter()
        .filter(|name| linked.contains(**name))
        .map(|name| format!("hermes-state-postgres links {name}"))
        .collect()
}

/// The workspace's test-support crate, a dev-dependency only.
pub const TEST_KIT: &str = "hermes-state-testkit";

/// Dependencies point one way: types <- core <- sqlite <- schema / query <-
/// postgres <- facade <- cli; the types crate has no SQLite at all.
pub fn layering_problems(metadata: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let types = normal_closure(metadata, "hermes-state-types");
    for sqlite in ["rusqlite", "libsqlite3-sys", "refinery"] {
        if types.contains(sqlite) {
            problems.push(format!("hermes-state-types depends on {sqlite}"));
        }
    }
    for (position, layer) in LAYERS.iter().enumerate() {
        let closure = normal_closure(metadata, layer);
        for later in &LAYERS[position + 1..] {
            if closure.contains(*later) {
                problems.push(format!("{layer} depends on {later}, a layer above it"));
            }
        }
    }
    problems
}

/// The read side stands on the SQLite base alone: `hermes-state-query`'s
/// normal dependencies include neither the schema crate nor refinery, so a
/// reader gets no migration machinery.
pub fn sibling_problems(metadata: &Value) -> Vec<String> {
    let query = normal_closure(metadata, "hermes-state-query");
    ["hermes-state-schema", "refinery", "refinery-core"]
        .into_iter()
        .filter(|name| query.contains(*name))
        .map(|name| format!("hermes-state-query depends on {name}"))
        .collect()
}

/// The command line uses the facade only (plus the shared types): its
/// normal dependencies name no other workspace crate and no `rusqlite`, its
/// dependency on the facade does not enable the `raw-sql` escape hatch, and
/// its sources never reach for raw SQL or the lower crates.
pub fn cli_boundary_problems(metadata: &Value) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let cli = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "hermes-state-cli");
    let normal_deps = cli
        .and_then(|p| p["dependencies"].as_array())
        .into_iter()
        .flatten()
        .filter(|d| d["kind"].is_null());
    for dep in normal_deps {
        let name = dep["name"].as_str().unwrap_or_default();
        let forbidden = name == "rusqlite"
            || (name.starts_with("hermes-state")
                && !matches!(name, "hermes-state" | "hermes-state-types"));
        if forbidden {
            problems.push(format!("hermes-state-cli depends on {name}"));
        }
        let features = dep["features"].as_array().into_iter().flatten();
        if name == "hermes-state" && features.clone().any(|f| f == "raw-sql") {
            problems.push("hermes-state-cli enables the facade's raw-sql feature".to_owned());
        }
    }
    let src = workspace_root().join("crates/hermes-state-cli/src");
    for entry in walk(&src)? {
        if entry.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&entry)
            .with_context(|| format!("reading {}", entry.display()))?;
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let reaches_below = [
                "rusqlite",
                "hermes_state::schema::",
                "hermes_state::query::",
                "hermes_state_schema",
                "hermes_state_query",
                "hermes_state_sqlite",
            ]
            .iter()
            .any(|name| code.contains(name))
                || code.contains(".read(|");
            if reaches_below {
                problems.push(format!(
                    "{}:{}: the command line reaches below the facade",
                    entry.display(),
                    number + 1
                ));
            }
        }
    }
    Ok(problems)
}

/// Exactly one `libsqlite3-sys` in the resolved graph (refinery and rusqlite agree).
pub fn single_sqlite_problems(metadata: &Value) -> Vec<String> {
    let versions: Vec<&str> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["name"] == "libsqlite3-sys")
        .filter_map(|p| p["version"].as_str())
        .collect();
    if versions.len() == 1 {
        Vec::new()
    } else {
        vec![format!(
            "expected exactly one libsqlite3-sys, found {versions:?}"
        )]
    }
}

/// No library source opens files with `std::fs::File` / `OpenOptions`: on the
/// live database that would drop SQLite's POSIX locks when the descriptor
/// closes. A line that opens some other file says so with a
/// `// tidy: not the live database` comment.
pub fn live_file_problems() -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let crates = workspace_root().join("crates");
    let library_dirs: Vec<PathBuf> = LIBRARIES.iter().map(|layer| crates.join(layer)).collect();
    for entry in walk(&crates)? {
        if !library_dirs.iter().any(|dir| entry.starts_with(dir)) {
            continue;
        }
        if entry.extension().is_none_or(|e| e != "rs")
            || !entry.components().any(|c| c.as_os_str() == "src")
        {
            continue;
        }
        let text = std::fs::read_to_string(&entry)
            .with_context(|| format!("reading {}", entry.display()))?;
        for (number, line) in text.lines().enumerate() {
            if line.contains("// tidy: not the live database") {
                continue;
            }
            let code = line.split("//").next().unwrap_or_default();
            if code.contains("File::open")
                || code.contains("File::create")
                || code.contains("OpenOptions")
            {
                problems.push(format!(
                    "{}:{}: opens a file through std::fs",
                    entry.display(),
                    number + 1
                ));
            }
        }
    }
    Ok(problems)
}

/// Only `hermes-state-schema` issues DDL on the database. Other library
/// crates may create TEMP objects on their own connection (the read side's
/// `compat` shims: `CREATE TEMP VIEW`, `DROP VIEW IF EXISTS temp.`; the
/// tokenizer probe's temporary FTS table, created and dropped at once); a
/// line that holds DDL text only to compare it says so with a
/// `// tidy: DDL text compared, never run` comment on it or just above it.
pub fn ddl_problems() -> Result<Vec<String>> {
    const DDL: [&str; 9] = [
        "CREATE TABLE",
        "CREATE INDEX",
        "CREATE UNIQUE",
        "CREATE TRIGGER",
        "CREATE VIEW",
        "CREATE VIRTUAL",
        "DROP TABLE",
        "DROP INDEX",
        "DROP TRIGGER",
    ];
    let mut problems = Vec::new();
    let crates = workspace_root().join("crates");
    for layer in LIBRARIES.iter().filter(|l| !DDL_CRATES.contains(l)) {
        for entry in walk(&crates.join(layer).join("src"))? {
            if entry.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&entry)
                .with_context(|| format!("reading {}", entry.display()))?;
            let lines: Vec<&str> = text.lines().collect();
            for (number, line) in lines.iter().enumerate() {
                let marker = "// tidy: DDL text compared, never run";
                if line.contains(marker) || (number > 0 && lines[number - 1].contains(marker)) {
                    continue;
                }
                let code = line.split("//").next().unwrap_or_default().to_uppercase();
                let temp_only = code.contains("CREATE TEMP VIEW")
                    || code.contains("DROP VIEW IF EXISTS TEMP.")
                    || (code.contains("CREATE VIRTUAL TABLE TEMP.")
                        && code.contains("DROP TABLE TEMP."));
                let other = code.contains("ALTER TABLE") || code.contains("DROP VIEW");
                if !temp_only && (other || DDL.iter().any(|ddl| code.contains(ddl))) {
                    problems.push(format!(
                        "{}:{}: DDL outside the schema crate and the PostgreSQL backend",
                        entry.display(),
                        number + 1
                    ));
                }
            }
        }
    }
    Ok(problems)
}

/// The read side runs no writing statement: no line of code in
/// `hermes-state-query/src` holds `INSERT`, `UPDATE`, `DELETE`, `REPLACE`,
/// `ALTER`, `VACUUM`, a write transaction or a pragma assignment (its TEMP
/// views are checked by [`ddl_problems`]). Comments are not code.
pub fn read_side_write_problems() -> Result<Vec<String>> {
    const WRITES: [&str; 8] = [
        "INSERT ",
        "UPDATE ",
        "DELETE ",
        "REPLACE ",
        "ALTER ",
        "VACUUM",
        "BEGIN IMMEDIATE",
        "BEGIN EXCLUSIVE",
    ];
    let pragma_assignment = regex_free_pragma_assignment;
    let mut problems = Vec::new();
    let dir = workspace_root().join("crates/hermes-state-query/src");
    for entry in walk(&dir)? {
        if entry.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&entry)
            .with_context(|| format!("reading {}", entry.display()))?;
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if WRITES.iter().any(|w| code.contains(w)) || pragma_assignment(code) {
                problems.push(format!(
                    "{}:{}: a writing statement in the read side",
                    entry.display(),
                    number + 1
                ));
            }
        }
    }
    Ok(problems)
}

/// Whether code holds `PRAGMA name = …` or `PRAGMA name(…)=`: a pragma that sets.
fn regex_free_pragma_assignment(code: &str) -> bool {
    code.match_indices("PRAGMA ").any(|(at, _)| {
        let rest = &code[at + 7..];
        let end = rest.find(['"', ';', ')']).unwrap_or(rest.len());
        rest[..end].contains('=')
    })
}

/// Every public function of the query crate is bound to SQLite: it takes
/// (or, converting a value for a statement, returns) a rusqlite connection,
/// row or value. A rule that needs no SQLite belongs to the contract crate,
/// where the PostgreSQL backend can apply it too. And the read side deletes
/// no file.
pub fn query_crate_problems() -> Result<Vec<String>> {
    const SQLITE_TYPES: [&str; 7] = [
        "Connection",
        "Transaction",
        "Row<",
        "ValueRef<",
        "Statement<",
        "rusqlite::types::Value",
        "SqlValue",
    ];
    let mut problems = Vec::new();
    let src = workspace_root().join("crates/hermes-state-query/src");
    for file in walk(&src)? {
        if file.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        for (at, _) in text.match_indices("\npub fn ") {
            let rest = &text[at + "\npub fn ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let signature = rest.split(['{', ';']).next().unwrap_or_default();
            if !SQLITE_TYPES.iter().any(|t| signature.contains(t)) {
                problems.push(format!(
                    "{}: `{name}` takes no SQLite handle: a rule without SQLite belongs to hermes-state-core",
                    file.display()
                ));
            }
        }
        for deletion in ["remove_file", "remove_dir"] {
            if text.contains(deletion) {
                problems.push(format!("{}: the read side deletes files", file.display()));
            }
        }
    }
    Ok(problems)
}

/// No method of a store is generated by a macro: each backend implements
/// the contract's sections in its own modules, so an operation is read
/// where it is written. Checked in the contract crate, the PostgreSQL
/// crate and the facade: no `macro_rules!` there expands to a `fn`.
pub fn seam_macro_problems() -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let crates = workspace_root().join("crates");
    for layer in [CORE, "hermes-state-postgres", "hermes-state"] {
        for file in walk(&crates.join(layer).join("src"))? {
            if file.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            problems.extend(
                method_macros(&text)
                    .into_iter()
                    .map(|name| format!("{}: macro `{name}` generates methods", file.display())),
            );
        }
    }
    Ok(problems)
}

/// The names of the `macro_rules!` in `text` whose body holds a `fn`.
fn method_macros(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("macro_rules!") {
        let rest = &text[at + "macro_rules!".len()..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = rest.find('{') else {
            continue;
        };
        let mut depth = 0usize;
        let mut end = rest.len();
        for (index, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + index;
                        break;
                    }
                }
                _ => {}
            }
        }
        if rest[open..end].contains("fn ") {
            found.push(name);
        }
    }
    found
}

fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(walk(&path)?);
        } else {
            files.push(path);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_crate_has_no_sqlite_and_layers_point_one_way() {
        let metadata = metadata().expect("cargo metadata");
        assert!(
            normal_closure(&metadata, "hermes-state").contains("hermes-state-types"),
            "closure is computed"
        );
        assert!(
            normal_closure(&metadata, "hermes-state-schema").contains("libsqlite3-sys"),
            "closure is deep"
        );
        assert_eq!(layering_problems(&metadata), Vec::<String>::new());
    }

    #[test]
    fn core_crate_links_no_database() {
        let linked = linked(CORE).expect("cargo tree");
        assert!(
            linked.contains("hermes-state-types") && linked.contains("serde"),
            "the tree is computed: {linked:?}"
        );
        assert_eq!(core_problems(&linked), Vec::<String>::new());
    }

    #[test]
    fn postgres_crate_depends_on_no_sqlite_crate() {
        let linked = linked("hermes-state-postgres").expect("cargo tree");
        assert!(
            linked.contains(CORE) && linked.contains("tokio-postgres"),
            "the tree is computed: {linked:?}"
        );
        assert_eq!(postgres_problems(&linked), Vec::<String>::new());
    }

    #[test]
    fn the_default_facade_links_no_postgresql_code() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let tree = |features: &[&str]| {
            let output = Command::new(&cargo)
                .args([
                    "tree",
                    "-p",
                    "hermes-state",
                    "-e",
                    "normal",
                    "--prefix",
                    "none",
                ])
                .args(features)
                .current_dir(workspace_root())
                .output()
                .expect("cargo tree");
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8_lossy(&output.stdout).into_owned()
        };
        let linked =
            |tree: &str, name: &str| tree.lines().any(|l| l.starts_with(&format!("{name} ")));
        let default = tree(&[]);
        assert!(
            linked(&default, "rusqlite"),
            "the tree is computed: {default}"
        );
        for postgres in ["hermes-state-postgres", "postgres", "tokio-postgres"] {
            assert!(
                !linked(&default, postgres),
                "the default build links {postgres}"
            );
        }
        assert!(linked(
            &tree(&["--features", "postgres"]),
            "hermes-state-postgres"
        ));
    }

    #[test]
    fn the_read_side_never_depends_on_schema_or_refinery() {
        let metadata = metadata().expect("cargo metadata");
        assert!(
            normal_closure(&metadata, "hermes-state-query").contains("hermes-state-sqlite"),
            "the closure is computed"
        );
        assert_eq!(sibling_problems(&metadata), Vec::<String>::new());
    }

    #[test]
    fn the_command_line_uses_the_facade_only() {
        let metadata = metadata().expect("cargo metadata");
        assert_eq!(
            cli_boundary_problems(&metadata).expect("scan"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_test_kit_is_a_dev_dependency_only() {
        let metadata = metadata().expect("cargo metadata");
        let used_in_tests = metadata["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["name"] == "hermes-state")
            .flat_map(|p| p["dependencies"].as_array().into_iter().flatten())
            .any(|d| d["name"] == TEST_KIT && d["kind"] == "dev");
        assert!(used_in_tests, "the facade's tests use the test kit");
        assert_eq!(test_kit_problems(&metadata), Vec::<String>::new());
    }

    #[test]
    fn exactly_one_libsqlite3_sys() {
        let metadata = metadata().expect("cargo metadata");
        assert_eq!(single_sqlite_problems(&metadata), Vec::<String>::new());
    }

    #[test]
    fn no_library_code_opens_files_through_std_fs() {
        assert_eq!(live_file_problems().expect("scan"), Vec::<String>::new());
    }

    #[test]
    fn every_public_function_of_the_query_crate_takes_a_sqlite_handle() {
        assert_eq!(query_crate_problems().expect("scan"), Vec::<String>::new());
    }

    #[test]
    fn no_macro_generates_methods_at_the_seam() {
        assert_eq!(
            method_macros("macro_rules! forward { () => { fn a(&self) {} }; }"),
            vec!["forward".to_owned()]
        );
        assert!(method_macros("macro_rules! columns { () => { \"a, b\" }; }").is_empty());
        assert_eq!(seam_macro_problems().expect("scan"), Vec::<String>::new());
    }

    #[test]
    fn only_the_schema_crate_issues_ddl() {
        assert_eq!(ddl_problems().expect("scan"), Vec::<String>::new());
    }

    #[test]
    fn the_read_side_runs_no_writing_statement() {
        assert!(regex_free_pragma_assignment(
            r#"conn.execute_batch("PRAGMA journal_mode=WAL")"#
        ));
        assert!(!regex_free_pragma_assignment(
            r#"conn.query_row("PRAGMA main.schema_version", [], f)"#
        ));
        assert_eq!(
            read_side_write_problems().expect("scan"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_api_coverage_table_matches_the_spec_the_facade_and_the_tests() {
        let problems = api_coverage::problems(&workspace_root()).expect("scan");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn every_contract_operation_runs_in_the_conformance_suite() {
        let methods = conformance::trait_methods(
            "pub trait T: U {\n    /// Doc.\n    fn one(&self) -> R;\n    fn two(\n        &self,\n    ) -> R;\n}\n\nimpl<X> T for X {\n    fn three(&self) {}\n}\n",
        );
        assert_eq!(
            methods,
            BTreeSet::from(["one".into(), "two".into()]),
            "traits only"
        );
        assert_eq!(
            conformance::uncalled(&methods, "s.one(1); // s.two(2)"),
            ["two"],
            "a call in a comment is no call"
        );
        let problems = conformance::problems(&workspace_root()).expect("scan");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn every_doc_reference_resolves() {
        let problems = references::problems(&workspace_root()).expect("scan");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn migration_files_are_lf_only() {
        let dir = workspace_root().join("crates/hermes-state-schema/migrations");
        for file in walk(&dir).expect("migrations") {
            let bytes = std::fs::read(&file).expect("read");
            assert!(!bytes.contains(&b'\r'), "{} has CR bytes", file.display());
        }
    }
}
