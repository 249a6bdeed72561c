"""The Python door against hostile tool results and tools (issue 28's Python items, issue 30's
concurrency and deadlines): every case a structured error or the documented behaviour, never a
panic, a crash, a hang or a silent change of data."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import pickle
import sys
import time
from collections import deque

import numpy as np
import pytest

from fexpr import ErrorKind, FunctionTool, Limits, ToolManager, ToolOutput


def _one_tool(value, **kwargs):
    def make() -> object:
        return value

    def show(x: object) -> str:
        raise AssertionError(f"show ran with {type(x).__name__}")

    return ToolManager(tools=[FunctionTool(make, **kwargs), show])


def _unrepresentable(value, words):
    """``value`` has no fexpr value: the call that returns it gives the object itself to the
    program (shown bounded), and a call that would use it is an error naming ``words``."""
    manager = _one_tool(value)
    started = time.monotonic()
    out = manager.execute_func_expr("make()")
    assert out.error is None and out.output is value, out
    assert len(str(out)) < 2100 and len(str(out.to_dict())) < 2100
    nested = manager.execute_func_expr("show(x=make())")
    assert nested.error is not None and nested.error.kind == ErrorKind.Type, nested
    assert all(w in nested.error.message for w in words), nested.error
    assert "\x01" not in str(nested.error) and "fexpr-result" not in str(nested.error.hint)
    listed = manager.execute("[make(), show(x=make())]")
    assert listed[0].output is value and listed[1].error.kind == ErrorKind.Type
    sandboxed = manager.execute_func_expr_via_sandbox("show(x=make())")
    assert sandboxed.error is not None and sandboxed.error.kind == ErrorKind.Type, sandboxed
    assert time.monotonic() - started < 5


def test_an_array_of_more_dimensions_than_fexpr_holds_is_never_a_panic():
    _unrepresentable(np.zeros((1,) * 33), ["33 dimensions"])
    # 32 is fexpr's own bound: a value.
    assert _one_tool(np.zeros((1,) * 32)).execute_func_expr("show(x=make())").error.kind == ErrorKind.ToolFailed


def test_an_unsupported_result_is_never_passed_on_and_its_repr_is_never_built_whole():
    _unrepresentable(deque(["x" * 10**6] * 1200), ["deque"])  # its repr: 1.2 GB


def test_a_generator_never_reaches_the_next_tool_as_a_string():
    _unrepresentable((i for i in range(3)), ["generator"])


def test_a_uint64_array_above_int64_is_never_passed_on_as_its_repr():
    _unrepresentable(np.array([2**64 - 1], dtype=np.uint64), ["uint64"])


def test_a_huge_int_result_is_refused_before_it_is_printed():
    out = _one_tool(1 << 31_200_000).execute_func_expr("make()")
    started = time.monotonic()
    text, data = str(out), out.to_dict()
    assert time.monotonic() - started < 1
    assert out.error.kind == ErrorKind.Limit and out.error.limit == "max_int_digits", out.error
    assert data["error"]["kind"] == "Limit" and len(text) < 2000
    # As many digits as the limit allows: a value.
    assert _one_tool(10**4000).execute_func_expr("make()").output == 10**4000
    assert _one_tool(10**4000).execute_func_expr("make()").to_dict()["output"] == str(10**4000)


def test_an_empty_array_of_many_rows_is_charged_for_its_rows():
    out = _one_tool(np.zeros((10**8, 0))).execute_func_expr("make()")
    started = time.monotonic()
    out.to_dict()
    assert time.monotonic() - started < 1
    assert out.error.kind == ErrorKind.Limit and out.error.limit == "max_output_bytes", out.error


def test_a_tool_observation_is_bounded_as_documented():
    def long() -> ToolOutput:
        return ToolOutput(output=1, observation="o" * 100_000)

    out = ToolManager(tools=[long]).execute_func_expr("long()")
    assert out.output == 1
    assert 0 < len(out.observation) <= 2001


class Color(enum.Enum):
    RED = 1


class Tag(str):
    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)


@pytest.mark.parametrize(
    "value",
    [
        {Color.RED: "enum", 1: "int"},
        {Tag("a"): 1, Tag("a"): 2},
        {Color.RED, 1},
        frozenset({Color.RED, 1}),
    ],
    ids=["enum-and-int-keys", "str-subclass-keys", "set", "frozenset"],
)
def test_keys_python_keeps_apart_are_never_merged(value):
    seen = []

    def take(x: object) -> int:
        seen.append(x)
        return len(x)

    manager = ToolManager(tools=[FunctionTool(lambda: value, name="make"), take])
    out = manager.execute_func_expr("take(x=make())")
    assert out.error is not None and "merge" in out.error.message, out
    assert seen == []
    assert manager.execute_func_expr("make()").output is value


# BaseExceptions: they reach the caller as themselves, and the runtime keeps working.


@pytest.mark.parametrize("exc", [SystemExit, KeyboardInterrupt])
def test_an_async_tool_raising_a_base_exception_leaves_the_runtime_working(exc):
    async def boom() -> int:
        raise exc(3)

    async def fine() -> int:
        await asyncio.sleep(0)
        return 7

    manager = ToolManager(tools=[boom, fine], limits=Limits(call_deadline=2))
    with pytest.raises(exc):
        manager.execute_func_expr("boom()")
    started = time.monotonic()
    assert manager.execute_func_expr("fine()").output == 7
    assert ToolManager(tools=[fine]).execute_func_expr("fine()").output == 7
    assert time.monotonic() - started < 1

    async def main():
        with pytest.raises(exc):
            await manager.execute_func_expr_async("boom()")
        return await manager.execute_func_expr_async("fine()")

    assert asyncio.run(main()).output == 7


def test_a_base_exception_while_a_result_is_read_propagates():
    from dataclasses import dataclass

    @dataclass
    class Row:
        x: int

        def __getattribute__(self, name):
            if name == "x":
                raise SystemExit(4)
            return object.__getattribute__(self, name)

    def row() -> object:
        return Row(1)

    manager = ToolManager(tools=[row])
    with pytest.raises(SystemExit):
        manager.execute_func_expr("row()")
    # An Exception there stays the call's error.
    Row.__getattribute__ = lambda self, name: (_ for _ in ()).throw(ValueError("no"))
    assert manager.execute_func_expr("row()").error.kind == ErrorKind.ToolFailed


@dataclasses.dataclass
class Fragile:
    x: int

    def __post_init__(self):
        if self.x == 1:
            raise KeyboardInterrupt
        if self.x == 2:
            raise ValueError("not 2")


def norm(p: Fragile) -> int:
    return p.x


def test_a_keyboard_interrupt_from_an_argument_class_propagates():
    manager = ToolManager(tools=[norm], additional_context={"Fragile": Fragile})
    with pytest.raises(KeyboardInterrupt):
        manager.execute_func_expr("norm(p=Fragile(x=1))")
    with pytest.raises(KeyboardInterrupt):
        manager.execute_func_expr("norm(p={'x': 1})")
    with pytest.raises(KeyboardInterrupt):
        manager.execute_func_expr("Fragile(x=1)")
    # An Exception there stays a Type error of the call.
    assert manager.execute_func_expr("norm(p={'x': 2})").error.kind == ErrorKind.Type
    assert manager.execute_func_expr("norm(p={'x': 3})").output == 3


# Re-entrancy: a tool calling its manager again is bounded like Python's recursion.


@pytest.mark.parametrize("blocking", [True, False])
def test_a_tool_calling_its_manager_recursively_is_bounded(blocking):
    holder = {}

    def countdown(n: int) -> object:
        if n == 0:
            return 0
        out = holder["m"].execute_func_expr(f"countdown(n={n - 1})")
        return out.output if out.error is None else str(out.error)

    holder["m"] = ToolManager(tools=[FunctionTool(countdown, blocking=blocking)])
    out = holder["m"].execute_func_expr("countdown(n=2000)")
    assert "RecursionError" in str(out.output) or "RecursionError" in str(out.error), out
    # Within the bound: the answer.
    assert holder["m"].execute_func_expr("countdown(n=20)").output == 0


def test_an_async_tool_calling_its_manager_recursively_is_bounded():
    holder = {}

    async def countdown(n: int) -> object:
        if n == 0:
            return 0
        out = await holder["m"].execute_func_expr_async(f"countdown(n={n - 1})")
        return out.output if out.error is None else str(out.error)

    holder["m"] = ToolManager(tools=[countdown])
    out = asyncio.run(holder["m"].execute_func_expr_async("countdown(n=2000)"))
    assert "RecursionError" in str(out.output) or "RecursionError" in str(out.error), out
    assert asyncio.run(holder["m"].execute_func_expr_async("countdown(n=20)")).output == 0
    # The sync method over an async tool.
    out = holder["m"].execute_func_expr("countdown(n=2000)")
    assert "RecursionError" in str(out.output) or "RecursionError" in str(out.error), out


# Sync tools: concurrent and under the deadlines by default.


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_sync_tools_run_concurrently_by_default():
    manager = ToolManager(tools=[nap])
    three = "[nap(seconds=0.3), nap(seconds=0.3), nap(seconds=0.3)]"
    started = time.monotonic()
    outs = manager.execute(three)
    assert [o.output for o in outs] == [0.3] * 3
    assert time.monotonic() - started < 0.75
    started = time.monotonic()
    outs = manager.execute_func_exprs(["nap(seconds=0.3)"] * 3)
    assert [o.output for o in outs] == [0.3] * 3
    assert time.monotonic() - started < 0.75
    started = time.monotonic()
    outs = asyncio.run(manager.execute_async(three))
    assert [o.output for o in outs] == [0.3] * 3
    assert time.monotonic() - started < 0.75


def test_a_sync_tool_past_its_call_deadline_is_a_limit_error_by_default():
    manager = ToolManager(tools=[nap], limits=Limits(call_deadline=0.05))
    started = time.monotonic()
    out = manager.execute_func_expr("nap(seconds=0.6)")
    assert out.error.kind == ErrorKind.Limit and out.error.limit == "call_deadline", out
    assert time.monotonic() - started < 0.45


def test_blocking_false_runs_a_sync_tool_on_the_calling_thread():
    import threading

    def where() -> str:
        return threading.current_thread().name

    here = threading.current_thread().name
    inline = ToolManager(tools=[FunctionTool(where, blocking=False)])
    assert inline.execute_func_expr("where()").output == here
    assert ToolManager(tools=[where]).execute_func_expr("where()").output != here


# Pickling: what fexpr made comes back from a worker.


def test_a_deep_result_round_trips_through_pickle():
    value: object = 0
    for _ in range(200):
        value = [value]
    out = _one_tool(value).execute_func_expr("make()")
    assert out.error is None, out
    back = pickle.loads(pickle.dumps(out))
    assert back.to_dict()["output"] == out.to_dict()["output"]


# Fan-out: one bad item is that item's error, never the batch's.


def _deep() -> object:
    value: object = 0
    for _ in range(200):
        value = [value]
    return value


def deep() -> object:
    return _deep()


def gen() -> object:
    return (i for i in range(3))


def add_one(n: int) -> int:
    return n + 1


def fan_manager():
    return ToolManager(tools=[deep, gen, add_one])


def test_a_batch_survives_deep_and_unpicklable_results():
    from fexpr.fanout import execute_batch

    texts = ["deep()", "gen()", "add_one(n=1)"] * 2
    results = execute_batch(fan_manager, texts, workers=2, backend="processes", chunks=2)
    assert [len(r) for r in results] == [1] * 6
    deep_out, gen_out, add_out = (r[0] for r in results[:3])
    assert deep_out.error is None and deep_out.output == _deep()
    assert gen_out.output is None and gen_out.error.kind == ErrorKind.Value, gen_out
    assert "worker" in gen_out.error.message
    assert add_out.output == 2

    # Raw model output: an `Executed` per text, its bad output that output's error.
    texts = ["Sure:\ngen()\nadd_one(n=1)", "add_one(n=5)"]
    results = execute_batch(fan_manager, texts, method="execute_model_output", workers=2, backend="processes")
    first, second = results
    assert [o.name for o in first.outputs] == ["gen", "add_one"], first
    assert first.outputs[0].error is not None and first.outputs[1].output == 2
    assert [i.reason for i in first.ignored] and second.outputs[0].output == 6


def test_the_bfcl_drop_in_registers_only_a_class_s_own_public_methods():
    from fexpr import bfcl

    class Files:
        def ls(self) -> str:
            """List."""
            return "a"

        def _export_to_disk(self) -> str:
            return "exported"

        def __init__(self) -> None:
            self.export = self._export_to_disk

    manager = bfcl._manager({"Files": Files()})
    assert [d.func_name for d in manager.function_definitions] == ["ls"]


# Numbers: a Python tool receives what the model wrote (PEP 484's numeric tower).


def test_an_int_for_a_float_parameter_arrives_as_the_int():
    def add(a: float, b: float) -> dict:
        return {"result": a + b}

    def ten() -> float:
        return np.int64(10)

    manager = ToolManager(tools=[add, ten])
    out = manager.execute_func_expr("add(a=1, b=2)")
    assert out.output == {"result": 3} and type(out.output["result"]) is int
    assert out.to_dict()["output"] == {"result": 3}
    assert type(manager.execute_func_expr("add(a=1.5, b=2)").output["result"]) is float
    shown = manager.execute_func_expr("ten()")
    assert str(shown) == "ten() -> 10" and shown.to_dict()["output"] == 10
    assert manager.execute_func_expr("add(a=ten(), b=0.5)").output == {"result": 10.5}


def test_a_dict_of_str_keys_refuses_other_keys():
    def count(d: dict[str, int]) -> int:
        return len(d)

    manager = ToolManager(tools=[count])
    out = manager.execute_func_expr("count(d={1: 2})")
    assert out.error.kind == ErrorKind.Type and "keys must be str" in out.error.message, out
    assert manager.execute_func_expr("count(d={'a': 2})").output == 1


# Limits a user raises: a value over a limit's ceiling is refused, never a crash (issue 28).


def test_limits_over_their_ceilings_are_refused_and_the_ceiling_runs():
    def add(a: int, b: int) -> int:
        return a + b

    for field, value in [("max_depth", 10**6), ("max_collection_len", 100_000_000_000), ("max_int_digits", 10**9)]:
        with pytest.raises(ValueError, match=f"{field}.*ceiling"):
            ToolManager(tools=[add], limits=Limits(**{field: value}))
        # A request's own limits over a ceiling: its output is a Config error, nothing ran.
        done = ToolManager(tools=[add]).run("add(a=1, b=2)", limits=Limits(**{field: value}))
        [out] = done.outputs
        assert out.output is None and out.error.kind == ErrorKind.Config and "ceiling" in out.error.message
    # The messages name Python's `Limits(...)`, never Rust's `Limits::...`.
    with pytest.raises(ValueError) as raised:
        ToolManager(tools=[add], limits=Limits(max_depth=10**6))
    assert "Limits(max_depth=1000000) is above its ceiling of 256" in str(raised.value), raised.value
    assert "::" not in str(raised.value)
    [out] = ToolManager(tools=[add]).run("add(a=1, b=2)", limits=Limits(memory_bytes=1 << 20)).outputs
    assert out.error.message.startswith("Limits(memory_bytes=1048576) is below the 3670016 bytes"), out.error
    assert "::" not in out.error.message + out.error.hint, out.error
    assert out.error.hint == "set memory_bytes to at least 3670016", out.error
    # A duration no `Duration` holds says the range, with the value as given.
    for seconds, shown in [(-1, "-1.0"), (float("nan"), "NaN"), (float("inf"), "inf"), (1e300, "1e300")]:
        with pytest.raises(ValueError) as raised:
            Limits(deadline=seconds)
        assert str(raised.value) == (
            f"deadline must be a number of seconds from 0 to 18446744073709551615, not {shown}"
        ), raised.value
    assert Limits(call_deadline=2.5).call_deadline == 2.5
    # At the ceiling, deep input is refused or read, and the interpreter lives on.
    deep = ToolManager(tools=[add], limits=Limits(max_depth=256))
    for text in ["-" * 400_000 + "1", "[" * 300_000 + "]" * 300_000, "add(a=" + "[" * 255 + "]" * 255 + ", b=1)"]:
        out = deep.execute_func_expr(text)
        assert out.error is not None or out.output is not None
        out = deep.execute_func_expr_via_sandbox(text)
        assert out.error is not None or out.output is not None
