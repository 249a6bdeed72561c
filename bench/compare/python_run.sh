#!/usr/bin/env bash
# From Python, side by side (issues 19 and 20): the fexpr package (a release wheel of python/)
# against the anchors of run.sh with Python tools, and BFCL's multi-turn ground truth in calls
# per second (BFCL's eval, fexpr native and sandboxed, on Ray with 2 workers). Uses run.sh's
# venv (bench/compare/.venv, pinned in requirements.txt) plus ray, bfcl-eval and the wheel, and
# rewrites its section of BENCHMARKS.md. Extra arguments go to python_compare.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$venv/requirements.installed"; then
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$venv/requirements.installed"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "ray==2.60.0" "docstring-parser==0.18.0" maturin==1.16.0
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "bfcl-eval==2026.3.23" "mpmath==1.3.0"
rm -f target/wheels/fexpr-*.whl
(cd python && "$venv/bin/maturin" build --release --quiet -o ../target/wheels)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps target/wheels/fexpr-*.whl
env -u RUST_BACKTRACE "$venv/bin/python" "$here/python_compare.py" --out "$root/BENCHMARKS.md" "$@"
