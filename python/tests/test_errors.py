"""Bad model text is an error value, never an exception; tools' exceptions are ToolFailed."""

import pytest

from fexpr import Error, ErrorKind, Function, FunctionExpression, ToolManager


def test_errors_carry_kind_message_span_and_hint(manager):
    out = manager.execute_func_expr("add(a=1, c=2)")
    e = out.error
    assert isinstance(e, Error) and e.kind == ErrorKind.Arguments
    assert e.message == "add() got an unexpected keyword argument `c`"
    assert e.span == (9, 10) and "add(a=1, c=2)"[9:10] == "c"
    assert e.hint == "did you mean `b`? signature: add(a: int, b: int)"
    assert out.output is None and out.input == "add(a=1, c=2)"
    assert e.to_dict() == {"kind": "Arguments", "message": e.message, "span": {"start": 9, "end": 10}, "hint": e.hint}
    assert str(ErrorKind.Arguments) == "Arguments"


@pytest.mark.parametrize(
    "text, kind",
    [
        ("add(a=1, b=", ErrorKind.Syntax),
        ("lambda: 1", ErrorKind.Unsupported),
        ("add(a=z, b=1)", ErrorKind.UnknownName),
        ("nope(a=1)", ErrorKind.UnknownTool),
        ("add(a=1)", ErrorKind.Arguments),
        ("add(a='1', b=2)", ErrorKind.Type),
        ("add(a=1/0, b=2)", ErrorKind.Value),
        ("add(a=" + "9" * 5000 + ", b=1)", ErrorKind.Limit),
        ("", ErrorKind.Syntax),
        ("\x00\ud800", ErrorKind.Syntax),
    ],
)
def test_bad_text_never_raises(manager, text, kind):
    out = manager.execute_func_expr(text)
    assert out.error is not None and out.error.kind == kind, out
    assert manager.execute_func_expr_via_sandbox(text).error.kind in (kind, ErrorKind.Syntax)


def test_a_tools_exception_is_tool_failed_with_its_type_and_message():
    def divide(a: int, b: int) -> float:
        return a / b

    out = ToolManager(tools=[divide]).execute_func_expr("divide(a=1, b=0)")
    assert out.error.kind == ErrorKind.ToolFailed
    assert out.error.message == "ZeroDivisionError: division by zero"


def test_parse_func_expr_gives_a_function_or_an_error(manager):
    f = manager.parse_func_expr(FunctionExpression(action="add(a=x, b=np.sum(np.array([1, 2])))"))
    assert f == Function(name="add", kwargs={"a": 2, "b": 3})
    bad = manager.parse_func_expr("add(a=1, b=")
    assert isinstance(bad, Error) and bad.kind == ErrorKind.Syntax
    # The seed's pattern: parse, then execute; a parse error becomes the output's error.
    out = manager.execute_func(bad)
    assert out.error == bad and out.output is None
    assert manager.execute_func(f).output == 5


def test_the_wrong_argument_types_for_the_api_raise(manager):
    with pytest.raises(TypeError):
        manager.execute_func_expr(42)
    with pytest.raises(TypeError):
        manager.execute_func_exprs("add(a=1, b=2)")
    with pytest.raises(TypeError):
        manager.execute_func({"name": "add"})


def test_raw_model_output_is_found_repaired_and_run(manager):
    run = manager.execute_model_output(
        "Let me add them.\n```python\n[add(a=2.0, b=3), search(query=\"q\")]\n```<end_of_turn>"
    )
    assert [o.output for o in run.outputs] == [5, ["result1q", "result2q"]]
    repair = run.outputs[0].repairs[0]
    assert (repair.kind, repair.path, repair.from_, repair.to) == ("IntegralFloat", "a", "2.0", "2")
    assert [i.reason for i in run.ignored] == ["Prose", "Fence", "Fence", "ChatToken"]
    strict = manager.execute_model_output("add(a=2.0, b=3)", repairs=False)
    assert strict.outputs[0].error.kind == ErrorKind.Type


def test_openai_and_json_forms_in_model_output(manager):
    message = '{"role": "assistant", "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}}]}'
    run = manager.execute_model_output(message)
    assert [o.output for o in run.outputs] == [3]
    assert run.outputs[0].call_id == "call_a"  # the model's id, carried


def test_check_model_output_runs_nothing():
    ran = []

    def add(a: int, b: int) -> int:
        ran.append(1)
        return a + b

    manager = ToolManager(tools=[add])
    checked = manager.check_model_output("add(a=2.0, b=2)\nadd(a=1)")
    assert ran == []
    good, bad = checked.verdicts
    assert good.valid and good.kwargs == {"a": 2, "b": 2} and good.repairs[0].from_ == "2.0"
    assert not bad.valid and bad.error.kind == ErrorKind.Arguments


# The Python side's mirrors of the engine's lists, checked against the Rust source (issue 31).

_SRC = __import__("pathlib").Path(__file__).resolve().parents[2] / "src"


def _rust_enum(path, name):
    """The variant names of ``pub enum name`` in the Rust file ``path``."""
    import re

    text = (_SRC / path).read_text()
    body = text[text.index(f"pub enum {name} {{") :]
    body = body[: body.index("\n}")]
    return re.findall(r"^    ([A-Z]\w*),", body, flags=re.M)


def test_error_kinds_are_the_engines():
    rust = _rust_enum("error.rs", "ErrorKind")
    assert len(rust) >= 11, rust
    # Every kind the engine has, in its order, each with its own name: a kind added to the
    # engine and not here fails this test (the binding's `From` has a `_` arm only because the
    # engine's enum is `#[non_exhaustive]`).
    python = sorted(n for n in vars(ErrorKind) if not n.startswith("_"))
    assert python == sorted(rust)
    assert all(str(getattr(ErrorKind, n)) == n for n in rust)


def test_builtin_names_are_the_engines():
    import re

    from fexpr import _fexpr

    text = (_SRC / "value" / "builtins.rs").read_text()
    names = dict(re.findall(r"Builtin::(\w+)(?: \| Builtin::\w+)* => \"(\w+)\"", text))
    names.update({b: n for a, b, n in re.findall(r"Builtin::(\w+) \| Builtin::(\w+) => \"(\w+)\"", text)})

    def listed(const):
        block = text[text.index(f"pub const {const}: &'static [Builtin] = &[") :]
        return [names[v] for v in re.findall(r"Builtin::(\w+),", block[: block.index("];")])]

    assert _fexpr.NUMPY_FUNCTIONS == listed("NUMPY")
    assert _fexpr.PYTHON_FUNCTIONS == listed("PYTHON")


def test_limits_fields_are_the_engines():
    import re

    from fexpr import Limits

    # The engine's one table of limits (`limit_table!`): `name: type = default, Kind, ...`.
    text = (_SRC / "limits.rs").read_text()
    body = text[text.index("macro_rules! limit_table") :]
    rust = re.findall(r"^\s+(\w+): [\w:]+ = ", body[: body.index("\n}")], flags=re.M)
    assert len(rust) >= 14, rust
    # Every budget the engine has can be set from Python, under its own name (a limit added to
    # the engine and not to the binding fails here), and reads back what was set.
    limits = Limits(**{name: 7 for name in rust})
    assert all(getattr(limits, name) == 7 for name in rust), limits
    assert sorted(n for n in dir(Limits) if not n.startswith("_")) == sorted(rust)
