"""``ToolManager``: tools, the context expressions may use, limits; runs what a model wrote."""

from __future__ import annotations

import asyncio
import builtins
import enum
import inspect
import json
import sys
import types
from typing import Any, AsyncIterator, Iterable, Iterator, Mapping, Optional

from . import _fexpr
from ._adalflow import AdalFlowNames
from ._schema import Records, is_record_type
from ._tool import FunctionTool
from ._types import Function, FunctionDefinition, FunctionExpression, Grammar

# The functions fexpr evaluates itself (never Python's): numpy's under the prefix the numpy
# module is given, and Python's numeric built-ins, as the engine lists them.
_NUMPY_FUNCTIONS = tuple(_fexpr.NUMPY_FUNCTIONS)
_PYTHON_FUNCTIONS = tuple(_fexpr.PYTHON_FUNCTIONS)


class ToolManager(AdalFlowNames, _fexpr.Manager):
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

    ``run`` (and ``arun``) runs anything; the AdalFlow names (``execute_func_expr``,
    ``execute_func``, ``call``, ...) are wrappers of it. Every method that runs something
    returns its result: bad model text is an error value in the output, never an exception. The sync methods release the GIL while fexpr parses and
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

    def openai_messages(self, result: Any) -> list[dict]:
        """The OpenAI Chat Completions replies to ``result``'s calls: one ``{"role": "tool",
        "tool_call_id": ..., "content": ...}`` message per output, in order, to append to the
        conversation after the assistant message that made the calls. ``result`` is what
        ``run`` gave (an ``Executed``), or outputs (a list, or ``stream``'s events: its
        ``Ignored`` items are skipped). ``tool_call_id`` is the call's id (the model's own when
        it gave one); ``content`` is what the model should read: the tool's observation, a
        string result as its text, another result summarized, an error as its kind, message
        and hint. A text with no call has no output, and so no reply::

            >>> def add(a: int, b: int) -> int:
            ...     return a + b
            >>> manager = ToolManager(tools=[add])
            >>> message = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1",
            ...     "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]}
            >>> manager.openai_messages(manager.run(message))
            [{'role': 'tool', 'tool_call_id': 'call_1', 'content': '3'}]
        """
        return json.loads(self._replies_json("openai", _outputs(result)))

    def anthropic_blocks(self, result: Any) -> list[dict]:
        """The Anthropic Messages replies to ``result``'s calls: one ``{"type": "tool_result",
        "tool_use_id": ..., "content": ..., "is_error": ...}`` block per output, in order, to
        send together as the content of one ``{"role": "user", "content": [...]}`` message
        (``result`` and ``content`` as for ``openai_messages``)::

            >>> def add(a: int, b: int) -> int:
            ...     return a + b
            >>> manager = ToolManager(tools=[add])
            >>> message = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
            ...     "name": "add", "input": {"a": 1, "b": 2}}]}
            >>> manager.anthropic_blocks(manager.run(message))
            [{'type': 'tool_result', 'tool_use_id': 'toolu_1', 'content': '3', 'is_error': False}]
        """
        return json.loads(self._replies_json("anthropic", _outputs(result)))

    def grammar(self, format: str = "lark", markup: str = "pythonic", tool_choice: str = "required") -> Grammar:
        """The grammar of the calls the checker accepts, for constrained decoding: made from the
        tools' typed signatures, so that a model decoding with it writes only calls that
        ``check_model_output`` accepts (except at ``Grammar.approximations``).

        ``format``: ``lark`` (llguidance: vLLM's ``guidance`` backend, OpenAI custom tools),
        ``gbnf`` (llama.cpp), ``ebnf`` (XGrammar: vLLM's and SGLang's default) or
        ``structural-tag``. ``markup``: the model's tool-call format, ``pythonic``, ``hermes``,
        ``llama3-json`` or ``qwen3-coder``. ``tool_choice``: ``required`` (at least one call),
        ``auto`` (prose or calls), ``none`` or a tool's name. Raises ``ValueError`` for an unknown format, markup or tool."""
        data = json.loads(self._grammar(format, markup, tool_choice))
        return Grammar(
            text=data["grammar"],
            format=data["format"],
            markup=data["markup"],
            tool_choice=data["tool_choice"],
            approximations=data["approximations"],
            left_out=data["left_out"],
            _vllm=data["vllm"],
            _sglang=data["sglang"] or None,
        )

    def run(
        self,
        input: Any,
        *,
        sandboxed: bool = False,
        session: Any = None,
        limits: Optional[_fexpr.Limits] = None,
        repairs: Optional[bool] = None,
        lenient: bool = False,
        model_format: Optional[str] = None,
    ) -> _fexpr.Executed:
        """Run ``input``: the one way to run (the other methods are wrappers of it).

        ``input`` is a model's raw text (a ``str``: prose, fences, chat tokens, JSON forms),
        a ``Function`` or a ``FunctionExpression``, a list of either (run concurrently, one
        output each), or JSON data (a ``dict`` or ``list``: an OpenAI or Anthropic message,
        fexpr's JSON forms). ``sandboxed=True`` evaluates inside the wasmtime sandbox;
        ``session`` is any object of the caller's (a conversation's state, a user): the tools
        of this request read it with ``fexpr.current_session()``, the model never sees it (a
        ``str`` is also the engine's session id); ``limits`` replaces the manager's for this
        request; ``repairs`` turns the schema repairs of model text on or off (default: on for
        text and JSON, off for the rest).
        Only calls in call position run: a call on its own line, in a fence or a list, in an
        explicit tool-call form; not one in a comment, a string, other code, or a sentence
        (``lenient=True`` takes calls mentioned in prose, for scoring text). ``model_format``
        reads the text as one model's format only (``"qwen3-coder"``, ``"harmony"``, ...; by
        default every format whose markers the text holds is read).
        Gives an ``Executed``: one output per call, in order, and the text not used::

            >>> def add(a: int, b: int) -> int:
            ...     return a + b
            >>> done = ToolManager(tools=[add]).run("Sure:\nadd(a=1, b=2)")
            >>> [out.output for out in done.outputs]
            [3]
        """
        options = _fexpr.Options(
            sandboxed=sandboxed,
            session=session,
            limits=limits,
            repairs=repairs,
            lenient=lenient,
            model_format=model_format,
        )
        return self._request(*_kind(input), "run", options)

    async def arun(
        self,
        input: Any,
        *,
        sandboxed: bool = False,
        session: Any = None,
        limits: Optional[_fexpr.Limits] = None,
        repairs: Optional[bool] = None,
        lenient: bool = False,
        model_format: Optional[str] = None,
    ) -> _fexpr.Executed:
        """``run`` for asyncio: async tools run on the running loop."""
        options = _fexpr.Options(
            sandboxed=sandboxed,
            session=session,
            limits=limits,
            repairs=repairs,
            lenient=lenient,
            model_format=model_format,
        )
        return await self._arequest(*_kind(input), "run", options)

    def stream(
        self,
        chunks: Any,
        *,
        sandboxed: bool = False,
        session: Any = None,
        limits: Optional[_fexpr.Limits] = None,
        repairs: Optional[bool] = None,
        lenient: bool = False,
        model_format: Optional[str] = None,
    ) -> Iterator[Any]:
        """Run model text that arrives in ``chunks`` (any iterable of ``str``: a model's
        streaming text deltas), yielding each call's ``FunctionOutput`` the moment that call
        finishes, then the text not used (``Ignored``). A call starts as soon as its own text
        is complete and the next chunk is not there yet (a list or tuple of chunks is all there:
        it is read whole); the final reading is that of the whole text. A call that started and
        that later text puts inside other code keeps its one output; the output of that code
        says the call had run. A text with no call yields no output, only its ``Ignored`` text.

        A source that fails ends the stream with nothing further run: when iterating
        ``chunks`` raises (a dropped connection, ``KeyboardInterrupt``) or gives something that
        is not a ``str``, a call already running finishes and is yielded, every other call is
        yielded with an error saying it did not run, and then the exception is raised. A tool
        that raises ``KeyboardInterrupt`` or ``SystemExit`` stops the stream: nothing after it
        runs, and the exception is raised. Over ``max_source_bytes`` the stream stops reading
        and yields the ``Limit`` output. Options as for ``run``::

            >>> def add(a: int, b: int) -> int:
            ...     return a + b
            >>> [out.output for out in ToolManager(tools=[add]).stream(["[add(a=1, ", "b=2)]"])]
            [3]
        """
        handle = self._stream(
            _fexpr.Options(
                sandboxed=sandboxed,
                session=session,
                limits=limits,
                repairs=repairs,
                lenient=lenient,
                model_format=model_format,
            )
        )
        if isinstance(chunks, (list, tuple)):
            # All of it is at hand: one last chunk, read whole as text that arrives together is.
            handle.push("".join(_text(chunk) for chunk in chunks), True)
            chunks = []
        try:
            try:
                for chunk in chunks:
                    if not handle.push(_text(chunk)):
                        break  # the stream stopped (over a limit): its events say why
                    yield from _ready(handle)
            except GeneratorExit:
                # The caller stopped reading: nothing further runs, and nothing is yielded.
                handle.fail("the caller stopped reading the stream")
                raise
            except BaseException as exc:
                handle.fail(_failure(exc))
                yield from _rest(handle)
                raise
            handle.close()
            yield from _rest(handle)
        finally:
            handle.close()

    async def astream(
        self,
        chunks: Any,
        *,
        sandboxed: bool = False,
        session: Any = None,
        limits: Optional[_fexpr.Limits] = None,
        repairs: Optional[bool] = None,
        lenient: bool = False,
        model_format: Optional[str] = None,
    ) -> AsyncIterator[Any]:
        """``stream`` over an async iterable of ``str`` (``async for``): events as they happen."""
        handle = self._stream(
            _fexpr.Options(
                sandboxed=sandboxed,
                session=session,
                limits=limits,
                repairs=repairs,
                lenient=lenient,
                model_format=model_format,
            )
        )
        loop = asyncio.get_running_loop()

        async def rest() -> AsyncIterator[Any]:
            while (event := await loop.run_in_executor(None, handle.next)) is not None:
                yield event

        try:
            try:
                async for chunk in chunks:
                    if not handle.push(_text(chunk)):
                        break  # the stream stopped (over a limit): its events say why
                    for event in _ready(handle):
                        yield event
            except GeneratorExit:
                handle.fail("the caller stopped reading the stream")
                raise
            except BaseException as exc:
                # A failing source, a chunk that is not text, a cancelled or interrupted task:
                # nothing further runs; what had started is yielded, then the exception raised.
                handle.fail(_failure(exc))
                async for event in rest():
                    yield event
                raise
            handle.close()
            async for event in rest():
                yield event
        finally:
            handle.close()

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
            # numpy's function, by its namespaced name: `np.max` is not Python's `max`.
            entries.append(("function", name, "numpy." + numpy_functions[id(value)]))
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


def _outputs(result: Any) -> list[Any]:
    """The outputs of ``result``: an ``Executed``'s, one output, or those in an iterable of
    outputs and ``Ignored`` stretches (``stream``'s events)."""
    if isinstance(result, _fexpr.Executed):
        return list(result.outputs)
    if isinstance(result, _fexpr.FunctionOutput):
        return [result]
    if isinstance(result, (str, bytes, dict)):
        raise TypeError(f"replies are made from what run gave (an Executed) or outputs, not {type(result).__name__}")
    outputs = [item for item in result if not isinstance(item, _fexpr.Ignored)]
    for item in outputs:
        if not isinstance(item, _fexpr.FunctionOutput):
            raise TypeError(f"replies are made from outputs, not {type(item).__name__}")
    return outputs


def _text(chunk: Any) -> str:
    """``chunk`` if it is model text; a ``TypeError`` (which fails the stream) if not."""
    if not isinstance(chunk, str):
        raise TypeError(f"a chunk of model text is a str, not {type(chunk).__name__}: {chunk!r:.60}")
    return chunk


def _failure(exc: BaseException) -> str:
    """What a stream's source failure says in the outputs of the calls that did not run."""
    text = str(exc)
    return f"the chunk source failed: {type(exc).__name__}" + (f": {text}" if text else "")


def _ready(handle: Any) -> Iterator[Any]:
    """The events already there in a stream's ``handle`` (calls finished)."""
    while True:
        _ended, event = handle.try_next()
        if event is None:
            return
        yield event


def _rest(handle: Any) -> Iterator[Any]:
    """Every event left in a stream's ``handle``, waiting for each, until the stream ends."""
    while (event := handle.next()) is not None:
        yield event


def _kind(input: Any) -> tuple[str, Any]:
    """How the engine reads ``input`` (see ``ToolManager.run``)."""
    if isinstance(input, str):
        return "model_output", input
    if isinstance(input, (Function, _fexpr.Error)):
        return "function", input
    if isinstance(input, FunctionExpression):
        return "expr", input
    if isinstance(input, (list, tuple)) and input and all(isinstance(i, (Function, _fexpr.Error)) for i in input):
        return "functions", input
    if isinstance(input, (list, tuple)) and input and all(isinstance(i, FunctionExpression) for i in input):
        return "func_exprs", input
    if isinstance(input, (dict, list, tuple)):
        return "json", json.dumps(input)
    raise TypeError(
        "run takes model text (str), a Function or FunctionExpression, a list of them, "
        f"or JSON data (dict or list), not {type(input).__name__}"
    )
