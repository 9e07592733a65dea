"""hermes_state_rs: the Hermes session store (``state.db``) from Python.

A drop-in for the agent's ``hermes_state`` module: ``SessionDB`` has every
method of the original's, with its signatures, answers and exceptions, and
is backed by the hermes-state Rust library (schema version 23).

To use it in place of the original, either import it under that name::

    import hermes_state_rs as hermes_state

or, before anything imports ``hermes_state``, let it stand in for the
module everywhere in the process::

    import hermes_state_rs
    hermes_state_rs.install()   # sys.modules["hermes_state"] is now this package

See ``docs/PYTHON.md`` for threads, ``db._conn``, errors and differences.
"""

from __future__ import annotations

import sys

from . import _native
from ._async import AsyncSessionDB
from ._init_error import format_session_db_unavailable, get_last_init_error
from ._init_error import set_last_init_error as _set_last_init_error
from ._paths import get_hermes_home
from ._session_db import SessionDB
from ._sqlite_helpers import (  # noqa: F401 - the two sets: compatibility names
    _wal_fallback_warned_paths,
    _wal_reset_bug_warned_paths,
    apply_wal_with_fallback,
    is_sqlite_wal_reset_vulnerable,
    sqlite_source_id,
)

#: The schema version of the files this store writes.
SCHEMA_VERSION: int = _native.SCHEMA_VERSION
#: The FTS storage layout version (``state_meta.fts_storage_version``).
FTS_STORAGE_VERSION: int = _native.FTS_STORAGE_VERSION
#: Search queries are cut to this many characters.
MAX_FTS5_QUERY_CHARS: int = _native.MAX_FTS5_QUERY_CHARS
#: The ``state_meta`` key that marks the CJK index as needing a rebuild.
FTS_CJK_STALE_KEY: str = _native.FTS_CJK_STALE_KEY
#: The main schema script of a v23 store (its tables and their indexes).
SCHEMA_SQL: str = _native.SCHEMA_SQL
#: The default store, ``$HERMES_HOME/state.db`` (else ``~/.hermes/state.db``),
#: read when this module is imported, as the original's. Assign to it to
#: change where ``SessionDB()`` without a path opens.
DEFAULT_DB_PATH = get_hermes_home() / "state.db"


def workspace_key(row) -> str | None:
    """A session's workspace: its git repository root when known, else its
    working directory; ``None`` for a session without either."""
    for column in ("git_repo_root", "cwd"):
        value = (row.get(column) or "").strip()
        if value:
            return value
    return None


def install() -> None:
    """Makes ``import hermes_state`` give this package, for the whole process.

    Call it before the agent's modules import ``hermes_state``; a module that
    already holds the original keeps it.
    """
    sys.modules["hermes_state"] = sys.modules[__name__]


__all__ = [
    "AsyncSessionDB",
    "DEFAULT_DB_PATH",
    "FTS_CJK_STALE_KEY",
    "FTS_STORAGE_VERSION",
    "MAX_FTS5_QUERY_CHARS",
    "SCHEMA_SQL",
    "SCHEMA_VERSION",
    "apply_wal_with_fallback",
    "SessionDB",
    "format_session_db_unavailable",
    "get_hermes_home",
    "get_last_init_error",
    "install",
    "is_sqlite_wal_reset_vulnerable",
    "sqlite_source_id",
    "workspace_key",
]
