//! Every operation of the contract runs in the conformance suite: each
//! method of the traits in `crates/hermes-state-core/src/store/` is called
//! (`.name(`) somewhere in the test kit's `conformance` sources, so every
//! backend's own tests exercise it through `run_all`, or in the facade's
//! cases that need both backends in one binary (export and import compare
//! the two stores' bytes there; they are to move into the test kit with
//! recorded answers). An operation no case calls could differ between the
//! backends unseen.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};

/// Where the contract's traits are.
const CONTRACT: &str = "crates/hermes-state-core/src/store";

/// Where the suite's cases are.
const SUITE: &str = "crates/hermes-state-testkit/src/conformance";

/// The suite's cases that run both backends in one binary.
const BOTH_BACKENDS: &str = "crates/hermes-state/tests/facade/conformance";

/// The method names of the traits declared in `source` (a file of
/// [`CONTRACT`]): every `fn name` inside a top-level `pub trait … { … }`,
/// whatever its indentation or signature lines.
pub fn trait_methods(source: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut in_trait = false;
    for line in source.lines() {
        if line.starts_with("pub trait ") {
            in_trait = true;
        } else if line == "}" {
            in_trait = false;
        } else if in_trait {
            let code = line.trim_start();
            if let Some(rest) = code.strip_prefix("fn ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                names.insert(name);
            }
        }
    }
    names
}

/// The names in `methods` that no line of `suite` calls as `.name(`
/// outside a `//` comment.
pub fn uncalled(methods: &BTreeSet<String>, suite: &str) -> Vec<String> {
    let code: String = suite
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    methods
        .iter()
        .filter(|name| !code.contains(&format!(".{name}(")))
        .cloned()
        .collect()
}

/// One line per contract method the suite never calls.
pub fn problems(root: &Path) -> Result<Vec<String>> {
    let mut methods = BTreeSet::new();
    for file in super::walk(&root.join(CONTRACT))? {
        if file.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            methods.extend(trait_methods(&text));
        }
    }
    let mut suite = String::new();
    let mut files = super::walk(&root.join(SUITE))?;
    files.extend(super::walk(&root.join(BOTH_BACKENDS))?);
    for file in files {
        if file.extension().is_some_and(|e| e == "rs") {
            suite.push_str(
                &std::fs::read_to_string(&file)
                    .with_context(|| format!("reading {}", file.display()))?,
            );
            suite.push('\n');
        }
    }
    Ok(uncalled(&methods, &suite)
        .into_iter()
        .map(|name| {
            format!("{CONTRACT}: `{name}` is called by no case of {SUITE} nor {BOTH_BACKENDS}")
        })
        .collect())
}
