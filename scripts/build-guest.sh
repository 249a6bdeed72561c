#!/usr/bin/env bash
# Builds the wasm guest (guest/) reproducibly and writes the committed artifacts:
#   guest/fexpr-guest.wasm       the wasm32-wasip1 reactor module the host embeds
#   guest/fexpr-guest.wasm.info  the rustc that built it and a SHA-256 of its inputs
#
# Usage: scripts/build-guest.sh [OUT_DIR]     (default OUT_DIR: guest/)
# Needs Debian's wasm toolchain: scripts/install-wasm-toolchain.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=guest-common.sh
. "$ROOT/scripts/guest-common.sh"

require_guest_toolchain
out_dir=${1:-$ROOT/guest}
build_guest_into "$out_dir"
echo "built $out_dir/fexpr-guest.wasm ($(wc -c <"$out_dir/fexpr-guest.wasm") bytes)"
cat "$out_dir/fexpr-guest.wasm.info"
