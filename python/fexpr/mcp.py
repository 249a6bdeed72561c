"""Serve a ``ToolManager``'s Python tools as an MCP server.

Any MCP client (a desktop assistant, an IDE agent, an agent framework) can then call them,
through fexpr: every call is checked against the tool's schema before it runs (repairs listed in
the result's ``_meta.fexpr.repairs``, a call that does not fit refused as an MCP tool error with
fexpr's message and hint), under the manager's ``Limits``, with a call id and a bounded
observation, and with ``sandboxed=True`` evaluated in the wasm guest. One more tool,
``run_calls``, runs model text (a call, a list of calls, nested calls) in one round trip::

    # server.py: {"mcpServers": {"mine": {"command": "python", "args": ["server.py"]}}}
    from fexpr import ToolManager
    import fexpr.mcp

    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    fexpr.mcp.serve(ToolManager(tools=[add]))            # stdio, until the client leaves
    # fexpr.mcp.serve(manager, listen="127.0.0.1:8000")  # streamable HTTP at /mcp

The server is the Rust one of ``fexpr serve`` (``fexpr::mcp::serve``); see the README's
"fexpr as an MCP server" and SECURITY.md's "The MCP gateway".
"""

from __future__ import annotations

from ._fexpr import serve_mcp as _serve_mcp
from ._manager import ToolManager

__all__ = ["serve"]


def serve(
    manager: ToolManager,
    *,
    listen: str | None = None,
    only_run_calls: bool = False,
    sandboxed: bool = False,
    strict: bool = False,
    max_sessions: int = 1000,
    session_idle: float = 300.0,
) -> None:
    """Serve ``manager``'s tools as an MCP server; blocks until the client closes stdin.

    Args:
        manager: the tools (and context) to serve.
        listen: ``"HOST:PORT"`` to serve streamable HTTP at ``http://HOST:PORT/mcp`` (until
            Ctrl-C) instead of stdio. Only loopback ``Host`` headers and no ``Origin`` (no web
            page) are accepted. Once listening, ``fexpr: serving MCP at URL`` is written to
            ``sys.stderr`` with the address as bound (port ``0`` picks a free one).
        only_run_calls: list only ``run_calls`` and ``search_tools``, not each tool (for very
            large tool sets).
        sandboxed: evaluate every call's arguments inside the wasm sandbox.
        strict: no schema-aware repairs: a call that does not fit exactly is refused.
        max_sessions: with ``listen``, the most HTTP sessions live at once; an ``initialize``
            beyond it is refused (HTTP 503) until one ends (as ``fexpr serve --max-sessions``).
        session_idle: with ``listen``, seconds a session may stay without a message before it
            is closed and its memory returned (as ``fexpr serve --session-idle``).

    Raises:
        ValueError: ``listen`` is not an address, ``session_idle`` is not a non-negative
            number of seconds, or a tool is named ``run_calls`` or ``search_tools``.
        RuntimeError: the server could not start (the address is in use).
        KeyboardInterrupt: Ctrl-C while serving.
    """
    _serve_mcp(
        manager,
        listen=listen,
        only_run_calls=only_run_calls,
        sandboxed=sandboxed,
        strict=strict,
        max_sessions=max_sessions,
        session_idle=session_idle,
    )
