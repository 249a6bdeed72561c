#!/usr/bin/env bash
# Install the MCP servers the tests and benchmarks use, at the versions pinned in mcp-servers/:
# server-everything and the MCP Inspector (the client tests/mcp_serve.rs drives `fexpr serve`
# with) (npm, from package-lock.json) into mcp-servers/node_modules, and
# mcp-server-time with the official Python MCP SDK 2.x (PyPI, from requirements.txt) into the
# venv mcp-servers/.venv, and the SDK 1.x (requirements-mcp1.txt) into mcp-servers/.venv-mcp1:
# the two Python clients of `fexpr serve` in python/tests/test_mcp.py and tests/mcp_serve.rs.
# Idempotent; runs as root on a fresh Debian 12 machine with network to the registries only.
set -euo pipefail
cd "$(dirname "$0")/../mcp-servers"

missing=()
command -v npm >/dev/null || missing+=(nodejs npm)
command -v python3 >/dev/null || missing+=(python3)
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then missing+=(python3-venv); fi
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 18 ]; then
    echo "ci-mcp: node $node_major is too old for server-everything (needs >= 18)" >&2
    exit 1
fi

npm ci --no-audit --no-fund --ignore-scripts
test -x node_modules/.bin/mcp-server-everything
test -x node_modules/.bin/mcp-inspector

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --disable-pip-version-check --quiet -r requirements.txt
test -x .venv/bin/mcp-server-time
if [ ! -x .venv-mcp1/bin/python ]; then
    python3 -m venv .venv-mcp1
fi
.venv-mcp1/bin/python -m pip install --disable-pip-version-check --quiet -r requirements-mcp1.txt
.venv/bin/python -c 'import importlib.metadata as m; assert m.version("mcp").startswith("2.")'
.venv-mcp1/bin/python -c 'import importlib.metadata as m; assert m.version("mcp").startswith("1.")'
echo "ci-mcp: servers installed in $(pwd)"
