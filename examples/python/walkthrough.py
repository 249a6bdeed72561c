"""The seed walkthrough (AdalFlow's "Function calls" tutorial), replayed with fexpr from Python.

Six tools (sync and async), a context with the variables ``x`` and ``y``, numpy as ``np`` and
the ``Point`` dataclass; the seven queries' calls in both model-output formats (``Function``
JSON and ``FunctionExpression``), the parallel batch, the sandbox, and what is rejected. The
call lines are those of the Rust walkthrough (``cargo run --example walkthrough``).

Run: ``python examples/python/walkthrough.py`` (after ``pip install ./python numpy``).
"""

import asyncio
from dataclasses import dataclass
from typing import List, Union

import numpy as np

from fexpr import Function, FunctionExpression, ToolManager


def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def divide(a: float, b: float) -> float:
    """Divide two numbers."""
    await asyncio.sleep(0)
    return float(a) / b


async def search(query: str) -> List[str]:
    """Search for query and return a list of results."""
    await asyncio.sleep(0)
    return ["result1" + query, "result2" + query]


def numpy_sum(arr: np.ndarray) -> Union[int, float]:
    """Sum the elements of an array."""
    return np.sum(arr)


@dataclass
class Point:
    x: int
    y: int


def add_points(p1: Point, p2: Point) -> Point:
    """Add two points."""
    return Point(p1.x + p2.x, p1.y + p2.y)


TOOLS = [multiply, add, divide, search, numpy_sum, add_points]
CONTEXT = {"x": 2, "y": 0, "np": np, "Point": Point}

# The seven queries' calls as a model writes them.
FUNCTIONS = [
    {"name": "add", "kwargs": {"a": 2, "b": 3}},
    {"name": "search", "kwargs": {"query": "something"}},
    {"name": "add_points", "kwargs": {"p1": {"x": 1, "y": 2}, "p2": {"x": 3, "y": 4}}},
    {"name": "numpy_sum", "kwargs": {"arr": [[1, 2], [3, 4]]}},
    {"name": "multiply", "kwargs": {"a": 2, "b": "x"}},
    {"name": "divide", "kwargs": {"a": 2.0, "b": 3.0}},
    {"name": "add", "kwargs": {"a": 5, "b": "y"}},
]
ACTIONS = [
    "add(a=2, b=3)",
    'search(query="something")',
    "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
    "numpy_sum(arr=np.array([[1, 2], [3, 4]]))",
    "multiply(a=2, b=x)",
    "divide(a=2.0, b=3.0)",
    "add(a=y, b=5)",
]
REJECTED = [
    "add(a=1, b=2); import os",
    "__import__('os').system('id')",
    "add.__globals__",
    "numpy_sum(arr=np.zeros(3).tofile('x'))",
    "add(a=1, c=2)",
    "ad(a=1, b=2)",
    "'a' * 10**10",
]


def main() -> None:
    manager = ToolManager(tools=TOOLS, additional_context=CONTEXT)

    print("== Tools as a model sees them (YAML) ==")
    for definition in manager.yaml_definitions:
        print(definition)
    print("== The same as Python signatures ==")
    for definition in manager.python_definitions:
        print(definition)

    # 1. The model answers with `Function` JSON. A dict where a `Point` is expected becomes a
    #    `Point`, and a nested list becomes an ndarray.
    print("\n== Function format (name + kwargs) ==")
    for data in FUNCTIONS:
        print(f"  {manager.execute_func(Function.from_dict(data))}")
    print("  (in JSON, `x` and `y` are strings: a type error, not silently 'xx' as in AdalFlow)")

    # 2. The model answers with `FunctionExpression`: a Python call, with variables and records.
    print("\n== FunctionExpression format (a call expression) ==")
    for action in ACTIONS:
        print(f"  {manager.execute_func_expr(FunctionExpression(action=action))}")

    # The output is the object the tool returned: a Point, a numpy value.
    out = manager.execute_func_expr("add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})")
    assert out.output == Point(4, 6), out

    # 3. Several calls run concurrently; outputs come back in call order.
    print("\n== Parallel calls ==")
    for out in manager.execute_func_exprs([FunctionExpression(action=a) for a in ACTIONS]):
        print(f"  {out}")
    for out in manager.execute('[add(a=2, b=3), search(query="q")]'):
        print(f"  {out}")

    # The same from asyncio: async tools run on the running loop.
    async def from_asyncio() -> None:
        outs = await asyncio.gather(*(manager.execute_func_expr_async(a) for a in ACTIONS))
        assert [str(o) for o in outs] == [str(manager.execute_func_expr(a)) for a in ACTIONS]

    asyncio.run(from_asyncio())

    # 4. Inside the wasmtime sandbox: the same outputs, each with what it cost.
    print("\n== Sandboxed ==")
    for out in manager.execute_func_exprs_via_sandbox(ACTIONS):
        print(f"  {out}  [fuel {out.receipt.fuel_used}, {out.receipt.host_calls} host call]")

    # 5. What AdalFlow's eval would have run, or silently dropped, is an error here.
    print("\n== Rejected ==")
    for bad in REJECTED:
        print(f"  {manager.execute_func_expr(bad)}")


if __name__ == "__main__":
    main()
