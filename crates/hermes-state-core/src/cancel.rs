//! Stopping a read that is no longer wanted: [`Cancel`].
//!
//! A caller that may lose interest in a read while it runs (search as you
//! type: the next key makes the running search useless) hands the read a
//! [`Cancel`] and raises it from another thread with [`Cancel::cancel`].
//! The backend stops what runs in the database — SQLite interrupts the
//! connection's statement, PostgreSQL sends the server a cancel request —
//! through the hook it registered with [`Cancel::on_cancel`] for the time
//! the read holds its connection. A cancelled read answers
//! [`Error::Cancelled`] (kind [`ErrorKind::Cancelled`](hermes_state_types::ErrorKind::Cancelled)),
//! whatever its statements returned: a read that was interrupted half way
//! may have swallowed the interruption as "no rows", so its answer is never
//! trusted.
//!
//! ```
//! use hermes_state_core::cancel::Cancel;
//!
//! let cancel = Cancel::new();
//! let worker = cancel.clone();
//! assert!(worker.check().is_ok());
//! cancel.cancel();
//! assert_eq!(
//!     worker.check().unwrap_err().kind(),
//!     hermes_state_types::ErrorKind::Cancelled
//! );
//! ```

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, Result};

/// What a backend runs when the read is cancelled (e.g. interrupt this
/// connection).
type HookFn = Box<dyn Fn() + Send + Sync>;

/// A flag a caller raises to stop a read it started; clones share it.
#[derive(Clone, Default)]
pub struct Cancel(Arc<Inner>);

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    next_id: AtomicU64,
    /// The hooks of the reads running now, by id.
    hooks: Mutex<Vec<(u64, HookFn)>>,
}

impl fmt::Debug for Cancel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancel")
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Cancel {
    /// A flag not raised.
    pub fn new() -> Self {
        Cancel::default()
    }

    fn hooks(&self) -> MutexGuard<'_, Vec<(u64, HookFn)>> {
        // The list is consistent between pushes and removals.
        self.0.hooks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Raises the flag and stops what the reads given it run now. Once
    /// raised it stays raised; raising it again does nothing more.
    pub fn cancel(&self) {
        // Under the lock: a hook removed by its read's guard never runs
        // after the guard is gone (the connection may serve another read).
        let hooks = self.hooks();
        if !self.0.cancelled.swap(true, Ordering::SeqCst) {
            for (_, hook) in hooks.iter() {
                hook();
            }
        }
    }

    /// Whether the flag was raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// [`Error::Cancelled`] once the flag is raised: for a read to call
    /// between its steps.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Registers `hook` to run (on the cancelling thread) if the flag is
    /// raised while the returned guard lives: a backend's way to stop the
    /// statement its connection runs. [`Error::Cancelled`] instead when the
    /// flag is already raised, so the read does not start.
    pub fn on_cancel(&self, hook: impl Fn() + Send + Sync + 'static) -> Result<Hook<'_>> {
        let mut hooks = self.hooks();
        if self.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let id = self.0.next_id.fetch_add(1, Ordering::Relaxed);
        hooks.push((id, Box::new(hook)));
        Ok(Hook { cancel: self, id })
    }
}

/// A hook registered with [`Cancel::on_cancel`]; dropping it removes the
/// hook (after which it never runs).
#[must_use = "the hook is removed when the guard is dropped"]
pub struct Hook<'a> {
    cancel: &'a Cancel,
    id: u64,
}

impl fmt::Debug for Hook<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hook").field("id", &self.id).finish()
    }
}

impl Drop for Hook<'_> {
    fn drop(&mut self) {
        self.cancel.hooks().retain(|(id, _)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hermes_state_types::ErrorKind;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn a_hook_runs_once_while_registered_and_never_after() {
        let cancel = Cancel::new();
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&runs);
        let hook = cancel
            .on_cancel(move || {
                counted.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        cancel.cancel();
        cancel.cancel();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        drop(hook);
        assert!(cancel.is_cancelled());
        assert_eq!(cancel.check().unwrap_err().kind(), ErrorKind::Cancelled);
    }

    #[test]
    fn a_removed_hook_does_not_run() {
        let cancel = Cancel::new();
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&runs);
        drop(
            cancel
                .on_cancel(move || {
                    counted.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap(),
        );
        cancel.cancel();
        assert_eq!(runs.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn registering_on_a_raised_flag_is_refused() {
        let cancel = Cancel::new();
        cancel.cancel();
        let refused = cancel.on_cancel(|| {}).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Cancelled);
    }
}
