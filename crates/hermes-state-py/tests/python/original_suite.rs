//! The original's own store tests, from the `hermes-agent` 0.19.0 source
//! distribution on PyPI, run against this package.
//!
//! The sdist is downloaded at test time (kept in `target/tmp` for later
//! runs) and nothing of it is committed. Its three store test files run
//! with `tests/original/conftest.py`, which makes `import hermes_state`
//! this package and marks the tests of
//! `tests/original-0.19.0-expected-failures.txt` as strict expected
//! failures: any other failure, and any listed test that passes, fails
//! this test.

use std::path::Path;
use std::process::Command;

use super::environment::{Environment, crate_dir, prepared};
use super::process::run;

/// The release whose tests run (it writes schema 22, one below ours).
const RELEASE: &str = "hermes-agent==0.19.0";
/// Its sdist's file and top folder.
const SDIST: &str = "hermes_agent-0.19.0.tar.gz";
const SDIST_ROOT: &str = "hermes_agent-0.19.0";
/// The store's test files in it.
const TEST_FILES: [&str; 3] = [
    "tests/test_hermes_state.py",
    "tests/test_hermes_state_compression_locks.py",
    "tests/test_hermes_state_wal_fallback.py",
];
/// What else of the sdist the tests import (two of them build their
/// messages with the agent's own helpers): the agent's `agent` and `tools`
/// packages and two modules they import. Never its `hermes_state.py`.
const SUPPORT: [&str; 4] = ["agent/", "tools/", "hermes_constants.py", "utils.py"];
/// Set to `1` where there is no network: the suite is then skipped (and
/// says so) instead of failing on the download.
const OFFLINE_VAR: &str = "HERMES_STATE_OFFLINE";

#[test]
fn the_originals_store_tests_pass_except_the_listed_ones() {
    let environment = match prepared() {
        Ok(environment) => environment,
        Err(reason) => {
            println!("skipped: {reason} (the original's suite needs it)");
            return;
        }
    };
    let Some(sdist) = sdist(environment) else {
        return;
    };
    let workdir = tempfile::tempdir_in(&environment.scratch).expect("a scratch folder");
    extract(environment, &sdist, workdir.path());
    std::fs::copy(
        crate_dir().join("tests/original/conftest.py"),
        workdir.path().join("conftest.py"),
    )
    .expect("the conftest is copied");

    let expected = crate_dir().join("tests/original-0.19.0-expected-failures.txt");
    let output = environment
        .pytest(workdir.path())
        .args(["-rfEX", "--tb=short"])
        .args(TEST_FILES)
        .env("HERMES_STATE_EXPECTED_FAILURES", &expected)
        .output()
        .expect("pytest starts");
    let report = String::from_utf8_lossy(&output.stdout);
    let summary = report.lines().last().unwrap_or_default();
    println!("{RELEASE} store tests against hermes_state_rs: {summary}");
    assert!(
        output.status.success(),
        "the original's tests failed beyond the expected failures \
         ({}):\n{report}\n{}",
        expected.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The sdist, downloaded the first time (kept in the scratch folder);
/// `None`, having said why, when offline and not downloaded yet.
pub fn sdist(environment: &Environment) -> Option<std::path::PathBuf> {
    let cache = environment.scratch.join("original-0.19.0");
    let sdist = cache.join(SDIST);
    if !sdist.exists() {
        if std::env::var(OFFLINE_VAR).is_ok_and(|value| value == "1") {
            println!("skipped: {OFFLINE_VAR}=1 and the {RELEASE} sdist is not downloaded yet");
            return None;
        }
        download(environment, &cache);
    }
    Some(sdist)
}

/// The whole sdist into `dir` (the original's own code: `hermes_state.py`
/// and the agent modules it imports), its top folder dropped.
pub fn extract_all(environment: &Environment, sdist: &Path, dir: &Path) {
    let script = "import sys, tarfile\n\
         with tarfile.open(sys.argv[1]) as sdist:\n\
         \x20   members = sdist.getmembers()\n\
         \x20   for member in members:\n\
         \x20       member.name = member.name.split('/', 1)[-1]\n\
         \x20   sdist.extractall(sys.argv[2], members=[m for m in members if m.name], filter='data')\n";
    run(
        Command::new(&environment.python)
            .arg("-c")
            .arg(script)
            .arg(sdist)
            .arg(dir),
        "extracting the original from the sdist",
    );
}

/// `pip download` of the sdist (sources only, no dependencies).
fn download(environment: &Environment, cache: &Path) {
    std::fs::create_dir_all(cache).expect("the download folder is made");
    run(
        Command::new(&environment.python)
            .args(["-m", "pip", "download", "-q", "--disable-pip-version-check"])
            .args(["--no-deps", "--no-binary", ":all:", RELEASE, "-d"])
            .arg(cache),
        &format!("downloading the {RELEASE} sdist from PyPI (offline? set {OFFLINE_VAR}=1)"),
    );
}

/// The test files and their support (only those) into `workdir`, with
/// Python's own `tarfile` (its `data` filter refuses paths leaving the
/// folder).
fn extract(environment: &Environment, sdist: &Path, workdir: &Path) {
    let wanted = TEST_FILES
        .iter()
        .chain(SUPPORT.iter())
        .map(|path| format!("'{SDIST_ROOT}/{path}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let script = format!(
        "import sys, tarfile\n\
         wanted = [{wanted}]\n\
         with tarfile.open(sys.argv[1]) as sdist:\n\
         \x20   members = [m for m in sdist.getmembers()\n\
         \x20              if any(m.name == w or (w.endswith('/') and m.name.startswith(w)) for w in wanted)]\n\
         \x20   for member in members:\n\
         \x20       member.name = member.name.split('/', 1)[1]\n\
         \x20   assert len(members) > len(wanted), 'the sdist lacks files the tests need'\n\
         \x20   sdist.extractall(sys.argv[2], members=members, filter='data')\n"
    );
    run(
        Command::new(&environment.python)
            .arg("-c")
            .arg(script)
            .arg(sdist)
            .arg(workdir),
        "extracting the store tests and their support from the sdist",
    );
}
