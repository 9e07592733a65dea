//! Generated scripts of other seeds (`apidiff/gen.py`): no trace of the
//! original exists for them, so they check two things — every call on
//! SQLite ends in an answer or in one of the original's error kinds (never a
//! panic, never an error the original could not raise), and the PostgreSQL
//! backend gives the same answers as SQLite, up to the differences
//! docs/POSTGRES.md documents. Each such difference is one named rule of
//! [`excluded_by`]; a call is always made, only its answer is set aside.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use hermes_state::postgres::{PgStore, StoreUrl};
use hermes_state::{Clock, SessionStore};
use hermes_state_testkit::{PG_URL_VAR, PgSchema};
use serde_json::Value;

use super::runner;

/// Seeds replayed by `cargo test` (a longer list: `HERMES_STATE_REPLAY_SEEDS`,
/// e.g. `1-40:300,100-110:1000`, docs/API-COVERAGE.md).
pub const CI_SEEDS: &str = "7:300,8:300t,2024:600";

/// One generated script: seed, length, typed-only.
pub struct Generated {
    pub seed: u64,
    pub ops: u32,
    pub typed_only: bool,
}

/// Parses `SEED[-SEED]:OPS[t],…` (a `t` asks for `--typed-only`).
pub fn parse_seeds(text: &str) -> Vec<Generated> {
    let mut all = Vec::new();
    for item in text
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
    {
        let (seeds, ops) = item.split_once(':').expect("SEED:OPS");
        let typed_only = ops.ends_with('t');
        let ops: u32 = ops.trim_end_matches('t').parse().expect("OPS is a number");
        let (first, last) = match seeds.split_once('-') {
            Some((a, b)) => (a.parse().expect("seed"), b.parse().expect("seed")),
            None => (seeds.parse().expect("seed"), seeds.parse().expect("seed")),
        };
        for seed in first..=last {
            all.push(Generated {
                seed,
                ops,
                typed_only,
            });
        }
    }
    all
}

/// The script of a seed, written by the reference generator; `Err` says why
/// it cannot be made here (no python3).
pub fn generate(generated: &Generated, dir: &Path) -> Result<Value, String> {
    let out = dir.join(format!("script-{}-{}.json", generated.seed, generated.ops));
    let mut command = Command::new("python3");
    command
        .arg(super::apidiff_dir().join("gen.py"))
        .args(["--seed", &generated.seed.to_string()])
        .args(["--ops", &generated.ops.to_string()])
        .arg("--out")
        .arg(&out);
    if generated.typed_only {
        command.arg("--typed-only");
    }
    let output = command
        .output()
        .map_err(|error| format!("python3 cannot be run: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "gen.py failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text = std::fs::read_to_string(&out).expect("the generated script");
    Ok(serde_json::from_str(&text).expect("a script is JSON"))
}

/// Answers on SQLite that the original could not have given: an error kind
/// of this library's own (`rust.*`), i.e. an internal error.
pub fn internal_errors(ops: &[Value]) -> Vec<String> {
    ops.iter()
        .filter(|op| {
            op["outcome"]["error"]["kind"]
                .as_str()
                .is_some_and(|kind| kind.starts_with("rust."))
        })
        .map(|op| {
            format!(
                "op {} {}: {}",
                op["i"], op["op"], op["outcome"]["error"]["message"]
            )
        })
        .collect()
}

/// Replays a script on a fresh PostgreSQL schema of the test server.
pub fn replay_on_postgres(script: &Value, admin: &str) -> Vec<Value> {
    let schema = PgSchema::on(admin, "replay");
    let url = StoreUrl::parse(schema.url()).expect("the schema's URL");
    runner::replay_on(script, |clock| {
        let clock: Arc<dyn Clock> = clock.clone();
        let store = PgStore::open(&url)
            .expect("open the PostgreSQL store")
            .with_clock(Arc::new(move || clock.now()));
        Box::new(store) as Box<dyn SessionStore>
    })
}

/// The named rule that sets an op's answer aside when comparing PostgreSQL
/// with SQLite, if one applies (docs/POSTGRES.md).
pub fn excluded_by(op: &Value, sqlite: &Value, postgres: &Value) -> Option<&'static str> {
    let name = op["op"].as_str().unwrap_or_default();
    if matches!(
        name,
        "vacuum"
            | "optimize_fts"
            | "rebuild_fts"
            | "close"
            | "fts_rebuild_status"
            | "fts_rebuild_step"
            | "fts_cjk_rebuild_status"
            | "fts_cjk_rebuild_step"
            | "fts_optimize_available"
            | "optimize_fts_storage"
    ) {
        // The file's own maintenance (its FTS5 indexes among it) and its
        // handle: not part of the contract.
        return Some("file-only");
    }
    if op["tags"]
        .as_array()
        .is_some_and(|tags| tags.iter().any(|tag| tag == "after-close"))
    {
        // A server store has no `close`, so no calls after one.
        return Some("after-close");
    }
    if name == "maybe_auto_prune_and_vacuum" && same_but(sqlite, postgres, &["vacuumed"]) {
        return Some("no-vacuum-on-postgres");
    }
    if name == "search_messages" && same_search(op, sqlite, postgres) {
        return Some("search-ranking-and-snippets");
    }
    if name == "search_messages"
        && (fewer_of_the_same(sqlite, postgres) || shifted_page(op, sqlite, postgres))
    {
        return Some("whole-token-words");
    }
    None
}

/// Rule `whole-token-words` in time order: the matches PostgreSQL does not
/// find leave room at the end of its page for later ones. The hits both
/// give come in the same order, and PostgreSQL's others come after them.
fn shifted_page(op: &Value, sqlite: &Value, postgres: &Value) -> bool {
    let sort = op["args"]["sort"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_lowercase();
    if sort != "newest" && sort != "oldest" {
        return false;
    }
    let ids = |outcome: &Value| -> Option<Vec<i64>> {
        outcome["value"]
            .as_array()
            .map(|hits| hits.iter().filter_map(|hit| hit["id"].as_i64()).collect())
    };
    let (Some(a), Some(b)) = (ids(sqlite), ids(postgres)) else {
        return false;
    };
    let common: Vec<i64> = b.iter().copied().filter(|id| a.contains(id)).collect();
    let in_sqlite_order: Vec<i64> = a.iter().copied().filter(|id| b.contains(id)).collect();
    let extras_last = b[common.len()..].iter().all(|id| !a.contains(id));
    common == in_sqlite_order && extras_last && common.len() < a.len()
}

/// Rule `whole-token-words` (docs/POSTGRES.md, "Words"): PostgreSQL's parser
/// keeps paths, file names, URLs, e-mail addresses and versions as whole
/// tokens (`docker-compose.yml`), so a word inside one is not found there
/// while FTS5 finds it. PostgreSQL's hits must then be hits of SQLite's.
fn fewer_of_the_same(sqlite: &Value, postgres: &Value) -> bool {
    let ids = |outcome: &Value| -> Option<std::collections::BTreeSet<i64>> {
        outcome["value"]
            .as_array()
            .map(|hits| hits.iter().filter_map(|hit| hit["id"].as_i64()).collect())
    };
    match (ids(sqlite), ids(postgres)) {
        (Some(a), Some(b)) => b.len() < a.len() && b.is_subset(&a),
        _ => false,
    }
}

/// Rule `search-ranking-and-snippets` (docs/POSTGRES.md, "Search: what
/// differs"): snippets are `ts_headline` windows, and with no time order
/// PostgreSQL ranks by `ts_rank_cd`, not bm25. So the hits must agree but
/// for their snippets; in time order, in the same order; in relevance order,
/// as many hits, and the same set of them when every match fits the page
/// (a page cut from a longer list may hold other, equally valid, matches).
fn same_search(op: &Value, sqlite: &Value, postgres: &Value) -> bool {
    let (Some(a), Some(b)) = (sqlite["value"].as_array(), postgres["value"].as_array()) else {
        return false;
    };
    let strip = |hits: &[Value]| -> Vec<Value> {
        hits.iter()
            .map(|hit| {
                let mut hit = hit.clone();
                if let Some(map) = hit.as_object_mut() {
                    map.remove("snippet");
                }
                hit
            })
            .collect()
    };
    let (mut a, mut b) = (strip(a), strip(b));
    let sort = op["args"]["sort"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_lowercase();
    if sort == "newest" || sort == "oldest" {
        return a == b;
    }
    let limit = op["args"]["limit"].as_u64().unwrap_or(20) as usize;
    let offset = op["args"]["offset"].as_u64().unwrap_or(0);
    if a.len() != b.len() {
        return false;
    }
    if a.len() == limit || offset > 0 {
        // A page cut from a longer ranked list: which matches fill it
        // depends on the ranking.
        return true;
    }
    let by_id = |hit: &Value| hit["id"].as_i64();
    a.sort_by_key(by_id);
    b.sort_by_key(by_id);
    a == b
}

/// Both succeeded with objects equal but for `keys`.
fn same_but(a: &Value, b: &Value, keys: &[&str]) -> bool {
    let (Some(x), Some(y)) = (a["value"].as_object(), b["value"].as_object()) else {
        return false;
    };
    let strip = |map: &serde_json::Map<String, Value>| -> serde_json::Map<String, Value> {
        map.iter()
            .filter(|(key, _)| !keys.contains(&key.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    a["ok"] == b["ok"] && strip(x) == strip(y)
}

/// The calls whose answers differ between the backends and no rule explains.
pub fn backend_differences(sqlite: &[Value], postgres: &[Value]) -> Vec<String> {
    let mut found = Vec::new();
    let mut dead_holder_locks = std::collections::BTreeSet::new();
    let mut leases = Leases::default();
    for (ours, theirs) in sqlite.iter().zip(postgres) {
        let (a, b) = (&ours["outcome"], &theirs["outcome"]);
        if let Some(session) = dead_holder_lock(ours) {
            dead_holder_locks.insert(session);
        }
        if leases.lapsed(ours) && is_lock_op(ours) {
            // Rule `server-clock-leases`: PostgreSQL times every lease by
            // the server's clock (docs/POSTGRES.md), the replay's SQLite by
            // the fixed clock of the script; once a lease of the session
            // has run out on the script's clock, its lock answers differ.
            continue;
        }
        if is_lock_op(ours)
            && dead_holder_locks.contains(ours["args"]["session_id"].as_str().unwrap_or_default())
        {
            // Rule `dead-pid-reclaim`: SQLite takes over a lock whose holder
            // names a process that no longer exists; PostgreSQL waits for
            // the lease to expire (docs/POSTGRES.md), so that session's lock
            // answers differ from then on.
            continue;
        }
        let same = match (a["ok"].as_bool(), b["ok"].as_bool()) {
            (Some(true), Some(true)) => a["value"] == b["value"],
            (Some(false), Some(false)) => a["error"]["kind"] == b["error"]["kind"],
            _ => false,
        };
        if same || excluded_by(ours, a, b).is_some() {
            continue;
        }
        let ids = |outcome: &Value| -> String {
            outcome["value"]
                .as_array()
                .map_or_else(String::new, |hits| {
                    let ids: Vec<String> = hits.iter().map(|hit| hit["id"].to_string()).collect();
                    format!(" ids [{}]", ids.join(","))
                })
        };
        found.push(format!(
            "op {} {} {}\n    sqlite:  {} {}\n    postgres:{} {}",
            ours["i"],
            ours["op"].as_str().unwrap_or_default(),
            cut(&ours["args"].to_string()),
            ids(a),
            cut(&a.to_string()),
            ids(b),
            cut(&b.to_string()),
        ));
    }
    found
}

/// The session of a lock taken by a holder naming a process that cannot
/// exist (`pid=99999999:…`, above Linux's pid limit; the apidiff README, section 4).
fn dead_holder_lock(op: &Value) -> Option<String> {
    let holder = op["args"]["holder"].as_str()?;
    (op["op"] == "try_acquire_compression_lock" && holder.starts_with("pid=99999999:")).then(|| {
        op["args"]["session_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    })
}

/// When each session's newest lease runs out on the script's clock.
#[derive(Default)]
struct Leases {
    until: std::collections::BTreeMap<String, f64>,
    lapsed: std::collections::BTreeSet<String>,
}

impl Leases {
    /// Notes the op's lease and tells whether a lease of its session has
    /// run out on the script's clock before this op.
    fn lapsed(&mut self, op: &Value) -> bool {
        let session = op["args"]["session_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let now = op["clock"].as_f64().unwrap_or_default();
        if self.until.get(&session).is_some_and(|until| now >= *until) {
            self.lapsed.insert(session.clone());
        }
        if matches!(
            op["op"].as_str(),
            Some("try_acquire_compression_lock" | "refresh_compression_lock")
        ) {
            let ttl = op["args"]["ttl_seconds"].as_f64().unwrap_or(300.0);
            self.until.insert(session.clone(), now + ttl);
        }
        self.lapsed.contains(&session)
    }
}

fn is_lock_op(op: &Value) -> bool {
    matches!(
        op["op"].as_str().unwrap_or_default(),
        "try_acquire_compression_lock"
            | "refresh_compression_lock"
            | "release_compression_lock"
            | "get_compression_lock_holder"
    )
}

fn cut(text: &str) -> String {
    text.chars().take(400).collect()
}

/// Whether a PostgreSQL test server is configured.
pub fn postgres_admin() -> Option<String> {
    std::env::var(PG_URL_VAR).ok()
}
