#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the integration tests need on a fresh
# machine — the MCP test servers pinned in mcp-servers/ and the BFCL data (bfcl-eval wheel,
# extracted to target/bfcl) — then runs the whole test suite: `cargo test`, then the Python
# package built into a venv and its pytest suite (scripts/ci-python.sh). Idempotent: the
# installs are skipped when already done. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/ci-mcp.sh
scripts/ci-bfcl.sh
cargo test --locked "$@"
scripts/ci-python.sh
