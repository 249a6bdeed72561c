#!/usr/bin/env bash
# Fetch the BFCL data (the `bfcl-eval` wheel from PyPI, Apache-2.0) for tests/bfcl.rs and
# benches/front.rs. Idempotent. The data is extracted to target/bfcl (gitignored) and never
# committed. Runs on a fresh Debian 12 machine as root, or anywhere with python3 + pip.
set -euo pipefail

BFCL_VERSION="2026.3.23"
cd "$(dirname "$0")/.."
DEST="target/bfcl"
STAMP="$DEST/.version"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$BFCL_VERSION" && -d "$DEST/bfcl_eval/data" ]]; then
    echo "ci-bfcl: bfcl-eval $BFCL_VERSION already in $DEST"
    exit 0
fi

if ! python3 -m pip --version >/dev/null 2>&1; then
    if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null; then
        apt-get update -qq
        apt-get install -y -qq python3-pip >/dev/null
    else
        echo "ci-bfcl: python3 -m pip is needed" >&2
        exit 1
    fi
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$TMP" "bfcl-eval==$BFCL_VERSION"
rm -rf "$DEST"
mkdir -p "$DEST"
python3 -m zipfile -e "$TMP"/bfcl_eval-"$BFCL_VERSION"-*.whl "$DEST"
echo "$BFCL_VERSION" > "$STAMP"
echo "ci-bfcl: bfcl-eval $BFCL_VERSION extracted to $DEST ($(find "$DEST/bfcl_eval/data" -name '*.json' | wc -l) data files)"
