"""The data a model writes and a tool returns, shaped like AdalFlow's ``core.types``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from . import _fexpr


@dataclass
class Function:
    """A call by name with arguments: ``{"name": "add", "kwargs": {"a": 1, "b": 2}}``.

    ``execute_func`` converts the arguments (dataclasses, numpy arrays, ...) and binds them to
    the tool's signature before it runs. As in AdalFlow, ``args`` is a list when fexpr builds
    the call (``parse_func_expr``, ``from_dict``) and what was given otherwise
    (``FunctionTool.call(1, 2)`` gives ``args == (1, 2)``)::

        >>> Function.from_dict({"name": "add", "args": [1], "kwargs": {"b": 2}})
        Function(thought=None, name='add', args=[1], kwargs={'b': 2})
    """

    thought: Optional[str] = None
    name: str = ""
    args: Sequence[Any] = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict) -> "Function":
        """From the JSON form (``name``, optional ``args`` and ``kwargs``, ``thought``)."""
        return cls(
            thought=data.get("thought"),
            name=data.get("name", ""),
            args=list(data.get("args") or ()),
            kwargs=dict(data.get("kwargs") or {}),
        )

    def to_dict(self) -> dict:
        return {"thought": self.thought, "name": self.name, "args": list(self.args), "kwargs": self.kwargs}


@dataclass
class FunctionExpression:
    """A call written as an expression: ``{"action": "add(a=1, b=2)"}``."""

    thought: Optional[str] = None
    action: str = ""

    @classmethod
    def from_dict(cls, data: dict) -> "FunctionExpression":
        return cls(thought=data.get("thought"), action=data.get("action", ""))

    def to_dict(self) -> dict:
        return {"thought": self.thought, "action": self.action}


@dataclass
class FunctionDefinition:
    """How a tool is shown to a model (AdalFlow's ``FunctionDefinition``): its name, its Python
    signature with its description, and its parameters' JSON Schema."""

    func_name: str
    func_desc: str = ""
    func_parameters: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "func_name": self.func_name,
            "func_desc": self.func_desc,
            "func_parameters": self.func_parameters,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def to_yaml(self) -> str:
        return _fexpr.json_to_yaml(json.dumps(self.to_dict()))


@dataclass
class ToolOutput:
    """What a tool may return to give the model a short ``observation`` instead of the full
    ``output`` (AdalFlow's ``ComponentToolOutput``). ``FunctionOutput.output`` is ``output``;
    ``FunctionOutput.observation`` is the text."""

    output: Any = None
    observation: Optional[str] = None


@dataclass
class Grammar:
    """A grammar of the calls fexpr's checker accepts, for constrained decoding
    (``ToolManager.grammar``): ``text`` in ``format`` (``lark``, ``gbnf``, ``ebnf`` or
    ``structural-tag``), calls written in ``markup`` as ``tool_choice`` asks. ``approximations``
    lists where it admits values the checker refuses (a float's bounds, a ``pattern``, ...),
    each ``{"tool", "path", "what", "kind"}``; ``left_out`` the tools no call of which can be
    valid, each ``{"tool", "why"}``."""

    text: str
    format: str
    markup: str
    tool_choice: str
    approximations: list = field(default_factory=list)
    left_out: list = field(default_factory=list)
    _vllm: dict = field(default_factory=dict, repr=False)
    _sglang: Optional[dict] = field(default=None, repr=False)

    def vllm(self) -> dict:
        """vLLM's request fields (``extra_body``): ``{"structured_outputs": {"grammar": ...}}``
        (Lark needs vLLM's ``guidance`` backend) or ``{"structured_outputs": {"structural_tag": ...}}``."""
        return json.loads(json.dumps(self._vllm))

    def sglang(self) -> dict:
        """SGLang's request fields: ``{"ebnf": ...}`` or ``{"response_format": {structural tag}}``.
        Raises ``ValueError`` for Lark (SGLang takes EBNF)."""
        if not self._sglang:
            raise ValueError("SGLang takes EBNF or a structural tag: use format='ebnf'")
        return json.loads(json.dumps(self._sglang))

    def openai_tool(self, name: str = "fexpr_calls", description: str = "Call the tools: write the calls.") -> dict:
        """An OpenAI custom tool whose input is this grammar (``format: {type: grammar, syntax:
        lark}``). Raises ``ValueError`` unless the format is Lark."""
        if self.format != "lark":
            raise ValueError("an OpenAI custom tool takes a Lark grammar: use format='lark'")
        return {
            "type": "custom",
            "name": name,
            "description": description,
            "format": {"type": "grammar", "syntax": "lark", "definition": self.text},
        }
