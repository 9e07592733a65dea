//! Every doc reference resolves: the Markdown files cited in comments and
//! docs exist in the repository, and the `§` sections cited exist in them.
//!
//! The convention (written down in `docs/spec/README.md` and
//! `docs/ARCHITECTURE.md`, "References"):
//!
//! * a bare spec file name (`schema-v23.md`, `migrations.md`, `api.md`,
//!   `newer-versions.md`) means that file in `docs/spec/`;
//! * every other Markdown file is cited by its path from the repository root
//!   (`docs/DECISIONS.md`, `fuzz/README.md`); a path starting with `./` or
//!   `../` is relative to the citing file and must stay inside the repository;
//! * a `§` followed by a number cites the section whose heading starts with
//!   that number, in the Markdown file named last before it on the same line
//!   or, when the line names none before it, in the spec file named last
//!   above it in the same file;
//! * nothing is cited from the shared folders outside the repository where
//!   the spec and the notes lived before ([`OUTSIDE`]).
//!
//! The spec files themselves are prose kept as written: in them only a
//! number right after a file name is checked, and their bare names may
//! also mean a file next to them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};

/// The spec files a bare name refers to, all in [`SPEC_DIR`].
pub const SPEC_FILES: [&str; 4] = [
    "schema-v23.md",
    "migrations.md",
    "api.md",
    "newer-versions.md",
];

/// Where the behaviour reference lives, from the workspace root.
pub const SPEC_DIR: &str = "docs/spec";

/// What is scanned, from the workspace root.
const SCANNED: [&str; 7] = [
    "crates",
    "xtask",
    "benches",
    "fuzz",
    "docs",
    "README.md",
    "Cargo.toml",
];

/// Extensions of the scanned files. In `.rs` files only comments are read, so
/// string literals (like this module's test inputs) are not references.
const EXTENSIONS: [&str; 4] = ["rs", "md", "toml", "py"];

/// Places outside the repository the docs once cited.
pub const OUTSIDE: [&str; 2] = ["shared/spec", "shared/notes"];

/// Every reference under `root` that does not resolve, as
/// `file:line: reference: why`.
pub fn problems(root: &Path) -> Result<Vec<String>> {
    let mut headings = Headings::default();
    let mut problems = Vec::new();
    for file in scanned_files(root)? {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let relative = file.strip_prefix(root).unwrap_or(&file);
        for (line, problem) in file_problems(root, relative, &text, &mut headings)? {
            problems.push(format!("{}:{line}: {problem}", relative.display()));
        }
    }
    Ok(problems)
}

/// The problems of one file, `relative` to `root`, as `(line, problem)`.
pub fn file_problems(
    root: &Path,
    relative: &Path,
    text: &str,
    headings: &mut Headings,
) -> Result<Vec<(usize, String)>> {
    let is_rust = relative.extension().is_some_and(|e| e == "rs");
    let in_spec = relative.parent() == Some(Path::new(SPEC_DIR));
    // The spec file a `§` cites when its line names none before it.
    let mut context: Option<PathBuf> = None;
    let mut problems = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let scanned = match (is_rust, line.find("//")) {
            (false, _) => line,
            (true, Some(start)) => &line[start..],
            (true, None) => continue,
        };
        for outside in OUTSIDE {
            if scanned.contains(outside) {
                problems.push((
                    number,
                    format!("`{outside}`: outside the repository (the spec is in {SPEC_DIR}/)"),
                ));
            }
        }
        // Every `§` checked on this line, with the file it is looked up in
        // (`None`: no file named before it). A `§` after a name that does not
        // resolve is not checked: the name is the problem.
        let mut cited: Vec<(String, Option<PathBuf>)> = Vec::new();
        let mut target = Ok(context.clone());
        let mut cursor = 0;
        for token in tokens(scanned) {
            if let (false, Ok(file)) = (in_spec, &target) {
                let before = sections(&scanned[cursor..token.start]);
                cited.extend(before.into_iter().map(|s| (s, file.clone())));
            }
            cursor = token.end;
            target = match resolve(relative, token.text) {
                Ok(file) if root.join(&file).is_file() => Ok(Some(file)),
                Ok(file) => Err(format!("no such file {}", file.display())),
                Err(why) => Err(why),
            };
            match &target {
                Err(why) => problems.push((number, format!("`{}`: {why}", token.text))),
                Ok(None) => {}
                Ok(Some(file)) => {
                    if file.parent() == Some(Path::new(SPEC_DIR)) {
                        context = Some(file.clone());
                    }
                    let after = scanned[token.end..].trim_start_matches(['`', ' ']);
                    if let (true, Some(rest)) = (in_spec, after.strip_prefix('§')) {
                        let right_after = section_at(rest);
                        cited.extend(right_after.into_iter().map(|s| (s, Some(file.clone()))));
                    }
                }
            }
        }
        if let (false, Ok(file)) = (in_spec, &target) {
            let rest = sections(&scanned[cursor..]);
            cited.extend(rest.into_iter().map(|s| (s, file.clone())));
        }
        for (section, file) in cited {
            let Some(file) = file else {
                problems.push((number, format!("§{section}: no spec file named before it")));
                continue;
            };
            if !headings.of(root, &file)?.contains(&section) {
                problems.push((
                    number,
                    format!("§{section}: no such section in {}", file.display()),
                ));
            }
        }
    }
    Ok(problems)
}

/// The numbered headings of the Markdown files read so far.
#[derive(Debug, Default)]
pub struct Headings(BTreeMap<PathBuf, BTreeSet<String>>);

impl Headings {
    /// The section numbers of `file` (from the root).
    fn of(&mut self, root: &Path, file: &Path) -> Result<&BTreeSet<String>> {
        if !self.0.contains_key(file) {
            let text = std::fs::read_to_string(root.join(file))
                .with_context(|| format!("reading {}", file.display()))?;
            self.0.insert(file.to_path_buf(), section_numbers(&text));
        }
        Ok(&self.0[file])
    }
}

/// The section numbers of the headings of a Markdown text: `6` for
/// `## 6. Title`, `6.6` for `### 6.6 Title`; code blocks are skipped.
pub fn section_numbers(text: &str) -> BTreeSet<String> {
    let mut in_code = false;
    let mut numbers = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let number = leading_number(line.trim_start_matches('#').trim_start());
        if !number.is_empty() {
            numbers.insert(number.to_owned());
        }
    }
    numbers
}

/// `6.6` of `6.6 Title`, `6` of `6. Title`; empty when the text does not
/// start with a digit.
fn leading_number(text: &str) -> &str {
    if !text.starts_with(|c: char| c.is_ascii_digit()) {
        return "";
    }
    let end = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(text.len(), |(i, _)| i);
    text[..end].trim_end_matches('.')
}

/// The section numbers cited in `text`: the number after each `§`, and the
/// end of a range written without a second `§` (`4.1–4.3`).
pub fn sections(text: &str) -> Vec<String> {
    text.match_indices('§')
        .flat_map(|(position, _)| section_at(&text[position + '§'.len_utf8()..]))
        .collect()
}

/// The section number at the start of `text` (just after a `§`), with the
/// end of a range (`4.1–4.3`); nothing when `text` does not start with one.
fn section_at(text: &str) -> Vec<String> {
    let number = leading_number(text);
    if number.is_empty() {
        return Vec::new();
    }
    let mut found = vec![number.to_owned()];
    let after = &text[number.len()..];
    if let Some(end) = after.strip_prefix('–').or_else(|| after.strip_prefix('-')) {
        let end_number = leading_number(end);
        if !end_number.is_empty() {
            found.push(end_number.to_owned());
        }
    }
    found
}

/// A Markdown file named in a line.
#[derive(Debug, PartialEq, Eq)]
pub struct Token<'a> {
    /// The name or path as written.
    pub text: &'a str,
    /// Byte offset of `text` in the line.
    pub start: usize,
    /// Byte offset just after `text`.
    pub end: usize,
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// The Markdown files named in `line`: words of path characters ending in
/// `.md`. URLs (after `https:`) are not files of the repository.
pub fn tokens(line: &str) -> Vec<Token<'_>> {
    let mut found = Vec::new();
    for (position, _) in line.match_indices(".md") {
        let end = position + ".md".len();
        if line[end..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let start = line[..position]
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_path_char(*c))
            .last()
            .map_or(position, |(i, _)| i);
        let text = &line[start..end];
        let url = text.starts_with("//") || line[..start].ends_with(':');
        if start < position && !url {
            found.push(Token { text, start, end });
        }
    }
    found
}

/// The file a reference made in `citing` names, from the workspace root.
pub fn resolve(citing: &Path, reference: &str) -> Result<PathBuf, String> {
    let in_spec = citing.parent() == Some(Path::new(SPEC_DIR));
    if reference.starts_with("../") || reference.starts_with("./") {
        return lexical_join(citing.parent().unwrap_or(Path::new("")), reference)
            .ok_or_else(|| "outside the repository".to_owned());
    }
    if reference.contains('/') {
        return Ok(PathBuf::from(reference));
    }
    if SPEC_FILES.contains(&reference) || in_spec {
        return Ok(Path::new(SPEC_DIR).join(reference));
    }
    Err(format!(
        "a bare name that is not a spec file ({}); cite it by its path from the repository root",
        SPEC_FILES.join(", ")
    ))
}

/// `base/relative` with `.` and `..` applied; `None` when it leaves the root.
fn lexical_join(base: &Path, relative: &str) -> Option<PathBuf> {
    let joined = base.join(relative);
    let mut parts: Vec<Component<'_>> = Vec::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.iter().collect())
}

fn scanned_files(root: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in SCANNED {
        let path = root.join(entry);
        if path.is_dir() {
            walk_sources(&path, &mut files)?;
        } else if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn walk_sources(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                walk_sources(&path, files)?;
            }
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e))
        {
            files.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written apart so that this file's own lines hold no comment marker
    /// before the test inputs (the scan reads `.rs` files from `//` on).
    const COMMENT: &str = concat!("/", "/");

    /// A workspace with one spec file (`api.md`, sections 8 and 8.4) and
    /// one other document.
    fn workspace() -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(root.path().join(SPEC_DIR)).expect("mkdir");
        std::fs::write(
            root.path().join(SPEC_DIR).join("api.md"),
            "# API\n## 8. Search\n### 8.4 Routing\n```\n## 9. in a code block\n```\n",
        )
        .expect("write");
        std::fs::write(root.path().join("docs/NOTES.md"), "# Notes\n").expect("write");
        root
    }

    fn check(file: &str, text: &str) -> Vec<(usize, String)> {
        let root = workspace();
        file_problems(root.path(), Path::new(file), text, &mut Headings::default()).expect("scan")
    }

    #[test]
    fn names_and_sections_are_parsed() {
        let line = "see `api.md` §8.4, docs/NOTES.md and https://x.org/a/README.md.";
        let names: Vec<&str> = tokens(line).iter().map(|t| t.text).collect();
        assert_eq!(names, ["api.md", "docs/NOTES.md"]);
        assert_eq!(
            sections("§4–§6, §10.1–10.2 and §6.1/§6.4; §N"),
            ["4", "6", "10.1", "10.2", "6.1", "6.4"]
        );
        let numbers = section_numbers("## 6. A\n### 6.6 B\n#### 6.6.1. C\n## Files\n");
        assert_eq!(
            numbers.into_iter().collect::<Vec<_>>(),
            ["6", "6.6", "6.6.1"]
        );
    }

    #[test]
    fn bare_spec_names_mean_the_spec_folder_and_other_names_need_a_path() {
        let citing = Path::new("crates/a/src/lib.rs");
        assert_eq!(
            resolve(citing, "api.md"),
            Ok(PathBuf::from("docs/spec/api.md"))
        );
        assert_eq!(resolve(citing, "docs/X.md"), Ok(PathBuf::from("docs/X.md")));
        assert_eq!(
            resolve(citing, "../README.md"),
            Ok(PathBuf::from("crates/a/README.md"))
        );
        assert!(resolve(citing, "DECISIONS.md").is_err());
        assert!(resolve(Path::new("docs/X.md"), "../../x.md").is_err());
        assert_eq!(
            resolve(Path::new("docs/spec/api.md"), "README.md"),
            Ok(PathBuf::from("docs/spec/README.md"))
        );
    }

    #[test]
    fn references_that_resolve_pass() {
        let text = "`api.md` §8.4 and §8, docs/NOTES.md\n§8.4 again (api.md).\n";
        assert_eq!(check("docs/X.md", text), []);
        let rust = format!("let x = \"`api.md` §99\";\n{COMMENT} `api.md` §8.4\n");
        assert_eq!(
            check("crates/a/src/lib.rs", &rust),
            [],
            "code is not scanned"
        );
    }

    #[test]
    fn a_wrong_name_a_wrong_section_or_an_outside_path_fails() {
        let text = [
            "`apy.md` §8.4",
            "`api.md` §8.5",
            "`api.md` §9",
            "`docs/NOTE.md`",
            "DECISIONS.md",
            "../shared/spec/api.md",
            "`docs/NOTES.md` §1",
        ]
        .join("\n");
        let lines: Vec<usize> = check("docs/X.md", &text).iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 2, 3, 4, 5, 6, 6, 7]);
        let rust = format!("fn f() {{}} {COMMENT} `api.md` §8.5\n");
        assert_eq!(check("crates/a/src/lib.rs", &rust).len(), 1);
    }

    #[test]
    fn a_bare_section_needs_a_spec_file_named_above_it() {
        assert_eq!(check("docs/X.md", "the §8.4 rule\n").len(), 1);
        assert_eq!(check("docs/X.md", "`api.md` §8\n\nthe §8.4 rule\n"), []);
        assert_eq!(check("docs/X.md", "`api.md` §8\n\nthe §7 rule\n").len(), 1);
    }

    #[test]
    fn in_the_spec_only_a_number_after_a_name_is_checked() {
        let text = "`api.md` §8.4; see §7 below.\n`api.md` §7.\n";
        assert_eq!(check("docs/spec/other.md", text).len(), 1);
    }
}
