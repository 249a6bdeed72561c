"""The asyncio side of the runtime: the loop that runs async tools for the sync methods, and the
wrapper every async tool runs in."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any, Awaitable

_lock = threading.Lock()
_loop: "asyncio.AbstractEventLoop | None" = None

# How deep the fexpr call running in this context is nested: a tool that calls its manager again
# runs one level deeper (read by the binding when a call starts; see SECURITY.md).
depth: "contextvars.ContextVar[int]" = contextvars.ContextVar("fexpr_depth", default=0)

# The session object of the request whose tool runs in this context (``run(session=...)``);
# set by the binding around each tool call.
session: "contextvars.ContextVar[Any]" = contextvars.ContextVar("fexpr_session", default=None)


def current_session() -> Any:
    """Inside a tool: the ``session`` the running request was given (``ToolManager.run(...,
    session=...)``, also ``arun`` and ``stream``; a request a tool makes without ``session=``
    runs in that tool's session); ``None`` when it was given none, or outside a tool. A tool reads the caller's per-conversation state here, out of the model's sight
    (it is no parameter of the tool)::

        >>> from fexpr import ToolManager, current_session
        >>> def whoami() -> str:
        ...     return current_session()["user"]
        >>> ToolManager(tools=[whoami]).run("whoami()", session={"user": "ada"}).outputs[0].output
        'ada'
    """
    return session.get()


class Escaped(Exception):
    """Carries a ``BaseException`` that is not an ``Exception`` (``SystemExit``,
    ``KeyboardInterrupt``) out of an async tool: raised as itself inside an asyncio task it would
    stop the loop. The binding raises ``exception`` in the caller."""

    def __init__(self, exception: BaseException) -> None:
        super().__init__(exception)
        self.exception = exception


async def guard(awaitable: Awaitable[Any], level: int, given: Any = None) -> Any:
    """Await a tool's awaitable at nesting ``level`` in session ``given``, with ``SystemExit``
    and the like wrapped in ``Escaped`` (cancellation stays cancellation)."""
    depth.set(level)
    session.set(given)
    try:
        return await awaitable
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as e:
        raise Escaped(e) from None


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    while True:
        try:
            loop.run_forever()
            return
        except BaseException:  # noqa: BLE001 - a callback's SystemExit must not end the loop
            continue


def background_loop() -> asyncio.AbstractEventLoop:
    """A loop running forever on a daemon thread, started on first use. The sync methods run
    async tools there (the calling thread is blocked meanwhile, so its own loop, if it has one,
    cannot); the ``*_async`` methods run them on the caller's loop instead. A ``SystemExit`` or
    ``KeyboardInterrupt`` escaping one of its callbacks does not end it."""
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=_serve, args=(loop,), name="fexpr-asyncio", daemon=True)
            thread.start()
            _loop = loop
        return _loop
