"""``ToolManager.run`` / ``arun``, the one way to run; the single-call names refuse a list
before any of it runs; messages name the Python API."""

import asyncio

import pytest

import fexpr
from fexpr import ErrorKind, Executed, Function, FunctionExpression, Limits, ToolManager


@pytest.fixture
def touched():
    return []


@pytest.fixture
def manager(touched):
    def touch(name: str) -> str:
        """Create a file (here: remember its name)."""
        touched.append(name)
        return name

    def add(a: int, b: int) -> int:
        return a + b

    return ToolManager(tools=[touch, add])


@pytest.mark.parametrize("sandboxed", [False, True], ids=["native", "sandboxed"])
@pytest.mark.parametrize("text", [
    "[touch(name='x'), add(a=1, b=2)]", "touch(name='x'), add(a=1, b=2)",
    # Bare tuples whose top-level comma follows brackets, quotes and escapes inside strings.
    "touch(name='x,)'), add(a=1, b=2)", 'touch(name="(\\""), add(a=1, b=2)',
    "touch(name=\"\"\"a'\"b)\"\"\") , add(a=1, b=2)", "touch(name='\\\\'), add(a=1, b=2)",
    "touch(name='x')\t,add(a=1, b=2)", "  touch(name='x'), add(a=1, b=2)",
])
def test_a_single_call_method_refuses_a_list_before_any_of_it_runs(manager, touched, text, sandboxed):
    run = manager.execute_func_expr_via_sandbox if sandboxed else manager.execute_func_expr
    out = run(text)
    assert out.error.kind == ErrorKind.Unsupported and "none ran" in out.error.message
    assert out.error.hint == "use ToolManager.run(...) or ToolManager.execute(...) for a list of calls"
    assert touched == []
    outs = manager.execute_func_exprs(["add(a=1, b=2)", text])
    assert outs[0].output == 3 and outs[1].error.kind == ErrorKind.Unsupported
    assert touched == []
    # A list runs where a list is asked for.
    assert len(manager.execute("[touch(name='x'), add(a=1, b=2)]")) == 2 and touched == ["x"]


@pytest.mark.parametrize("sandboxed", [False, True], ids=["native", "sandboxed"])
def test_a_single_call_method_refuses_an_empty_list(manager, sandboxed):
    run = manager.execute_func_expr_via_sandbox if sandboxed else manager.execute_func_expr
    out = run("[]")
    assert out.output is None and out.error.kind == ErrorKind.Unsupported
    assert "expected a function call" in out.error.message


def test_run_takes_every_input_form(manager):
    done = manager.run("Sure:\nadd(a=1, b=2)")
    assert isinstance(done, Executed) and [o.output for o in done.outputs] == [3]
    assert [o.output for o in manager.run(Function(name="add", kwargs={"a": 2, "b": 2})).outputs] == [4]
    assert [o.output for o in manager.run([FunctionExpression(action="add(a=1, b=1)")] * 2).outputs] == [2, 2]
    assert [o.output for o in manager.run([Function(name="add", args=[1, 2])]).outputs] == [3]
    message = {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 5, "b": 5}'}}]}
    out = manager.run(message).outputs[0]
    assert out.output == 10 and out.call_id == "call_1"
    assert manager.run("add(a=1, b=2)", sandboxed=True).outputs[0].receipt is not None
    assert asyncio.run(manager.arun("add(a=3, b=4)")).outputs[0].output == 7
    with pytest.raises(TypeError):
        manager.run(42)


def test_limits_per_request_and_hints_name_the_python_api(manager):
    out = manager.run("[add(a=1, b=2), add(a=3, b=4)]", limits=Limits(max_calls=1)).outputs[-1]
    assert out.error.kind == ErrorKind.Limit
    assert out.error.hint == "raise Limits(max_calls=...) if this input is legitimate"
    assert "::" not in str(out.error)


def test_an_error_with_no_place_in_any_text_has_no_span(manager):
    out = manager.execute_func(Function(name="add", kwargs={"a": "x", "b": 1}))
    assert out.error.kind == ErrorKind.Type and out.error.span is None
    assert str(out.error) == "Type: `a` expects int, got str 'x'; hint: signature: add(a: int, b: int)"
    assert manager.execute_func(Function(name="nope")).error.span is None
    # An error in a text keeps its place.
    assert manager.execute_func_expr("add(a=1, b=2, c=3)").error.span == (14, 15)


def test_a_parse_error_given_to_execute_func_keeps_its_place(manager):
    bad = manager.parse_func_expr("add(a=1, b=")
    assert bad.span is not None and manager.execute_func(bad).error == bad


def test_only_calls_in_call_position_run_and_lenient_takes_mentions():
    ran = []

    def add(a: int, b: int) -> int:
        ran.append((a, b))
        return a + b

    m = fexpr.ToolManager(tools=[add])
    for text in [
        "# add(a=1, b=2)",
        "I will not call add(a=1, b=2) because you asked me not to.",
        "if False:\n    add(a=1, b=2)",
        "x = add(a=1, b=2); import os",
    ]:
        done = m.run(text)
        assert all(out.output is None for out in done.outputs), text
    assert ran == []
    done = m.run("You could use add(a=1, b=2) here.", lenient=True)
    assert [out.output for out in done.outputs] == [3]


def test_model_formats_are_read_and_named():
    def multiply(a: int, b: int) -> int:
        return a * b

    m = fexpr.ToolManager(tools=[multiply])
    text = "<tool_call>\n<function=multiply>\n<parameter=a>\n6\n</parameter>\n<parameter=b>\n7\n</parameter>\n</function>\n</tool_call>"
    assert [out.output for out in m.run(text).outputs] == [42]
    assert [out.output for out in m.run(text, model_format="qwen3-coder").outputs] == [42]
    with pytest.raises(ValueError, match="did you mean"):
        m.run(text, model_format="qwen3_coder")


def test_stream_runs_each_call_as_its_text_arrives():
    import threading
    import time

    ran = []

    def add(a: int, b: int) -> int:
        ran.append(time.monotonic())
        return a + b

    m = fexpr.ToolManager(tools=[add])
    sent = {}

    def chunks():
        yield "[add(a=1, b=2), "
        time.sleep(0.5)
        sent["rest"] = time.monotonic()
        yield "add(a=3, b=4)]"

    events = list(m.stream(chunks()))
    outputs = [e for e in events if isinstance(e, fexpr.FunctionOutput)]
    assert [o.output for o in outputs] == [3, 7]
    # The first call ran before the rest of the text was sent.
    assert ran[0] < sent["rest"]
    # Text read whole at once runs only what the whole text runs.
    assert [o.output for o in m.stream(["add(a=1, b=2)\n", "import os"]) if isinstance(o, fexpr.FunctionOutput)] == [None]


def test_astream_over_an_async_iterable():
    def add(a: int, b: int) -> int:
        return a + b

    m = fexpr.ToolManager(tools=[add])

    async def deltas():
        for piece in ["Sure:\n", "add(a=2, ", "b=3)\n", "Done."]:
            yield piece

    async def main():
        return [e async for e in m.astream(deltas())]

    events = asyncio.run(main())
    outputs = [e.output for e in events if isinstance(e, fexpr.FunctionOutput)]
    assert outputs == [5]
    assert [e.reason for e in events if isinstance(e, fexpr.Ignored)] == ["Prose", "Prose"]


# A request's session: the caller's object, seen by that request's tools only (issue 30).


@pytest.mark.parametrize("sandboxed", [False, True])
def test_a_session_reaches_the_requests_tools_and_no_other(sandboxed):
    def whoami(greeting: str) -> str:
        return f"{greeting}, {fexpr.current_session()['user']}"

    async def whoami_async() -> str:
        await asyncio.sleep(0)
        return fexpr.current_session()["user"]

    def blocking_whoami() -> str:
        return fexpr.current_session()["user"]

    tools = [whoami, whoami_async, fexpr.FunctionTool(blocking_whoami, blocking=False)]
    manager = ToolManager(tools=tools)
    text = "[whoami(greeting='hi'), whoami_async(), blocking_whoami()]"
    done = manager.run(text, session={"user": "ada"}, sandboxed=sandboxed)
    assert [o.output for o in done.outputs] == ["hi, ada", "ada", "ada"], done
    done = asyncio.run(manager.arun(text, session={"user": "bob"}, sandboxed=sandboxed))
    assert [o.output for o in done.outputs] == ["hi, bob", "bob", "bob"], done
    # A stream gives each output as its call finishes: in any order.
    streamed = [o.output for o in manager.stream([text], session={"user": "eve"}, sandboxed=sandboxed)]
    assert sorted(streamed) == ["eve", "eve", "hi, eve"]
    # Without a session, none: the tool's own error, not another request's session.
    [out, *_] = manager.run(text, sandboxed=sandboxed).outputs
    assert out.error.kind == ErrorKind.ToolFailed and "not subscriptable" in out.error.message, out
    assert fexpr.current_session() is None


def test_a_request_made_by_a_tool_runs_in_that_tools_session():
    def inner() -> str:
        return fexpr.current_session()

    inner_manager = ToolManager(tools=[inner])

    def outer() -> list:
        # Without session=, the nested request's tools (on a worker thread) see the caller's.
        return [inner_manager.execute_func_expr("inner()").output, inner_manager.run("inner()", session="own").outputs[0].output]

    done = ToolManager(tools=[outer]).run("outer()", session="conversation-7")
    assert done.outputs[0].output == ["conversation-7", "own"], done


def test_a_worker_keeps_no_session_from_one_request_to_the_next():
    # Blocking tools' workers keep their Python thread state between calls: a session is set
    # for its request's tools only.
    def who() -> object:
        return fexpr.current_session()

    manager = ToolManager(tools=[who])
    for _ in range(20):
        assert manager.run("who()", session="s").outputs[0].output == "s"
        assert manager.execute_func_expr("who()").output is None


# Keys as the schema declares them (issue 36): a tool defined by its JSON schema, whose
# parameters Python cannot name, is reached from every door, natively and sandboxed.

_KEYS = {"from": "USD", "class": "eco", "max-results": 3, "$filter": "a eq 1", "城市": "北京"}


def _keyed_manager():
    def convert(**kw):
        return kw

    definition = {
        "func_name": "convert",
        "func_desc": "Convert an amount.",
        "func_parameters": {
            "type": "object",
            "properties": {
                "from": {"type": "string"},
                "class": {"type": "string"},
                "max-results": {"type": "integer"},
                "$filter": {"type": "string"},
                "城市": {"type": "string"},
            },
            "required": ["from"],
        },
    }
    return ToolManager(tools=[fexpr.FunctionTool(convert, definition)])


def _doors():
    import json

    args = json.dumps(_KEYS, ensure_ascii=False)
    qwen = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in _KEYS.items())
    return [
        'convert(**{"from": "USD", "class": "eco"}, **{"max-results": 3, "$filter": "a eq 1", "城市": "北京"})',
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_k", "type": "function", "function": {"name": "convert", "arguments": args}}]},
        {"type": "tool_use", "id": "toolu_k", "name": "convert", "input": dict(_KEYS)},
        f"<tool_call>\n<function=convert>\n{qwen}</function>\n</tool_call>",
        Function(name="convert", kwargs=dict(_KEYS)),
        "<tool_call>\n" + json.dumps({"name": "convert", "arguments": _KEYS}) + "\n</tool_call>",
    ]


@pytest.mark.parametrize("sandboxed", [False, True], ids=["native", "sandboxed"])
def test_keys_python_cannot_name_reach_the_tool_from_every_door(sandboxed):
    manager = _keyed_manager()
    for door in _doors():
        outputs = manager.run(door, sandboxed=sandboxed).outputs
        assert len(outputs) == 1, door
        assert outputs[0].error is None, (door, outputs[0].error)
        assert outputs[0].output == _KEYS, door
        assert list(outputs[0].parsed_input.kwargs) == list(_KEYS), door
        (again,) = asyncio.run(manager.arun(door, sandboxed=sandboxed)).outputs
        assert again.output == _KEYS, door


def test_keys_python_cannot_name_are_checked_alike():
    manager = _keyed_manager()
    for door in [d for d in _doors() if isinstance(d, str)]:
        checked = manager.check_model_output(door)
        assert [v.valid for v in checked.verdicts] == [True], door
        assert checked.verdicts[0].kwargs == _KEYS, door
    bad = manager.check_model_output('convert(**{"frm": "USD"})').verdicts[0]
    assert not bad.valid and bad.error.kind == ErrorKind.Arguments
    assert bad.error.hint.startswith('did you mean `**{"from": …}`?')
