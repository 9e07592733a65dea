//! Turns at the write lock, taken in a fair order by the processes (and
//! handles) that share one store.
//!
//! SQLite's write lock is not fair. A writer that finds it taken sleeps in its
//! busy handler and tries again; a writer that has just committed takes the
//! lock again at once. So one process appending in a loop can hold off another
//! for seconds: two processes, 5 s, 8,215 appends against 1
//! (docs/PERFORMANCE.md, "Several hosts on one store").
//!
//! The handles of this library therefore take turns through two lock files
//! beside the store, with advisory whole-file locks (`flock` on Unix), which the
//! kernel releases when a process dies:
//!
//! - the *gate* (`<store>-writer-gate`), held exclusively around each write
//!   transaction;
//! - the *queue* (`<store>-writer-queue`), held shared by every writer that
//!   found the gate taken and waits for it, so that the others can see that
//!   someone waits.
//!
//! A writer that has gone on taking turns for a [`QUANTUM`] while someone
//! waited gives way before its next turn: it leaves the gate free until one
//! of the waiting writers has taken it (for at most [`GIVE_WAY_LIMIT`]), then
//! waits like the others. Writers in tight loops therefore share the lock in
//! slices of a few milliseconds instead of one holding it for seconds.
//!
//! The queue only orders writers; SQLite's lock still guards the data. A
//! process that does not take part (the original, a shell) contends through
//! SQLite's busy handler as before. When the lock files cannot be opened or
//! created (a read-only directory), or the gate is not free within
//! [`PATIENCE`] (a holder that hangs), the write goes on without a turn,
//! exactly as it would without the queue; the handle's next writes then wait
//! [`PATIENCE_AFTER_A_HANG`] only, until one is granted a turn again.

use std::fs::{File, OpenOptions, TryLockError}; // tidy: not the live database
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a writer waits for the gate before it writes without a turn
/// (SQLite's busy handler and the retry policy then decide, as for a process
/// that does not take part). The gate's holder keeps it for one write
/// transaction (a bounded batch, or the busy timeout while the original
/// holds SQLite's lock) and the periodic FTS maintenance that follows it.
pub const PATIENCE: Duration = Duration::from_secs(1);

/// The longest a writer gives way to writers waiting for the gate (when
/// none of them takes it) before it queues like them.
pub const GIVE_WAY_LIMIT: Duration = Duration::from_millis(100);

/// How long a writer waits for the gate, after a wait that ran out of
/// [`PATIENCE`], until it is granted a turn again: short enough that a
/// holder that hangs costs each write little, long enough that a healthy
/// holder gives way to it (it says that it waits) and the writer takes turns
/// again.
pub const PATIENCE_AFTER_A_HANG: Duration = Duration::from_millis(10);

/// How long after the first turn at which it found another writer waiting a
/// writer gives way before its next turn. Each change of writer costs the
/// new one its page cache (SQLite drops it when another connection wrote),
/// so writers take turns of a few milliseconds rather than of one
/// transaction each.
///
/// The clock runs whether the writer writes, waits or is idle meanwhile, and
/// restarts when it gives way or finds nobody waiting. A turn it had to wait
/// for does not restart it: with 8 looping processes, restarting it there
/// raised the append p99 from 62–66 to 73–74 ms and the longest append from
/// 0.17–0.19 to 0.26–0.40 s (two runs each).
pub const QUANTUM: Duration = Duration::from_millis(5);

/// The first pause between two looks at a lock file; it doubles up to
/// [`POLL_MAX`] while the wait goes on.
const POLL: Duration = Duration::from_micros(50);
/// See [`POLL`].
const POLL_MAX: Duration = Duration::from_micros(500);

/// The growing pause of a wait for a lock file.
struct Pause(Duration);

impl Pause {
    fn new() -> Pause {
        Pause(POLL)
    }

    fn sleep(&mut self) {
        std::thread::sleep(self.0);
        self.0 = (self.0 * 2).min(POLL_MAX);
    }
}

/// The two lock files of one store (see the module documentation).
#[derive(Debug)]
pub struct WriterQueue {
    gate: File,
    queue: File,
    /// When this handle first took a turn while another writer waited, in
    /// the current run of such turns (see [`QUANTUM`]).
    contended_since: Mutex<Option<Instant>>,
    /// Whether this handle's last wait for the gate ran out (a holder that
    /// hangs, e.g. a stopped process): until it is granted a turn again, it
    /// waits [`PATIENCE_AFTER_A_HANG`] only.
    gate_stuck: AtomicBool,
}

/// A writer's turn: the gate, held until this is dropped. A turn that was
/// not granted (see [`WriterQueue::take_turn`]) holds nothing.
#[derive(Debug)]
#[must_use = "the turn ends when it is dropped"]
pub struct Turn<'q> {
    gate: Option<&'q File>,
}

impl Turn<'_> {
    /// Whether the gate is held (`false`: the write goes on without a turn).
    pub fn is_held(&self) -> bool {
        self.gate.is_some()
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Some(gate) = self.gate.take() {
            // Fails only on a closed descriptor; the lock dies with it then.
            let _ = gate.unlock();
        }
    }
}

impl WriterQueue {
    /// The lock files of the store at `store`: the gate, then the queue.
    /// They sit beside the store under its own name, as its `-wal` and `-shm`
    /// do; a symbolic link is followed, so two paths to one store share them.
    pub fn lock_files(store: &Path) -> [PathBuf; 2] {
        let store = resolved(store);
        let with_suffix = |suffix: &str| {
            let mut name = store.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        };
        [with_suffix("-writer-gate"), with_suffix("-writer-queue")]
    }

    /// Opens the lock files of the store at `store`, creating them (empty)
    /// when missing. Only a handle that writes calls this: a read creates no
    /// file.
    pub fn beside(store: &Path) -> io::Result<WriterQueue> {
        let [gate, queue] = WriterQueue::lock_files(store);
        let mode = store_mode(store);
        Ok(WriterQueue {
            gate: open_lock_file(&gate, mode)?,
            queue: open_lock_file(&queue, mode)?,
            contended_since: Mutex::new(None),
            gate_stuck: AtomicBool::new(false),
        })
    }

    /// Waits for this writer's turn: gives way to writers already waiting,
    /// then takes the gate, queuing while it is taken. Not granted (the
    /// write goes on without a turn) after [`PATIENCE`] (after
    /// [`PATIENCE_AFTER_A_HANG`] while the last wait had run out), or when a
    /// lock call fails.
    pub fn take_turn(&self) -> Turn<'_> {
        if self.quantum_used_up() {
            self.give_way();
        }
        match self.gate.try_lock() {
            Ok(()) => return self.granted(),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(_)) => return Turn { gate: None },
        }
        // Not free for a whole PATIENCE last time: wait a little only, rather
        // than that long again for every write while the holder hangs.
        let patience = if self.gate_stuck.load(Ordering::Relaxed) {
            PATIENCE_AFTER_A_HANG
        } else {
            PATIENCE
        };
        let deadline = Instant::now() + patience;
        let mut queued = false;
        let mut pause = Pause::new();
        let held = loop {
            // Waiting: say so, so that the holder gives way when it is done.
            // (Never a blocking lock: a process stopped inside
            // `someone_waits` holds the queue exclusively.)
            if !queued {
                queued = self.queue.try_lock_shared().is_ok();
            }
            match self.gate.try_lock() {
                Ok(()) => break true,
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => pause.sleep(),
                Err(_) => break false,
            }
        };
        if queued {
            let _ = self.queue.unlock();
        }
        if held {
            self.granted()
        } else {
            self.gate_stuck.store(true, Ordering::Relaxed);
            Turn { gate: None }
        }
    }

    /// Leaves the gate to the writers that wait until one of them has taken
    /// it (this writer then queues behind it like the others), nobody waits
    /// any more, or [`GIVE_WAY_LIMIT`] has passed.
    fn give_way(&self) {
        let giving_way = Instant::now();
        let mut pause = Pause::new();
        while self.someone_waits() && giving_way.elapsed() < GIVE_WAY_LIMIT {
            pause.sleep();
            match self.gate.try_lock() {
                // Free still: the waiters have not looked yet.
                Ok(()) => {
                    let _ = self.gate.unlock();
                }
                // Taken by a waiter (or not lockable): queue like the others.
                Err(_) => return,
            }
        }
    }

    /// Whether this handle has taken turns for a [`QUANTUM`] while another
    /// writer waited, and must now give way (which starts a new quantum).
    fn quantum_used_up(&self) -> bool {
        let mut since = self.contended_since();
        if !self.someone_waits() {
            *since = None;
            return false;
        }
        let started = *since.get_or_insert_with(Instant::now);
        if started.elapsed() < QUANTUM {
            return false;
        }
        *since = None;
        true
    }

    /// Whether a writer (of any handle but this one) waits for the gate now.
    pub fn someone_waits(&self) -> bool {
        match self.queue.try_lock() {
            Ok(()) => {
                let _ = self.queue.unlock();
                false
            }
            Err(TryLockError::WouldBlock) => true,
            // Cannot tell: do not hold this writer back.
            Err(TryLockError::Error(_)) => false,
        }
    }

    fn contended_since(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.contended_since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn granted(&self) -> Turn<'_> {
        self.gate_stuck.store(false, Ordering::Relaxed);
        Turn {
            gate: Some(&self.gate),
        }
    }
}

/// The store's path with symbolic links resolved; for a store not created
/// yet, its folder's (so that the name is the same before and after).
fn resolved(store: &Path) -> PathBuf {
    if let Ok(path) = std::fs::canonicalize(store) {
        return path;
    }
    match (store.parent(), store.file_name()) {
        (Some(folder), Some(name)) => {
            let folder = if folder.as_os_str().is_empty() {
                Path::new(".")
            } else {
                folder
            };
            std::fs::canonicalize(folder).map_or_else(|_| store.to_owned(), |f| f.join(name))
        }
        _ => store.to_owned(),
    }
}

/// The permission bits of the store (`None` when it does not exist yet or
/// on a system without them), which its lock files are created with, as
/// SQLite creates its `-wal` and `-shm`: whoever may open the store may open
/// them, and nobody else.
fn store_mode(store: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(store)
            .ok()
            .map(|meta| meta.permissions().mode() & 0o777)
    }
    #[cfg(not(unix))]
    {
        let _ = store;
        None
    }
}

/// Opens one lock file: created when missing (never through a symbolic
/// link, never truncated) and then given `mode` exactly, whatever the umask,
/// as SQLite does for its `-wal` and `-shm`; opened read-only when it exists
/// but may not be written, since a lock needs no write access.
fn open_lock_file(path: &Path, mode: Option<u32>) -> io::Result<File> {
    let mut options = OpenOptions::new(); // tidy: not the live database
    options.read(true).write(true);
    match options.clone().create_new(true).open(path) {
        Ok(created) => {
            #[cfg(unix)]
            if let Some(mode) = mode {
                use std::os::unix::fs::PermissionsExt;
                created.set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
            #[cfg(not(unix))]
            let _ = mode;
            Ok(created)
        }
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            options.open(path).or_else(|_| File::open(path)) // tidy: not the live database
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn store() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        (dir, path)
    }

    #[test]
    fn the_lock_files_sit_beside_the_store_under_its_name() {
        let (dir, path) = store();
        let [gate, queue] = WriterQueue::lock_files(&path);
        let dir = std::fs::canonicalize(dir.path()).expect("dir");
        assert_eq!(gate, dir.join("state.db-writer-gate"));
        assert_eq!(queue, dir.join("state.db-writer-queue"));
    }

    #[test]
    fn a_store_not_created_yet_gets_the_lock_files_it_will_have() {
        let (_dir, path) = store();
        let before = WriterQueue::lock_files(&path);
        std::fs::write(&path, b"").expect("create");
        assert_eq!(WriterQueue::lock_files(&path), before);
    }

    #[test]
    fn a_writer_gives_way_once_it_has_had_turns_for_a_quantum_while_another_waits() {
        let (_dir, path) = store();
        let looping = WriterQueue::beside(&path).expect("looping handle");
        let waiting = WriterQueue::beside(&path).expect("waiting handle");
        // A writer waits (and never comes: the gate stays free).
        waiting.queue.lock_shared().expect("queue");
        assert!(looping.someone_waits());

        // Turns back to back until one ends the quantum (it resets the
        // quantum's start): that one first gave way, for as long as the
        // writer waits, the whole GIVE_WAY_LIMIT.
        let quantum_started = Instant::now();
        let (asked, returned) = loop {
            let asked = Instant::now();
            let turn = looping.take_turn();
            let returned = Instant::now();
            assert!(turn.is_held());
            if looping.contended_since().is_none() {
                break (asked, returned);
            }
            assert!(
                quantum_started.elapsed() < Duration::from_secs(10),
                "no give-way"
            );
        };
        let gave_way = returned.duration_since(asked);
        assert!(gave_way >= GIVE_WAY_LIMIT, "gave way for {gave_way:?} only");
        // The give-way began once the quantum was over (both bounds hold
        // however the test thread is scheduled).
        let since_start = returned.duration_since(quantum_started);
        assert!(
            since_start >= QUANTUM + GIVE_WAY_LIMIT,
            "gave way {since_start:?} after the first turn"
        );
    }

    #[test]
    fn a_writer_giving_way_queues_again_once_a_waiter_has_taken_the_gate() {
        let (_dir, path) = store();
        let looping = WriterQueue::beside(&path).expect("looping handle");
        let waiting = WriterQueue::beside(&path).expect("waiting handle");
        let never_coming = WriterQueue::beside(&path).expect("third handle");
        // One writer waits for ever: giving way until nobody waits would
        // last the whole GIVE_WAY_LIMIT.
        never_coming.queue.lock_shared().expect("queue");
        let turn = looping.take_turn();
        *looping.contended_since() = Some(Instant::now() - QUANTUM);
        let (order, turns) = mpsc::channel();
        std::thread::scope(|scope| {
            let waiter_order = order.clone();
            let waiting = &waiting;
            scope.spawn(move || {
                let turn = waiting.take_turn();
                assert!(turn.is_held());
                waiter_order.send("waiter").expect("send");
                std::thread::sleep(Duration::from_millis(5));
            });
            std::thread::sleep(Duration::from_millis(20));
            drop(turn);
            let asked = Instant::now();
            let again = looping.take_turn();
            let waited = asked.elapsed();
            assert!(again.is_held());
            order.send("looping").expect("send");
            assert!(
                waited < GIVE_WAY_LIMIT,
                "waited {waited:?}, past the waiter's turn"
            );
        });
        drop(order);
        assert_eq!(turns.iter().collect::<Vec<_>>(), ["waiter", "looping"]);
    }

    #[test]
    fn a_writer_alone_never_gives_way() {
        let (_dir, path) = store();
        let alone = WriterQueue::beside(&path).expect("handle");
        let started = Instant::now();
        while started.elapsed() < QUANTUM * 3 {
            let asked = Instant::now();
            let turn = alone.take_turn();
            assert!(turn.is_held());
            assert!(asked.elapsed() < GIVE_WAY_LIMIT);
        }
    }

    #[test]
    fn a_gate_held_too_long_lets_the_writer_go_on_without_a_turn() {
        let (_dir, path) = store();
        let holder = WriterQueue::beside(&path).expect("holder");
        let waiter = WriterQueue::beside(&path).expect("waiter");
        let held = holder.take_turn();
        assert!(held.is_held());
        let started = Instant::now();
        let turn = waiter.take_turn();
        assert!(!turn.is_held());
        assert!(started.elapsed() >= PATIENCE);
        // It no longer counts as waiting.
        assert!(!holder.someone_waits());
    }

    #[cfg(unix)]
    #[test]
    fn the_lock_files_get_the_mode_of_the_store() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, path) = store();
        std::fs::write(&path, b"").expect("create");
        // Group-writable: a umask of 022 (this machine's) would take the
        // group's write bit away.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o660)).expect("chmod");
        drop(WriterQueue::beside(&path).expect("open"));
        for lock_file in WriterQueue::lock_files(&path) {
            let mode = std::fs::metadata(&lock_file)
                .expect("stat")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o660, "{}", lock_file.display());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_file_is_never_created_through_a_symbolic_link() {
        let (dir, path) = store();
        let target = dir.path().join("elsewhere");
        let [gate, _] = WriterQueue::lock_files(&path);
        std::os::unix::fs::symlink(&target, &gate).expect("link");
        assert!(WriterQueue::beside(&path).is_err());
        assert!(!target.exists(), "nothing made at the link's target");
    }

    #[test]
    fn after_a_wait_that_ran_out_the_next_waits_are_short_until_a_turn_is_granted() {
        let (_dir, path) = store();
        let holder = WriterQueue::beside(&path).expect("holder");
        let waiter = WriterQueue::beside(&path).expect("waiter");
        let hung = holder.take_turn();
        assert!(!waiter.take_turn().is_held(), "the first wait runs out");
        let asked = Instant::now();
        assert!(!waiter.take_turn().is_held());
        assert!(
            asked.elapsed() < PATIENCE / 2,
            "the second write waited {:?}",
            asked.elapsed()
        );
        drop(hung);
        assert!(waiter.take_turn().is_held(), "turns again once it is free");
        drop(waiter.take_turn());
        // And a wait after that is a full wait again.
        let _held = holder.take_turn();
        let asked = Instant::now();
        assert!(!waiter.take_turn().is_held());
        assert!(asked.elapsed() >= PATIENCE);
    }

    #[test]
    fn the_lock_files_are_created_empty_and_never_truncated() {
        let (_dir, path) = store();
        let [gate, _] = WriterQueue::lock_files(&path);
        std::fs::write(&gate, b"kept").expect("write");
        drop(WriterQueue::beside(&path).expect("open"));
        assert_eq!(std::fs::read(&gate).expect("read"), b"kept");
    }
}
