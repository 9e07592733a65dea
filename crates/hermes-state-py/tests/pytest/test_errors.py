"""Exceptions: the original's classes (sqlite3's own), texts where it gives them."""

import sqlite3

import pytest

import hermes_state_rs
from hermes_state_rs import SessionDB, _native


def test_constraint_failures_are_sqlite3_integrity_errors(db):
    with pytest.raises(sqlite3.IntegrityError, match="^FOREIGN KEY constraint failed$"):
        db.create_session("child", "cli", parent_session_id="missing")
    assert db.get_session("child") is None
    with pytest.raises(sqlite3.IntegrityError, match="^NOT NULL constraint failed: sessions.source$"):
        db.create_session("s", None)
    # A subclass of sqlite3.Error and DatabaseError, as the original's.
    with pytest.raises(sqlite3.DatabaseError):
        db.append_message("missing", "user", "x")


def test_an_unknown_keyword_is_a_type_error_and_writes_nothing(db):
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        db.create_session("s", "cli", colour="red")
    assert db.get_session("s") is None


def test_a_write_on_a_read_only_store_is_an_operational_error(db, db_path):
    db.create_session("s", "cli")
    ro = SessionDB(db_path, read_only=True)
    try:
        assert ro.get_session("s")["id"] == "s"
        with pytest.raises(sqlite3.OperationalError):
            ro.create_session("t", "cli")
    finally:
        ro.close()


def test_a_read_only_open_of_a_missing_file_is_sqlites_error(tmp_path):
    with pytest.raises(sqlite3.OperationalError, match="^unable to open database file$"):
        SessionDB(tmp_path / "nothing.db", read_only=True)


def test_a_file_that_is_not_a_database_is_a_database_error(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        SessionDB(path)


def test_a_lock_held_too_long_is_database_is_locked(db, db_path, hold_write_lock):
    db.create_session("s", "cli")
    release = hold_write_lock(db_path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            db.append_message("s", "user", "blocked")
    finally:
        release()
    assert db.append_message("s", "user", "free") > 0


def test_values_without_a_json_form_are_refused_before_the_store(db):
    with pytest.raises(OverflowError):
        db.get_messages("s", limit=2**64)
    with pytest.raises(ValueError, match="not JSON compliant: nan"):
        db.create_session("s", "cli", model_config={"x": float("nan")})
    with pytest.raises(TypeError, match="^Object of type bytes is not JSON serializable$"):
        db.append_message("s", "user", b"raw")
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None, not tuple"):
        db.create_session("s", "cli", model_config={(1, 2): "x"})
    deep = []
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(RecursionError):
        db.create_session("s", "cli", model_config={"deep": deep})
    looped = []
    looped.append(looped)
    with pytest.raises(RecursionError):
        db.create_session("s", "cli", model_config=looped)
    assert db.get_session("s") is None


def test_dict_keys_are_written_as_json_dumps_writes_them(db):
    db.create_session("s", "cli", model_config={1: "a", 2.5: "b", False: "c", None: "d"})
    raw = db._conn.execute("SELECT model_config FROM sessions").fetchone()[0]
    assert raw == '{"1": "a", "2.5": "b", "false": "c", "null": "d"}'


def test_str_and_int_subclasses_count_as_their_base_type(db):
    import enum

    class Source(str, enum.Enum):
        CLI = "cli"

    class Count(enum.IntEnum):
        TEN = 10

    db.create_session("s", Source.CLI)
    assert db.get_session("s")["source"] == "cli"
    db.update_token_counts("s", input_tokens=Count.TEN)
    assert db.get_session("s")["input_tokens"] == 10


def test_lone_surrogates_are_scrubbed_not_refused(db):
    db.create_session("s", "cli")
    db.append_message("s", "user", "bad \ud800 text")
    assert db.get_messages("s")[0]["content"] == "bad \ufffd text"


def test_a_panic_is_an_ordinary_exception_and_the_process_lives_on(db):
    with pytest.raises(sqlite3.InternalError, match="deliberate panic"):
        _native._panic_for_tests()
    # Exception, not BaseException: `except Exception` in the gateway catches it.
    assert issubclass(sqlite3.InternalError, Exception)
    db.create_session("after", "cli")
    assert db.get_session("after")["id"] == "after"


def test_unknown_names_are_attribute_errors(db):
    with pytest.raises(AttributeError):
        db._no_such_private_helper()
    with pytest.raises(AttributeError):
        hermes_state_rs._native.NativeStore(str(db.db_path)).call("no_such_method", {})
