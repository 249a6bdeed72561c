#!/usr/bin/env bash
# Checks that the committed guest (guest/fexpr-guest.wasm) is what its sources build to.
#
# Rebuilds the guest into a temporary directory, then:
# - same rustc as recorded in guest/fexpr-guest.wasm.info: the bytes must be identical
#   (exit 1 otherwise);
# - a different rustc (Debian moved rustc-web on): the inputs hash must match the recorded one
#   (exit 1 otherwise); the freshly built guest is then the one to test, and a loud notice asks
#   to re-commit the guest built by the new compiler.
#
# Writes guest/target/check/guest.env, to be sourced before running the tests: it exports
# FEXPR_GUEST_WASM=<fresh guest> when the fresh guest must be used, and nothing otherwise.
#
# Usage: scripts/check-guest.sh && . guest/target/check/guest.env && cargo test
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=guest-common.sh
. "$ROOT/scripts/guest-common.sh"

require_guest_toolchain
committed=$ROOT/guest/fexpr-guest.wasm
info=$ROOT/guest/fexpr-guest.wasm.info
check_dir=$ROOT/guest/target/check
env_file=$check_dir/guest.env
mkdir -p "$check_dir"
: >"$env_file"

field() { sed -n "s/^$1: //p" "$2"; }

fresh_dir=$(mktemp -d "${TMPDIR:-/tmp}/fexpr-guest-check.XXXXXX")
trap 'rm -rf "$fresh_dir"' EXIT
build_guest_into "$fresh_dir" >&2

committed_rustc=$(field rustc "$info")
fresh_rustc=$(field rustc "$fresh_dir/fexpr-guest.wasm.info")
committed_inputs=$(field inputs-sha256 "$info")
fresh_inputs=$(field inputs-sha256 "$fresh_dir/fexpr-guest.wasm.info")

# The sandbox keys its compiled-module cache by this recorded hash (src/sandbox/cache.rs).
recorded_wasm=$(field wasm-sha256 "$info")
actual_wasm=$(sha256sum <"$committed" | cut -d' ' -f1)
if [[ $recorded_wasm != "$actual_wasm" ]]; then
    echo "error: guest/fexpr-guest.wasm.info records wasm-sha256 $recorded_wasm," \
        "but guest/fexpr-guest.wasm hashes to $actual_wasm." >&2
    echo "       Run scripts/build-guest.sh and commit guest/fexpr-guest.wasm{,.info}." >&2
    exit 1
fi

if [[ $committed_rustc == "$fresh_rustc" ]]; then
    if ! cmp -s "$committed" "$fresh_dir/fexpr-guest.wasm"; then
        echo "error: guest/fexpr-guest.wasm is not what its sources build to with $fresh_rustc." >&2
        echo "       Run scripts/build-guest.sh and commit guest/fexpr-guest.wasm{,.info}." >&2
        exit 1
    fi
    if [[ $committed_inputs != "$fresh_inputs" ]]; then
        echo "note: the guest's bytes are up to date but its inputs hash in" \
            "guest/fexpr-guest.wasm.info is stale; run scripts/build-guest.sh and commit the .info."
    fi
    echo "ok: guest/fexpr-guest.wasm is reproducible from its sources ($fresh_rustc)"
    exit 0
fi

if [[ $committed_inputs != "$fresh_inputs" ]]; then
    echo "error: the guest's sources changed since guest/fexpr-guest.wasm was built" >&2
    echo "       (inputs $committed_inputs recorded, $fresh_inputs now), and this machine's" >&2
    echo "       compiler ($fresh_rustc) differs from the one recorded ($committed_rustc)." >&2
    echo "       Run scripts/build-guest.sh and commit guest/fexpr-guest.wasm{,.info}." >&2
    exit 1
fi

cp "$fresh_dir/fexpr-guest.wasm" "$check_dir/fexpr-guest.wasm"
cp "$fresh_dir/fexpr-guest.wasm.info" "$check_dir/fexpr-guest.wasm.info"
printf 'export FEXPR_GUEST_WASM=%q\n' "$check_dir/fexpr-guest.wasm" >"$env_file"
cat <<NOTICE
################################################################################
##  NOTICE: THE COMMITTED WASM GUEST WAS BUILT BY A DIFFERENT COMPILER.
##    committed: $committed_rustc
##    this one:  $fresh_rustc
##  Its sources are unchanged (inputs hash matches), so the tests run against the
##  guest freshly built here: $check_dir/fexpr-guest.wasm
##  (source $env_file to set FEXPR_GUEST_WASM).
##  PLEASE RE-COMMIT THE GUEST: scripts/build-guest.sh && git add guest/fexpr-guest.wasm*
################################################################################
NOTICE
