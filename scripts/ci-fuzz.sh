#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ briefly, starting from the committed seed corpora
# (fuzz/seeds/<target>/). Fails if any target finds a crash (libFuzzer exits non-zero and
# leaves the input in fuzz/artifacts/<target>/).
#
# Usage: scripts/ci-fuzz.sh [SECONDS_PER_TARGET]     (default 60)
# Needs: rustup with a nightly toolchain (installed here if missing), network to crates.io.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
SECONDS_PER_TARGET=${1:-60}
CARGO_FUZZ_VERSION=0.13.1
# The targets (fuzz/Cargo.toml).
TARGETS=(parse evaluate wire_decode frontend json_input)

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version 2>/dev/null | grep -q " ${CARGO_FUZZ_VERSION}\$"; then
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

cd "$ROOT/fuzz"
cargo +nightly fuzz build -O
for target in "${TARGETS[@]}"; do
    # One process, one core (no -jobs). The working corpus (gitignored) grows from the
    # committed seeds; new finds stay local.
    mkdir -p "corpus/$target"
    echo "== fuzz $target for ${SECONDS_PER_TARGET}s"
    cargo +nightly fuzz run -O "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1
done
echo "fuzz: no crashes in ${TARGETS[*]}"
