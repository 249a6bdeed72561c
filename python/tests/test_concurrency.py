"""Async tools, the async methods, threads, the GIL and Ctrl-C."""

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from conftest import Point

from fexpr import ErrorKind, FunctionTool, Limits, ToolManager


async def slow(seconds: float) -> float:
    """Sleep, asynchronously."""
    await asyncio.sleep(seconds)
    return seconds


def test_async_tools_run_from_the_sync_methods(manager):
    assert manager.execute_func_expr("divide(a=2.0, b=4.0)").output == 0.5
    outs = ToolManager(tools=[slow]).execute("[slow(seconds=0.3), slow(seconds=0.3), slow(seconds=0.3)]")
    assert [o.output for o in outs] == [0.3, 0.3, 0.3]


def test_async_calls_of_one_response_overlap():
    manager = ToolManager(tools=[slow])
    started = time.monotonic()
    outs = manager.execute_func_exprs(["slow(seconds=0.3)"] * 4)
    assert all(o.output == 0.3 for o in outs)
    assert time.monotonic() - started < 1.0


def test_async_tools_run_on_the_callers_loop():
    seen = []

    async def where() -> bool:
        seen.append(asyncio.get_running_loop())
        return True

    manager = ToolManager(tools=[where])

    async def main():
        out = await manager.execute_func_expr_async("where()")
        assert out.output is True
        return asyncio.get_running_loop()

    loop = asyncio.run(main())
    assert seen == [loop]


def test_the_async_methods_give_the_sync_outputs(manager):
    actions = ["add(a=2, b=3)", "divide(a=2.0, b=3.0)", "search(query='q')", "add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})"]

    async def main():
        one = await asyncio.gather(*(manager.execute_func_expr_async(a) for a in actions))
        many = await manager.execute_func_exprs_async(actions)
        boxed = await manager.execute_func_expr_via_sandbox_async(actions[3])
        listed = await manager.execute_async("[add(a=1, b=1), search(query='z')]")
        run = await manager.execute_model_output_async("Sure:\n```python\nadd(a=2.0, b=3)\n```")
        func = await manager.execute_func_async(manager.parse_func_expr("add(a=x, b=1)"))
        return one, many, boxed, listed, run, func

    one, many, boxed, listed, run, func = asyncio.run(main())
    expected = [str(manager.execute_func_expr(a)) for a in actions]
    assert [str(o) for o in one] == expected == [str(o) for o in many]
    assert boxed.output == Point(4, 6) and boxed.receipt is not None
    assert [o.output for o in listed] == [2, ["result1z", "result2z"]]
    assert run.outputs[0].output == 5 and run.outputs[0].repairs[0].from_ == "2.0"
    assert func.output == 3


def test_async_tool_errors_are_tool_failed():
    async def boom() -> int:
        raise RuntimeError("no luck")

    manager = ToolManager(tools=[boom])
    assert manager.execute_func_expr("boom()").error.message == "RuntimeError: no luck"
    out = asyncio.run(manager.execute_func_expr_async("boom()"))
    assert out.error.kind == ErrorKind.ToolFailed and out.error.message == "RuntimeError: no luck"


def test_a_cancelled_async_call_stops():
    manager = ToolManager(tools=[slow])

    async def main():
        task = asyncio.ensure_future(manager.execute_func_expr_async("slow(seconds=5)"))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < 2


def test_blocking_sync_tools_overlap():
    def nap(seconds: float) -> float:
        time.sleep(seconds)
        return seconds

    manager = ToolManager(tools=[FunctionTool(nap, blocking=True)])
    started = time.monotonic()
    outs = manager.execute("[nap(seconds=0.3), nap(seconds=0.3), nap(seconds=0.3)]")
    assert [o.output for o in outs] == [0.3, 0.3, 0.3]
    assert time.monotonic() - started < 0.8


def test_component_tools_keep_state_on_the_instance():
    class Counter:
        def __init__(self, step: int) -> None:
            self.step = step
            self.total = 0

        def bump(self) -> int:
            """Bump the counter."""
            self.total += self.step
            return self.total

        async def abump(self) -> int:
            self.total += self.step
            return self.total

    counter = Counter(step=2)
    manager = ToolManager(tools=[counter.bump, counter.abump])
    # The calls of one response run concurrently: each sees the state as it finds it.
    assert sorted(o.output for o in manager.execute("[bump(), bump(), abump()]")) == [2, 4, 6]
    assert counter.total == 6
    assert manager.python_definitions[0] == 'def bump() -> int\n    """Bump the counter."""'


def test_one_manager_is_shared_by_threads(manager):
    failures = []

    def worker(i):
        for j in range(50):
            out = manager.execute_func_expr(f"add(a={i}, b={j})")
            if out.output != i + j:
                failures.append(out)
        sandboxed = manager.execute_func_expr_via_sandbox(f"multiply(a={i}, b=x)")
        if sandboxed.output != 2 * i:
            failures.append(sandboxed)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def ticks_during(run):
    """How often another thread ran (about once a millisecond) while ``run()`` ran, and for
    how long ``run()`` ran."""
    ticks = 0
    stop = threading.Event()

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.01)
    ticks = 0
    started = time.monotonic()
    result = run()
    elapsed = time.monotonic() - started
    counted = ticks
    stop.set()
    counter.join()
    return counted, elapsed, result


BIG_SUM = "np.sum(np.arange(3000000))"
ROOMY = Limits(fuel=10**11, max_collection_len=10**7, max_eval_bytes=1 << 30, memory_bytes=192 << 20)


def test_other_threads_run_while_a_sandboxed_evaluation_runs():
    # A long evaluation in the guest (hundreds of milliseconds): the GIL is free meanwhile.
    manager = ToolManager(additional_context={"np": np}, limits=ROOMY)
    manager.execute_via_sandbox("np.sum(np.arange(3))")  # the guest is compiled or loaded
    ticks, elapsed, outs = ticks_during(lambda: manager.execute_via_sandbox(BIG_SUM))
    assert outs[0].output == 4499998500000, outs[0]
    assert elapsed > 0.05
    # Held, the other thread would not tick at all during the evaluation.
    assert ticks >= min(20, elapsed * 1000 * 0.2), (ticks, elapsed)


def test_other_threads_run_while_a_native_evaluation_runs():
    manager = ToolManager(additional_context={"np": np}, limits=ROOMY)
    ticks, elapsed, outs = ticks_during(lambda: manager.execute(f"[{BIG_SUM}, {BIG_SUM}]"))
    assert [o.output for o in outs] == [4499998500000, 4499998500000]
    assert ticks >= min(20, elapsed * 1000 * 0.2), (ticks, elapsed)


SCRIPT = """
import asyncio, os, signal, sys, threading, time
from fexpr import ToolManager

def nap() -> int:
    time.sleep(10)
    return 1

async def anap() -> int:
    await asyncio.sleep(10)
    return 1

def other() -> int:
    return 2

manager = ToolManager(tools=[nap, anap, other])
# A process started in the background by a shell without job control inherits SIGINT ignored
# (and Python then installs no handler): take Ctrl-C's default Python handler back.
signal.signal(signal.SIGINT, signal.default_int_handler)
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
started = time.monotonic()
try:
    manager.execute(sys.argv[1])
except KeyboardInterrupt:
    print("interrupted after", round(time.monotonic() - started, 1))
    # The manager still works afterwards.
    print("then", manager.execute_func_expr("other()").output)
else:
    print("not interrupted")
"""


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("call", ["nap()", "anap()", "[nap(), other()]"])
def test_ctrl_c_interrupts_a_waiting_call(call):
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), call], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("interrupted after"), run.stdout
    assert float(lines[0].split()[-1]) < 3
    assert lines[1] == "then 2"


def test_a_tool_may_call_a_manager_itself():
    inner = ToolManager(tools=[slow])

    def outer(n: int) -> int:
        """A tool that runs calls of its own (a sub-agent, say)."""
        return sum(o.output for o in inner.execute_func_exprs([f"slow(seconds={0.01 * n})"] * 2)) > 0

    manager = ToolManager(tools=[outer])
    assert manager.execute_func_expr("outer(n=1)").output is True
    assert asyncio.run(manager.execute_func_expr_async("outer(n=2)")).output is True


def test_a_function_tool_runs_alone_with_checked_arguments():
    def add(a: int, b: int) -> int:
        return a + b

    tool = FunctionTool(add)
    assert tool.call(1, 2).output == 3
    assert tool.call(a=1, b="x").error.kind == ErrorKind.Type
    assert asyncio.run(FunctionTool(slow).acall(0.01)).output == 0.01
