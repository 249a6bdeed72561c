"""fexpr: run the function calls a language model writes, safely.

A model answers with text such as ``add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))``.
fexpr parses it with a real Python parser, resolves names only against what you allow,
evaluates with every allocation bounded, binds the arguments to each tool's signature, and runs
your Python functions — or does all of that inside a wasmtime sandbox. Every call gives a
``FunctionOutput`` with an output or a structured error; bad model text never raises.

The API follows AdalFlow's (``FunctionTool``, ``ToolManager``, ``Function``,
``FunctionExpression``, ``FunctionOutput``)::

    from fexpr import FunctionTool, ToolManager

    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    manager = ToolManager(tools=[add], additional_context={"x": 2})
    out = manager.execute_func_expr("add(a=x, b=3)")
    assert out.output == 5 and out.error is None

``ToolManager.run`` is the one way to run anything (model text, ``Function``s, JSON,
natively or sandboxed); the AdalFlow names above are wrappers of it.
"""

from ._fexpr import (
    Checked,
    Error,
    ErrorKind,
    Executed,
    FunctionOutput,
    Ignored,
    Limits,
    Receipt,
    Repair,
    Verdict,
)
from ._manager import ToolManager
from ._runtime import current_session
from ._tool import FunctionTool, FunctionType
from ._types import Function, FunctionDefinition, FunctionExpression, Grammar, ToolOutput

__all__ = [
    "Checked",
    "Error",
    "ErrorKind",
    "Executed",
    "Function",
    "FunctionDefinition",
    "FunctionExpression",
    "FunctionOutput",
    "FunctionTool",
    "FunctionType",
    "Grammar",
    "Ignored",
    "Limits",
    "Receipt",
    "Repair",
    "ToolManager",
    "ToolOutput",
    "Verdict",
    "current_session",
]
