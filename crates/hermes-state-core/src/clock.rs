//! The clock every time-reading operation of a handle uses (`api.md` §0.2:
//! `started_at`, `ended_at`, message timestamps, prune and archive ages,
//! lock expiry, auto-maintenance intervals).
//!
//! It belongs to a store's handle and is set when opening (the facade's
//! `StoreOptions::clock`, for either backend), so downstream tests and
//! replays of recorded call sequences get the same results on every run.

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time, as Unix seconds with sub-second precision
/// (Python's `time.time()`, which the original reads).
pub trait Clock: Debug + Send + Sync {
    /// Now.
    fn now(&self) -> f64;
}

/// The system clock: the default.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> f64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    }
}

/// A clock that stands still at a time the caller sets (and may move).
///
/// Handed to a store through its options, it makes the times the store
/// takes from its clock (`started_at`, the automatic runs' stamps) exact
/// in tests:
///
/// ```
/// use hermes_state_core::clock::{Clock, FixedClock};
///
/// let clock = FixedClock::new(1_700_000_000.0);
/// clock.advance(86_400.0);
/// assert_eq!(clock.now(), 1_700_086_400.0);
/// ```
#[derive(Debug)]
pub struct FixedClock {
    bits: AtomicU64,
}

impl FixedClock {
    /// A clock showing `seconds` (Unix time) until it is [`FixedClock::set`].
    pub fn new(seconds: f64) -> Arc<FixedClock> {
        Arc::new(FixedClock {
            bits: AtomicU64::new(seconds.to_bits()),
        })
    }

    /// Moves the clock to `seconds`.
    pub fn set(&self, seconds: f64) {
        self.bits.store(seconds.to_bits(), Ordering::SeqCst);
    }

    /// Moves the clock forward by `seconds`.
    pub fn advance(&self, seconds: f64) {
        self.set(self.now() + seconds);
    }
}

impl Clock for FixedClock {
    fn now(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::SeqCst))
    }
}
