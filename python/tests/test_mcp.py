"""``fexpr.mcp.serve``: Python tools behind fexpr's MCP server, called by the official MCP
Inspector's CLI (``mcp-servers/node_modules``, installed by ``scripts/ci-mcp.sh``; the test
fails without it)."""

import json
import os
import pathlib
import queue
import subprocess
import sys
import threading

import pytest

import fexpr.mcp
from fexpr import ToolManager

ROOT = pathlib.Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / "mcp-servers" / "node_modules" / ".bin" / "mcp-inspector"

SERVER = """
import fexpr.mcp
from fexpr import ToolManager

def add(a: int, b: int) -> int:
    '''Add two numbers.'''
    return a + b

def shout(text: str) -> str:
    '''Upper-case a text.'''
    return text.upper()

fexpr.mcp.serve(ToolManager(tools=[add, shout]))
"""


def inspector(*method: str) -> dict:
    assert INSPECTOR.exists(), f"{INSPECTOR} is not installed: run scripts/ci-mcp.sh"
    out = subprocess.run(
        [str(INSPECTOR), "--cli", sys.executable, "-c", SERVER, *method],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=INSPECTOR.parents[2],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    first, _ = json.JSONDecoder().raw_decode(out.stdout.lstrip())
    return first


def test_python_tools_over_stdio():
    tools = {t["name"]: t for t in inspector("--method", "tools/list")["tools"]}
    assert set(tools) == {"add", "shout", "run_calls"}
    assert tools["add"]["inputSchema"]["required"] == ["a", "b"]

    call = ("--method", "tools/call", "--tool-name")
    assert inspector(*call, "add", "--tool-arg", "a=2", "b=3")["content"][0]["text"] == "5"

    refused = inspector(*call, "add", "--tool-arg", "a=2")
    assert refused["isError"] is True
    assert "missing 1 required argument: `b`" in refused["content"][0]["text"]

    both = inspector(
        *call, "run_calls", "--tool-arg", 'calls=[add(a=1, b=2), shout(text="hi")]'
    )
    outputs = [r["output"] for r in both["structuredContent"]["results"]]
    assert outputs == [3, "HI"]


def test_bad_arguments_are_errors():
    manager = ToolManager(tools=[])
    with pytest.raises(ValueError, match="not an address"):
        fexpr.mcp.serve(manager, listen="nowhere")
    with pytest.raises(ValueError, match="session_idle must be a number of seconds from 0 to 18446744073709551615, not -1.0"):
        fexpr.mcp.serve(manager, listen="127.0.0.1:0", session_idle=-1)


def serve_http(script: str, *args: str) -> tuple[subprocess.Popen, str]:
    """``script`` (which serves with ``listen`` from ``sys.argv[1]``) started on port 0, and the
    URL it says it serves at once it listens; its stderr is drained so it never blocks."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # Port 0, and the URL the server prints once it listens: a port picked beforehand could
    # be taken by another test, or answered by a TCP self-connect.
    served = subprocess.Popen(
        [sys.executable, "-c", script, "127.0.0.1:0", *args],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    urls: queue.Queue = queue.Queue()

    def drain() -> None:
        for line in served.stderr:
            if line.startswith("fexpr: serving MCP at "):
                urls.put(line.removeprefix("fexpr: serving MCP at ").strip())

    threading.Thread(target=drain, daemon=True).start()
    try:
        return served, urls.get(timeout=120)
    except queue.Empty:
        served.kill()
        served.wait()
        raise AssertionError(f"the server did not say where it listens ({served.poll()=})") from None


def post_initialize(url: str) -> int:
    import urllib.error
    import urllib.request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            reply.read()
            return reply.status
    except urllib.error.HTTPError as e:
        return e.code


def test_http_sessions_are_capped():
    script = """
import sys
import fexpr.mcp
from fexpr import ToolManager

def add(a: int, b: int) -> int:
    return a + b

fexpr.mcp.serve(ToolManager(tools=[add]), listen=sys.argv[1], max_sessions=1, session_idle=60)
"""
    served, url = serve_http(script)
    try:
        assert post_initialize(url) == 200
        # The one session is live: a second is refused until it ends.
        assert post_initialize(url) == 503
    finally:
        served.kill()
        served.wait()


# The official Python `mcp` SDK, 1.x and 2.x (each in its own venv, made by scripts/ci-mcp.sh),
# as clients of `fexpr.mcp.serve` over stdio and streamable HTTP.
SDKS = {
    "1.x": ROOT / "mcp-servers" / ".venv-mcp1" / "bin" / "python",
    "2.x": ROOT / "mcp-servers" / ".venv" / "bin" / "python",
}
SDK_CLIENT = pathlib.Path(__file__).with_name("mcp_sdk_client.py")

NAMED_SERVER = """
import sys
import threading
import fexpr.mcp
from fexpr import FunctionTool, ToolManager

def weather(city: str) -> str:
    '''The weather in a city.'''
    return f"sunny in {city}"

def document(n: int) -> str:
    '''A document of n characters.'''
    return "".join(chr(97 + i % 26) for i in range(n))

tools = [FunctionTool(weather, name="get-current-weather"), FunctionTool(document, name="docs.get")]
listen = sys.argv[1] if len(sys.argv) > 1 else None
fexpr.mcp.serve(ToolManager(tools=tools), **({"listen": listen} if listen else {}))
"""


def sdk_session(sdk: str, transport: str, calls: list) -> dict:
    python = SDKS[sdk]
    assert python.exists(), f"{python} is not installed: run scripts/ci-mcp.sh"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    client = [str(python), str(SDK_CLIENT), json.dumps(calls)]
    if transport == "stdio":
        # The SDK starts the server with only a few variables of its own environment: the
        # server finds fexpr through its own `PYTHONPATH` set in `-c`.
        path = json.dumps(os.pathsep.join(sys.path))
        server = f"import sys; sys.path[:0] = {path}.split({json.dumps(os.pathsep)})\n" + NAMED_SERVER
        out = subprocess.run(
            [*client, "stdio", sys.executable, "-c", server],
            capture_output=True, text=True, timeout=120, env=env,
        )
    else:
        served, url = serve_http(NAMED_SERVER)
        try:
            out = subprocess.run(
                [*client, "http", url],
                capture_output=True, text=True, timeout=120, env=env,
            )
        finally:
            served.kill()
            served.wait()
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("sdk", ["1.x", "2.x"])
def test_official_sdk_clients(sdk, transport):
    calls = [
        {"name": "get-current-weather", "arguments": {"city": "Paris"}},
        {"name": "docs.get", "arguments": {"n": 21905}},
        {"name": "run_calls", "arguments": {"calls": '[get_current_weather(city="Oslo"), docs.get(n=3)]'}},
        {"name": "get-current-weather", "arguments": {}},
    ]
    session = sdk_session(sdk, transport, calls)
    assert session["version"].startswith(sdk[0])
    # Tools are listed under the names their definitions give.
    assert session["tools"] == ["get-current-weather", "docs.get", "run_calls"]
    weather, document, both, refused = session["calls"]
    assert weather == {"isError": False, "text": "sunny in Paris", "structuredContent": None}
    # Whole: no cut at 2,000 characters.
    assert len(document["text"]) == 21905 and not document["isError"]
    results = both["structuredContent"]["results"]
    assert [r["name"] for r in results] == ["get-current-weather", "docs.get"]
    assert [r["output"] for r in results] == ["sunny in Oslo", "abc"]
    assert refused["isError"] and "missing 1 required argument: `city`" in refused["text"]
    # A session ends without the SDK logging a failed termination (or anything else).
    assert session["warnings"] == []
