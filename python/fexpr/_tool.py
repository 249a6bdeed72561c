"""``FunctionTool``: a Python function (sync or async, or a bound method) described to a model
by its type hints and docstring."""

from __future__ import annotations

import asyncio
import enum
import functools
import inspect
import json
from typing import Any, Callable, Optional, Union

from . import _fexpr
from ._schema import _MISSING, Records, _hints, docstring, json_default
from ._types import Function, FunctionDefinition


class FunctionType(enum.Enum):
    """The four kinds of function a ``FunctionTool`` runs (AdalFlow's ``FunctionType``)."""

    SYNC = enum.auto()
    """``def f(): return value``"""
    ASYNC = enum.auto()
    """``async def f(): return value``"""
    SYNC_GENERATOR = enum.auto()
    """``def f(): yield value``: the generator is the output."""
    ASYNC_GENERATOR = enum.auto()
    """``async def f(): yield value``: the async generator is the output."""


class FunctionTool:
    """A function a model can call.

    ``fn`` may be a function, an ``async`` function, a bound method (a component tool: the
    instance keeps configuration, clients and state the model never sees) or any callable.
    Its parameters' JSON Schema comes from the type hints; the description and the
    parameters' descriptions from the docstring (Google, NumPy or reST style). ``*args`` and
    ``**kwargs`` parameters are not offered to the model.

    ``definition`` (AdalFlow's ``FunctionDefinition``, or a dict with ``func_name``,
    ``func_desc``, ``func_parameters``) replaces the generated one; ``name`` and
    ``description`` replace the function's name and docstring. A sync function runs on a
    worker thread (``blocking=True``, the default), so that slow calls of one response overlap
    and a call past ``Limits.call_deadline`` (or the request's ``deadline``) returns a ``Limit``
    error on time (the thread finishes the call; its result is dropped). ``blocking=False``
    runs it on the calling thread instead: for a function that must not run on another thread
    (thread-bound state), or a quick one, at the cost of deadlines (it cannot be interrupted).
    ``component`` is kept as ``tool.component`` (AdalFlow's argument; fexpr has no training
    mode).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        definition: Union[FunctionDefinition, dict, None] = None,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        blocking: bool = True,
        component: Any = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"FunctionTool needs a callable, not {type(fn).__name__}")
        self.fn = fn
        self.blocking = blocking
        # AdalFlow's `component=`: the object `fn` works for, kept for the caller (fexpr has no
        # training mode to pass on to it).
        self.component = component
        self.function_type = self.detect_function_type(fn)
        self._records = Records()
        self._build(definition, name, description)

    @classmethod
    def detect_function_type(cls, fn: Callable[..., Any]) -> FunctionType:
        """What kind of callable ``fn`` is, as AdalFlow tells: an ``async def`` with ``yield``
        is an ``ASYNC_GENERATOR``; a callable object is what its ``__call__`` is::

            >>> async def ticks():
            ...     yield 1
            >>> FunctionTool.detect_function_type(ticks)
            <FunctionType.ASYNC_GENERATOR: 4>
        """
        if fn is None:
            raise ValueError("Function cannot be None")
        for target in (fn, None if _is_plain_callable(fn) else _call_method(fn)):
            if target is None:
                continue
            if inspect.isasyncgenfunction(target):
                return FunctionType.ASYNC_GENERATOR
            if inspect.isgeneratorfunction(target):
                return FunctionType.SYNC_GENERATOR
            if inspect.iscoroutinefunction(target):
                return FunctionType.ASYNC
        if callable(fn):
            return FunctionType.SYNC
        raise ValueError(f"Cannot determine function type for {fn!r}")

    @property
    def _is_async(self) -> bool:
        """AdalFlow's ``_is_async``: an ``async def``, with or without ``yield``."""
        return self.function_type in (FunctionType.ASYNC, FunctionType.ASYNC_GENERATOR)

    @property
    def is_async(self) -> bool:
        """Whether ``fn`` is an ``async def`` (with or without ``yield``)."""
        return self._is_async

    def _build(self, definition: Any, name: Optional[str], description: Optional[str]) -> None:
        fn = self.fn
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as e:
            raise TypeError(f"cannot read the signature of {fn!r}: {e}") from None
        hints = _hints(_hint_source(fn))
        doc, param_docs = docstring(fn)
        self._name = name or getattr(fn, "__name__", None) or type(fn).__name__
        self._description = doc if description is None else description
        properties: dict[str, dict] = {}
        required: list[str] = []
        self._params: list[tuple[str, bool, Any, bool]] = []
        for param in signature.parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            schema, convert = self._records.schema(hints.get(param.name, param.annotation))
            text = param_docs.get(param.name)
            if text and "description" not in schema:
                schema = {**schema, "description": text}
            # A default fexpr cannot write down stays Python's: a missing argument arrives as
            # None from the engine, and is then left out of the call.
            python_default = False
            if param.default is param.empty:
                required.append(param.name)
            else:
                value = json_default(param.default)
                if value is _MISSING:
                    python_default = True
                else:
                    schema = {**schema, "default": value}
            properties[param.name] = schema
            self._params.append((param.name, param.kind == param.KEYWORD_ONLY, convert, python_default))
        parameters: dict = {"type": "object", "properties": properties, "required": required}
        returns: Optional[dict] = None
        if "return" in hints:
            returns, _ = self._records.schema(hints["return"])
        if self._records.defs:
            parameters["$defs"] = dict(self._records.defs)
            if returns is not None:
                returns = {**returns, "$defs": dict(self._records.defs)}
        if definition is not None:
            given = definition.to_dict() if hasattr(definition, "to_dict") else dict(definition)
            self._name = given.get("func_name", self._name)
            parameters = given.get("func_parameters") or parameters
            self._params = _params_by_name(self._params, parameters, signature)
            desc = given.get("func_desc")
            if desc is not None and description is None:
                self._description = desc
        self._parameters_json = json.dumps(parameters)
        self._returns_json = None if returns is None else json.dumps(returns)
        self.definition = FunctionDefinition(
            **json.loads(
                _fexpr.function_definition(
                    self._name, self._description, self._parameters_json, self._returns_json
                )
            )
        )

    def _spec(self) -> tuple:
        """What the engine needs to call this tool (read by ``fexpr._fexpr.Manager``)."""
        return (
            self._name,
            self._description,
            self._parameters_json,
            self._returns_json,
            self.fn,
            # Awaited by the engine: a coroutine function. An async generator function is
            # called like a sync one and its generator is the result, as in AdalFlow.
            self.function_type is FunctionType.ASYNC,
            self.blocking,
            self._params,
        )

    def call(self, *args: Any, **kwargs: Any) -> "Any":
        """Run the tool with these arguments, checked and converted as a model's call would be;
        a ``FunctionOutput`` whose ``input`` is the ``Function`` (``input.args == args``). An
        async tool runs to its end."""
        return self._manager().execute_func(_function(self._name, args, kwargs))

    def __call__(self, *args: Any, **kwargs: Any) -> "Any":
        """``call`` (AdalFlow's tools are callable): ``tool(1, 2)``."""
        return self.call(*args, **kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> "Any":
        """``call`` for asyncio: an async tool runs on the running loop."""
        return await self._manager().execute_func_async(_function(self._name, args, kwargs))

    def execute(self, *args: Any, **kwargs: Any) -> "Any":
        """AdalFlow's ``execute``: ``call`` when no asyncio loop runs in this thread, else the
        awaitable of ``acall`` (``await tool.execute(...)``), whatever the function's kind."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self.call(*args, **kwargs)
        return self.acall(*args, **kwargs)

    def _manager(self) -> Any:
        manager = self.__dict__.get("_own_manager")
        if manager is None:
            from ._manager import ToolManager

            manager = self.__dict__["_own_manager"] = ToolManager(tools=[self])
        return manager

    def __repr__(self) -> str:
        return (
            f"FunctionTool(fn: {self.fn!r}, async: {self._is_async}, "
            f"definition: {self.definition!r})"
        )


def _params_by_name(params: list, parameters: dict, signature: inspect.Signature) -> list:
    """The function's parameters for a given definition: in the definition's order (the order
    the engine binds them in) and passed by name, when each of its names is a parameter of the
    function or the function takes ``**kwargs`` (a key Python cannot name, ``from`` or
    ``max-results``, then reaches it as a keyword). Otherwise, or with positional-only
    parameters, the function's own order, as before."""
    names = list((parameters.get("properties") or {}).keys())
    by_name = {param[0]: param for param in params}
    kinds = [p.kind for p in signature.parameters.values()]
    var_keyword = inspect.Parameter.VAR_KEYWORD in kinds
    if (
        not names
        or inspect.Parameter.POSITIONAL_ONLY in kinds
        or not all(name in by_name or var_keyword for name in names)
    ):
        return params
    return [(name, True, *by_name[name][2:]) if name in by_name else (name, True, None, False) for name in names]


def _function(name: str, args: tuple, kwargs: dict) -> Function:
    return Function(name=name, args=args, kwargs=kwargs)


def _hint_source(fn: Any) -> Any:
    """Where ``fn``'s type hints are: the wrapped function of a partial, the ``__call__`` of a
    callable instance, else ``fn`` itself (a bound method's hints are its function's)."""
    if isinstance(fn, functools.partial):
        return _hint_source(fn.func)
    if _is_instance_callable(fn):
        return type(fn).__call__
    return fn


def _is_instance_callable(fn: Any) -> bool:
    return not (
        inspect.isfunction(fn)
        or inspect.ismethod(fn)
        or inspect.isbuiltin(fn)
        or isinstance(fn, (type, functools.partial))
    )


def _is_plain_callable(fn: Any) -> bool:
    return inspect.isfunction(fn) or inspect.ismethod(fn) or isinstance(fn, functools.partial)


def _call_method(fn: Any) -> Any:
    """The function behind a callable object's ``__call__``."""
    call = getattr(fn, "__call__", None)
    return getattr(call, "__func__", call)
