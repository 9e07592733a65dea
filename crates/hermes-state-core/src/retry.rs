//! The write-contention policy of the original (`api.md` §13), shared by
//! every backend: on SQLite by the open (the migration lock) and the write
//! path, on PostgreSQL by its write path, so both wait and give up alike.

use std::time::Duration;

use hermes_state_types::ErrorKind;

/// How many times a write is attempted before the busy error reaches the caller.
pub const MAX_ATTEMPTS: u32 = 15;

/// Bounds of the random sleep between attempts.
pub const JITTER_MIN: Duration = Duration::from_millis(20);
/// See [`JITTER_MIN`].
pub const JITTER_MAX: Duration = Duration::from_millis(150);

/// A uniformly random sleep in `[JITTER_MIN, JITTER_MAX]`, so that processes
/// that collided do not collide again in lockstep.
pub fn jitter() -> Duration {
    let span = (JITTER_MAX - JITTER_MIN).as_millis() as u64;
    JITTER_MIN + Duration::from_millis(fastrand::u64(0..=span))
}

/// Runs `attempt` until it succeeds, fails with an error that is not
/// [`ErrorKind::Busy`], or [`MAX_ATTEMPTS`] attempts have failed; sleeps a
/// random [`jitter`] between attempts. `attempt` must leave nothing behind when
/// it fails (roll back its transaction), because it is run again.
pub fn with_retries<T, E>(
    mut attempt: impl FnMut() -> Result<T, E>,
    kind: impl Fn(&E) -> ErrorKind,
) -> Result<T, E> {
    let mut tries = 1;
    loop {
        match attempt() {
            Err(error) if kind(&error) == ErrorKind::Busy && tries < MAX_ATTEMPTS => {
                tries += 1;
                std::thread::sleep(jitter());
            }
            result => return result,
        }
    }
}
