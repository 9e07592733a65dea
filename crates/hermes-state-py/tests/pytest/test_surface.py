"""The class as the agent and its tests see it: names, signatures, module names."""

import inspect
import sys
from unittest import mock

import pytest

import hermes_state_rs
from hermes_state_rs import SessionDB, _native

SIGNATURES = {name: (parameters, is_static) for name, parameters, is_static in _native.SIGNATURES}


def test_every_method_of_the_original_is_there():
    # 119 public methods at schema 23 (the library's by_name::SIGNATURES).
    assert len(SIGNATURES) == 119
    for name in SIGNATURES:
        assert callable(getattr(SessionDB, name)), name


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_each_method_shows_the_originals_parameters(name):
    parameters, is_static = SIGNATURES[name]
    shown = inspect.signature(getattr(SessionDB, name))
    expected = inspect.signature(eval(f"lambda {parameters}: None"))  # noqa: S307
    names = list(shown.parameters)
    if not is_static:
        assert names[0] == "self"
        names = names[1:]
    assert names == list(expected.parameters)
    for pname in expected.parameters:
        want, got = expected.parameters[pname], shown.parameters[pname]
        assert (got.kind, got.default) == (want.kind, want.default), pname


def test_static_methods_are_static():
    assert isinstance(inspect.getattr_static(SessionDB, "sanitize_title"), staticmethod)
    assert SIGNATURES["sanitize_title"][1] is True


def test_positional_and_keyword_calls_are_checked_by_python(db):
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'source'"):
        db.create_session("s")
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        db.get_session("s", nope=1)
    with pytest.raises(TypeError):  # keyword-only in the original
        db.save_gateway_routing_entry("k", "{}", "scope")
    db.create_session("s", "cli")
    assert db.get_session(session_id="s")["id"] == "s"


def test_help_shows_the_signature():
    text = SessionDB.get_messages.__doc__ + str(inspect.signature(SessionDB.get_messages))
    assert "include_inactive=False" in text
    assert SessionDB.get_messages.__qualname__ == "SessionDB.get_messages"


def test_mock_patch_object_replaces_a_method(db):
    with mock.patch.object(db, "get_session", return_value={"id": "fake"}) as patched:
        assert db.get_session("x") == {"id": "fake"}
    patched.assert_called_once_with("x")
    with mock.patch.object(SessionDB, "message_count", autospec=True, return_value=42):
        assert db.message_count() == 42
    assert db.message_count() == 0


def test_module_level_names():
    assert hermes_state_rs.SCHEMA_VERSION == 23
    assert hermes_state_rs.DEFAULT_DB_PATH.name == "state.db"
    assert hermes_state_rs.workspace_key({"git_repo_root": " /r ", "cwd": "/c"}) == "/r"
    assert hermes_state_rs.workspace_key({"git_repo_root": "", "cwd": "/c"}) == "/c"
    assert hermes_state_rs.workspace_key({}) is None


def test_default_path_follows_the_modules_default_db_path(tmp_path, monkeypatch):
    monkeypatch.setattr(hermes_state_rs, "DEFAULT_DB_PATH", tmp_path / "home" / "state.db")
    db = SessionDB()
    try:
        assert db.db_path == tmp_path / "home" / "state.db"
        db.create_session("s", "cli")
        assert (tmp_path / "home" / "state.db").exists()
    finally:
        db.close()


def test_default_path_is_read_from_hermes_home_at_import(tmp_path):
    import subprocess

    code = "import hermes_state_rs as h; print(h.DEFAULT_DB_PATH)"
    env = {"HERMES_HOME": f"  {tmp_path}  ", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == str(tmp_path / "state.db")


def test_install_makes_it_the_hermes_state_module(monkeypatch):
    monkeypatch.delitem(sys.modules, "hermes_state", raising=False)
    hermes_state_rs.install()
    import hermes_state

    assert hermes_state is hermes_state_rs
    assert hermes_state.SessionDB is SessionDB


def test_str_and_path_both_open_a_store(tmp_path):
    for path in (str(tmp_path / "a.db"), tmp_path / "b.db"):
        db = SessionDB(path)
        db.create_session("s", "cli")
        assert db.get_session("s")["id"] == "s"
        db.close()


def test_async_session_db_runs_calls_off_the_event_loop(db):
    import asyncio

    adb = hermes_state_rs.AsyncSessionDB(db)

    async def scenario():
        await adb.create_session("s", "cli")
        return await adb.get_session("s")

    assert asyncio.run(scenario())["id"] == "s"
    assert adb.db_path == db.db_path


def test_the_last_init_error_is_recorded_on_a_failed_open(tmp_path):
    hermes_state_rs._set_last_init_error(None)
    assert hermes_state_rs.format_session_db_unavailable() == "Session database not available."
    with pytest.raises(Exception):
        SessionDB(tmp_path / "missing.db", read_only=True)
    assert "unable to open database file" in hermes_state_rs.get_last_init_error()
    assert hermes_state_rs.format_session_db_unavailable("No DB").startswith("No DB: ")
    hermes_state_rs._set_last_init_error(None)
