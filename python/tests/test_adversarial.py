"""The adversarial corpus (tests/adversarial/cases.jsonl) through Python, natively and sandboxed:
every case ends in an error of its kind with no output, no tool runs, it ends within its time,
and the sandboxed outputs equal the native ones unless the sandbox stopped on a budget of its
own (what tests/adversarial.rs checks for the Rust API)."""

import json
import pathlib
import time
from dataclasses import dataclass

import numpy as np
import pytest

from fexpr import ToolManager

CASES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "adversarial" / "cases.jsonl"
BUDGET = 10.0  # seconds, native and sandboxed each
SANDBOX_ONLY_LIMITS = ("memory_bytes", "fuel", "deadline", "max_host_calls")


def repeat(piece, times):
    """`piece` `times` times, `{i}` numbered (`k{i}=1,` makes `k0=1,k1=1,...`)."""
    if "{i}" not in piece:
        return piece * times
    return "".join(piece.replace("{i}", str(i)) for i in range(times))


def run(case, sandboxed):
    """The case through its door: an expression, fexpr's JSON forms or raw model output."""
    form = case.get("form")
    if form == "json":
        return MANAGER.execute_json_via_sandbox(case["text"]) if sandboxed else MANAGER.execute_json(case["text"])
    if form == "model_output":
        method = MANAGER.execute_model_output_via_sandbox if sandboxed else MANAGER.execute_model_output
        return method(case["text"]).outputs
    assert form is None, form
    return MANAGER.execute_via_sandbox(case["text"]) if sandboxed else MANAGER.execute(case["text"])


def load():
    cases = []
    for line in CASES.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        case = json.loads(line)
        case["text"] = case.get("source") or "".join(repeat(t, n) for t, n in case["parts"])
        cases.append(case)
    return cases


@dataclass
class Point:
    x: int
    y: int


RUNS = []

# A Rust tool's `int` is an i64, so these are Value errors for the Rust API; a Python tool's
# `int` is Python's, unbounded: the call runs and gives Python's answer.
PYTHON_INTS = {
    "add(a=2**64, b=1)": 2**64 + 1,
    "add(a=-2**63 - 1, b=1)": -(2**63),
    "multiply(a=1, b=10**30)": 10**30,
}


def recording_manager():
    """The demo toolset with tools that record their runs."""

    def add(a: int, b: int) -> int:
        RUNS.append("add")
        return a + b

    def multiply(a: int, b: int) -> int:
        RUNS.append("multiply")
        return a * b

    async def divide(a: float, b: float) -> float:
        RUNS.append("divide")
        return a / b

    async def search(query: str) -> list[str]:
        RUNS.append("search")
        return [query]

    def numpy_sum(arr: np.ndarray) -> float:
        RUNS.append("numpy_sum")
        return float(np.sum(arr))

    def add_points(p1: Point, p2: Point) -> Point:
        RUNS.append("add_points")
        return Point(p1.x + p2.x, p1.y + p2.y)

    return ToolManager(
        tools=[add, multiply, divide, search, numpy_sum, add_points],
        additional_context={"x": 2, "y": 0, "np": np, "Point": Point},
    )


MANAGER = recording_manager()


def comparable(outputs):
    # Each run generates its own call ids (and only the sandbox has receipts).
    assert all(isinstance(o.call_id, str) and o.call_id for o in outputs)
    return [{k: v for k, v in o.to_dict().items() if k not in ("receipt", "call_id")} for o in outputs]


def check(case, outputs, mode):
    shown = case["text"][:60]
    assert outputs, f"{mode} {shown!r}: no output"
    for out in outputs:
        assert out.error is not None, f"{mode} {shown!r}: a value {out.output!r}"
        assert str(out.error.kind) == case["kind"], f"{mode} {shown!r}: {out.error}"
        assert out.output is None


@pytest.mark.filterwarnings("ignore:overflow encountered")  # numpy_sum over 1e308s
@pytest.mark.parametrize("group", ["escape", "dos", "parser", "values"])
def test_the_corpus(group):
    cases = [c for c in load() if c["group"] == group]
    assert cases
    MANAGER.execute_via_sandbox("add(a=1, b=2)")  # compile or load the guest outside the budget
    RUNS.clear()
    for case in cases:
        if case["text"] in PYTHON_INTS:
            for sandboxed in (False, True):
                assert [o.output for o in run(case, sandboxed)] == [PYTHON_INTS[case["text"]]]
            RUNS.clear()
            continue
        budget = case.get("within", BUDGET)
        started = time.monotonic()
        native = run(case, sandboxed=False)
        assert time.monotonic() - started < budget, case["text"][:60]
        check(case, native, "native")
        started = time.monotonic()
        boxed = run(case, sandboxed=True)
        assert time.monotonic() - started < budget, case["text"][:60]
        check(case, boxed, "sandbox")
        own_budget = any(
            str(o.error.kind) == "Limit" and o.error.message.startswith(SANDBOX_ONLY_LIMITS) for o in boxed
        )
        if not own_budget:
            assert comparable(boxed) == comparable(native), case["text"][:60]
        if case.get("runs"):
            RUNS.clear()
        assert RUNS == [], f"{case['text'][:60]!r}: tools ran: {RUNS}"
        if case.get("form") is None and not case.get("runs"):
            # Through the other entry points that never run what the corpus refuses.
            assert MANAGER.execute_func_expr(case["text"]).error is not None
            MANAGER.check_model_output(case["text"])
            assert RUNS == [], f"{case['text'][:60]!r}: tools ran: {RUNS}"


def test_the_recording_tools_do_record():
    RUNS.clear()
    outs = MANAGER.execute("[add(a=1, b=2), search(query='q')]")
    assert all(o.error is None for o in outs)
    MANAGER.execute_via_sandbox("[add(a=1, b=2), search(query='q')]")
    # Sync tools run concurrently: in either order.
    assert sorted(RUNS) == ["add", "add", "search", "search"]
    RUNS.clear()
