"""The same ``SessionDB`` on a PostgreSQL server: a ``postgresql://`` URL as
``db_path`` opens the store there, behind the same contract as a file.

Runs when ``HERMES_STATE_TEST_PG_URL`` names a server (CI starts one); each
test gets a schema of its own on it."""

import os
import sqlite3
import uuid

import pytest

import hermes_state_rs

ADMIN_URL = os.environ.get("HERMES_STATE_TEST_PG_URL")

pytestmark = pytest.mark.skipif(
    not ADMIN_URL, reason="HERMES_STATE_TEST_PG_URL is not set: no PostgreSQL server to test on"
)


@pytest.fixture()
def url():
    schema = "pytest_" + uuid.uuid4().hex[:12]
    joiner = "&" if "?" in ADMIN_URL else "?"
    return f"{ADMIN_URL}{joiner}schema={schema}"


def test_a_store_on_a_server_answers_as_a_file(url):
    db = hermes_state_rs.SessionDB(url)
    assert db.db_path == url
    db.create_session("s1", "cli", model="m")
    db.append_message("s1", "user", content="the docker volume is full")
    db.append_message("s1", "assistant", content="prune old images")
    assert [m["content"] for m in db.get_messages("s1")] == [
        "the docker volume is full",
        "prune old images",
    ]
    assert db.message_count("s1") == 2
    hits = db.search_messages("docker")
    assert [hit["session_id"] for hit in hits] == ["s1"]
    assert db.set_session_title("s1", "Disk space") is True
    assert db.get_session_title("s1") == "Disk space"
    db.close()
    db.close()
    with pytest.raises(AttributeError):
        db.get_session("s1")


def test_two_handles_on_one_server_store_see_each_other(url):
    writer = hermes_state_rs.SessionDB(url)
    other = hermes_state_rs.SessionDB(url)
    writer.create_session("shared", "gateway")
    other.append_message("shared", "user", content="from the second host")
    assert [m["content"] for m in writer.get_messages("shared")] == ["from the second host"]
    reader = hermes_state_rs.SessionDB(url, read_only=True)
    assert reader.get_session("shared")["source"] == "gateway"
    with pytest.raises(sqlite3.Error):
        reader.create_session("nope", "cli")
    for db in (writer, other, reader):
        db.close()


def test_errors_are_the_originals_classes_on_a_server_too(url):
    db = hermes_state_rs.SessionDB(url)
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY constraint failed"):
        db.append_message("missing", "user", content="x")
    db.create_session("a", "cli")
    db.create_session("b", "cli")
    db.set_session_title("a", "Taken")
    with pytest.raises(ValueError, match="already in use"):
        db.set_session_title("b", "Taken")
    db.close()


def test_there_is_no_sqlite_connection_to_a_server(url):
    db = hermes_state_rs.SessionDB(url)
    with pytest.raises(AttributeError, match="PostgreSQL"):
        db._conn
    db.close()


def test_repr_never_shows_a_password(url):
    secret_url = url.replace("postgresql://postgres@", "postgresql://postgres:s3cr%2Fet@", 1)
    assert "s3cr" in secret_url
    db = hermes_state_rs.SessionDB.__new__(hermes_state_rs.SessionDB)
    db.db_path, db.read_only, db._closed = secret_url, False, True
    assert "s3cr" not in repr(db)
    assert "postgres" in repr(db)
