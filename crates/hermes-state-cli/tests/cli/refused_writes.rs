//! A writing command that is refused or fails on a bad argument — a mistyped
//! session id, a rewind target that is not a user message, a title another
//! session holds, `demo` on a store with sessions, a file that is not an
//! export, a maintenance run the file's FTS layout does not allow, an
//! unreachable migration target — leaves the store as it was: its bytes, its
//! journal mode (header bytes 18–19) and the files beside it (`-wal`, `-shm`,
//! `-journal`, the writer queue's `-writer-gate` / `-writer-queue`). On a
//! live store of a running agent a typo must not change the file; before
//! this was checked, an older file was upgraded first and refused after
//! (docs/DECISIONS.md, "A refused write changes nothing").
//!
//! Every historical fixture (`xtask::fixtures::all_shapes`, and the newer
//! releases' files, which writing commands refuse at the open), three ways:
//!
//! * closed, in WAL mode, as the fixture is written: the store's bytes and
//!   the set of files must not change, except that the command's read-only
//!   checks may leave the empty `-wal` and the `-shm` every reading command
//!   leaves on a closed WAL store (docs/DECISIONS.md, "Read-only access to a
//!   closed WAL store");
//! * live, in WAL mode: a running Hermes holds the store open with a
//!   committed write still in the `-wal`: the store, the `-wal` (hashed) and
//!   the set of files must not change (the `-shm`, the WAL's shared-memory
//!   index, is not data: every reader writes its read marks there);
//! * closed, in DELETE mode: nothing may change at all, and no file may
//!   appear (one fixture per era: the read-side checks are the WAL cases'
//!   own, only the journal differs).
//!
//! A command that changed the store is reported, and the fixture written
//! again, so that every offending command shows, not only the first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hermes_state::rusqlite::Connection;
use xtask::fixtures::sha256::sha256_hex;
use xtask::fixtures::{FixtureManifest, Shape, all_shapes, newer_shapes, write_fixture};

use crate::common::Env;

/// How the store is held while the commands run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holding {
    /// WAL mode, nobody has it open.
    ClosedWal,
    /// WAL mode, a running Hermes has it open with a write in the `-wal`.
    LiveWal,
    /// DELETE (rollback-journal) mode, nobody has it open.
    ClosedDelete,
}

/// The store and the files beside it: name → SHA-256 (the `-shm` by
/// presence only: it is the WAL's shared-memory index, not data).
#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    header: [u8; 2],
    files: BTreeMap<String, String>,
}

fn snapshot(db: &Path) -> Snapshot {
    let folder = db.parent().expect("the store's folder");
    let bytes = std::fs::read(db).expect("read the store");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(folder).expect("list the folder") {
        let path = entry.expect("a folder entry").path();
        let name = path
            .file_name()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        let hash = if name.ends_with("-shm") {
            "(shared memory)".to_owned()
        } else {
            sha256_hex(&std::fs::read(&path).expect("read a file beside the store"))
        };
        files.insert(name, hash);
    }
    Snapshot {
        header: [bytes[18], bytes[19]],
        files,
    }
}

/// What the closed-WAL case allows besides "unchanged": the empty `-wal`
/// and the `-shm` of a read-only look at a closed WAL store.
fn only_read_sidecars_added(before: &Snapshot, after: &Snapshot) -> bool {
    let empty = sha256_hex(b"");
    let mut after = after.files.clone();
    if after.get("state.db-wal") == Some(&empty) && !before.files.contains_key("state.db-wal") {
        after.remove("state.db-wal");
        after.remove("state.db-shm");
    }
    after == before.files
}

/// The fixture `shape` alone in a folder of its own, held as `holding`;
/// the connection of the running Hermes when live.
fn store(
    env: &Env,
    shape: Shape,
    holding: Holding,
) -> (PathBuf, FixtureManifest, Option<Connection>) {
    let folder = env.path(&format!("{}-{holding:?}", shape.name()));
    std::fs::create_dir_all(&folder).expect("create the store's folder");
    let db = folder.join("state.db");
    let manifest = write_fixture(&db, shape).expect("write the fixture");
    let conn = Connection::open(&db).expect("open the fixture");
    match holding {
        Holding::ClosedWal => {
            conn.close().expect("close the fixture");
            (db, manifest, None)
        }
        Holding::ClosedDelete => {
            let mode: String = conn
                .query_row("PRAGMA journal_mode=DELETE", [], |row| row.get(0))
                .expect("switch to DELETE");
            assert_eq!(mode, "delete");
            conn.close().expect("close the fixture");
            (db, manifest, None)
        }
        Holding::LiveWal => {
            // A committed write that stays in the `-wal` while it is open.
            conn.execute(
                "UPDATE sessions SET source = source WHERE rowid = (SELECT min(rowid) FROM sessions)",
                [],
            )
            .expect("the running Hermes writes");
            (db, manifest, Some(conn))
        }
    }
}

/// Files the refused imports read.
struct Inputs {
    missing: String,
    not_an_export: String,
    newer_export: String,
    truncated_export: String,
}

fn inputs(env: &Env) -> Inputs {
    let write = |name: &str, text: &str| {
        let path = env.path(name);
        std::fs::write(&path, text).expect("write an input");
        path.display().to_string()
    };
    Inputs {
        missing: env.path("missing.jsonl").display().to_string(),
        not_an_export: write("notes.txt", "shopping list: bread, milk\n"),
        newer_export: write(
            "newer.jsonl",
            "{\"format\": \"hermes-state-export\", \"version\": 99}\n",
        ),
        truncated_export: write(
            "truncated.jsonl",
            "{\"format\": \"hermes-state-export\", \"version\": 1, \"schema_version\": 23, \"exported_at\": 1.0}\n\
             {\"type\": \"session\", \"id\": \"imported-1\", \"source\": \"cli\", \"started_at\": 1.0}\n",
        ),
    }
}

/// A refused command: its arguments and extra environment.
struct Refused {
    args: Vec<String>,
    env: Vec<(&'static str, &'static str)>,
}

fn refused(args: &[&str]) -> Refused {
    Refused {
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: Vec::new(),
    }
}

/// Every writing command with a bad argument, for this fixture. `layout` is
/// the fixture's FTS layout as `schema` names it.
fn refused_commands(manifest: &FixtureManifest, layout: &str, inputs: &Inputs) -> Vec<Refused> {
    const NOPE: &str = "nope-404";
    // A root session (no compression ancestor) with a user message and
    // another message.
    let good = manifest
        .sessions
        .iter()
        .find(|s| {
            s.parent_session_id.is_none()
                && manifest
                    .messages
                    .iter()
                    .any(|m| m.session_id == s.id && m.role == "user")
                && manifest
                    .messages
                    .iter()
                    .any(|m| m.session_id == s.id && m.role != "user")
        })
        .expect("a root session with a conversation");
    let not_user = manifest
        .messages
        .iter()
        .find(|m| m.session_id == good.id && m.role != "user")
        .map(|m| m.id.to_string())
        .expect("a message that is not the user's");
    let long_title = "x".repeat(101);
    let mut list = vec![
        refused(&["sessions", "create", "--source", "cli", "--parent", NOPE]),
        refused(&["sessions", "end", NOPE, "--reason", "user_exit"]),
        refused(&["sessions", "reopen", NOPE]),
        refused(&["sessions", "delete", NOPE, "--yes"]),
        refused(&["sessions", "delete", &good.id, NOPE, "--yes"]),
        refused(&["sessions", "delete", &good.id]),
        refused(&["sessions", "clear", NOPE, "--yes"]),
        refused(&["sessions", "archive", NOPE]),
        refused(&["sessions", "unpin", NOPE]),
        refused(&["sessions", "rewind", NOPE, "--to", "1"]),
        refused(&["sessions", "rewind", &good.id, "--to", "999999"]),
        refused(&["sessions", "rewind", &good.id, "--to", &not_user]),
        refused(&["sessions", "restore", NOPE]),
        refused(&[
            "messages",
            "append",
            NOPE,
            "--role",
            "user",
            "--content",
            "hi",
        ]),
        refused(&[
            "messages",
            "append",
            &good.id,
            "--role",
            "user",
            "--content-file",
            &inputs.missing,
        ]),
        refused(&["title", "set", NOPE, "A title"]),
        refused(&["title", "set", &good.id, &long_title]),
        refused(&["import", &inputs.missing]),
        refused(&["import", &inputs.not_an_export]),
        refused(&["import", &inputs.newer_export]),
        refused(&["import", &inputs.truncated_export]),
        refused(&["demo"]),
        refused(&["prune", "--any-age"]),
        refused(&["--read-only", "sessions", "end", &good.id, "--reason", "x"]),
        refused(&["migrate-to", "sqlite:elsewhere.db"]),
        refused(&["migrate-to", "postgres://nobody@127.0.0.1:1/none"]),
        Refused {
            env: vec![("HERMES_CJK_FTS", "0")],
            ..refused(&["fts", "rebuild-cjk"])
        },
    ];
    // A title another session holds (not a compression ancestor: `good`
    // has no parent), where titles exist.
    if let Some(holder) = manifest
        .sessions
        .iter()
        .find(|s| s.id != good.id && s.title.is_some())
    {
        let title = holder.title.clone().unwrap_or_default();
        list.push(refused(&["title", "set", &good.id, &title]));
    }
    // The upgrade keeps the v11–v22 FTS layout, which neither the
    // background rebuild nor the CJK index works on.
    if layout == "legacy_inline" {
        list.push(refused(&["fts", "rebuild"]));
        list.push(refused(&["fts", "rebuild-cjk"]));
    }
    // A store stamped above 23 keeps its own CJK index.
    if manifest.schema_version > 23 {
        list.push(refused(&["fts", "rebuild-cjk"]));
    }
    list
}

/// Runs every refused command on each of `shapes` held as `holding`; what
/// went wrong, one line each.
fn check(holding: Holding, shapes: &[Shape]) -> Vec<String> {
    let env = Env::new();
    let inputs = inputs(&env);
    let mut problems = Vec::new();
    for &shape in shapes {
        let (db, manifest, mut running_hermes) = store(&env, shape, holding);
        let layout = env.json(&db, &["schema"])["fts_layout"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mut commands = refused_commands(&manifest, &layout, &inputs);
        if shape.schema_version() > 25 {
            // Refused at the open, whatever the command: a few show it.
            commands.truncate(4);
        }
        for command in commands {
            let before = snapshot(&db);
            let args: Vec<&str> = command.args.iter().map(String::as_str).collect();
            let run = env.run_env(&db, &command.env, &args);
            let shown = format!("{} {holding:?} `{}`", shape.name(), command.args.join(" "));
            if run.code == 0 {
                problems.push(format!("{shown}: succeeded ({})", run.stdout.trim()));
            }
            if run.stderr.contains("note: upgraded") {
                problems.push(format!("{shown}: {}", run.stderr.trim()));
            }
            let after = snapshot(&db);
            if after.header != before.header {
                problems.push(format!(
                    "{shown}: journal mode changed (header {:?} -> {:?})",
                    before.header, after.header
                ));
            }
            let unchanged = match holding {
                Holding::ClosedWal => only_read_sidecars_added(&before, &after),
                Holding::LiveWal | Holding::ClosedDelete => after.files == before.files,
            };
            if !unchanged {
                problems.push(format!(
                    "{shown}: changed the store or the files beside it: {:?} -> {:?}",
                    before.files, after.files
                ));
            }
            if !unchanged || after.header != before.header {
                drop(running_hermes.take());
                let (_, _, running) = store(&env, shape, holding);
                running_hermes = running;
            }
        }
    }
    problems
}

/// One fixture per era of the original: v1 (content-only FTS), the fork
/// and the off-main build, the v11–v22 inline FTS layout, the transient
/// v20, the v23 pin and its late shape, v25.
fn one_per_era() -> Vec<Shape> {
    vec![
        Shape::Fresh(1),
        Shape::V3Fork,
        Shape::OffMainV7,
        Shape::Fresh(11),
        Shape::EraEnd(17),
        Shape::TransientV20,
        Shape::V23,
        Shape::V23Late,
        Shape::Fresh(25),
        Shape::V30Layout3,
    ]
}

fn every_fixture() -> Vec<Shape> {
    all_shapes().into_iter().chain(newer_shapes()).collect()
}

#[test]
fn refused_writes_leave_every_closed_wal_fixture_unchanged() {
    let problems = check(Holding::ClosedWal, &every_fixture());
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn refused_writes_leave_every_live_wal_fixture_unchanged() {
    let problems = check(Holding::LiveWal, &every_fixture());
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn refused_writes_leave_delete_mode_fixtures_of_every_era_unchanged() {
    let problems = check(Holding::ClosedDelete, &one_per_era());
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The other side: the same commands, spelled right, write — and a command
/// that writes to an older file says that it upgraded it.
#[test]
fn a_write_spelled_right_upgrades_an_older_fixture_and_says_so() {
    let env = Env::new();
    let (db, manifest, _) = store(&env, Shape::Fresh(17), Holding::ClosedWal);
    let id = &manifest.sessions[0].id;
    let before = snapshot(&db);
    env.run(&db, &["title", "set", id, "Spelled right"])
        .ok()
        .stderr_has("note: upgraded")
        .stderr_has("schema 17 → 23");
    assert_ne!(snapshot(&db).files, before.files);
    assert_eq!(
        env.json(&db, &["title", "get", id])["title"],
        "Spelled right"
    );
}
