"""The asyncio loop that runs async tools for the sync methods."""

from __future__ import annotations

import asyncio
import threading

_lock = threading.Lock()
_loop: "asyncio.AbstractEventLoop | None" = None


def background_loop() -> asyncio.AbstractEventLoop:
    """A loop running forever on a daemon thread, started on first use. The sync methods run
    async tools there (the calling thread is blocked meanwhile, so its own loop, if it has one,
    cannot); the ``*_async`` methods run them on the caller's loop instead."""
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="fexpr-asyncio", daemon=True)
            thread.start()
            _loop = loop
        return _loop
