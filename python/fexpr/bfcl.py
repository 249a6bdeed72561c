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


# Whether the call string being run is one call of a tool by its name with no call in its
# arguments (``_flat``): its tool's result is then the call's output and no other call's
# argument. Set for each call string while a turn holds ``_TURN``.
_FLAT = [False]


def _flat(func_call: str) -> bool:
    """Whether ``func_call`` is ``name(...)`` with no other ``(`` (so no call nested in its
    arguments, even inside a string): its only call is the whole expression."""
    text = func_call.strip()
    return text.count("(") == 1 and text.endswith(")") and text[: text.index("(")].rstrip().isidentifier()


def _tool(class_name: str, name: str, function: Any) -> FunctionTool:
    """The method ``name`` of ``class_name`` (its function ``function``) as a tool calling the
    method of the turn's instance. For a flat call string (see ``_FLAT``) the tool returns what
    BFCL's executor makes of the result, its text (``"Error during execution: ..."`` for an
    exception): the engine then holds one string instead of converting the whole result (a
    long-context stock history is thousands of floats) that only its text leaves. Otherwise the
    result itself, so that a call nested in another's arguments passes it on as BFCL's ``eval``
    does; its exceptions come back as ``_Raised`` (BFCL shows ``str(e)``)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if _FLAT[0]:
            try:
                return _format(getattr(_CURRENT[class_name], name)(*args, **kwargs))
            except Exception as e:  # noqa: BLE001 - BFCL's executor reports every exception
                return f"Error during execution: {e}"
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


# BFCL's instance names: its `re.sub(r"[-./:]", "_", name)`, as one table. It maps characters
# one by one, so a name is its prefix's translation and then its class part's.
_NAME = str.maketrans("-./:", "____")
_SANDBOXED = _fexpr.Options(sandboxed=True)
# Each class by its name: the class, whether it is stateless (BFCL's tables, imported on first
# use), and the end of its instances' names.
_CLASSES: dict[str, tuple[type, bool, str]] = {}
# The last (model name, test entry id) and their instances' name prefix: a case's turns share it.
_PREFIX: tuple[str, str, str] = ("", "", "")


def _class(class_name: str) -> tuple[type, bool, str]:
    """The BFCL class ``class_name``, whether it is stateless (no scenario to load), and the
    end of its instances' names (``_<class name>_instance``, translated)."""
    found = _CLASSES.get(class_name)
    if found is None:
        from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES

        class_ = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name]), class_name)
        suffix = f"{class_name}_instance".translate(_NAME)
        found = _CLASSES[class_name] = (class_, class_name in STATELESS_CLASSES, suffix)
    return found


def _prefix(model_name: str, test_entry_id: str) -> str:
    """The start of BFCL's instance names for a model and test entry (``<model>_<id>_``,
    translated)."""
    global _PREFIX
    last = _PREFIX
    if last[0] == model_name and last[1] == test_entry_id:
        return last[2]
    prefix = f"{model_name}_{test_entry_id}_".translate(_NAME)
    _PREFIX = (model_name, test_entry_id, prefix)
    return prefix


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


def _instances(
    initial_config: dict, involved_classes: list, prefix: str, long_context: bool
) -> tuple[dict[str, Any], ToolManager]:
    """The involved classes' instances by class name, their names starting with ``prefix``:
    the ones earlier turns left, else new ones with their scenario loaded from a copy of
    ``initial_config``, as BFCL makes them; and the manager over their classes."""
    involved_instances: dict[str, Any] = {}
    with _LOCK:
        for class_name in involved_classes:
            class_, stateless, suffix = _class(class_name)
            instance_name = prefix + suffix
            instance = _INSTANCES.get(instance_name)
            if instance is None:
                instance = class_()
                if not stateless:
                    config = _copy(initial_config.get(class_name, {}))
                    instance._load_scenario(config, long_context=long_context)
                _INSTANCES[instance_name] = instance
            involved_instances[class_name] = instance
        return involved_instances, _manager(involved_instances)


def _run(manager: ToolManager, instances: dict[str, Any], func_call_list: list[str], sandboxed: bool) -> list[str]:
    """Run each call string against ``instances`` with ``manager`` (over their classes); the
    results formatted as BFCL formats them."""
    results: list[str] = []
    append = results.append
    with _TURN:
        _CURRENT.clear()
        _CURRENT.update(instances)
        # `execute_func_expr` (or its sandboxed form) without the wrapper's frame.
        options = _SANDBOXED if sandboxed else None
        request = manager._request
        flat = _FLAT
        try:
            for func_call in func_call_list:
                flat[0] = _flat(func_call)
                out = request("expr", func_call, "one", options)
                error = out.error
                if error is not None:
                    append(f"Error during execution: {error.message}")
                    continue
                output = out.output
                kind = type(output)
                if kind is str:
                    append(output)
                elif kind is _Raised:
                    append(f"Error during execution: {output.exception}")
                else:
                    append(_format(output))
        finally:
            # The tools give their results themselves outside a turn (a KeyboardInterrupt a
            # tool raised ends the turn here).
            flat[0] = False
    return results


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
    prefix = _prefix(model_name, test_entry_id)
    instances, manager = _instances(initial_config, involved_classes, prefix, long_context)
    return _run(manager, instances, func_call_list, sandboxed), instances


def run_ground_truth(
    cases: list[tuple[dict, list[list[str]]]], sandboxed: bool = False, model_name: str = "fexpr_ground_truth"
) -> list[list[list[str]]]:
    """Run each case's ground truth (``(test entry, turns of call strings)``) on fresh instances,
    as BFCL's checker runs it; the results of every turn of every case. The instances are
    dropped after each case. Picklable for ``fexpr.fanout.map_chunks`` (Ray or processes):
    ``functools.partial(run_ground_truth, sandboxed=True)``."""
    everything = []
    for entry, turns in cases:
        if not turns:
            # No turn: BFCL would make no instance.
            everything.append([])
            continue
        # Every turn of a case finds the instances the first made (BFCL names them alike), so
        # they and their manager are looked up once.
        prefix = f"{model_name}_eval_{entry['id']}_".translate(_NAME)
        instances, manager = _instances(
            entry["initial_config"], entry["involved_classes"], prefix, "long_context" in entry["id"]
        )
        everything.append([_run(manager, instances, calls, sandboxed) for calls in turns])
        with _LOCK:
            for name in [n for n in _INSTANCES if n.startswith(prefix)]:
                del _INSTANCES[name]
    return everything
