"""One MCP session with ``fexpr serve`` through the official Python ``mcp`` SDK, 1.x or 2.x
(whichever this interpreter has): list the tools, make the calls asked, close. Run by
``python/tests/test_mcp.py`` and ``tests/mcp_serve.rs`` with the SDK venvs that
``scripts/ci-mcp.sh`` makes (``mcp-servers/.venv`` has 2.x, ``mcp-servers/.venv-mcp1`` 1.x).

    python mcp_sdk_client.py CALLS stdio COMMAND [ARG...]
    python mcp_sdk_client.py CALLS http URL

CALLS is a JSON list of ``{"name": ..., "arguments": {...}}``. Prints one JSON object: the SDK's
version, the tools' names, each call's ``isError``, text and ``structuredContent``, and every
warning the SDK logged (a failed session termination, say)."""

import asyncio
import importlib.metadata
import json
import logging
import sys

import mcp

WARNINGS: list[str] = []


class Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        WARNINGS.append(f"{record.name}: {record.getMessage()}")


def field(obj, v1: str, v2: str):
    """A field by its 1.x name, or its 2.x (snake_case) one."""
    return getattr(obj, v1) if hasattr(obj, v1) else getattr(obj, v2)


def result(called) -> dict:
    texts = [block.text for block in called.content if getattr(block, "type", None) == "text"]
    return {
        "isError": bool(field(called, "isError", "is_error")),
        "text": "\n".join(texts),
        "structuredContent": field(called, "structuredContent", "structured_content"),
    }


async def with_session(session, calls: list) -> dict:
    listed = await session.list_tools()
    answers = [result(await session.call_tool(c["name"], c["arguments"])) for c in calls]
    return {"tools": [t.name for t in listed.tools], "calls": answers}


async def v1(calls: list, how: str, target: list) -> dict:
    from mcp import ClientSession

    if how == "stdio":
        from mcp.client.stdio import stdio_client

        params = mcp.StdioServerParameters(command=target[0], args=target[1:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await with_session(session, calls)
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(target[0]) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await with_session(session, calls)


async def v2(calls: list, how: str, target: list) -> dict:
    if how == "stdio":
        server = mcp.StdioServerParameters(command=target[0], args=target[1:])
    else:
        server = target[0]
    async with mcp.Client(server) as client:
        return await with_session(client, calls)


def main() -> None:
    calls = json.loads(sys.argv[1])
    how, target = sys.argv[2], sys.argv[3:]
    logging.getLogger().addHandler(Collect(level=logging.WARNING))
    version = importlib.metadata.version("mcp")
    run = v1 if version.startswith("1.") else v2
    out = asyncio.run(run(calls, how, target))
    out["version"] = version
    out["warnings"] = WARNINGS
    print(json.dumps(out))


if __name__ == "__main__":
    main()
