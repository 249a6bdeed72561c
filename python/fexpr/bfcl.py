"""BFCL's multi-turn executor through fexpr: a drop-in for
``bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils.execute_multi_turn_func_call``.

BFCL rewrites each call string ``cd(folder='..')`` into ``<instance>.cd(folder='..')`` and runs it
with ``eval``, guarded by a block-list of eight names: any model output can run any Python in
the evaluator. Here the involved classes' public methods are component tools on the same kind of
instances (state kept on the instance, as BFCL keeps it), their schemas from the methods' type
hints, and each call string is parsed and run by fexpr: natively, or with ``sandboxed=True``
inside the wasmtime sandbox. No ``eval``, no block-list: a call is a call of one of the tools, or
an error. Results are formatted as BFCL formats them (a ``str`` as is, a ``dict`` as JSON, else
``str()``; ``"Error during execution: ..."`` on failure).

Needs ``bfcl-eval`` (``pip install --no-deps bfcl-eval mpmath``: the multi-turn classes need only
mpmath).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import threading
from typing import Any

from . import _fexpr
from ._manager import ToolManager
from ._tool import FunctionTool

__all__ = ["execute_multi_turn_func_call", "reset", "run_ground_truth"]

# Instances by BFCL's instance name (model, test entry, class), as BFCL keeps them in its
# module's globals(): later turns of a test entry find the state earlier turns left.
_INSTANCES: dict[str, Any] = {}
# The instances of the turn being run, by class name: every tool calls the method of the
# instance found here (a turn holds ``_TURN``).
_CURRENT: dict[str, Any] = {}
_TURN = threading.Lock()
# Each class's tools, built once (type hints, docstrings, schemas: ~0.5 ms a method), and the
# manager over each set of classes (by their names), built once from them.
_TOOLS: dict[str, list[FunctionTool]] = {}
_MANAGERS: dict[tuple[str, ...], ToolManager] = {}
_LOCK = threading.Lock()


class _Raised:
    """What a tool raised, handed back as its result so that the message is BFCL's ``str(e)``."""

    __slots__ = ("exception",)

    def __init__(self, exception: BaseException) -> None:
        self.exception = exception


def _tool(class_name: str, name: str, function: Any) -> FunctionTool:
    """The method ``name`` of ``class_name`` (its function ``function``) as a tool calling the
    method of the turn's instance; its exceptions come back as ``_Raised`` (BFCL shows
    ``str(e)``)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(_CURRENT[class_name], name)(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - BFCL's executor reports every exception
            return _Raised(e)

    call.__name__ = name
    call.__doc__ = function.__doc__
    # The signature and hints are the method's, without `self`.
    call.__wrapped__ = function.__get__(object())  # type: ignore[attr-defined]
    # On the calling thread: BFCL's tools are quick, in-memory and stateful, and the calls of
    # one list run in order, as BFCL's executor runs them.
    return FunctionTool(call, blocking=False)


def _class_tools(class_name: str, class_: type) -> list[FunctionTool]:
    """The tools of ``class_``'s own public methods, under their names in the class: an
    instance's attributes (a public name holding a private bound method) are not methods of the
    class and are never tools."""
    tools = _TOOLS.get(class_name)
    if tools is None:
        tools = _TOOLS[class_name] = [
            _tool(class_name, name, function)
            for name, function in inspect.getmembers(class_, predicate=inspect.isfunction)
            if not name.startswith("_") and not isinstance(inspect.getattr_static(class_, name), staticmethod)
        ]
    return tools


def _manager(instances: dict[str, Any]) -> ToolManager:
    """The manager over the classes of ``instances`` (built on first use from each class's
    tools)."""
    key = tuple(instances)
    manager = _MANAGERS.get(key)
    if manager is None:
        # A later class's method of the same name wins, as in BFCL's name mapping.
        tools: dict[str, FunctionTool] = {}
        for class_name, instance in instances.items():
            for tool in _class_tools(class_name, type(instance)):
                tools[tool.definition.func_name] = tool
        manager = _MANAGERS[key] = ToolManager(tools=list(tools.values()))
    return manager


# BFCL's instance names: its `re.sub(r"[-./:]", "_", name)`, as one table.
_NAME = str.maketrans("-./:", "____")
_SANDBOXED = _fexpr.Options(sandboxed=True)
# Each class by its name, and whether it is stateless (BFCL's tables, imported on first use).
_CLASSES: dict[str, tuple[type, bool]] = {}


def _class(class_name: str) -> tuple[type, bool]:
    """The BFCL class ``class_name`` and whether it is stateless (no scenario to load)."""
    found = _CLASSES.get(class_name)
    if found is None:
        from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES

        class_ = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name]), class_name)
        found = _CLASSES[class_name] = (class_, class_name in STATELESS_CLASSES)
    return found


def reset() -> None:
    """Forget every instance, tool and manager (BFCL keeps its instances for the process's
    life)."""
    with _LOCK:
        _INSTANCES.clear()
        _TOOLS.clear()
        _MANAGERS.clear()


def _copy(value: Any) -> Any:
    """``copy.deepcopy(value)`` for JSON data (what a test entry's ``initial_config`` holds),
    several times faster: dicts and lists copied, str, int, float, bool and None shared (they
    are immutable, as ``deepcopy`` shares them), anything else deep-copied. JSON data has no
    object reachable twice, so nothing ``deepcopy``'s memo keeps apart is merged."""
    kind = type(value)
    if kind is dict:
        return {key: _copy(item) for key, item in value.items()}
    if kind is list:
        return [_copy(item) for item in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


_ATOMS = (str, int, float, bool, type(None))


def _format(result: Any) -> str:
    if type(result) == str:  # noqa: E721 - BFCL's test: a str subclass is str()-ed
        return result
    if type(result) == dict:  # noqa: E721
        try:
            return json.dumps(result)
        except Exception:  # noqa: BLE001 - BFCL's fallback
            return str(result)
    return str(result)


def execute_multi_turn_func_call(
    func_call_list: list[str],
    initial_config: dict,
    involved_classes: list,
    model_name: str,
    test_entry_id: str,
    long_context: bool = False,
    is_evaL_run: bool = False,
    *,
    sandboxed: bool = False,
) -> tuple[list[str], dict]:
    """Run ``func_call_list`` against the involved classes' instances; return the formatted
    results and the instances by class name, as BFCL's function does."""
    if is_evaL_run:
        model_name += "_eval"
    involved_instances: dict[str, Any] = {}
    with _LOCK:
        for class_name in involved_classes:
            instance_name = f"{model_name}_{test_entry_id}_{class_name}_instance".translate(_NAME)
            instance = _INSTANCES.get(instance_name)
            if instance is None:
                class_, stateless = _class(class_name)
                instance = class_()
                if not stateless:
                    config = _copy(initial_config.get(class_name, {}))
                    instance._load_scenario(config, long_context=long_context)
                _INSTANCES[instance_name] = instance
            involved_instances[class_name] = instance
        manager = _manager(involved_instances)

    results = []
    with _TURN:
        _CURRENT.clear()
        _CURRENT.update(involved_instances)
        # `execute_func_expr` (or its sandboxed form) without the wrapper's frame.
        options = _SANDBOXED if sandboxed else None
        request = manager._request
        for func_call in func_call_list:
            out = request("expr", func_call, "one", options)
            error = out.error
            if error is not None:
                results.append(f"Error during execution: {error.message}")
                continue
            output = out.output
            if type(output) is _Raised:
                results.append(f"Error during execution: {output.exception}")
            else:
                results.append(_format(output))
    return results, involved_instances


def run_ground_truth(
    cases: list[tuple[dict, list[list[str]]]], sandboxed: bool = False, model_name: str = "fexpr_ground_truth"
) -> list[list[list[str]]]:
    """Run each case's ground truth (``(test entry, turns of call strings)``) on fresh instances,
    as BFCL's checker runs it; the results of every turn of every case. The instances are
    dropped after each case. Picklable for ``fexpr.fanout.map_chunks`` (Ray or processes):
    ``functools.partial(run_ground_truth, sandboxed=True)``."""
    everything = []
    for entry, turns in cases:
        entry_id = entry["id"]
        per_turn = []
        for calls in turns:
            results, _ = execute_multi_turn_func_call(
                calls,
                entry["initial_config"],
                entry["involved_classes"],
                model_name,
                entry_id,
                long_context="long_context" in entry_id,
                is_evaL_run=True,
                sandboxed=sandboxed,
            )
            per_turn.append(results)
        everything.append(per_turn)
        prefix = f"{model_name}_eval_{entry_id}_".translate(_NAME)
        with _LOCK:
            for name in [n for n in _INSTANCES if n.startswith(prefix)]:
                del _INSTANCES[name]
    return everything
