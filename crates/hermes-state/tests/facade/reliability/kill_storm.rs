//! Writers SIGKILLed at random moments while others keep writing.
//!
//! Six writer processes append to one store, each to its own session (one per
//! slot), and a searching reader runs alongside. A killer thread, in rounds
//! separated by random delays, SIGKILLs one or two random writers of the
//! killable slots and respawns each at once as a new incarnation of its slot;
//! the steady slots are never killed. Every writer logs each acknowledged
//! append (`append_message` returned `Ok`) as one `ACK <seq> <id>` line,
//! written with one `write(2)` to a file of its own opened in append mode, so
//! the line is in the kernel's page cache before the next append starts and
//! survives the kill.
//!
//! What must hold afterwards: the file and its FTS indexes pass their
//! integrity checks; every acknowledged message is stored exactly once, under
//! its id, with its content; the only stored messages nobody acknowledged are
//! at most one per killed incarnation, the one it was writing when it died
//! (committed, killed before its log line); the session counters equal the
//! rows; no writer saw an error other than `Busy`; the writers that were not
//! killed kept making progress while the others were being killed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hermes_state::{ErrorKind, NewMessage, NewSession, SessionDb};
use serde_json::json;

use super::{DB, SESSION, STOP, assert_store_consistent, child_command};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

/// The acknowledgement log of a writer child.
const LOG: &str = "HERMES_STATE_RELIABILITY_LOG";
/// The incarnation number of a respawned writer (part of its message texts).
const INCARNATION: &str = "HERMES_STATE_RELIABILITY_INCARNATION";
/// Replays the killer's choices (victims, delays) of an earlier run.
const SEED: &str = "HERMES_STATE_RELIABILITY_SEED";

const SIGKILL: i32 = 9;

/// The shape of one storm.
struct StormPlan {
    /// Writer slots (sessions) in all.
    writers: usize,
    /// Slots `0..steady` are never killed: they are the writers that must keep
    /// writing while the others die.
    steady: usize,
    /// Kill rounds.
    rounds: usize,
    /// The random pause before each round's kills, in milliseconds.
    pause_ms: (u64, u64),
}

#[test]
fn writers_killed_at_random_moments_lose_no_acknowledged_write_while_others_keep_writing() {
    kill_storm(&StormPlan {
        writers: 6,
        steady: 2,
        rounds: 12,
        pause_ms: (40, 250),
    });
}

#[test]
#[ignore = "soak: run with --ignored"]
fn soak_kill_storm() {
    kill_storm(&StormPlan {
        writers: 6,
        steady: 2,
        rounds: 300,
        pause_ms: (20, 400),
    });
}

/// The writer child: appends to its slot's session until the stop file
/// appears, logging every acknowledged append; on a non-`Busy` error it logs
/// the error and exits with status 2. `Busy` is logged and the same message
/// retried (nothing was written: a write is all or nothing).
pub(super) fn writer_child() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set"));
    let (path, session) = (var(DB), var(SESSION));
    let incarnation = var(INCARNATION);
    let stop = PathBuf::from(var(STOP));
    let mut log = OpenOptions::new()
        .append(true)
        .open(var(LOG))
        .expect("the parent created the ack log");
    let db = until_not_busy(&mut log, "open", || SessionDb::open(&path));
    until_not_busy(&mut log, "create", || {
        db.create_session(&NewSession::new(&session, "cli"))
    });
    let mut seq = 0_u64;
    while !stop.exists() {
        let text = message_text(&session, &incarnation, seq);
        let message = if seq.is_multiple_of(2) {
            NewMessage::new(&session, "user").content(text)
        } else {
            NewMessage::new(&session, "assistant")
                .content(text)
                .tool_calls(json!([{"id": format!("c{seq}")}]))
        };
        note(&mut log, &format!("TRY {seq}\n"));
        let id = until_not_busy(&mut log, "append", || db.append_message(&message));
        note(&mut log, &format!("ACK {seq} {id}\n"));
        // A moment of "thinking" (0-2 ms) between appends, as an agent has:
        // without it, six tight loops starve one another for seconds on the
        // unfair SQLite lock, which would hide what the kills do.
        std::thread::sleep(Duration::from_micros(
            (seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) % 2_000,
        ));
        seq += 1;
    }
    note(&mut log, &format!("DONE {seq}\n"));
}

fn message_text(session: &str, incarnation: &str, seq: u64) -> String {
    format!("{session} inc{incarnation} seq{seq} storm docker")
}

/// One `write(2)` of a whole line (the file is unbuffered and in append mode).
fn note(log: &mut File, line: &str) {
    log.write_all(line.as_bytes()).expect("write the ack log");
}

fn until_not_busy<T>(
    log: &mut File,
    what: &str,
    mut op: impl FnMut() -> hermes_state::Result<T>,
) -> T {
    loop {
        match op() {
            Ok(value) => return value,
            Err(error) if error.kind() == ErrorKind::Busy => note(log, &format!("BUSY {what}\n")),
            Err(error) => {
                note(log, &format!("ERROR {what} {:?}: {error}\n", error.kind()));
                std::process::exit(2);
            }
        }
    }
}

/// What a writer's log said so far; read incrementally, whole lines only (a
/// line cut by the kill is not an acknowledgement).
#[derive(Default)]
struct AckLog {
    consumed: u64,
    /// `(seq, id)` of every acknowledged append, in order.
    acks: Vec<(u64, i64)>,
    /// The last append started (`TRY <seq>`, logged before the call).
    last_try: Option<u64>,
    busy: usize,
    errors: Vec<String>,
    done: bool,
}

impl AckLog {
    fn refresh(&mut self, path: &Path) {
        let mut file = File::open(path).expect("open an ack log");
        file.seek(SeekFrom::Start(self.consumed))
            .expect("seek an ack log");
        let mut text = String::new();
        file.read_to_string(&mut text).expect("read an ack log");
        let Some(end) = text.rfind('\n') else { return };
        for line in text[..end].lines() {
            let mut words = line.split_whitespace();
            match words.next() {
                Some("ACK") => {
                    let seq = words.next().and_then(|w| w.parse().ok());
                    let id = words.next().and_then(|w| w.parse().ok());
                    let (Some(seq), Some(id)) = (seq, id) else {
                        panic!("malformed ack line {line:?} in {}", path.display());
                    };
                    self.acks.push((seq, id));
                }
                Some("TRY") => {
                    let seq = words.next().and_then(|w| w.parse().ok());
                    assert!(
                        seq.is_some(),
                        "malformed line {line:?} in {}",
                        path.display()
                    );
                    self.last_try = seq;
                }
                Some("BUSY") => self.busy += 1,
                Some("DONE") => self.done = true,
                _ => self.errors.push(line.to_owned()),
            }
        }
        self.consumed += end as u64 + 1;
    }
}

/// One process of a writer slot.
struct Incarnation {
    slot: usize,
    number: usize,
    log_path: PathBuf,
    stderr_path: PathBuf,
    child: Option<Child>,
    log: AckLog,
    /// Acks in its log once the killer's SIGKILL had ended it.
    killed_after: Option<usize>,
    status: Option<ExitStatus>,
}

impl Incarnation {
    fn acks(&mut self) -> usize {
        self.log.refresh(&self.log_path);
        self.log.acks.len()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }
}

/// Every child process of the storm. Dropping it SIGKILLs and reaps the ones
/// still running, so a failed assertion leaves no process behind.
struct Pool {
    reader: Option<Child>,
    dir: PathBuf,
    db: PathBuf,
    stop: PathBuf,
    incarnations: Vec<Incarnation>,
    /// Index in `incarnations` of the running process of each slot.
    current: Vec<usize>,
}

impl Pool {
    fn spawn(&mut self, slot: usize) -> usize {
        let number = self.incarnations.iter().filter(|i| i.slot == slot).count();
        let log_path = self.dir.join(format!("slot{slot}-{number}.log"));
        let stderr_path = self.dir.join(format!("slot{slot}-{number}.stderr"));
        File::create(&log_path).expect("create an ack log");
        let stderr = File::create(&stderr_path).expect("create a stderr file");
        let child = child_command("storm-writer", &self.db)
            .env(SESSION, format!("slot{slot}"))
            .env(INCARNATION, number.to_string())
            .env(LOG, &log_path)
            .env(STOP, &self.stop)
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("spawn a writer");
        self.incarnations.push(Incarnation {
            slot,
            number,
            log_path,
            stderr_path,
            child: Some(child),
            log: AckLog::default(),
            killed_after: None,
            status: None,
        });
        self.incarnations.len() - 1
    }

    /// Acks so far of each slot's running process.
    fn running_acks(&mut self) -> Vec<usize> {
        let current = self.current.clone();
        current
            .into_iter()
            .map(|i| self.incarnations[i].acks())
            .collect()
    }

    /// SIGKILLs the slot's running writer and starts the next incarnation.
    fn kill_and_respawn(&mut self, slot: usize) {
        let index = self.current[slot];
        let victim = &mut self.incarnations[index];
        let mut child = victim.child.take().expect("a running writer");
        child.kill().expect("SIGKILL a writer");
        let status = child.wait().expect("reap a killed writer");
        // Read once the writer is dead, so its log is final: read before the
        // kill, it could miss the last `ACK` lines and count a finished
        // append as one killed inside the call.
        let acks = victim.acks();
        victim.killed_after = Some(acks);
        victim.status = Some(status);
        assert_eq!(
            status.signal(),
            Some(SIGKILL),
            "writer slot{slot} #{} was running when killed (it exited by itself with {status}):\n{}",
            victim.number,
            victim.stderr()
        );
        self.current[slot] = self.spawn(slot);
    }

    /// Creates the stop file and waits for every running writer to finish.
    fn stop_all(&mut self) {
        File::create(&self.stop).expect("create the stop file");
        let deadline = Instant::now() + Duration::from_secs(60);
        for &index in &self.current {
            let incarnation = &mut self.incarnations[index];
            let mut child = incarnation.child.take().expect("a running writer");
            let status = loop {
                if let Some(status) = child.try_wait().expect("poll a writer") {
                    break status;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "writer slot{} #{} did not stop within 60 s",
                        incarnation.slot, incarnation.number
                    );
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            incarnation.status = Some(status);
            incarnation.acks();
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let running = self.incarnations.iter_mut().map(|i| &mut i.child);
        for mut child in running.chain([&mut self.reader]).filter_map(Option::take) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What the killer measured, round by round.
#[derive(Default)]
struct StormRecord {
    kills: usize,
    /// Per round: acks made by the writers not killed that round, between the
    /// round's start and its kills.
    bystander_progress: Vec<usize>,
    /// Acks of each steady slot when the storm started and when it ended.
    steady_before: Vec<usize>,
    steady_after: Vec<usize>,
}

/// SplitMix64: the killer's choices, reproducible from the printed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }
}

fn seed() -> u64 {
    std::env::var(SEED)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .expect("clock after 1970")
                .as_nanos() as u64
        })
}

/// The killer: rounds of a random pause (everybody writes), then SIGKILL of
/// one or two random killable writers, each respawned at once.
fn killer(pool: &mut Pool, plan: &StormPlan, rng: &mut Rng) -> StormRecord {
    let mut record = StormRecord::default();
    // Wait until every writer is in its append loop, so the storm starts on a
    // store under full write load.
    let warm_up = Instant::now() + Duration::from_secs(30);
    while pool.running_acks().contains(&0) {
        assert!(
            Instant::now() < warm_up,
            "every writer acknowledged an append within 30 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    record.steady_before = pool.running_acks()[..plan.steady].to_vec();
    for _ in 0..plan.rounds {
        let start = pool.running_acks();
        std::thread::sleep(Duration::from_millis(
            rng.between(plan.pause_ms.0, plan.pause_ms.1),
        ));
        let killable: Vec<usize> = (plan.steady..plan.writers).collect();
        let victims: BTreeSet<usize> = (0..rng.between(1, 2))
            .map(|_| killable[rng.next() as usize % killable.len()])
            .collect();
        let at_kill = pool.running_acks();
        record.bystander_progress.push(
            (0..plan.writers)
                .filter(|slot| !victims.contains(slot))
                .map(|slot| at_kill[slot] - start[slot])
                .sum(),
        );
        for &slot in &victims {
            // Three kills in four land in the victim's append loop (a random
            // 0-20 ms after its first acknowledged append, if it had none yet);
            // the others wherever the victim is, start-up and open included.
            if !rng.next().is_multiple_of(4) {
                let deadline = Instant::now() + Duration::from_secs(10);
                while pool.incarnations[pool.current[slot]].acks() == 0 {
                    assert!(
                        Instant::now() < deadline,
                        "a respawned writer of slot{slot} acknowledged an append within 10 s"
                    );
                    std::thread::sleep(Duration::from_millis(2));
                }
                std::thread::sleep(Duration::from_millis(rng.between(0, 20)));
            }
            pool.kill_and_respawn(slot);
            record.kills += 1;
        }
    }
    record.steady_after = pool.running_acks()[..plan.steady].to_vec();
    record
}

fn kill_storm(plan: &StormPlan) {
    let started = Instant::now();
    let seed = seed();
    eprintln!("kill storm: seed {seed} (replay the killer's choices with {SEED}={seed})");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    drop(SessionDb::open(&path).expect("create"));
    let mut pool = Pool {
        reader: None,
        dir: dir.path().to_owned(),
        db: path.clone(),
        stop: dir.path().join("stop"),
        incarnations: Vec::new(),
        current: Vec::new(),
    };
    for slot in 0..plan.writers {
        let index = pool.spawn(slot);
        pool.current.push(index);
    }
    pool.reader = Some(
        child_command("reader", &path)
            .env(STOP, &pool.stop)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the reader"),
    );

    let storm_started = Instant::now();
    let record = std::thread::scope(|scope| {
        scope
            .spawn(|| killer(&mut pool, plan, &mut rng))
            .join()
            .expect("the killer thread")
    });
    let storm = storm_started.elapsed();
    pool.stop_all();
    let reader = pool
        .reader
        .take()
        .expect("the reader")
        .wait_with_output()
        .expect("reader");
    assert!(
        reader.status.success(),
        "the reader failed during the storm:\n{}",
        String::from_utf8_lossy(&reader.stderr)
    );
    let searches = String::from_utf8_lossy(&reader.stdout)
        .lines()
        .find_map(|l| {
            l.split_once("SEARCHES ")
                .map(|(_, n)| n.trim().parse::<usize>())
        })
        .expect("the reader reported its searches")
        .expect("a count of searches");
    assert!(searches > 0, "the reader searched during the storm");

    // Every process: killed by us, or stopped cleanly; no error but Busy.
    for incarnation in &pool.incarnations {
        let name = format!("slot{} #{}", incarnation.slot, incarnation.number);
        assert!(
            incarnation.log.errors.is_empty(),
            "writer {name} got a non-Busy error: {:?}\n{}",
            incarnation.log.errors,
            incarnation.stderr()
        );
        let status = incarnation.status.expect("every writer was reaped");
        if incarnation.killed_after.is_none() {
            assert!(
                status.success() && incarnation.log.done,
                "writer {name} stopped cleanly ({status}):\n{}",
                incarnation.stderr()
            );
        }
        let seqs: Vec<u64> = incarnation.log.acks.iter().map(|(seq, _)| *seq).collect();
        assert!(
            seqs.iter().copied().eq(0..seqs.len() as u64),
            "writer {name} acknowledged its appends in order"
        );
    }

    // Every acknowledged message exactly once, under its id, with its text.
    let db = SessionDb::open(&path).expect("reopen");
    let rows: Vec<(i64, String, String)> = db
        .read(|conn| {
            let mut stmt = conn
                .prepare("SELECT id, session_id, content FROM messages ORDER BY id")
                .expect("prepare");
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .expect("query")
                .collect::<Result<Vec<_>, _>>()
                .expect("rows");
            Ok(rows)
        })
        .expect("read the messages");
    let mut by_text: BTreeMap<&str, Vec<(i64, &str)>> = BTreeMap::new();
    for (id, session, text) in &rows {
        by_text
            .entry(text.as_str())
            .or_default()
            .push((*id, session.as_str()));
    }
    let mut acknowledged = 0;
    let mut in_flight_commits = 0;
    for incarnation in &pool.incarnations {
        let session = format!("slot{}", incarnation.slot);
        let number = incarnation.number.to_string();
        for &(seq, id) in &incarnation.log.acks {
            let text = message_text(&session, &number, seq);
            assert_eq!(
                by_text.remove(text.as_str()),
                Some(vec![(id, session.as_str())]),
                "acknowledged message {text:?} (id {id}) is stored exactly once"
            );
            acknowledged += 1;
        }
        // The one message a killed writer may have committed but not logged.
        let next = message_text(&session, &number, incarnation.log.acks.len() as u64);
        if let Some(stored) = by_text.remove(next.as_str()) {
            assert!(
                incarnation.killed_after.is_some() && stored.len() == 1,
                "unacknowledged {next:?} stored {stored:?}: only a killed writer's last append may be"
            );
            in_flight_commits += 1;
        }
    }
    assert!(
        by_text.is_empty(),
        "messages stored that no writer was writing: {:?}",
        by_text.keys().take(5).collect::<Vec<_>>()
    );
    assert_eq!(rows.len(), acknowledged + in_flight_commits);
    drop(db);
    assert_store_consistent(&path);

    // The storm was real: kills landed in append loops, and the others wrote on.
    assert_eq!(record.kills, pool.incarnations.len() - plan.writers);
    // Inside `append_message`: the victim had logged `TRY n` and not `ACK n`.
    let kills_inside_append = pool
        .incarnations
        .iter()
        .filter(|i| i.killed_after.is_some() && i.log.last_try == Some(i.log.acks.len() as u64))
        .count();
    assert!(
        kills_inside_append > 0,
        "some of the {} kills landed inside an append call",
        record.kills
    );
    for (slot, (before, after)) in record
        .steady_before
        .iter()
        .zip(&record.steady_after)
        .enumerate()
    {
        assert!(
            after > before,
            "steady writer slot{slot} kept writing during the storm ({before} -> {after} acks)"
        );
    }
    let rounds_with_progress = record.bystander_progress.iter().filter(|p| **p > 0).count();
    assert!(
        rounds_with_progress * 4 >= plan.rounds * 3,
        "the writers not being killed made progress in most rounds: {rounds_with_progress} of {}",
        plan.rounds
    );
    let busy: usize = pool.incarnations.iter().map(|i| i.log.busy).sum();
    let steady: Vec<usize> = record
        .steady_before
        .iter()
        .zip(&record.steady_after)
        .map(|(b, a)| a - b)
        .collect();
    eprintln!(
        "kill storm: {} writers, {} rounds in {:.1} s: {} SIGKILLs ({kills_inside_append} inside an append call, {} \
         of them after its commit), {acknowledged} acknowledged appends, steady writers \
         +{steady:?} during the storm, bystanders progressed in {rounds_with_progress}/{} rounds, \
         {busy} Busy retries, {searches} reader rounds; total {:.1} s",
        plan.writers,
        plan.rounds,
        storm.as_secs_f64(),
        record.kills,
        in_flight_commits,
        plan.rounds,
        started.elapsed().as_secs_f64()
    );
}
