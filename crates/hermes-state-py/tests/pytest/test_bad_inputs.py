"""No argument a caller can pass makes the binding panic or abort.

Every method is called with odd values in every parameter. Whatever it
answers, it must be an ordinary answer or an ordinary exception: a Rust
panic would surface as sqlite3.InternalError (the binding's guard), and an
abort would end this process (and the test run) outright.
"""

import inspect
import sqlite3

import pytest

from hermes_state_rs import SessionDB, _native

ODD_VALUES = [
    None, "", "s", "x" * 5000, "\x00", "😀 \ud800", 0, -1, 2**63 - 1, -(2**63), 1.5, -0.0,
    1e308, True, [], ["s", None, 3], {}, {"role": "user", "content": {"nested": [1]}},
    ("a", "b"),
]

METHODS = sorted(name for name, _, _ in _native.SIGNATURES if name != "close")


def _parameters(name):
    signature = inspect.signature(getattr(SessionDB, name))
    return [p for p in signature.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def _call(db, name, kwargs):
    try:
        getattr(db, name)(**kwargs)
    except sqlite3.InternalError as exc:  # the panic guard fired
        pytest.fail(f"{name}({kwargs!r}) panicked: {exc}")
    except Exception:  # noqa: BLE001 - any ordinary exception is an answer
        pass


@pytest.mark.parametrize("name", METHODS)
def test_odd_values_in_every_parameter_give_answers_or_exceptions(db, name):
    db.create_session("s", "cli")
    db.append_message("s", "user", "hello")
    parameters = _parameters(name)
    required = [p.name for p in parameters if p.default is p.empty]
    for value in ODD_VALUES:
        _call(db, name, {p: value for p in required})
        for parameter in parameters:
            if parameter.default is not parameter.empty:
                base = {p: "s" for p in required}
                base[parameter.name] = value
                _call(db, name, base)
    # The store still works afterwards.
    db.create_session("after", "cli")
    assert db.get_session("after")["id"] == "after"
