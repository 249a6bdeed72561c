"""The seed walkthrough from Python gives the Rust walkthrough's outputs, line for line."""

import pathlib
import subprocess
import sys

from conftest import Point

from fexpr import Function, FunctionExpression

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "walkthrough.py"

# `cargo run --example walkthrough`: the call lines of its four sections. The two errors of the
# function format (calls built as `Function`s) end with `(at 0..0)` there; Python leaves out the
# span of an error with no place in any text.
RUST_FUNCTION_FORMAT = """\
add(a=2, b=3) -> 5
search(query='something') -> ['result1something', 'result2something']
add_points(p1={'x': 1, 'y': 2}, p2={'x': 3, 'y': 4}) -> Point(x=4, y=6)
numpy_sum(arr=[[1, 2], [3, 4]]) -> 10
multiply(a=2, b='x') -> error: Type: `b` expects int, got str 'x'; hint: signature: multiply(a: int, b: int)
divide(a=2.0, b=3.0) -> 0.6666666666666666
add(a=5, b='y') -> error: Type: `b` expects int, got str 'y'; hint: signature: add(a: int, b: int)"""

RUST_EXPRESSION_FORMAT = """\
add(a=2, b=3) -> 5
search(query='something') -> ['result1something', 'result2something']
add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4)) -> Point(x=4, y=6)
numpy_sum(arr=array([[1, 2], [3, 4]])) -> 10
multiply(a=2, b=2) -> 4
divide(a=2.0, b=3.0) -> 0.6666666666666666
add(a=0, b=5) -> 5"""

RUST_BATCH = """\
add(a=2, b=3) -> 5
search(query='q') -> ['result1q', 'result2q']"""

RUST_REJECTED = """\
add(a=1, b=2); import os -> error: Unsupported: statements are not accepted; only one expression (at 13..14); hint: send a single expression, such as one call: `tool(a=1)`
__import__('os').system('id') -> error: Unsupported: attribute access is only accepted on dotted names such as `np.array` (at 0..23)
add.__globals__ -> error: Unsupported: dunder names are not accepted: `__globals__` (at 4..15)
numpy_sum(arr=np.zeros(3).tofile('x')) -> error: Unsupported: attribute access is only accepted on dotted names such as `np.array` (at 14..32)
add(a=1, c=2) -> error: Arguments: add() got an unexpected keyword argument `c` (at 9..10); hint: did you mean `b`? signature: add(a: int, b: int)
ad(a=1, b=2) -> error: UnknownTool: tool or function `ad` is not defined (at 0..2); hint: did you mean `add`?
'a' * 10**10 -> error: Unsupported: expected a function call like `name(arg=...)` or a list of calls (at 0..12)"""

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
REJECTED = [line.split(" -> ")[0] for line in RUST_REJECTED.splitlines()]


def lines(outputs):
    return "\n".join(str(o) for o in outputs)


def test_the_function_format_gives_the_rust_outputs(manager):
    outs = [manager.execute_func(Function.from_dict(f)) for f in FUNCTIONS]
    assert lines(outs) == RUST_FUNCTION_FORMAT


def test_the_expression_format_gives_the_rust_outputs(manager):
    outs = [manager.execute_func_expr(FunctionExpression(action=a)) for a in ACTIONS]
    assert lines(outs) == RUST_EXPRESSION_FORMAT


def test_the_parallel_batch_gives_the_rust_outputs(manager):
    outs = manager.execute_func_exprs([FunctionExpression(action=a) for a in ACTIONS])
    assert lines(outs) == RUST_EXPRESSION_FORMAT
    assert lines(manager.execute('[add(a=2, b=3), search(query="q")]')) == RUST_BATCH


def test_the_sandbox_gives_the_same_outputs(manager):
    outs = manager.execute_func_exprs_via_sandbox(ACTIONS)
    assert lines(outs) == RUST_EXPRESSION_FORMAT
    assert all(o.receipt is not None and o.receipt.host_calls == 1 for o in outs)


def test_the_rejected_inputs_give_the_rust_errors(manager):
    assert lines(manager.execute_func_expr(bad) for bad in REJECTED) == RUST_REJECTED


def test_outputs_are_the_objects_the_tools_returned(manager):
    out = manager.execute_func_expr("add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))")
    assert out.output == Point(4, 6)
    assert out.parsed_input == Function(name="add_points", kwargs={"p1": Point(1, 2), "p2": Point(3, 4)})
    assert out.error is None and out.call_id.startswith("call_")
    assert manager.execute_func_expr("search(query='q')").output == ["result1q", "result2q"]


def test_the_example_prints_the_rust_lines():
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    printed = {line.strip() for line in run.stdout.splitlines()}
    for expected in (RUST_FUNCTION_FORMAT, RUST_EXPRESSION_FORMAT, RUST_BATCH, RUST_REJECTED):
        for line in expected.splitlines():
            assert line in printed, line
    assert "def add_points(p1: Point, p2: Point) -> Point" in printed
