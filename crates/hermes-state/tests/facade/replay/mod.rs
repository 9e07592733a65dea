//! The original's recorded behaviour, call by call: each trace of
//! `../shared/apidiff/traces/` (what the original Python store returned,
//! raised and left in its file for a long mixed script) is replayed here
//! through `SessionDb`'s public API with "now" fixed to each call's clock,
//! and must compare equal — every answer, every error kind, and the final
//! file (the apidiff README, section 6; only refinery's own ledger table is left
//! out, the original has none).
//!
//! The traces were recorded without the optional CJK tokenizer, so each
//! replay runs in a child process with `HERMES_CJK_FTS=0` (the switch is an
//! environment variable, which a test must not change in its own process).

mod backends;
mod compare;
mod dump;
mod errors;
mod runner;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::child_test;

/// Tables the comparison leaves out: refinery's migration ledger exists
/// only in this library's files.
const IGNORED_TABLES: [&str; 1] = ["refinery_schema_history"];

/// Where the shared reference material is: beside the checkout, as in CI.
fn apidiff_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/apidiff")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| {
        panic!(
            "cannot read {}: {error}; the replay needs the shared reference material \
             (`../shared` beside the checkout, as CI has it)",
            path.display()
        )
    });
    serde_json::from_str(&text).expect("a trace is JSON")
}

/// Runs the replay of one trace in a child with the CJK index switched off,
/// and fails with the child's findings when anything differs.
#[allow(clippy::print_stdout)]
fn replay_trace(file: &str) {
    replay_trace_at(&apidiff_dir().join("traces").join(file));
}

#[allow(clippy::print_stdout)]
fn replay_trace_at(trace: &Path) {
    let file = trace.display();
    let output = child_test(module_path!(), "replay_child")
        .env("HERMES_CJK_FTS", "0")
        .env("HERMES_STATE_REPLAY_TRACE", trace)
        .output()
        .expect("run the replay child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the replay of {file} differs from the original:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("replay: EQUAL"),
        "the child did not report a comparison:\n{stdout}"
    );
    println!("{file}: EQUAL");
}

#[test]
fn trace_seed300_300_replays_equal() {
    replay_trace("trace-seed300-300.json");
}

#[test]
fn trace_seed11_1000_replays_equal() {
    replay_trace("trace-seed11-1000.json");
}

#[test]
fn trace_seed12_1000_typed_replays_equal() {
    replay_trace("trace-seed12-1000-typed.json");
}

#[test]
fn trace_seed1000_1000_replays_equal() {
    replay_trace("trace-seed1000-1000.json");
}

/// Traces of the original for more seeds, recorded outside the repository
/// (a folder named by `HERMES_STATE_REPLAY_TRACES`; docs/API-COVERAGE.md
/// says how to record them): each must replay equal too.
#[test]
#[allow(clippy::print_stdout)]
fn traces_in_a_folder_replay_equal() {
    let Some(folder) = std::env::var_os("HERMES_STATE_REPLAY_TRACES") else {
        println!("skipped: HERMES_STATE_REPLAY_TRACES names no folder of recorded traces");
        return;
    };
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&folder)
        .expect("the traces folder")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    traces.sort();
    assert!(
        !traces.is_empty(),
        "no trace in {}",
        PathBuf::from(&folder).display()
    );
    let mut failed = Vec::new();
    for trace in &traces {
        let outcome = std::panic::catch_unwind(|| replay_trace_at(trace));
        if outcome.is_err() {
            failed.push(trace.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} traces differ: {failed:?}",
        failed.len(),
        traces.len()
    );
}

/// The child: replays the trace named by `HERMES_STATE_REPLAY_TRACE`,
/// writes its own trace beside the target folder for a person to read, and
/// prints the findings.
#[test]
#[ignore = "run by the replay tests in a child process"]
#[allow(clippy::print_stdout)]
fn replay_child() {
    let path = PathBuf::from(std::env::var_os("HERMES_STATE_REPLAY_TRACE").expect("a trace"));
    let expected = read_json(&path);
    let dir = tempfile::tempdir().expect("tempdir");
    let replayed = runner::replay(&expected, dir.path());
    let out = std::env::temp_dir().join(format!(
        "hermes-state-replay-{}",
        path.file_name().expect("file name").to_string_lossy()
    ));
    std::fs::write(&out, runner::trace_text(&expected, &replayed)).expect("write the replay");
    let found = compare::findings(
        &expected,
        &replayed.ops,
        &replayed.final_dump,
        &IGNORED_TABLES,
    );
    let ops = replayed.ops.len();
    let differing = found.iter().filter(|f| f.starts_with("op ")).count();
    let mut findings_file = out.clone().into_os_string();
    findings_file.push(".findings.txt");
    std::fs::write(&findings_file, found.join("\n")).expect("write the findings");
    println!("replay written to {}", out.display());
    if found.is_empty() {
        println!("replay: EQUAL ({ops} ops and the final file)");
        return;
    }
    println!(
        "replay: DIFFERENT — {differing} of {ops} answers differ, {} finding(s) in all:",
        found.len()
    );
    for finding in found.iter().take(40) {
        println!("  {finding}");
    }
    panic!("{} finding(s)", found.len());
}

/// Scripts of other seeds: every call on SQLite answers as the original
/// could (no internal error, no panic), and PostgreSQL answers as SQLite up
/// to the documented differences (`backends::excluded_by`). The seeds are
/// `backends::CI_SEEDS`, or `HERMES_STATE_REPLAY_SEEDS` for a longer run.
#[test]
#[allow(clippy::print_stdout)]
fn generated_scripts_answer_alike_on_both_backends() {
    let seeds = std::env::var("HERMES_STATE_REPLAY_SEEDS")
        .unwrap_or_else(|_| backends::CI_SEEDS.to_owned());
    let output = child_test(module_path!(), "generated_child")
        .env("HERMES_CJK_FTS", "0")
        .env("HERMES_STATE_REPLAY_SEEDS", &seeds)
        .output()
        .expect("run the generated-scripts child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "generated scripts ({seeds}):\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("generated: done"),
        "the child reported nothing:\n{stdout}"
    );
    println!("{stdout}");
}

#[test]
#[ignore = "run by generated_scripts_answer_alike_on_both_backends in a child process"]
#[allow(clippy::print_stdout)]
fn generated_child() {
    let seeds = std::env::var("HERMES_STATE_REPLAY_SEEDS").expect("seeds");
    let admin = backends::postgres_admin();
    if admin.is_none() {
        println!(
            "skipped: {} is not set; the scripts ran on SQLite only",
            hermes_state_testkit::PG_URL_VAR
        );
    }
    let mut failures = Vec::new();
    for generated in backends::parse_seeds(&seeds) {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = match backends::generate(&generated, dir.path()) {
            Ok(script) => script,
            Err(reason) => {
                println!("skipped: {reason}");
                println!("generated: done");
                return;
            }
        };
        let name = format!(
            "seed {} ({} ops{})",
            generated.seed,
            generated.ops,
            if generated.typed_only { ", typed" } else { "" }
        );
        let sqlite = runner::replay(&script, dir.path());
        let internal = backends::internal_errors(&sqlite.ops);
        let mut differing = Vec::new();
        if let Some(admin) = &admin {
            let postgres = backends::replay_on_postgres(&script, admin);
            differing = backends::backend_differences(&sqlite.ops, &postgres);
        }
        println!(
            "{name}: {} internal error(s), {} answer(s) differing between the backends",
            internal.len(),
            differing.len()
        );
        for finding in internal.iter().chain(&differing).take(25) {
            println!("  {finding}");
        }
        if !internal.is_empty() || !differing.is_empty() {
            failures.push(name);
        }
    }
    println!("generated: done");
    assert!(failures.is_empty(), "differences in: {failures:?}");
}
