"""``SessionDB``: the original's class, answered by the hermes-state library."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from pathlib import Path

from . import _init_error, _methods, _native

# Methods written by hand below (they do something on the Python side as
# well); every other method of the original is generated from its signature.
_HAND_WRITTEN = frozenset({"close", "set_meta", "optimize_fts_storage"})


class SessionDB:
    """The Hermes session store (``state.db``), as the original's ``SessionDB``.

    Every public method of the original exists here with its signature and
    answers as the original does; the work is done by the hermes-state Rust
    library with the GIL released, so one instance may be shared by many
    threads (the gateway's pattern). See ``docs/PYTHON.md``.

    ``db_path`` is a ``str`` or ``os.PathLike`` (default: ``DEFAULT_DB_PATH``,
    ``$HERMES_HOME/state.db``), or a ``postgresql://`` URL naming a store on
    a PostgreSQL server (kept as the ``str`` given; ``_conn`` does not exist
    there). ``read_only=True`` opens an existing store without ever writing
    to it.
    """

    def __init__(self, db_path: Path = None, read_only: bool = False):
        if _is_server_url(db_path):
            # A URL stays text: ``Path`` would fold its ``//``.
            self.db_path = db_path
        else:
            self.db_path = Path(db_path) if db_path else _default_db_path()
        self.read_only = read_only
        self._raw_conn = None
        self._raw_lock = threading.Lock()
        # The original's callers hold `db._lock` around their own use of
        # `db._conn`; close() takes it too, so it waits for such a use.
        self._lock = threading.Lock()
        self._closed = False
        try:
            self._native = _native.NativeStore(os.fspath(self.db_path), bool(read_only))
        except Exception as exc:
            # As the original: remember why, for ``format_session_db_unavailable``.
            _init_error.set_last_init_error(f"{type(exc).__name__}: {exc}")
            raise

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        mode = ", read_only=True" if self.read_only else ""
        # A server URL is shown without its password, as the library shows it.
        where = (
            _native.redacted_location(self.db_path)
            if _is_server_url(self.db_path)
            else str(self.db_path)
        )
        return f"<hermes_state_rs.SessionDB {where!r}{mode} ({state})>"

    # -- The raw connection (a compatibility escape hatch) -------------------

    @property
    def _conn(self):
        """A standard-library ``sqlite3.Connection`` to the same file.

        The original's callers and tests read and seed the store through
        ``db._conn`` with plain SQL. This is such a connection, opened on
        first use as the original opens its own (autocommit,
        ``check_same_thread=False``, 1 s busy timeout, ``sqlite3.Row`` rows,
        foreign keys on; ``mode=ro`` for a read-only store). What is written
        through it is committed at once and seen by the store's next call.
        ``None`` after ``close()``, as the original's.
        """
        if _is_server_url(self.db_path):
            raise AttributeError(
                "_conn is a sqlite3 connection to a file; this store is on a "
                "PostgreSQL server: use its methods"
            )
        if self._raw_conn is None and not self._closed:
            with self._raw_lock:
                if self._raw_conn is None and not self._closed:
                    self._raw_conn = _open_raw(self.db_path, self.read_only)
        return self._raw_conn

    @_conn.setter
    def _conn(self, value) -> None:
        self._raw_conn = value

    # -- Private helpers of the original that its callers use --------------

    #: The FTS5 query sanitizer search applies (``api.md`` §7).
    _sanitize_fts5_query = staticmethod(_native.sanitize_fts5_query)
    #: Whether a text holds a character search routes as CJK (``api.md`` §8.4).
    _contains_cjk = staticmethod(_native.contains_cjk)

    # -- Hand-written methods -------------------------------------------------

    def close(self) -> None:
        """Checkpoints and closes the store; a second ``close()`` does nothing.

        Any other call afterwards raises ``AttributeError``, as the
        original's (its connection is gone).
        """
        with self._lock, self._raw_lock:
            raw, self._raw_conn = self._raw_conn, None
            self._closed = True
        if raw is not None:
            try:
                raw.close()
            except sqlite3.Error:
                pass
        self._native.call("close", {})

    def set_meta(self, key: str, value: str, *, cursor=None) -> None:
        """Writes ``value`` under ``key`` in ``state_meta``.

        With ``cursor`` (a ``sqlite3.Cursor``, e.g. of ``db._conn`` inside
        the caller's own transaction) the upsert is issued on that cursor, as
        the original does; otherwise the store writes it.
        """
        if cursor is not None:
            cursor.execute(
                "INSERT INTO state_meta (key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
            return None
        return self._native.call("set_meta", {"key": key, "value": value})

    def optimize_fts_storage(self, *, progress_cb=None, vacuum: bool = True):
        """Converts the FTS indexes to the v23 storage layout (resumable).

        ``progress_cb`` receives the original's progress reports
        (``{"phase", "percent", "indexed", "total"}``), called from the
        calling thread. If it raises, no further reports are made and its
        exception is raised once the run has ended.
        """
        return self._native.optimize_fts_storage(bool(vacuum), progress_cb)


def _default_db_path() -> Path:
    # Read at each open, so that a test or a caller that sets the package's
    # ``DEFAULT_DB_PATH`` (as the original's is set) is obeyed.
    return Path(sys.modules[__package__].DEFAULT_DB_PATH)


def _is_server_url(location) -> bool:
    """Whether ``location`` names a PostgreSQL store rather than a file."""
    return isinstance(location, str) and location.startswith(("postgres://", "postgresql://"))


def _open_raw(path: Path, read_only: bool) -> sqlite3.Connection:
    if read_only:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro",
            uri=True,
            check_same_thread=False,
            timeout=1.0,
            isolation_level=None,
        )
    else:
        conn = sqlite3.connect(
            str(path), check_same_thread=False, timeout=1.0, isolation_level=None
        )
        conn.execute("PRAGMA foreign_keys=ON")
        # Checkpoints are the store's: this connection's SQLite cannot see the
        # store's readers (another library in the process), so it must never
        # copy the log back under them.
        conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.row_factory = sqlite3.Row
    return conn


_methods.install_methods(SessionDB, skip=_HAND_WRITTEN)

# The hand-written methods show the original's signatures too.
for _name, _parameters, _is_static in _native.SIGNATURES:
    if _name in _HAND_WRITTEN:
        getattr(SessionDB, _name).__signature__ = _methods.signature_of(_name, _parameters)
