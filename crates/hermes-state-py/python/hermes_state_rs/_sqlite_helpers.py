"""Helpers of the original's module for the agent's *other* SQLite files.

The agent opens more databases than ``state.db`` (the kanban board, for
one) with the standard library's ``sqlite3`` and sets them up through these
functions of ``hermes_state``. With this package standing in for that
module they must keep working, so they are offered here, acting on the
caller's own ``sqlite3`` connection with the same rules the library applies
to its store: WAL unless the linked SQLite has the WAL-reset bug or the file
system refuses WAL, and never a switch away from WAL on a file already in
WAL mode (other processes may have it open).
"""

from __future__ import annotations

import logging
import sqlite3
import sys
import threading

logger = logging.getLogger("hermes_state")

# Errors of `PRAGMA journal_mode=WAL` that mean "this file system cannot do
# WAL" (NFS, SMB, some FUSE mounts), as opposed to a real failure.
_NO_WAL_HERE = ("locking protocol", "not authorized")

# The labels already warned about, per kind of warning (one warning per
# database per process). The names are the original module's: its tests
# clear them between tests.
_warned_lock = threading.Lock()
_wal_fallback_warned_paths: set[str] = set()
_wal_reset_bug_warned_paths: set[str] = set()


def is_sqlite_wal_reset_vulnerable(version_info: tuple | None = None) -> bool:
    """Whether a SQLite version (default: the one ``sqlite3`` links) has the
    WAL-reset corruption bug: 3.7.0 up to 3.51.2, except the fixed 3.50.7+
    and 3.44.6+ lines (https://sqlite.org/wal.html#walresetbug)."""
    info = tuple(version_info) if version_info is not None else sqlite3.sqlite_version_info
    if info < (3, 7, 0) or info >= (3, 51, 3):
        return False
    if (3, 50, 7) <= info < (3, 51, 0) or (3, 44, 6) <= info < (3, 45, 0):
        return False
    return True


def sqlite_source_id() -> str:
    """``sqlite_source_id()`` of the SQLite ``sqlite3`` links, or ``""``."""
    try:
        conn = sqlite3.connect(":memory:")
        try:
            row = conn.execute("SELECT sqlite_source_id()").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return ""
    return "" if not row or row[0] is None else str(row[0])


def apply_wal_with_fallback(conn: sqlite3.Connection, *, db_label: str = "state.db") -> str:
    """Puts ``conn``'s database in WAL mode where that is safe; returns the
    journal mode it ends in (``"wal"`` or ``"delete"``).

    - A SQLite with the WAL-reset bug: a file already in WAL stays in WAL,
      any other gets DELETE (one warning per ``db_label``).
    - A file already in WAL: left as it is.
    - Otherwise WAL; where the file system refuses it (``locking protocol``,
      ``not authorized``) DELETE instead, with one warning per
      ``db_label`` — unless the file is in WAL on disk, when the error is
      raised (never a switch away from WAL). Other errors are raised.
    """
    current = _journal_mode(conn)
    if is_sqlite_wal_reset_vulnerable():
        if current == "wal":
            _warn_once(db_label, _wal_reset_bug_warned_paths, "SQLite %s has the WAL-reset bug; "
                       "the file is in WAL mode already and is left so" % sqlite3.sqlite_version)
            _macos_durability(conn)
            return "wal"
        try:
            conn.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.OperationalError:
            pass
        _warn_once(db_label, _wal_reset_bug_warned_paths, "SQLite %s has the WAL-reset bug; using "
                   "journal_mode=DELETE (upgrade SQLite to 3.51.3+)" % sqlite3.sqlite_version)
        return "delete"
    if current == "wal":
        _macos_durability(conn)
        return "wal"
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as exc:
        if not any(marker in str(exc).lower() for marker in _NO_WAL_HERE):
            raise
        if _journal_mode(conn) == "wal":
            raise
        _warn_once(db_label, _wal_fallback_warned_paths, f"WAL is not available on this file system ({exc}); "
                   "using journal_mode=DELETE")
        conn.execute("PRAGMA journal_mode=DELETE")
        return "delete"
    _macos_durability(conn)
    return "wal"


def _journal_mode(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("PRAGMA journal_mode").fetchone()
    except sqlite3.OperationalError:
        return None
    if not row or row[0] is None:
        return None
    mode = row[0].decode("ascii", "replace") if isinstance(row[0], bytes) else str(row[0])
    return mode.strip().lower()


def _macos_durability(conn: sqlite3.Connection) -> None:
    """On macOS a plain fsync is no write barrier: full syncs for WAL files."""
    if sys.platform != "darwin":
        return
    for pragma in ("PRAGMA checkpoint_fullfsync=1", "PRAGMA synchronous=FULL"):
        try:
            conn.execute(pragma)
        except sqlite3.OperationalError:
            pass


def _warn_once(db_label: str, warned: set, message: str) -> None:
    with _warned_lock:
        if db_label in warned:
            return
        warned.add(db_label)
    logger.warning("%s: %s", db_label, message)
