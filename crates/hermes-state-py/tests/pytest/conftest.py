"""Fixtures of the binding's own suite: a fresh store per test."""

import pytest

import hermes_state_rs


@pytest.fixture()
def db_path(tmp_path):
    return tmp_path / "state.db"


@pytest.fixture()
def db(db_path):
    store = hermes_state_rs.SessionDB(db_path)
    yield store
    store.close()


@pytest.fixture()
def hold_write_lock():
    """Starts another process that holds the store's write lock until the
    returned function is called. (SQLite's locks are per process: a second
    SQLite library in this process would not be seen by the extension's.)"""
    import subprocess
    import sys

    holders = []

    def hold(db_path):
        code = (
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN IMMEDIATE'); print('held', flush=True); sys.stdin.read()"
        )
        holder = subprocess.Popen([sys.executable, "-c", code, str(db_path)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "held"
        holders.append(holder)
        return lambda: holder.communicate("")

    yield hold
    for holder in holders:
        if holder.poll() is None:
            holder.communicate("")
