"""The wasmtime sandbox from Python: the same outputs as natively, receipts, and its limits."""

import time

import pytest

from conftest import CONTEXT, TOOLS, Point

from fexpr import ErrorKind, FunctionTool, Limits, ToolManager


def test_sandboxed_outputs_equal_native_ones(manager):
    texts = [
        "add(a=2, b=3)",
        "add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})",
        "numpy_sum(arr=np.array([[1, 2], [3, 4]]))",
        "search(query='q')",
        "add(a=add(a=1, b=2), b=x)",
        "add(a=1, c=2)",
        "nope()",
    ]
    for text in texts:
        native = manager.execute_func_expr(text)
        boxed = manager.execute_func_expr_via_sandbox(text)
        assert str(boxed) == str(native)
        assert native.receipt is None
        assert boxed.receipt.fuel_used > 0 and boxed.receipt.wall_time > 0
    out = manager.execute_func_expr_via_sandbox("add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))")
    assert out.output == Point(4, 6) and out.receipt.host_calls == 1


def test_sandboxed_lists_and_model_output(manager):
    outs = manager.execute_via_sandbox("[add(a=1, b=2), multiply(a=3, b=x)]")
    assert [o.output for o in outs] == [3, 6]
    run = manager.execute_model_output_via_sandbox("I'll add them:\nadd(a=2.0, b=3)")
    assert run.outputs[0].output == 5 and run.outputs[0].receipt is not None
    assert [i.reason for i in run.ignored] == ["Prose"]


def test_fuel_runs_out():
    manager = ToolManager(tools=TOOLS, additional_context=CONTEXT, limits=Limits(fuel=1000))
    out = manager.execute_func_expr_via_sandbox("add(a=2, b=3)")
    assert out.error.kind == ErrorKind.Limit and out.error.message.startswith("fuel")


def test_the_deadline_covers_host_calls():
    def nap(seconds: float) -> float:
        time.sleep(seconds)
        return seconds

    manager = ToolManager(tools=[nap], limits=Limits(deadline=0.2))
    started = time.monotonic()
    out = manager.execute_func_expr_via_sandbox("nap(seconds=0.05)")
    assert out.output == 0.05
    out = manager.execute_func_expr_via_sandbox("[nap(seconds=0.15), nap(seconds=0.15)]")
    assert out.error is not None
    out = manager.execute_via_sandbox("nap(seconds=0.5)")[0]
    assert out.error.kind == ErrorKind.Limit and "deadline" in out.error.message
    assert time.monotonic() - started < 5


def test_a_native_call_past_its_deadline_returns_on_time():
    def nap(seconds: float) -> float:
        time.sleep(seconds)
        return seconds

    # A blocking tool runs on a worker thread: the deadline can return before it ends.
    manager = ToolManager(tools=[FunctionTool(nap, blocking=True)], limits=Limits(call_deadline=0.05))
    started = time.monotonic()
    out = manager.execute_func_expr("nap(seconds=0.7)")
    waited = time.monotonic() - started
    assert out.error.kind == ErrorKind.Limit and out.error.limit == "call_deadline", out.error
    assert waited < 0.5, waited
    assert manager.execute_func_expr("nap(seconds=0.01)").output == 0.01


def test_memory_and_host_call_limits():
    manager = ToolManager(
        tools=TOOLS,
        additional_context=CONTEXT,
        limits=Limits(memory_bytes=8 << 20, max_collection_len=10**7, max_eval_bytes=1 << 30),
    )
    out = manager.execute_via_sandbox("numpy_sum(arr=np.zeros(5000000))")[0]
    assert out.error.kind == ErrorKind.Limit and "memory_bytes" in out.error.message
    few = ToolManager(tools=TOOLS, additional_context=CONTEXT, limits=Limits(max_host_calls=1))
    outs = few.execute_via_sandbox("add(a=add(a=1, b=2), b=3)")
    assert outs[0].error.kind == ErrorKind.Limit


def test_limits_that_cannot_work_are_refused_when_the_manager_is_built():
    with pytest.raises(ValueError, match="cannot build the tool manager: .*memory_bytes"):
        ToolManager(tools=TOOLS, additional_context=CONTEXT, limits=Limits(memory_bytes=1 << 20))


def test_sandboxed_tool_exceptions_are_tool_failed():
    def boom(n: int) -> int:
        raise ValueError(f"bad n: {n}")

    out = ToolManager(tools=[boom]).execute_func_expr_via_sandbox("boom(n=3)")
    assert out.error.kind == ErrorKind.ToolFailed and out.error.message == "ValueError: bad n: 3"
