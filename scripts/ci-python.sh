#!/usr/bin/env bash
# Build the Python package (python/) into a virtual environment and run its pytest suite.
# Idempotent and quick when done before: the venv (target/python-venv, gitignored) is created
# once, the PyPI packages installed once, and `maturin develop` rebuilds the extension
# incrementally in target/debug beside `cargo test`'s build (a debug build: the tests need no
# release build; users get one from `pip install ./python`). Then mypy's stubtest checks
# fexpr/_fexpr.pyi against the compiled module, and pytest runs. Extra arguments go to pytest.
# Needs python3 (>= 3.10) with venv, and PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="target/python-venv"
PY="$VENV/bin/python"

if [[ ! -x "$PY" ]]; then
    if ! python3 -m venv "$VENV" 2>/dev/null; then
        if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null; then
            apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
            python3 -m venv "$VENV"
        else
            echo "ci-python: python3 -m venv is needed" >&2
            exit 1
        fi
    fi
fi
# Pinned for repeatable CI; the package itself asks only for docstring-parser.
PACKAGES=(
    "maturin==1.16.0" "pytest==9.2.0" "numpy==2.4.6" "pydantic==2.14.4" "docstring-parser==0.18.0"
    "ray==2.60.0" # python/tests/test_fanout.py: a local Ray instance
    "hypothesis==6.170.15" # python/tests/test_conversion_properties.py
    "mypy==2.4.1" # stubtest: fexpr/_fexpr.pyi against the compiled module
    # python/tests/test_stream_deltas.py: the SDKs' own event objects and message types
    "openai==3.57.0" "anthropic==2.14.0"
)
# bfcl-eval without its dependencies (every LLM provider's SDK): its multi-turn classes need
# only mpmath (python/tests/test_bfcl.py).
NO_DEPS=("bfcl-eval==2026.3.23" "mpmath==1.3.0")
STAMP="$VENV/.ci-python-packages"
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "${PACKAGES[*]} ${NO_DEPS[*]}" ]]; then
    "$PY" -m pip install --quiet "${PACKAGES[@]}"
    "$PY" -m pip install --quiet --no-deps "${NO_DEPS[@]}"
    echo "${PACKAGES[*]} ${NO_DEPS[*]}" > "$STAMP"
fi

(cd python && VIRTUAL_ENV="$PWD/../$VENV" PATH="$PWD/../$VENV/bin:$PATH" maturin develop --profile dev --quiet)
cd python
# The stubs say what the compiled module has: every class, method, argument and constant.
"../$PY" -m mypy.stubtest fexpr._fexpr
CI="${CI:-}" "../$PY" -m pytest -q "$@"
