"""fexpr.bfcl: BFCL's multi-turn executor through fexpr. The conformance over all 800 multi-turn
cases (examples/python/bfcl_conformance.py), and the escapes BFCL's eval runs and fexpr refuses.

Needs bfcl-eval (scripts/ci-python.sh installs it); without it the tests skip, or fail when CI
is set."""

import importlib.util
import io
import os
import pathlib
import sys

import pytest

if importlib.util.find_spec("bfcl_eval") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI: bfcl-eval is not installed (scripts/ci-python.sh installs it)")
    pytest.skip("bfcl-eval is not installed (scripts/ci-python.sh installs it)", allow_module_level=True)

from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (  # noqa: E402
    execute_multi_turn_func_call as bfcl_execute,
)

from fexpr import bfcl  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"))
import bfcl_conformance  # noqa: E402

CONFIG = {
    "GorillaFileSystem": {
        "root": {"alex": {"type": "directory", "contents": {"notes.txt": {"type": "file", "content": "hi"}}}}
    }
}


@pytest.mark.parametrize("sandboxed", [False, True], ids=["native", "sandboxed"])
def test_conformance_on_all_800_multi_turn_cases(sandboxed):
    out = io.StringIO()
    identical, total, unexplained = bfcl_conformance.run(sandboxed=sandboxed, out=out)
    print(out.getvalue())
    assert total == 800
    assert unexplained == {}, out.getvalue()
    assert identical >= 0.99 * total, out.getvalue()
    assert identical == total - len(bfcl_conformance.EXPECTED)


def test_results_are_formatted_as_bfcl_formats_them():
    calls = ["pwd()", "ls()", "cd(folder='nowhere')", "cat(file_name='notes.txt')", "wc(file_name='notes.txt')"]
    args = dict(initial_config=CONFIG, involved_classes=["GorillaFileSystem"], test_entry_id="format_0")
    theirs, _ = bfcl_execute(calls, model_name="fmt_bfcl", **args)
    ours, instances = bfcl.execute_multi_turn_func_call(calls, model_name="fmt_fexpr", **args)
    assert ours == theirs
    assert ours[0] == '{"current_working_directory": "/alex"}'
    assert list(instances) == ["GorillaFileSystem"]


def test_state_is_kept_between_turns_per_test_entry():
    args = dict(initial_config=CONFIG, involved_classes=["GorillaFileSystem"], model_name="m")
    bfcl.execute_multi_turn_func_call(["mkdir(dir_name='d')", "cd(folder='d')"], test_entry_id="keep_0", **args)
    assert bfcl.execute_multi_turn_func_call(["pwd()"], test_entry_id="keep_0", **args)[0] == [
        '{"current_working_directory": "/alex/d"}'
    ]
    # Another test entry has instances of its own.
    assert bfcl.execute_multi_turn_func_call(["pwd()"], test_entry_id="keep_1", **args)[0] == [
        '{"current_working_directory": "/alex"}'
    ]


def test_a_tool_exception_is_bfcls_error_text():
    args = dict(initial_config={}, involved_classes=["MathAPI"], test_entry_id="raise_0")
    call = ["divide(a=1, b=0)", "logarithm(value=-1, base=10, precision=2)"]
    theirs, _ = bfcl_execute(call, model_name="raise_bfcl", **args)
    ours, _ = bfcl.execute_multi_turn_func_call(call, model_name="raise_fexpr", **args)
    assert ours == theirs


def hostile(marker):
    """Call strings that run Python of the model's choosing under eval; none is in BFCL's
    block-list (kill, exit, quit, remove, unlink, popen, Popen, run)."""
    return [
        # `system`, not in the block-list
        f"__import__('os').system('touch {marker}')",
        # an attribute walk from a builtin to the import machinery
        f"print.__self__.__import__('os').system('touch {marker}')",
        # a call hidden in an argument of a legitimate tool call
        f"cd(folder=open('{marker}', 'w').write('x') and 'alex')",
        f"ls(a=getattr(__import__('pathlib').Path('{marker}'), 'touch')())",
        # a subclass walk to a loaded module's globals
        "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]"
        f".__init__.__globals__['sys'].modules['os'].system('touch {marker}')",
        # a builtin that runs text
        f"exec(\"open('{marker}', 'w').write('x')\")",
    ]


@pytest.mark.parametrize("index", range(len(hostile("m"))))
def test_hostile_calls_run_under_bfcls_eval_and_never_under_fexpr(tmp_path, index):
    marker = tmp_path / "marker"
    call = hostile(marker)[index]
    args = dict(initial_config=CONFIG, involved_classes=["GorillaFileSystem"], test_entry_id=f"hostile_{index}")
    bfcl_execute([call], model_name="hostile_bfcl", **args)
    assert marker.exists(), f"BFCL's eval did not run {call!r}"
    marker.unlink()
    for sandboxed in (False, True):
        results, _ = bfcl.execute_multi_turn_func_call(
            [call], model_name=f"hostile_fexpr_{sandboxed}", sandboxed=sandboxed, **args
        )
        assert not marker.exists(), f"fexpr ran {call!r}"
        assert len(results) == 1 and results[0].startswith("Error during execution: "), results


class Leaky:
    """A class whose public attribute holds a private bound method."""

    def __init__(self):
        self.export = self._export_to_disk
        self.exported = False

    def _load_scenario(self, config, long_context=False):
        pass

    def _export_to_disk(self) -> str:
        self.exported = True
        return "exported"

    def ping(self) -> str:
        """Answer."""
        return "pong"


def test_only_a_classs_own_public_methods_are_tools(monkeypatch):
    from bfcl_eval.constants import executable_backend_config

    monkeypatch.setitem(executable_backend_config.CLASS_FILE_PATH_MAPPING, "Leaky", __name__)
    args = dict(initial_config={}, involved_classes=["Leaky"], model_name="leaky", test_entry_id="leaky_0")
    results, instances = bfcl.execute_multi_turn_func_call(["ping()", "_export_to_disk()", "export()"], **args)
    assert results[0] == "pong"
    assert all(r.startswith("Error during execution: ") for r in results[1:]), results
    assert not instances["Leaky"].exported


def test_each_classs_tools_are_built_once():
    bfcl.reset()
    args = dict(initial_config=CONFIG, model_name="once", test_entry_id="once_0")
    bfcl.execute_multi_turn_func_call(["pwd()"], involved_classes=["GorillaFileSystem"], **args)
    tools = list(bfcl._TOOLS["GorillaFileSystem"])
    bfcl.execute_multi_turn_func_call(["pwd()"], involved_classes=["GorillaFileSystem", "MathAPI"], **args)
    assert bfcl._TOOLS["GorillaFileSystem"] == tools
    assert set(bfcl._TOOLS) == {"GorillaFileSystem", "MathAPI"}
    shared = {id(t) for t in tools}
    manager = bfcl._MANAGERS[("GorillaFileSystem", "MathAPI")]
    assert shared <= {id(t) for t in manager.tools}


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text for this result")


class Results:
    """A class whose results BFCL formats unusually, and whose calls nest."""

    def _load_scenario(self, config, long_context=False):
        pass

    def broken(self) -> Unprintable:
        """A result whose str() raises."""
        return Unprintable()

    def numbers(self) -> list:
        """Two numbers."""
        return [1, 2]

    def total(self, values: list) -> int:
        """The sum of values."""
        return sum(values)


def test_results_as_bfcl_formats_them_flat_or_nested(monkeypatch):
    # A flat call's tool returns BFCL's text of its result: a str() that raises is BFCL's error
    # text (it used to escape execute_multi_turn_func_call); a nested call still passes the
    # result itself to the call around it, as eval does.
    from bfcl_eval.constants import executable_backend_config

    monkeypatch.setitem(executable_backend_config.CLASS_FILE_PATH_MAPPING, "Results", __name__)
    calls = ["broken()", "numbers()", "total(values=numbers())", " total( values = [3, 4] ) "]
    args = dict(initial_config={}, involved_classes=["Results"], test_entry_id="results_0")
    theirs, _ = bfcl_execute(calls, model_name="results_bfcl", **args)
    ours, _ = bfcl.execute_multi_turn_func_call(calls, model_name="results_fexpr", **args)
    assert ours == theirs == ["Error during execution: no text for this result", "[1, 2]", "3", "7"]
