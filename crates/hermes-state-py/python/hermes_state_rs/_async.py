"""``AsyncSessionDB``: an ``await``-able door onto a ``SessionDB``."""

from __future__ import annotations

import asyncio


class AsyncSessionDB:
    """Every method of the wrapped ``SessionDB``, run in a worker thread.

    ``await adb.get_session(sid)`` runs ``db.get_session(sid)`` through
    ``asyncio.to_thread``, so the event loop never waits for the disk. The
    store releases the GIL while it works, so such calls really run beside
    the loop. Attributes that are not callable are returned as they are.
    """

    def __init__(self, db) -> None:
        self._db = db

    def __getattr__(self, name: str):
        attribute = getattr(self._db, name)
        if not callable(attribute):
            return attribute

        async def offloaded(*args, **kwargs):
            return await asyncio.to_thread(attribute, *args, **kwargs)

        offloaded.__name__ = name
        return offloaded
