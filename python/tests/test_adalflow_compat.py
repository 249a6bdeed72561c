"""AdalFlow's own unit-test expectations, run against ``import fexpr``.

Transcribed from SylphAI-Inc/AdalFlow (main, commit f231f234): ``adalflow/tests/test_tool.py``
(``FunctionTool``, ``FunctionType``, ``ToolManager.execute_func*``) and
``adalflow/tests/test_function_expression_parse.py`` (``parse_function_call_expr`` and
``evaluate_ast_node``, here ``ToolManager.parse_func_expr`` and ``execute_func_expr``). Each test
keeps AdalFlow's name, tools and asserted values; where fexpr differs on purpose the test says so
(python/README.md, "Migrating from AdalFlow"):

- AdalFlow raises ``ValueError`` for bad text; fexpr gives an ``Error`` value (never raises).
- AdalFlow evaluates ``lambda`` tools and any expression with ``eval``-like walks of the context;
  fexpr's tools are declared functions and its context holds values, record types and numpy.
- The tests of training mode (``GradComponent``, ``Component.train()``) have no fexpr
  counterpart (fexpr has no training mode) and are not transcribed; ``FunctionTool(fn,
  component=...)`` is accepted and keeps the component.
"""

import asyncio
import inspect
from dataclasses import dataclass

import numpy as np

from fexpr import (
    Error,
    ErrorKind,
    Function,
    FunctionDefinition,
    FunctionExpression,
    FunctionOutput,
    FunctionTool,
    FunctionType,
    ToolManager,
)

# ---------------------------------------------------------------- test_tool.py


@dataclass
class User:
    id: int
    name: str


def sync_add(x, y, user: User = User(id=1, name="John")):
    return x + y


async def async_add(x, y):
    return x + y


metadata = FunctionDefinition(func_desc="A simple addition tool", func_name="add")


def test_function_tool_sync():
    tool = FunctionTool(definition=metadata, fn=sync_add)
    output = tool(1, 2)  # Using __call__ which proxies to call()
    assert output.output == 3
    assert output.name == "add", "The name should be set to the function name"
    assert hasattr(output.input, "args")
    assert output.input.args == (1, 2)


def test_function_tool_async():
    tool = FunctionTool(fn=async_add)
    output = asyncio.run(tool.acall(3, 4))
    assert output.output == 7
    assert output.name == "async_add", "The name should be set to the function name"
    assert hasattr(output.input, "args")
    assert output.input.args == (3, 4)

    # call with sync call should work too
    output = tool.call(3, 4)
    assert output.output == 7
    assert output.name == "async_add", "The name should be set to the function name"
    assert hasattr(output.input, "args")
    assert output.input.args == (3, 4)


def sync_fun():
    """I'm a sync function"""
    return "sync"


async def async_fun():
    """I'm an async function"""
    return "async"


def sync_yield_fun():
    """I'm a sync generator function"""
    yield "sync_yield"


async def async_yield_fun():
    """I'm an async generator function"""
    yield "async_yield"


KINDS = [
    (sync_fun, FunctionType.SYNC),
    (async_fun, FunctionType.ASYNC),
    (sync_yield_fun, FunctionType.SYNC_GENERATOR),
    (async_yield_fun, FunctionType.ASYNC_GENERATOR),
]


def test_function_type_detection():
    for func, expected in KINDS:
        assert FunctionTool.detect_function_type(func) == expected


def test_function_tool_properties():
    for func, expected in KINDS:
        tool = FunctionTool(func)
        assert tool.function_type == expected
        assert tool._is_async == (expected in [FunctionType.ASYNC, FunctionType.ASYNC_GENERATOR])


async def _collect(agen):
    return [item async for item in agen]


def _check_kind_output(func, result):
    assert isinstance(result, FunctionOutput) and result.error is None, result
    if func is sync_yield_fun:
        assert list(result.output) == ["sync_yield"]
    elif func is async_yield_fun:
        assert asyncio.run(_collect(result.output)) == ["async_yield"]
    else:
        assert result.output == func.__name__.split("_")[0]


def test_sync_execution_comprehensive():
    for func, _ in KINDS:
        _check_kind_output(func, FunctionTool(func).call())


def test_async_execution_comprehensive():
    for func, _ in KINDS:
        result = asyncio.run(FunctionTool(func).acall())
        if func is async_yield_fun:
            # AdalFlow iterates it with `async for` inside the test's own loop.
            assert result.error is None and inspect.isasyncgen(result.output)
            assert asyncio.run(_collect(result.output)) == ["async_yield"]
        else:
            _check_kind_output(func, result)


def test_generator_consumption_patterns():
    assert list(FunctionTool(sync_yield_fun).call().output) == ["sync_yield"]
    assert asyncio.run(_collect(FunctionTool(async_yield_fun).call().output)) == ["async_yield"]


def _error_sync_fun():
    """A sync function that raises an error"""
    raise ValueError("Sync function error")


async def _error_async_fun():
    """An async function that raises an error"""
    await asyncio.sleep(0.01)
    raise ValueError("Async function error")


def test_error_handling():
    for func in (_error_sync_fun, _error_async_fun):
        result = FunctionTool(func).call()
        assert hasattr(result, "error")
        assert result.error is not None


def test_error_handling_async():
    for func in (_error_sync_fun, _error_async_fun):
        result = asyncio.run(FunctionTool(func).acall())
        assert hasattr(result, "error")
        assert result.error is not None


def test_tool_manager_execute_func():
    def add_numbers(x: int, y: int) -> int:
        """Add two numbers"""
        return x + y

    def multiply_numbers(x: int, y: int) -> int:
        """Multiply two numbers"""
        return x * y

    tool_manager = ToolManager(tools=[FunctionTool(add_numbers), FunctionTool(multiply_numbers)])
    result = tool_manager.execute_func(Function(name="add_numbers", args=[3, 5], kwargs={}))
    assert isinstance(result, FunctionOutput)
    assert result.output == 8
    assert result.name == "add_numbers"
    result = tool_manager.execute_func(Function(name="multiply_numbers", args=[4, 6], kwargs={}))
    assert result.output == 24
    assert result.name == "multiply_numbers"
    result = tool_manager.execute_func(Function(name="add_numbers", args=[2], kwargs={"y": 7}))
    assert result.output == 9


def test_tool_manager_execute_func_async():
    def sync_divide(x: int, y: int) -> float:
        """Divide two numbers"""
        return x / y

    async def async_power(x: int, y: int) -> int:
        """Raise x to the power of y"""
        await asyncio.sleep(0.01)
        return x**y

    tool_manager = ToolManager(tools=[FunctionTool(sync_divide), FunctionTool(async_power)])

    async def main():
        result = await tool_manager.execute_func_async(Function(name="sync_divide", args=[10, 2], kwargs={}))
        assert isinstance(result, FunctionOutput)
        assert result.output == 5.0
        assert result.name == "sync_divide"
        result = await tool_manager.execute_func_async(Function(name="async_power", args=[2, 3], kwargs={}))
        assert result.output == 8
        assert result.name == "async_power"
        result = await tool_manager.execute_func_async(Function(name="async_power", args=[3], kwargs={"y": 2}))
        assert result.output == 9

    asyncio.run(main())


def test_tool_manager_execute_func_streaming():
    def stream_numbers(count: int):
        """Generate a sequence of numbers"""
        for i in range(count):
            yield i
        return count

    tool_manager = ToolManager(tools=[FunctionTool(stream_numbers)])
    stream_func = Function(name="stream_numbers", args=[3], kwargs={})
    result = tool_manager.execute_func(stream_func, stream=False)
    assert isinstance(result, FunctionOutput)
    result_stream = tool_manager.execute_func(stream_func, stream=True)
    assert isinstance(result_stream, FunctionOutput)
    # As in AdalFlow, stream=True adds `stream=True` to the call: this tool takes no `stream`.
    assert result_stream.error.kind == ErrorKind.Arguments


def test_tool_manager_execute_func_error_handling():
    def error_function(x: int):
        """A function that always raises an error"""
        raise ValueError(f"Test error with input: {x}")

    tool_manager = ToolManager(tools=[FunctionTool(error_function)])
    result = tool_manager.execute_func(Function(name="error_function", args=[42], kwargs={}))
    assert isinstance(result, FunctionOutput)
    assert result.error is not None
    assert "Test error with input: 42" in str(result.error)


def test_tool_manager_execute_func_async_error_handling():
    def sync_error_function(x: int):
        """A sync function that raises an error"""
        raise RuntimeError(f"Sync error with input: {x}")

    async def async_error_function(x: int):
        """An async function that raises an error"""
        await asyncio.sleep(0.01)
        raise RuntimeError(f"Async error with input: {x}")

    tool_manager = ToolManager(tools=[FunctionTool(sync_error_function), FunctionTool(async_error_function)])

    async def main():
        result = await tool_manager.execute_func_async(Function(name="sync_error_function", args=[42], kwargs={}))
        assert isinstance(result, FunctionOutput)
        assert result.error is not None
        assert "Sync error with input: 42" in str(result.error)
        result = await tool_manager.execute_func_async(Function(name="async_error_function", args=[99], kwargs={}))
        assert "Async error with input: 99" in str(result.error)

    asyncio.run(main())


def test_tool_manager_execute_func_with_generators():
    def sync_generator_func(n: int):
        """Generate numbers from 0 to n-1"""
        for i in range(n):
            yield f"item_{i}"

    async def async_generator_func(n: int):
        """Async generate numbers from 0 to n-1"""
        for i in range(n):
            await asyncio.sleep(0.001)
            yield f"async_item_{i}"

    tool_manager = ToolManager(tools=[FunctionTool(sync_generator_func), FunctionTool(async_generator_func)])
    result = tool_manager.execute_func(Function(name="sync_generator_func", args=[3], kwargs={}))
    assert isinstance(result, FunctionOutput)
    assert list(result.output) == ["item_0", "item_1", "item_2"]
    result = tool_manager.execute_func(Function(name="async_generator_func", args=[2], kwargs={}))
    assert isinstance(result, FunctionOutput)
    assert asyncio.run(_collect(result.output)) == ["async_item_0", "async_item_1"]


def test_tools_of_a_component_and_a_callable_manager():
    """The component test's pattern (tools of a component's methods, called as ``tools[0](1, 2)``;
    ``FunctionTool(fn, component=...)``) and the tutorial's callable manager."""

    class Adder:
        def call(self, x, y):
            return x + y

    adder = Adder()

    def add_as_tool(x, y):
        return adder.call(x, y)

    tools = [FunctionTool(fn=add_as_tool, component=adder), FunctionTool(fn=adder.call)]
    assert tools[0].component is adder
    assert tools[0](1, 2).output == 3
    manager = ToolManager(tools=tools)
    assert manager.tools[1](1, 2).output == 3
    out = manager(expr_or_fun=FunctionExpression(action="add_as_tool(1, 2)"), step="execute")
    assert out.output == 3
    parsed = manager(expr_or_fun=FunctionExpression(action="add_as_tool(1, 2)"), step="parse")
    assert parsed == Function(name="add_as_tool", args=[1, 2], kwargs={})
    assert manager.call(expr_or_fun=parsed, step="execute").output == 3
    # The tutorial: `execute` runs a tool whatever its kind, in or out of an event loop.
    assert FunctionTool(async_add).execute(1, 2).output == 3

    async def in_loop():
        return await FunctionTool(sync_add).execute(1, 2)

    assert asyncio.run(in_loop()).output == 3


# ------------------------------------------- test_function_expression_parse.py


@dataclass
class Point:
    x: int
    y: int


def add_points(p1: Point, p2: Point) -> Point:
    return Point(p1.x + p2.x, p1.y + p2.y)


def numpy_sum(arr: np.ndarray) -> int:
    return np.sum(arr)


def add(a, b: int) -> int:
    return a + b


def multiply(a, b):
    return a * b


def power(x, y=2):
    return x**y


def echo(value):
    """Gives back its argument: evaluates an expression as an argument is (AdalFlow's
    ``evaluate_ast_node``)."""
    return value


def make_manager() -> ToolManager:
    # AdalFlow's context_map; its lambdas are tools here (functions a model may call are tools).
    return ToolManager(
        tools=[add, multiply, power, add_points, numpy_sum, echo],
        additional_context={"x": 10, "y": 5, "Point": Point, "np": np, "array": np.array, "sum": np.sum,
                            "mean": np.mean},
    )


def evaluate(text: str):
    out = make_manager().execute_func_expr(f"echo({text})")
    assert out.error is None, out
    return out.output


def test_evaluate_constant():
    assert evaluate("42") == 42


def test_evaluate_dict():
    assert evaluate("{'a': 1, 'b': 2}") == {"a": 1, "b": 2}


def test_evaluate_list():
    assert evaluate("[1, 2, 3]") == [1, 2, 3]


def test_evaluate_tuple():
    assert evaluate("(1, 2, 3)") == (1, 2, 3)


def test_evaluate_unary_op():
    assert evaluate("-10") == -10


def test_evaluate_bin_op():
    assert evaluate("10 + 5") == 15


def test_evaluate_name():
    assert evaluate("x") == 10


def test_evaluate_function_call():
    assert make_manager().execute_func_expr("add(3, 4)").output == 7


def test_unsupported_ast_node():
    # AdalFlow raises ValueError; fexpr gives the error as a value.
    assert make_manager().execute_func_expr("echo(lambda x: x + 1)").error.kind == ErrorKind.Unsupported


def test_parse_function_call_expr_valid():
    func = make_manager().parse_func_expr("add(3, 4)")
    assert func.name == "add"
    assert func.args == [3, 4]
    assert func.kwargs == {}


def test_parse_function_call_expr_with_kwargs():
    func = make_manager().parse_func_expr("power(3, y=3)")
    assert func.name == "power"
    assert func.args == [3]
    assert func.kwargs == {"y": 3}


def test_parse_function_call_expr_invalid():
    assert isinstance(make_manager().parse_func_expr("3 + 4"), Error)


def test_evaluate_nested_function_calls():
    assert make_manager().execute_func_expr("add(multiply(2, 3), 4)").output == 10


def test_evaluate_with_variable_replacement():
    manager = make_manager()
    func = manager.parse_func_expr("add(x, y)")
    assert func.name == "add"
    assert func.args == [10, 5]
    assert func.kwargs == {}
    assert manager.execute_func(func).output == 15


def test_evaluate_with_wrong_keyword():
    # AdalFlow parses it and the call raises TypeError; fexpr checks the call against the
    # signature: an Arguments error, and nothing runs.
    out = make_manager().execute_func_expr("add(x, y=5)")
    assert out.error.kind == ErrorKind.Arguments


def test_evaluate_with_variable_replacement_and_kwargs():
    manager = make_manager()
    func = manager.parse_func_expr("add(x, b=y)")
    assert func.name == "add"
    assert func.args == [10]
    assert func.kwargs == {"b": 5}
    assert manager.execute_func(func).output == 15


def test_evaluate_with_unknown_variable():
    assert make_manager().parse_func_expr("add(x, z)").kind == ErrorKind.UnknownName


def test_evaluate_complex_list():
    assert evaluate("[1, [2, 3], {'a': 4, 'b': [5, 6]}]") == [1, [2, 3], {"a": 4, "b": [5, 6]}]


def test_evaluate_complex_dict():
    text = "{'key1': 1, 'key2': {'subkey1': [1, 2, 3], 'subkey2': {'subsubkey': 4}}}"
    assert evaluate(text) == {"key1": 1, "key2": {"subkey1": [1, 2, 3], "subkey2": {"subsubkey": 4}}}


def test_evaluate_with_dataclass():
    manager = make_manager()
    func = manager.parse_func_expr("add_points(Point(1, 2), Point(3, 4))")
    assert func.name == "add_points"
    assert func.args == [Point(1, 2), Point(3, 4)]
    assert func.kwargs == {}
    assert manager.execute_func(func).output == Point(4, 6)


def test_evaluate_numpy_array():
    np.testing.assert_array_equal(evaluate("array([1, 2, 3, 4])"), np.array([1, 2, 3, 4]))


def test_evaluate_numpy_sum():
    assert evaluate("sum(array([1, 2, 3, 4]))") == 10


def test_evaluate_numpy_mean():
    assert evaluate("mean(array([1, 2, 3, 4]))") == 2.5


def test_evaluate_numpy_sum_2d():
    assert make_manager().execute_func_expr("numpy_sum(arr=np.array([[1, 2], [3, 4]]))").output == 10
