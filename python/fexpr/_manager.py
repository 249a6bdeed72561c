"""``ToolManager``: tools, the context expressions may use, limits; runs what a model wrote."""

from __future__ import annotations

import builtins
import enum
import inspect
import json
import sys
import types
from typing import Any, Iterable, Mapping, Optional

from . import _fexpr
from ._schema import Records, is_record_type
from ._tool import FunctionTool
from ._types import FunctionDefinition

# The functions fexpr evaluates itself (never Python's): numpy's under the prefix the numpy
# module is given, and Python's numeric built-ins.
_NUMPY_FUNCTIONS = ("array", "zeros", "ones", "arange", "sum", "mean", "min", "max")
_PYTHON_FUNCTIONS = ("abs", "len", "min", "max", "round", "sum")


class ToolManager(_fexpr.Manager):
    """Tools plus the names expressions may use, and the limits; runs what a model wrote.

    ``tools`` are ``FunctionTool``s or callables (made into ``FunctionTool``s).
    ``additional_context`` maps names to what an expression may use besides the tools:

    - values (``"x": 2``), converted once to fexpr values;
    - record types: dataclasses, pydantic models, TypedDicts, named tuples
      (``"Point": Point`` allows ``Point(x=1, y=2)``);
    - the ``numpy`` module, which gives fexpr's own allow-listed functions under that name
      (``"np": np`` allows ``np.array``, ``np.zeros``, ``np.ones``, ``np.arange``, ``np.sum``,
      ``np.mean``, ``np.min``, ``np.max``): the real module is never reachable;
    - those numpy functions or Python's ``abs``, ``len``, ``min``, ``max``, ``round``, ``sum``
      under any name (``"np.array": np.array``);
    - an Enum class, whose members become values (``"Color": Color`` allows ``Color.RED``).

    Other callables and modules are refused: a function a model may call is a tool.

    Every method that runs something returns its result: bad model text is an error value in
    the output, never an exception. The sync methods release the GIL while fexpr parses and
    evaluates; the ``*_async`` methods are awaitables for the running asyncio loop, and async
    tools run on that loop.
    """

    def __new__(
        cls,
        tools: Iterable[Any] = (),
        additional_context: Optional[Mapping[str, Any]] = None,
        *,
        limits: Optional[_fexpr.Limits] = None,
    ) -> "ToolManager":
        tools = [t if isinstance(t, FunctionTool) else FunctionTool(t) for t in tools]
        records = Records()
        for tool in tools:
            records.merge(tool._records)
        additional_context = dict(additional_context or {})
        entries = _context(additional_context, records)
        self = super().__new__(
            cls,
            [t._spec() for t in tools],
            entries,
            dict(records.builders),
            records.names(),
            limits,
        )
        self.tools = tools
        self._additional_context = additional_context
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Built by ``__new__``."""

    @property
    def context(self) -> dict:
        """The tools by name and the additional context (AdalFlow's ``context``)."""
        return {**{t.definition.func_name: t for t in self.tools}, **self._additional_context}

    @property
    def function_definitions(self) -> list[FunctionDefinition]:
        """Each tool's ``FunctionDefinition``."""
        return [FunctionDefinition(**d) for d in json.loads(self._definitions_json("function"))]

    @property
    def yaml_definitions(self) -> list[str]:
        """Each tool's definition as YAML (compact in a prompt)."""
        return [d.to_yaml() for d in self.function_definitions]

    @property
    def json_definitions(self) -> list[str]:
        """Each tool's definition as JSON."""
        return [d.to_json() for d in self.function_definitions]

    @property
    def python_definitions(self) -> list[str]:
        """Each tool as a Python signature with its docstring."""
        return self._python_definitions()

    def openai_tools(self) -> list[dict]:
        """The tools in OpenAI's ``tools`` format."""
        return json.loads(self._definitions_json("openai"))

    def anthropic_tools(self) -> list[dict]:
        """The tools in Anthropic's ``tools`` format."""
        return json.loads(self._definitions_json("anthropic"))

    # The async methods are coroutines, so that `asyncio.run(manager.execute_func_expr_async(...))`
    # works: the engine's awaitable needs the running loop, which exists once they run.

    async def execute_func_async(self, func: Any) -> _fexpr.FunctionOutput:
        """``execute_func`` for asyncio: async tools run on the running loop."""
        return await super().execute_func_async(func)

    async def execute_func_expr_async(self, expr: Any) -> _fexpr.FunctionOutput:
        """``execute_func_expr`` for asyncio: async tools run on the running loop."""
        return await super().execute_func_expr_async(expr)

    async def execute_func_exprs_async(self, exprs: Iterable[Any]) -> list[_fexpr.FunctionOutput]:
        """``execute_func_exprs`` for asyncio."""
        return await super().execute_func_exprs_async(exprs)

    async def execute_async(self, text: str) -> list[_fexpr.FunctionOutput]:
        """``execute`` for asyncio."""
        return await super().execute_async(text)

    async def execute_func_expr_via_sandbox_async(self, expr: Any) -> _fexpr.FunctionOutput:
        """``execute_func_expr_via_sandbox`` for asyncio."""
        return await super().execute_func_expr_via_sandbox_async(expr)

    async def execute_func_exprs_via_sandbox_async(self, exprs: Iterable[Any]) -> list[_fexpr.FunctionOutput]:
        """``execute_func_exprs_via_sandbox`` for asyncio."""
        return await super().execute_func_exprs_via_sandbox_async(exprs)

    async def execute_via_sandbox_async(self, text: str) -> list[_fexpr.FunctionOutput]:
        """``execute_via_sandbox`` for asyncio."""
        return await super().execute_via_sandbox_async(text)

    async def execute_model_output_async(self, text: str, repairs: bool = True) -> _fexpr.Executed:
        """``execute_model_output`` for asyncio."""
        return await super().execute_model_output_async(text, repairs)

    async def execute_model_output_via_sandbox_async(self, text: str, repairs: bool = True) -> _fexpr.Executed:
        """``execute_model_output_via_sandbox`` for asyncio."""
        return await super().execute_model_output_via_sandbox_async(text, repairs)

    def __repr__(self) -> str:
        return f"ToolManager(Tools: {self.tools!r}, Additional Context: {self._additional_context!r})"


def _context(context: dict, records: Records) -> list[tuple[str, str, Any]]:
    """The engine's context entries for ``additional_context``."""
    numpy = sys.modules.get("numpy")
    numpy_functions = {}
    if numpy is not None:
        numpy_functions = {id(getattr(numpy, n)): n for n in _NUMPY_FUNCTIONS}
    python_functions = {id(getattr(builtins, n)): n for n in _PYTHON_FUNCTIONS}
    entries: list[tuple[str, str, Any]] = []
    for name, value in context.items():
        if not isinstance(name, str):
            raise TypeError(f"additional_context keys are names, not {type(name).__name__}")
        if numpy is not None and value is numpy:
            entries.append(("numpy", name, None))
        elif id(value) in numpy_functions and value is getattr(numpy, numpy_functions[id(value)]):
            entries.append(("function", name, numpy_functions[id(value)]))
        elif id(value) in python_functions:
            entries.append(("function", name, python_functions[id(value)]))
        elif is_record_type(value):
            record = records.record(value)
            entries.append(("record", name, (record, json.dumps(records.record_schema(value)))))
        elif isinstance(value, type) and issubclass(value, enum.Enum):
            for member in value:
                entries.append(("variable", f"{name}.{member.name}", member.value))
        elif isinstance(value, types.ModuleType):
            raise TypeError(
                f"additional_context[{name!r}]: the module {value.__name__!r} cannot be given to "
                "expressions; only numpy is mapped (to fexpr's own np.* functions)"
            )
        elif isinstance(value, FunctionTool) or callable(value) and not isinstance(value, type):
            what = getattr(value, "__name__", type(value).__name__)
            raise TypeError(
                f"additional_context[{name!r}]: {what} is a function; pass functions a model "
                "may call as tools (tools=[...])"
            )
        elif inspect.isclass(value):
            raise TypeError(
                f"additional_context[{name!r}]: {value.__name__} is not a record type "
                "(a dataclass, pydantic model, TypedDict or named tuple) or an Enum"
            )
        else:
            entries.append(("variable", name, value))
    return entries
