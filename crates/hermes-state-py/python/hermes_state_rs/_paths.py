"""Where the store lives by default (the library's rule, ``schema-v23.md`` §1)."""

from __future__ import annotations

import os
from pathlib import Path


def get_hermes_home() -> Path:
    """The Hermes home: ``$HERMES_HOME`` when set (trimmed, non-empty), else ``~/.hermes``."""
    value = os.environ.get("HERMES_HOME", "").strip()
    if value:
        return Path(value)
    return Path.home() / ".hermes"
