"""The method names AdalFlow's ``ToolManager`` has (and fexpr's earlier ones), each a thin
wrapper over the one way to run, ``ToolManager.run`` / ``arun`` (the engine's ``_request``).

They are here, in one place, so that code written for AdalFlow keeps working while new code
uses ``run``. What each gives back is what AdalFlow's gives: one ``FunctionOutput`` for a
single call, a list for several. The single-call names refuse a list of calls before any of it
runs.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal, Union

from ._types import Function, FunctionExpression

from . import _fexpr

# The options of the sandboxed wrappers (built once: the options of a request are one value).
_SANDBOXED = _fexpr.Options(sandboxed=True)


def _streamed(func: Any, stream: bool) -> Any:
    """AdalFlow's ``stream=True``: the call gets ``stream=True`` as a keyword argument (a tool
    that takes no ``stream`` gets an ``Arguments`` error, as AdalFlow's call fails)."""
    if not stream or not isinstance(func, Function):
        return func
    return Function(thought=func.thought, name=func.name, args=func.args, kwargs={**func.kwargs, "stream": True})


class AdalFlowNames:
    """AdalFlow's ``ToolManager`` methods over ``ToolManager.run`` (mixed into it)."""

    def __call__(
        self,
        *,
        expr_or_fun: Union[Function, FunctionExpression, str],
        step: Literal["execute", "parse"] = "execute",
        stream: bool = False,
    ) -> Any:
        """AdalFlow's ``manager(expr_or_fun=..., step=...)``: ``call``."""
        return self.call(expr_or_fun=expr_or_fun, step=step, stream=stream)

    def call(
        self,
        *,
        expr_or_fun: Union[Function, FunctionExpression, str],
        step: Literal["execute", "parse"] = "execute",
        stream: bool = False,
    ) -> Any:
        """``step="parse"``: the ``Function`` (a ``Function`` as it is, an expression parsed,
        or the ``Error``); ``step="execute"``: its ``FunctionOutput``."""
        if not isinstance(expr_or_fun, (Function, FunctionExpression, str)):
            raise ValueError(
                f"expr_or_fun should be either a Function or FunctionExpression. Got {expr_or_fun!r}"
            )
        if step == "parse":
            if isinstance(expr_or_fun, Function):
                return expr_or_fun
            return self.parse_func_expr(expr_or_fun)
        if step == "execute":
            if isinstance(expr_or_fun, Function):
                return self.execute_func(expr_or_fun, stream=stream)
            return self.execute_func_expr(expr_or_fun)
        raise ValueError(f"step should be either 'parse' or 'execute'. Got {step!r}")

    def execute_func(self, func: Any, stream: bool = False) -> "_fexpr.FunctionOutput":
        """Run a ``Function`` (name and arguments); a parse ``Error`` gives an output with that
        error. ``output.input`` is ``func``."""
        return self._request("function", _streamed(func, stream), "one")

    async def execute_func_async(self, func: Any, stream: bool = False) -> "_fexpr.FunctionOutput":
        """``execute_func`` for asyncio: async tools run on the running loop."""
        return await self._arequest("function", _streamed(func, stream), "one")

    def execute_func_expr(self, expr: Any) -> "_fexpr.FunctionOutput":
        """Parse and run one call expression (a str or a ``FunctionExpression``)."""
        return self._request("expr", expr, "one")

    async def execute_func_expr_async(self, expr: Any) -> "_fexpr.FunctionOutput":
        """``execute_func_expr`` for asyncio: async tools run on the running loop."""
        return await self._arequest("expr", expr, "one")

    def execute_func_exprs(self, exprs: Iterable[Any]) -> "list[_fexpr.FunctionOutput]":
        """Run several call expressions concurrently; one output each, in order."""
        return self._request("func_exprs", exprs, "many")

    async def execute_func_exprs_async(self, exprs: Iterable[Any]) -> "list[_fexpr.FunctionOutput]":
        """``execute_func_exprs`` for asyncio."""
        return await self._arequest("func_exprs", exprs, "many")

    def execute_func_expr_via_sandbox(self, expr: Any) -> "_fexpr.FunctionOutput":
        """``execute_func_expr`` inside the wasmtime sandbox (a fresh instance)."""
        return self._request("expr", expr, "one", _SANDBOXED)

    async def execute_func_expr_via_sandbox_async(self, expr: Any) -> "_fexpr.FunctionOutput":
        """``execute_func_expr_via_sandbox`` for asyncio."""
        return await self._arequest("expr", expr, "one", _SANDBOXED)

    def execute_func_exprs_via_sandbox(self, exprs: Iterable[Any]) -> "list[_fexpr.FunctionOutput]":
        """``execute_func_exprs`` inside the sandbox: each expression in its own instance."""
        return self._request("func_exprs", exprs, "many", _SANDBOXED)

    async def execute_func_exprs_via_sandbox_async(self, exprs: Iterable[Any]) -> "list[_fexpr.FunctionOutput]":
        """``execute_func_exprs_via_sandbox`` for asyncio."""
        return await self._arequest("func_exprs", exprs, "many", _SANDBOXED)

    def execute(self, text: str) -> "list[_fexpr.FunctionOutput]":
        """Run what a model wrote as an expression: one call or a list or tuple of calls."""
        return self._request("expr", text, "many")

    async def execute_async(self, text: str) -> "list[_fexpr.FunctionOutput]":
        """``execute`` for asyncio."""
        return await self._arequest("expr", text, "many")

    def execute_via_sandbox(self, text: str) -> "list[_fexpr.FunctionOutput]":
        """``execute`` inside the sandbox."""
        return self._request("expr", text, "many", _SANDBOXED)

    async def execute_via_sandbox_async(self, text: str) -> "list[_fexpr.FunctionOutput]":
        """``execute_via_sandbox`` for asyncio."""
        return await self._arequest("expr", text, "many", _SANDBOXED)

    def execute_json(self, text: str) -> "list[_fexpr.FunctionOutput]":
        """Run calls given as JSON text (fexpr's forms, OpenAI's and Anthropic's tool calls)."""
        return self._request("json", text, "many")

    def execute_json_via_sandbox(self, text: str) -> "list[_fexpr.FunctionOutput]":
        """``execute_json`` inside the sandbox."""
        return self._request("json", text, "many", _SANDBOXED)

    def execute_model_output(self, text: str, repairs: bool = True) -> "_fexpr.Executed":
        """Find the calls in a model's raw output, repair them (``repairs=False``: none) and
        run them: ``run(text, repairs=repairs)``."""
        return self._request("model_output", text, "run", _fexpr.Options(repairs=repairs))

    async def execute_model_output_async(self, text: str, repairs: bool = True) -> "_fexpr.Executed":
        """``execute_model_output`` for asyncio."""
        return await self._arequest("model_output", text, "run", _fexpr.Options(repairs=repairs))

    def execute_model_output_via_sandbox(self, text: str, repairs: bool = True) -> "_fexpr.Executed":
        """``execute_model_output`` with each call evaluated inside the sandbox."""
        return self._request("model_output", text, "run", _fexpr.Options(sandboxed=True, repairs=repairs))

    async def execute_model_output_via_sandbox_async(self, text: str, repairs: bool = True) -> "_fexpr.Executed":
        """``execute_model_output_via_sandbox`` for asyncio."""
        return await self._arequest("model_output", text, "run", _fexpr.Options(sandboxed=True, repairs=repairs))
