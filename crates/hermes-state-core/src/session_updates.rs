//! The per-session state the agent keeps between turns (`api.md` §2.5):
//! the compression-failure cooldown and the cross-platform handoff state as
//! every backend reports them, and the rules both apply (which cooldown is
//! active, how much of a handoff error is stored).

use serde::Serialize;

/// An active compression-failure cooldown: compression of the session is
/// not retried before `cooldown_until`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompressionCooldown {
    /// When the cooldown ends (Unix seconds).
    pub cooldown_until: f64,
    /// Seconds left at the moment of the read (always > 0).
    pub remaining_seconds: f64,
    /// The error recorded with it, if any.
    pub error: Option<String>,
}

/// The longest handoff error stored, in characters.
pub const HANDOFF_ERROR_MAX_CHARS: usize = 500;

/// The part of a handoff error that is stored: its first
/// [`HANDOFF_ERROR_MAX_CHARS`] characters. Shared by every backend.
pub fn handoff_error_text(error: &str) -> &str {
    match error.char_indices().nth(HANDOFF_ERROR_MAX_CHARS) {
        Some((end, _)) => &error[..end],
        None => error,
    }
}

/// The handoff columns of a session (`{"state", "platform", "error"}` in the
/// original).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HandoffState {
    /// `None` (never requested), `pending`, `running`, `completed` or
    /// `failed`; kept as stored, since other writers share the column.
    pub state: Option<String>,
    /// The platform the session is handed to.
    pub platform: Option<String>,
    /// Why the last handoff failed (at most 500 characters when written by
    /// the store).
    pub error: Option<String>,
}

/// The cooldown a session's stored `compression_failure_cooldown_until` and
/// `compression_failure_error` describe at `now`: `None` when unset or
/// expired (`cooldown_until <= now`). Shared by every backend.
pub fn active_cooldown(
    cooldown_until: Option<f64>,
    error: Option<String>,
    now: f64,
) -> Option<CompressionCooldown> {
    match cooldown_until {
        Some(until) if until > now => Some(CompressionCooldown {
            cooldown_until: until,
            remaining_seconds: until - now,
            error,
        }),
        _ => None,
    }
}

/// The text trimmed, `None` when nothing is left: how the optional git
/// branch and repository root of `update_session_cwd` are stored.
pub fn trimmed(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// A week: the age after which a half-done compression is finalized
/// (`finalize_orphaned_compression_sessions`, `api.md` §2.5).
pub const ORPHANED_COMPRESSION_AGE: f64 = 7.0 * 86_400.0;

/// A day: the age after which an empty TUI session is a ghost
/// (`prune_empty_ghost_sessions`, `api.md` §2.5).
pub const GHOST_AGE: f64 = 86_400.0;
