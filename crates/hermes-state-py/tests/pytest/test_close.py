"""close(), and what a closed SessionDB does (api.md §1, §14)."""

import sqlite3
import threading

import pytest

from hermes_state_rs import SessionDB


def test_close_is_idempotent_and_later_calls_are_attribute_errors(db_path):
    db = SessionDB(db_path)
    db.create_session("s", "cli")
    db.close()
    db.close()
    with pytest.raises(AttributeError):
        db.get_session("s")
    with pytest.raises(AttributeError):
        db.create_session("t", "cli")
    assert db._conn is None


def test_a_new_session_db_on_the_same_file_sees_everything(db_path):
    db = SessionDB(db_path)
    db.create_session("s", "cli")
    db.append_message("s", "user", "kept")
    db.close()
    again = SessionDB(db_path)
    try:
        assert again.get_messages("s")[0]["content"] == "kept"
    finally:
        again.close()


def test_close_checkpoints_the_wal_away(db_path):
    db = SessionDB(db_path)
    db.create_session("s", "cli")
    for i in range(20):
        db.append_message("s", "user", f"m{i}")
    _ = db._conn  # the raw connection is closed first, so the checkpoint can finish
    db.close()
    wal = db_path.with_name(db_path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_close_while_other_threads_call_raises_no_panic(db_path):
    db = SessionDB(db_path)
    db.create_session("s", "cli")
    failures = []
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            try:
                db.append_message("s", "user", "x")
            except AttributeError:
                return  # closed: the original's error
            except BaseException as exc:  # noqa: BLE001 - anything else is a bug
                failures.append(exc)
                return

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for thread in threads:
        thread.start()
    db.close()
    stop.set()
    for thread in threads:
        thread.join(10)
    assert failures == []
    assert not any(thread.is_alive() for thread in threads)
    check = sqlite3.connect(db_path)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    check.close()
