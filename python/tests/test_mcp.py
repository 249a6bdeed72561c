"""``fexpr.mcp.serve``: Python tools behind fexpr's MCP server, called by the official MCP
Inspector's CLI (``mcp-servers/node_modules``, installed by ``scripts/ci-mcp.sh``; the test
fails without it)."""

import json
import os
import pathlib
import subprocess
import sys

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
