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
