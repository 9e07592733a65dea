"""db._conn: the standard-library connection the original's callers use."""

import sqlite3

import pytest

from hermes_state_rs import SessionDB


def test_conn_is_a_stdlib_connection_opened_as_the_originals(db):
    conn = db._conn
    assert isinstance(conn, sqlite3.Connection)
    assert conn is db._conn  # one connection, opened once
    assert conn.isolation_level is None  # autocommit
    assert conn.row_factory is sqlite3.Row
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0  # the store's job


def test_rows_written_through_conn_are_seen_by_the_store(db):
    db.create_session("s", "cli")
    db._conn.execute(
        "INSERT INTO sessions (id, source, started_at, title) VALUES ('raw', 'cli', 5.0, 'Seeded')")
    db._conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) "
        "VALUES ('raw', 'user', 'seeded zebra text', 6.0)")
    assert db.get_session("raw")["title"] == "Seeded"
    assert db.resolve_session_by_title("Seeded") == "raw"
    assert [m["content"] for m in db.get_messages("raw")] == ["seeded zebra text"]
    assert [r["session_id"] for r in db.search_messages("zebra")] == ["raw"]


def test_what_the_store_writes_is_seen_through_conn(db):
    db.create_session("s", "cli")
    db.append_message("s", "user", "hello")
    row = db._conn.execute("SELECT role, content FROM messages").fetchone()
    assert (row["role"], row["content"]) == ("user", "hello")


def test_a_transaction_on_conn_and_the_store_take_turns(db):
    db.create_session("s", "cli")
    conn = db._conn
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE sessions SET title = 'in tx' WHERE id = 's'")
    conn.execute("COMMIT")
    assert db.get_session_title("s") == "in tx"
    db.set_session_title("s", "after")
    assert conn.execute("SELECT title FROM sessions").fetchone()[0] == "after"


def test_conn_of_a_read_only_store_refuses_writes(db, db_path):
    db.create_session("s", "cli")
    ro = SessionDB(db_path, read_only=True)
    try:
        assert ro._conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            ro._conn.execute("DELETE FROM sessions")
    finally:
        ro.close()


def test_conn_can_be_replaced_as_tests_of_the_original_do(db):
    sentinel = object()
    db._conn = sentinel
    assert db._conn is sentinel
    db._conn = None
    assert isinstance(db._conn, sqlite3.Connection)  # opened again on use


def _cjk_objects(db):
    return db._conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE name LIKE 'messages_fts_cjk%'").fetchone()[0]


def test_a_store_created_from_python_has_no_cjk_index(db):
    # As the original's default installation: plain sqlite3 writers stay able to write.
    assert _cjk_objects(db) == 0


def test_hermes_cjk_fts_asks_for_the_cjk_index(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_CJK_FTS", "1")
    db = SessionDB(tmp_path / "cjk.db")
    try:
        assert _cjk_objects(db) > 0
        db.create_session("s", "cli")
        db.append_message("s", "user", "我们在大别山项目中")
        assert [r["id"] for r in db.search_messages("大别山")] == [1]
    finally:
        db.close()
    monkeypatch.delenv("HERMES_CJK_FTS")
    # Opened again without the variable: the index is kept and maintained.
    again = SessionDB(tmp_path / "cjk.db")
    try:
        again.append_message("s", "user", "大别山 again")
        assert _cjk_objects(again) > 0
        assert len(again.search_messages("大别山")) == 2
    finally:
        again.close()
