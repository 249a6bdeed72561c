#!/usr/bin/env bash
# Side-by-side benchmark of fexpr against the systems people use instead (issue 8): builds the
# Rust timers, sets up the Python anchors in bench/compare/.venv from PyPI (pinned in
# requirements.txt), measures everything in one run and rewrites the bench/compare section of
# BENCHMARKS.md. Extra arguments go to compare.py (e.g. `--rounds 1 --budget 0.2 --out /tmp/b.md`
# for a quick smoke run; see `compare.py --help`).
#
#   bench/compare/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

python="${PYTHON:-python3}"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$venv/requirements.installed"; then
    echo "== anchors: virtual environment from PyPI ==" >&2
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$venv/requirements.installed"
fi

echo "== fexpr timer and CLI (release) ==" >&2
# One build for both: built on its own, the CLI would not share the timer's dependencies
# (the dev-dependencies' features, e.g. criterion's regex, change them) and recompile wasmtime,
# the parser and fexpr — three more minutes here. Its code is the same either way.
cargo build --release --locked --quiet --example compare_fexpr --bin fexpr --features sandbox
fexpr_bin="${CARGO_TARGET_DIR:-$root/target}/release/examples/compare_fexpr"
fexpr_cli="${CARGO_TARGET_DIR:-$root/target}/release/fexpr"

# The same timer linked as a position-dependent executable (`-no-pie`), for one extra cold-start
# row: a PIE's ~31k relative relocations (`.rela.dyn`) and the copy-on-write faults of the
# 512 KiB `.data.rel.ro` they write are 0.2–1 ms of a cold start, more on a loaded machine
# (BENCHMARKS.md, "The sandbox's path and its cold start"). Only the example is relinked (`cargo rustc` passes the flag to it
# alone); the PIE copy is kept first, as the target rows' binary.
# A copy from an earlier run goes first: when the no-PIE build is still fresh, cargo links the
# same file in again, and `mv` refuses to move a file onto itself.
cp "$fexpr_bin" "$fexpr_bin-pie"
rm -f "$fexpr_bin-nopie"
cargo rustc --release --locked --quiet --example compare_fexpr --features sandbox -- -C link-arg=-no-pie
mv "$fexpr_bin" "$fexpr_bin-nopie"
mv "$fexpr_bin-pie" "$fexpr_bin"

echo "== monty in-process timer (release) ==" >&2
cargo build --release --locked --quiet --manifest-path "$here/monty_inproc/Cargo.toml"
monty_bin="${CARGO_TARGET_DIR:-$here/monty_inproc/target}/release/monty-inproc"

# A backtrace setting makes wasmtime slower; the figures are for the default environment.
env -u RUST_BACKTRACE "$venv/bin/python" "$here/compare.py" \
    --fexpr "$fexpr_bin" --fexpr-nopie "$fexpr_bin-nopie" --fexpr-cli "$fexpr_cli" --monty-inproc "$monty_bin" \
    --out "$root/BENCHMARKS.md" --command "bench/compare/run.sh${*:+ $*}" "$@"
