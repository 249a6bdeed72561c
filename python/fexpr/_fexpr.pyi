"""Type stubs of the extension module ``fexpr._fexpr`` (the engine, in Rust)."""

from typing import Any, Awaitable, ClassVar, Optional, Union, final

from typing_extensions import disjoint_base

from ._types import Function, FunctionExpression

__all__ = [
    "Manager",
    "Options",
    "FunctionOutput",
    "Error",
    "ErrorKind",
    "Repair",
    "Receipt",
    "Executed",
    "Ignored",
    "Checked",
    "Verdict",
    "Limits",
    "Stream",
    "function_definition",
    "json_to_yaml",
    "serve_mcp",
    "NUMPY_FUNCTIONS",
    "PYTHON_FUNCTIONS",
]

_Expr = Union[str, FunctionExpression]

@final
class ErrorKind:
    """The category of an error: a small closed set to branch on. ``str(kind)`` is its name."""

    Syntax: ClassVar[ErrorKind]
    Unsupported: ClassVar[ErrorKind]
    UnknownName: ClassVar[ErrorKind]
    UnknownTool: ClassVar[ErrorKind]
    Arguments: ClassVar[ErrorKind]
    Type: ClassVar[ErrorKind]
    Value: ClassVar[ErrorKind]
    Limit: ClassVar[ErrorKind]
    ToolFailed: ClassVar[ErrorKind]
    Sandbox: ClassVar[ErrorKind]
    Config: ClassVar[ErrorKind]

@final
class Error:
    """A structured error: a value in ``FunctionOutput.error``, never raised."""

    @property
    def kind(self) -> ErrorKind: ...
    @property
    def message(self) -> str: ...
    @property
    def span(self) -> Optional[tuple[int, int]]:
        """The byte range ``(start, end)`` of the input it concerns, when there is one."""
    @property
    def hint(self) -> Optional[str]:
        """How to fix it: the expected signature, the closest name, the limit to raise."""
    @property
    def limit(self) -> Optional[str]:
        """For a ``Limit`` error, the budget that ran out, named as its ``Limits`` field
        (``"max_calls"``, ``"deadline"``, ``"call_deadline"``, …); else ``None``."""
    def to_dict(self) -> dict[str, Any]: ...

@final
class Repair:
    """A schema-aware repair made to a call of raw model output before it ran."""

    @property
    def kind(self) -> str:
        """``JsonLiteral``, ``IntegralFloat``, ``SingleToList`` or ``EnumName``."""
    @property
    def path(self) -> str: ...
    @property
    def span(self) -> tuple[int, int]: ...
    @property
    def from_(self) -> str:
        """The text as written."""
    @property
    def to(self) -> str:
        """What it was read as."""
    @property
    def reason(self) -> str: ...

@final
class Receipt:
    """What one sandboxed evaluation cost."""

    fuel_used: int
    peak_memory_bytes: int
    wall_time: float
    """Seconds, waiting for a free instance and host calls included."""
    host_calls: int

@final
class FunctionOutput:
    """The result of one call: an ``output`` or an ``error``, never neither."""

    @property
    def name(self) -> str:
        """The tool name (or, when the call could not be read, the input clipped)."""
    @property
    def input(self) -> Union[str, Function, FunctionExpression]:
        """What the call came from: the object given (the ``Function`` of ``execute_func``
        and ``FunctionTool.call``, the ``FunctionExpression`` or str of
        ``execute_func_expr``), else the text (or JSON) of the call. A pickled output keeps
        the text only."""
    @property
    def parsed_input(self) -> Optional[Function]:
        """The call with its evaluated arguments, when it got that far."""
    @property
    def output(self) -> Any:
        """What the tool returned: the very object, for the call the input names."""
    @property
    def error(self) -> Optional[Error]: ...
    @property
    def observation(self) -> Optional[str]:
        """The short text for the model, when the tool returned a ``ToolOutput`` with one."""
    @property
    def repairs(self) -> list[Repair]: ...
    @property
    def receipt(self) -> Optional[Receipt]:
        """What the sandboxed evaluation cost; ``None`` when run natively."""
    @property
    def call_id(self) -> str:
        """The call's id: the model's (OpenAI ``tool_calls[].id``, Anthropic ``tool_use.id``,
        a JSON call's ``id``) when it gave one, else a generated unique ``call_…`` id."""
    def to_dict(self) -> dict[str, Any]:
        """``{"name", "args", "kwargs", "output", "error"}`` (and ``observation``, ``receipt``,
        ``repairs`` when present), as JSON data."""

@final
class Ignored:
    """Text of a model's output that was not used as a call, and why."""

    span: tuple[int, int]
    reason: str
    text: str

@final
class Executed:
    """What running a model's raw output gave: one output per call (none when the text held
    no call; ``nothing_to_run`` then says why)."""

    outputs: list[FunctionOutput]
    ignored: list[Ignored]
    nothing_to_run: Optional[Error]

@final
class Verdict:
    """Whether one call of a model's output fits its tool, without running it."""

    name: str
    span: tuple[int, int]
    input: str
    kwargs: dict[str, Any]
    valid: bool
    error: Optional[Error]
    repairs: list[Repair]

@final
class Checked:
    verdicts: list[Verdict]
    ignored: list[Ignored]
    error: Optional[Error]
    """Set when the text was refused as a whole (too large)."""

@final
class Limits:
    """Every budget fexpr enforces; the defaults are safe for untrusted model output.
    ``deadline`` (one request, 30 s by default) and ``call_deadline`` (one tool call, 10 s)
    are in seconds and hold natively and sandboxed. The sandbox-only budgets are ``fuel``,
    ``memory_bytes``, ``wasm_stack_bytes`` and ``max_host_calls``."""

    def __new__(
        cls,
        *,
        max_source_bytes: Optional[int] = None,
        max_depth: Optional[int] = None,
        max_int_digits: Optional[int] = None,
        max_str_bytes: Optional[int] = None,
        max_collection_len: Optional[int] = None,
        max_calls: Optional[int] = None,
        max_constructors: Optional[int] = None,
        max_eval_bytes: Optional[int] = None,
        max_output_bytes: Optional[int] = None,
        fuel: Optional[int] = None,
        deadline: Optional[float] = None,
        call_deadline: Optional[float] = None,
        memory_bytes: Optional[int] = None,
        wasm_stack_bytes: Optional[int] = None,
        max_host_calls: Optional[int] = None,
    ) -> Limits: ...
    max_source_bytes: int
    max_depth: int
    max_int_digits: int
    max_str_bytes: int
    max_collection_len: int
    max_calls: int
    max_constructors: int
    max_eval_bytes: int
    max_output_bytes: int
    fuel: int
    deadline: float
    call_deadline: float
    memory_bytes: int
    wasm_stack_bytes: int
    max_host_calls: int

@disjoint_base
class Manager:
    """The engine's tool manager; use its subclass ``fexpr.ToolManager``."""

    def __new__(
        cls,
        tools: list[Any],
        context: list[tuple[str, str, Any]],
        builders: dict[str, Any],
        record_names: dict[Any, str],
        limits: Optional[Limits] = None,
    ) -> Manager:
        """Built by ``fexpr.ToolManager`` from its tools' specs, context entries and records."""

    def parse_func_expr(self, expr: _Expr) -> Union[Function, Error]:
        """Parse one call and evaluate its arguments without running anything."""
    def check_model_output(self, text: str, repairs: bool = True) -> Checked:
        """Check the calls in a model's raw output against the tools; nothing runs."""
    def _grammar(self, format: str, markup: str, tool_choice: str) -> str:
        """The grammar of the calls the checker accepts, as JSON text (``ToolManager.grammar``)."""
    def _request(self, kind: str, payload: Any, shape: str, options: Optional[Options] = None) -> Any:
        """Run ``payload`` read as ``kind`` (``model_output``, ``expr``, ``json``,
        ``function``, ``functions``, ``func_exprs``) as ``options`` say; give ``shape``
        (``run``: an ``Executed``; ``many``: a list of outputs; ``one``: one output, a list of
        calls refused before any of it runs). Used by ``ToolManager.run`` and its wrappers."""
    def _stream(self, options: Optional[Options] = None) -> Stream:
        """Start a stream of model text (``ToolManager.stream``)."""
    def _arequest(self, kind: str, payload: Any, shape: str, options: Optional[Options] = None) -> Awaitable[Any]:
        """``_request`` for asyncio."""
    def _replies_json(self, format: str, outputs: list[FunctionOutput]) -> str:
        """The provider's replies to ``outputs`` (``openai``: ``role: tool`` messages;
        ``anthropic``: ``tool_result`` blocks) as JSON text (``ToolManager.openai_messages``)."""

@final
class Options:
    """How a request runs: ``ToolManager.run``'s keywords, as one value."""

    def __new__(
        cls,
        *,
        sandboxed: bool = False,
        session: Any = None,
        limits: Optional[Limits] = None,
        repairs: Optional[bool] = None,
        lenient: bool = False,
        model_format: Optional[str] = None,
    ) -> Options: ...

@final
class Stream:
    """A running stream of model text (``ToolManager.stream``)."""

    def push(self, chunk: str, last: bool = False) -> bool: ...
    def fail(self, message: str) -> None: ...
    def close(self) -> None: ...
    def next(self) -> Optional[Any]: ...
    def try_next(self) -> tuple[bool, Optional[Any]]: ...

NUMPY_FUNCTIONS: list[str]
"""The numpy functions fexpr evaluates itself (``np.array``, ...), by the engine's list."""
PYTHON_FUNCTIONS: list[str]
"""Python's built-ins fexpr evaluates itself (``abs``, ``len``, ...), by the engine's list."""

def function_definition(
    name: str, description: str, parameters: str, returns: Optional[str] = None
) -> str: ...
def json_to_yaml(json: str) -> str: ...
def serve_mcp(
    manager: Manager,
    listen: Optional[str] = None,
    only_run_calls: bool = False,
    sandboxed: bool = False,
    strict: bool = False,
) -> None:
    """Serve ``manager``'s tools as an MCP server (``fexpr.mcp.serve``)."""
