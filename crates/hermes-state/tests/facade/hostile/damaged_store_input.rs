//! One damaged store: shared, as source, by the fuzz target
//! `fuzz/fuzz_targets/damaged_store.rs` and the tests of `hostile`, so both
//! check exactly the same thing.
//!
//! A small real store (sessions in a compression lineage, messages with CJK,
//! tool calls and structured content, the three FTS indexes, titles) is
//! built once; each case damages a copy (bit flips, byte overwrites,
//! truncation), then:
//!
//! * opens it with `SessionDb::open_read_only` and runs every kind of read
//!   (list, get, messages, conversation, lineage, search in the three
//!   indexes, stats, counts, schema info, export, doctor);
//! * opens it with `SessionDb::open` and runs the same reads, the doctor
//!   last (on a writable handle it is a write, and may upgrade or repair);
//!
//! and checks that nothing panics, that every error is typed with the kind
//! SQLite's own code calls for (`SQLITE_CORRUPT` → `Corrupt`,
//! `SQLITE_NOTADB` → `NotADatabase`), and that neither the read-only
//! handle nor the writable one before its first write changed a byte of the
//! damaged file.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hermes_state::prelude::Exchange;
use hermes_state::rusqlite::{self, ErrorCode};
use hermes_state::{
    Content, ErrorKind, FixedClock, ListFilter, NewMessage, NewSession, SearchOptions, SessionDb,
    StoreOptions,
};
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Lineage;
use hermes_state_core::store::Listings;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;
use serde_json::json;

/// One change to the store's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage {
    /// XOR the byte at `offset` with `mask`.
    Flip { offset: usize, mask: u8 },
    /// Overwrite the byte at `offset`.
    Set { offset: usize, value: u8 },
    /// Keep the first `len` bytes.
    Truncate { len: usize },
}

/// What one case gave: each operation's outcome (`ok` or the error kind).
pub type Outcomes = BTreeMap<String, String>;

/// The pristine store and a folder for the damaged copies.
pub struct DamagedStore {
    folder: tempfile::TempDir,
    pristine: Vec<u8>,
    page_size: usize,
    /// Cases checked so far (names each case's folder).
    cases: Cell<u64>,
}

impl Default for DamagedStore {
    fn default() -> Self {
        DamagedStore::new()
    }
}

impl DamagedStore {
    /// Builds the pristine store. The clock is fixed, so its bytes are the
    /// same in every run and a fuzzer's finding replays.
    pub fn new() -> DamagedStore {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let path = folder.path().join("pristine.db");
        let options = StoreOptions {
            read_only: false,
            clock: Some(FixedClock::new(1_764_000_000.25)),
        };
        let db = SessionDb::open_with(&path, &options).expect("the pristine store opens");
        db.create_session(&NewSession::new("root", "cli").model("gpt-5"))
            .expect("root");
        for i in 0..12 {
            let text = format!("docker deployment step {i} 数据库优化 naïve café");
            db.append_message(&NewMessage::new("root", "user").content(text))
                .expect("message");
            db.append_message(
                &NewMessage::new("root", "assistant")
                    .content(format!("answer {i}: 我想学习机器学习 kubernetes"))
                    .tool_calls(json!([{"id": format!("c{i}"), "type": "function",
                        "function": {"name": "terminal", "arguments": "{}"}}])),
            )
            .expect("message");
        }
        db.set_session_title("root", Some("Deploy")).expect("title");
        db.end_session("root", "compression").expect("end");
        db.create_session(&NewSession::new("cont", "cli").parent_session_id("root"))
            .expect("cont");
        db.append_message(
            &NewMessage::new("cont", "user").content(Content::Structured(
                json!([{"type": "text", "text": "look at 服务端"}]),
            )),
        )
        .expect("message");
        db.set_session_title("cont", Some("Deploy #2"))
            .expect("title");
        db.create_session(&NewSession::new("tg", "telegram"))
            .expect("tg");
        db.append_message(&NewMessage::new("tg", "user").content("x".repeat(6000)))
            .expect("a message spilling to an overflow page");
        db.close().expect("close the pristine store");
        drop(db);
        let pristine = std::fs::read(&path).expect("read the pristine store");
        let page_size = usize::from(u16::from_be_bytes([pristine[16], pristine[17]]));
        DamagedStore {
            folder,
            pristine,
            page_size,
            cases: Cell::new(0),
        }
    }

    /// The undamaged bytes.
    pub fn pristine(&self) -> &[u8] {
        &self.pristine
    }

    /// The page size of the pristine store.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Reads a fuzzer's input as damage: 5-byte records `[op, a, b, c, v]`
    /// with offset `a b c` (big-endian, modulo the size), at most 16.
    /// `op % 4`: 0 or 1 flips bit `v % 8`, 2 writes `v`, 3 truncates there
    /// (at the page boundary below when `v` is odd).
    pub fn damage_of(&self, data: &[u8]) -> Vec<Damage> {
        let size = self.pristine.len();
        data.chunks_exact(5)
            .take(16)
            .map(|record| {
                let at = (usize::from(record[1]) << 16)
                    | (usize::from(record[2]) << 8)
                    | usize::from(record[3]);
                let value = record[4];
                match record[0] % 4 {
                    0 | 1 => Damage::Flip {
                        offset: at % size,
                        mask: 1 << (value % 8),
                    },
                    2 => Damage::Set {
                        offset: at % size,
                        value,
                    },
                    _ => {
                        let len = at % (size + 1);
                        Damage::Truncate {
                            len: if value % 2 == 1 {
                                len - len % self.page_size
                            } else {
                                len
                            },
                        }
                    }
                }
            })
            .collect()
    }

    /// The pristine bytes with `damage` applied in order.
    pub fn damaged(&self, damage: &[Damage]) -> Vec<u8> {
        let mut bytes = self.pristine.clone();
        for change in damage {
            match *change {
                Damage::Flip { offset, mask } => {
                    if let Some(byte) = bytes.get_mut(offset) {
                        *byte ^= mask;
                    }
                }
                Damage::Set { offset, value } => {
                    if let Some(byte) = bytes.get_mut(offset) {
                        *byte = value;
                    }
                }
                Damage::Truncate { len } => bytes.truncate(len),
            }
        }
        bytes
    }

    /// The fuzz target's one input.
    pub fn run(&self, data: &[u8]) {
        let damage = self.damage_of(data);
        self.check(&self.damaged(&damage));
    }

    /// Opens `bytes` as a store both ways and reads everything; panics on a
    /// violation (see the module docs). Returns what each operation gave.
    pub fn check(&self, bytes: &[u8]) -> Outcomes {
        // A folder of its own per case: the open's malformed-schema repair
        // runs once per path per process, and leaves a backup beside it.
        let case = self.cases.get();
        self.cases.set(case + 1);
        let case_folder = self.folder.path().join(format!("case-{case}"));
        std::fs::create_dir(&case_folder).expect("a folder for the case");
        let path = case_folder.join("damaged.db");
        std::fs::write(&path, bytes).expect("write the damaged copy");
        let outcomes = self.check_at(&path, bytes);
        let _ = std::fs::remove_dir_all(&case_folder);
        outcomes
    }

    fn check_at(&self, path: &Path, bytes: &[u8]) -> Outcomes {
        let path = path.to_owned();
        let mut outcomes = Outcomes::new();

        match SessionDb::open_read_only(&path) {
            Ok(db) => {
                read_everything(&db, "ro", &mut outcomes);
                note(&mut outcomes, "ro doctor", db.doctor());
                let _ = db.close();
            }
            Err(error) => note::<()>(&mut outcomes, "ro open", Err(error)),
        }
        assert_unchanged(&path, bytes, "a read-only handle");

        match SessionDb::open(&path) {
            Ok(db) => {
                read_everything(&db, "rw", &mut outcomes);
                // An empty file is a new store: `open` creates it.
                if !bytes.is_empty() {
                    assert_unchanged(&path, bytes, "a writable handle's reads");
                }
                // On a writable handle the doctor is a write (it upgrades, or
                // runs the malformed-schema repair): only no panic and typed
                // errors are asked of it.
                note(&mut outcomes, "rw doctor", db.doctor());
                let _ = db.close();
            }
            Err(error) => {
                note::<()>(&mut outcomes, "rw open", Err(error));
                if !bytes.is_empty() {
                    assert_unchanged(&path, bytes, "a refused writable open");
                }
            }
        }
        outcomes
    }
}

fn assert_unchanged(path: &Path, bytes: &[u8], who: &str) {
    let now = std::fs::read(path).expect("read the damaged copy back");
    assert!(
        now == bytes,
        "{who} changed the damaged file ({} bytes before, {} after)",
        bytes.len(),
        now.len()
    );
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let wal_len = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert_eq!(wal_len, 0, "{who} wrote WAL frames");
}

fn read_everything(db: &SessionDb, handle: &str, outcomes: &mut Outcomes) {
    let key = |what: &str| format!("{handle} {what}");
    let listed = db.recent_sessions(&ListFilter {
        limit: Some(50),
        ..ListFilter::default()
    });
    let mut ids: Vec<String> = ["root", "cont", "tg", "missing"]
        .map(str::to_owned)
        .to_vec();
    if let Ok(listed) = &listed {
        ids.extend(listed.iter().map(|s| s.session.id.clone()));
    }
    ids.sort();
    ids.dedup();
    note(outcomes, key("recent_sessions"), listed);
    for id in &ids {
        note(outcomes, key("get_session"), db.get_session(id));
        note(outcomes, key("get_messages"), db.get_messages(id));
        note(
            outcomes,
            key("conversation"),
            db.get_messages_as_conversation(id, true),
        );
        note(outcomes, key("ancestors"), db.ancestors(id));
        note(outcomes, key("descendants"), db.descendants(id));
        note(outcomes, key("export_session"), db.export_session(id));
    }
    for query in ["docker", "数据库", "kube*", "\"step 3\"", "服务端"] {
        note(
            outcomes,
            key("search_messages"),
            db.search_messages(query, &SearchOptions::default()),
        );
    }
    note(
        outcomes,
        key("search_conversations"),
        db.search_conversations("deployment", &SearchOptions::default()),
    );
    note(outcomes, key("model_totals"), db.model_totals());
    note(outcomes, key("top_sessions"), db.top_sessions(5));
    note(
        outcomes,
        key("session_count"),
        db.session_count(&hermes_state::SessionCountOptions::all()),
    );
    note(outcomes, key("message_count"), db.message_count(None));
    note(outcomes, key("schema_info"), db.schema_info());
    note(
        outcomes,
        key("resolve_title"),
        db.resolve_session_by_title("Deploy"),
    );
}

/// Records one operation's outcome; panics when its error's kind is not
/// the one SQLite's code calls for.
fn note<T>(outcomes: &mut Outcomes, what: impl Into<String>, result: hermes_state::Result<T>) {
    let what = what.into();
    let outcome = match result {
        Ok(_) => "ok".to_owned(),
        Err(error) => {
            check_kind(&error, &what);
            format!("{:?}", error.kind())
        }
    };
    let entry = outcomes.entry(what).or_default();
    if !entry.split(',').any(|seen| seen == outcome) {
        if !entry.is_empty() {
            entry.push(',');
        }
        entry.push_str(&outcome);
    }
}

/// The SQLite codes in the error's chain must show in its kind, and a
/// refused open says why (never the catch-all `Other`).
fn check_kind(error: &hermes_state::Error, what: &str) {
    if what.ends_with(" open") {
        assert_ne!(
            error.kind(),
            ErrorKind::Other,
            "{what}: a refused open must say why: {error}"
        );
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(sqlite) = current.downcast_ref::<rusqlite::Error>() {
            let wanted = match sqlite.sqlite_error_code() {
                Some(ErrorCode::DatabaseCorrupt) => Some(ErrorKind::Corrupt),
                Some(ErrorCode::NotADatabase) => Some(ErrorKind::NotADatabase),
                _ => None,
            };
            if let Some(wanted) = wanted {
                assert_eq!(
                    error.kind(),
                    wanted,
                    "{what}: SQLite said {sqlite}, the error says kind {:?}: {error}",
                    error.kind()
                );
            }
        }
        source = current.source();
    }
}
