"""The original's methods, each a real function with the original's signature.

The Rust side knows every public method of the original ``SessionDB`` by
name and its parameter list (``_native.SIGNATURES``, from the library's
``hermes_state::by_name``). Here each one becomes a plain Python function on
the class, so that ``help()``, ``inspect.signature``, ``mock.patch.object``
and ``create_autospec`` see what they see on the original.

A generated method passes on only the arguments its caller gave: an absent
argument is left out, and the library applies the original's default. So
the defaults are written once, in Rust, and the signature shown here (with
the original's defaults, for introspection) is only documentation. The
function's own parameter defaults are a private sentinel: Python itself
checks the call (missing or unexpected arguments are its own ``TypeError``)
at the cost of one ``def`` call, with no ``Signature.bind`` per call.
"""

from __future__ import annotations

import inspect
import os

from . import _native

#: The original's static methods, by name: they need no store, so the
#: extension offers them as plain functions.
STATIC_FUNCTIONS = {"sanitize_title": _native.sanitize_title}

#: Methods whose answer the original returns as a tuple (JSON has only
#: arrays, so the library answers a list).
TUPLE_ANSWERS = frozenset({"get_resume_conversations"})

#: Parameters that take a path (``sessions_dir``): an ``os.PathLike`` is
#: passed on as its text, which is what the library reads.
_PATH_PARAMETERS = frozenset({"sessions_dir"})


class _Missing:
    """The default of every optional parameter: "the caller gave nothing"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<default>"


MISSING = _Missing()


def signature_of(name: str, parameters: str, is_static: bool = False) -> inspect.Signature:
    """The signature a parameter list describes (``self`` first, unless static)."""
    head = parameters if is_static else ", ".join(p for p in ("self", parameters) if p)
    namespace: dict = {}
    exec(f"def {name}({head}): pass", namespace)  # noqa: S102 - text from the extension
    return inspect.signature(namespace[name])


def path_argument(value):
    """A path argument as the library reads it: text, or ``None``."""
    if value is None or isinstance(value, str):
        return value
    return os.fspath(value)


def _source_of(name: str, signature: inspect.Signature, is_static: bool) -> str:
    """The text of the fast function behind one method."""
    params, body = [], []
    keyword_only_started = False
    for parameter in signature.parameters.values():
        pname = parameter.name
        if pname == "self":
            params.append("self")
            continue
        if parameter.kind is parameter.VAR_KEYWORD:
            params.append(f"**{pname}")
            body.append(f"    _kw.update({pname})")
            continue
        if parameter.kind is parameter.VAR_POSITIONAL:
            raise ValueError(f"{name}: *{pname} is not supported")
        if parameter.kind is parameter.KEYWORD_ONLY and not keyword_only_started:
            params.append("*")
            keyword_only_started = True
        value = f"_path({pname})" if pname in _PATH_PARAMETERS else pname
        if parameter.default is parameter.empty:
            params.append(pname)
            body.append(f"    _kw[{pname!r}] = {value}")
        else:
            params.append(f"{pname}=_MISSING")
            body.append(f"    if {pname} is not _MISSING: _kw[{pname!r}] = {value}")
    lines = [f"def {name}({', '.join(params)}):", "    _kw = {}"]
    lines += body
    if is_static:
        lines.append("    return _static(**_kw)")
    elif name in TUPLE_ANSWERS:
        lines.append(f"    return tuple(self._native.call({name!r}, _kw))")
    else:
        lines.append(f"    return self._native.call({name!r}, _kw)")
    return "\n".join(lines)


def make_method(name: str, parameters: str, is_static: bool, owner: str = "SessionDB"):
    """One method of the original: a function (a ``staticmethod`` for static ones)."""
    signature = signature_of(name, parameters, is_static)
    namespace = {
        "_MISSING": MISSING,
        "_path": path_argument,
        "_static": STATIC_FUNCTIONS.get(name, _no_static_function(name)),
    }
    exec(_source_of(name, signature, is_static), namespace)  # noqa: S102 - built from the signature
    function = namespace[name]
    function.__signature__ = signature
    function.__qualname__ = f"{owner}.{name}"
    function.__module__ = "hermes_state_rs"
    function.__doc__ = (
        f"The original ``SessionDB.{name}``, answered by the hermes-state library.\n\n"
        "Arguments left out take the original's defaults (shown in the signature)."
    )
    if is_static:
        return staticmethod(function)
    return function


def _no_static_function(name: str):
    def missing(**_kw):
        raise AttributeError(f"type object 'SessionDB' has no attribute {name!r} in this build")

    return missing


def install_methods(cls, skip=frozenset()) -> None:
    """Adds every method of ``_native.SIGNATURES`` to ``cls`` (except ``skip``)."""
    for name, parameters, is_static in _native.SIGNATURES:
        if name in skip:
            continue
        setattr(cls, name, make_method(name, parameters, is_static, cls.__name__))
