"""BFCL's multi-turn ground truth (800 cases, every turn, fresh instances per case) through
BFCL's own executor (``eval``) and through ``fexpr.bfcl``, in one run, rounds alternating.

Run: ``target/python-venv/bin/python bench/bfcl/speed.py [--rounds N] [--baseline FILE]`` (after
``scripts/ci-python.sh``, which builds the package and installs bfcl-eval). Prints the table
BENCHMARKS.md holds (medians of the rounds) and the ratio. ``--baseline`` adds another
``fexpr/bfcl.py`` (an earlier one: ``git show REV:python/fexpr/bfcl.py > /tmp/old_bfcl.py``) over
the same binding, natively, to the same rounds: before and after a change in one run.

Each timed run starts from the same heap: BFCL's executor keeps every instance it makes in its
module's globals for the process's life, so before each run (untimed) the instances of the runs
before are dropped and the garbage collected; otherwise the collector walks the rounds before
(hundreds of thousands of objects) inside whichever run comes next.
"""

from __future__ import annotations

import argparse
import gc
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--baseline", type=pathlib.Path, help="another fexpr/bfcl.py to time beside this one")
    args = p.parse_args()

    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (
        execute_multi_turn_func_call as bfcl_execute,
    )

    import bfcl_conformance
    from fexpr import bfcl

    cases = bfcl_conformance.load_cases()
    calls = sum(len(turn) for _, turns in cases for turn in turns)

    def bfcl_eval(run: int) -> None:
        for entry, turns in cases:
            for turn in turns:
                bfcl_execute(turn, entry["initial_config"], entry["involved_classes"], f"speed{run}", entry["id"],
                             long_context="long_context" in entry["id"], is_evaL_run=True)

    systems = {
        "BFCL 2026.3.23 `execute_multi_turn_func_call` (`eval`)": bfcl_eval,
        "fexpr.bfcl native": lambda run: bfcl.run_ground_truth(cases, model_name=f"speed{run}"),
        "fexpr.bfcl sandboxed": lambda run: bfcl.run_ground_truth(cases, sandboxed=True, model_name=f"speed{run}"),
    }
    if args.baseline is not None:
        import importlib.util

        spec = importlib.util.spec_from_file_location("fexpr.bfcl_baseline", args.baseline)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load {args.baseline}")
        baseline = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(baseline)
        systems[f"fexpr.bfcl native, baseline `{args.baseline.name}`"] = lambda run: baseline.run_ground_truth(
            cases, model_name=f"speed{run}"
        )
    times: dict[str, list[float]] = {name: [] for name in systems}
    def clean_heap() -> None:
        kept = vars(multi_turn_utils)
        for instance in [n for n in kept if n.startswith("speed") and n.endswith("_instance")]:
            del kept[instance]
        gc.collect()

    for run in range(args.rounds):
        for name, system in systems.items():
            clean_heap()
            started = time.perf_counter()
            system(run)
            times[name].append(time.perf_counter() - started)
    base = statistics.median(times[next(iter(systems))])
    print(f"rounds: {args.rounds}, load average {'{:.2f} {:.2f} {:.2f}'.format(*os.getloadavg())}")
    print()
    print("| executor | calls | seconds (median) | calls/s | BFCL's time ÷ this |")
    print("|---|---|---|---|---|")
    for name, samples in times.items():
        seconds = statistics.median(samples)
        print(f"| {name} | {calls} | {seconds:.3f} | {calls / seconds:,.0f} | {base / seconds:.2f}× |")


if __name__ == "__main__":
    main()
