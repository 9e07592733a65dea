"""Why the last ``SessionDB()`` failed to open, for the agent's messages.

The agent's slash commands say why the session database is unavailable
(``format_session_db_unavailable``). As with the original, a failed open
records its cause and a successful one never clears it (in a threaded
caller, a concurrent success would erase the cause another thread is about
to report); callers clear it explicitly.
"""

from __future__ import annotations

import threading
from typing import Optional

_lock = threading.Lock()
_last: Optional[str] = None

# Causes that point at a network file system, where SQLite's WAL mode fails.
_NETWORK_FS_MARKERS = ("locking protocol", "not authorized")


def set_last_init_error(message: Optional[str]) -> None:
    """Records (or, with ``None``, clears) the cause of the last failed open."""
    global _last
    with _lock:
        _last = message


def get_last_init_error() -> Optional[str]:
    """The cause of the last failed ``SessionDB()`` open, or ``None``."""
    return _last


def format_session_db_unavailable(prefix: str = "Session database not available") -> str:
    """A user-facing "session database unavailable" line, with its cause if known."""
    cause = get_last_init_error()
    if not cause:
        return f"{prefix}."
    hint = ""
    if any(marker in cause.lower() for marker in _NETWORK_FS_MARKERS):
        hint = (
            " (state.db may be on a network file system such as NFS/SMB/FUSE,"
            " where SQLite's WAL mode does not work: https://www.sqlite.org/wal.html)"
        )
    return f"{prefix}: {cause}{hint}."
