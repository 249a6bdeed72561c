"""Streams whose source fails, is interrupted or gives something that is not text end with
nothing further run and every pending piece reported; a tool's ``KeyboardInterrupt`` stops the
stream; limits are ``Limit`` outputs; a text without a call has no output; Python tools'
results count against ``max_eval_bytes``; the provider reply helpers build valid messages."""

import asyncio
import time
from typing import Literal, Optional, Union

import pytest
from pydantic import ConfigDict, TypeAdapter
from typing_extensions import TypedDict

import fexpr
from fexpr import ErrorKind, Limits, ToolManager


def _manager(ran):
    def record(tag: str) -> str:
        """Write a record."""
        ran.append(tag)
        return tag

    def add(a: int, b: int) -> int:
        ran.append("add")
        return a + b

    return ToolManager(tools=[record, add])


def _outputs(events):
    return [e for e in events if isinstance(e, fexpr.FunctionOutput)]


class _Dropped(ConnectionError):
    pass


def _failing():
    yield "record(tag='partial')\n"
    time.sleep(0.2)  # `record` starts: no more text is at hand
    # Complete, but its line is not ended yet: it has not started when the source fails.
    yield "record(tag='second')"
    raise _Dropped("connection reset by peer")


def test_a_failing_source_ends_the_stream_and_reports_every_pending_call():
    ran = []
    events = []
    with pytest.raises(_Dropped):
        for event in _manager(ran).stream(_failing()):
            events.append(event)
    outs = _outputs(events)
    # What had started finished and is reported; what had not never runs, and says why.
    assert ran == ["partial"]
    assert [(o.name, o.output) for o in outs if o.error is None] == [("record", "partial")]
    [stopped] = [o for o in outs if o.error is not None]
    assert stopped.name == "record" and "second" in stopped.input
    assert "chunk source failed: _Dropped: connection reset by peer" in stopped.error.message
    time.sleep(0.3)
    assert ran == ["partial"], "nothing runs in the background after the stream ended"


@pytest.mark.parametrize("bad", [5, b"x", None, "\ud800"], ids=["int", "bytes", "None", "surrogate"])
def test_a_chunk_that_is_not_text_ends_the_stream_with_nothing_further_run(bad):
    ran = []

    def chunks():
        yield "add(a=1, b=2)\n"
        yield "record(tag='late'), "
        yield bad
        yield "record(tag='never')\n"

    events = []
    with pytest.raises((TypeError, UnicodeError)):
        for event in _manager(ran).stream(chunks()):
            events.append(event)
    time.sleep(0.2)
    assert "late" not in ran and "never" not in ran, ran
    # Every call of the text read is reported: the one that ran, and the rest with why not.
    names = [o.name for o in _outputs(events)]
    assert "add" in names and "record" in names, events


def test_a_keyboard_interrupt_in_the_source_stops_and_reports():
    ran = []

    def chunks():
        yield "add(a=1, b=2)"
        raise KeyboardInterrupt

    events = []
    with pytest.raises(KeyboardInterrupt):
        for event in _manager(ran).stream(chunks()):
            events.append(event)
    time.sleep(0.2)
    assert ran == [], ran
    assert [o.name for o in _outputs(events)] == ["add"]
    assert "KeyboardInterrupt" in _outputs(events)[0].error.message


def test_a_failing_async_source_ends_the_stream_with_nothing_further_run():
    ran = []
    manager = _manager(ran)

    async def deltas():
        yield "record(tag='a')\n"
        await asyncio.sleep(0.2)
        yield "record(tag='b')"
        raise _Dropped("gone")

    async def main():
        events = []
        with pytest.raises(_Dropped):
            async for event in manager.astream(deltas()):
                events.append(event)
        return events

    events = asyncio.run(main())
    time.sleep(0.2)
    assert ran == ["a"]
    assert [o.output for o in _outputs(events) if o.error is None] == ["a"]
    assert any("gone" in o.error.message for o in _outputs(events) if o.error is not None)


@pytest.mark.parametrize("escape", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_raised_by_a_tool_stops_the_stream(escape):
    ran = []

    def stop() -> str:
        ran.append("stop")
        raise escape()

    def after(tag: str) -> str:
        ran.append(tag)
        return tag

    manager = ToolManager(tools=[stop, after])

    # (Calls of text already at hand start together, as a request's calls do; the text that
    # arrives after the interrupt never runs.)
    def chunks():
        yield "stop()\n"
        time.sleep(0.2)
        yield "after(tag='3')\n"

    with pytest.raises(escape):
        list(manager.stream(chunks()))
    time.sleep(0.3)
    assert ran == ["stop"], ran


def test_a_stream_over_max_source_bytes_gives_the_limit_output():
    ran = []
    manager = _manager(ran)

    def chunks():
        yield "add(a=1, b=2)\n"
        for _ in range(100):
            yield "x" * 100

    events = list(manager.stream(chunks(), limits=Limits(max_source_bytes=1000)))
    errors = [o.error for o in _outputs(events) if o.error is not None]
    assert [e.kind for e in errors] == [ErrorKind.Limit], events
    assert "max_source_bytes" in errors[0].message


def test_a_text_without_a_call_has_no_output_and_says_why():
    manager = _manager([])
    done = manager.run("All done, the file is saved.")
    assert done.outputs == []
    assert done.nothing_to_run.kind == ErrorKind.Unsupported
    assert done.nothing_to_run.message == "no call to run: the text is prose"
    assert [i.reason for i in done.ignored] == ["Prose"]
    message = {"role": "assistant", "content": "Done.", "tool_calls": []}
    assert manager.run(message).outputs == []
    assert manager.run("add(a=1, b=2)").nothing_to_run is None
    assert _outputs(manager.stream(["I am done."])) == []


def test_python_tool_results_count_against_max_eval_bytes():
    calls = []

    def big(n: int) -> list:
        calls.append(n)
        return list(range(n))

    manager = ToolManager(tools=[big], limits=Limits(max_eval_bytes=1 << 20, max_output_bytes=64 << 20))
    # One result larger than the request's max_eval_bytes is refused while it is converted.
    [out] = manager.run("big(n=200000)").outputs
    assert out.error.kind == ErrorKind.Limit and "max_eval_bytes" in out.error.message
    # Results that fit one by one but not together: the one that goes over fails. The three
    # calls run concurrently, so which one finishes over the budget is not fixed; the first
    # to finish always fits.
    outs = manager.run("[big(n=20000), big(n=20000), big(n=20000)]").outputs
    ok = [o for o in outs if o.error is None]
    over = [o for o in outs if o.error is not None]
    assert ok and all(o.output == list(range(20000)) for o in ok)
    assert over and all(o.error.kind == ErrorKind.Limit and "max_eval_bytes" in o.error.message for o in over)


def test_a_blocking_tools_result_is_shown_within_the_call_deadline():
    class Slow:
        """A result fexpr has no value for, whose repr takes far longer than the deadline."""

        def __repr__(self):
            time.sleep(4)
            return "Slow()"

    def slow() -> Slow:
        return Slow()

    manager = ToolManager(tools=[fexpr.FunctionTool(slow, blocking=True)], limits=Limits(call_deadline=0.5))
    started = time.monotonic()
    [out] = manager.run("slow()").outputs
    took = time.monotonic() - started
    assert took < 2.5, took
    assert out.error.kind == ErrorKind.Limit and "call_deadline" in out.error.message
    time.sleep(4)  # the tool's thread finishes its repr


# The provider replies: the shapes OpenAI's and Anthropic's SDKs define for them (their
# `ChatCompletionToolMessageParam` and `ToolResultBlockParam`), checked strictly: no other key.


class _OpenAiToolMessage(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid", strict=True)  # type: ignore[misc]
    role: Literal["tool"]
    content: str
    tool_call_id: str


class _AnthropicToolResult(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid", strict=True)  # type: ignore[misc]
    type: Literal["tool_result"]
    tool_use_id: str
    content: Union[str, list]
    is_error: Optional[bool]


def test_openai_replies_are_valid_tool_messages_for_the_calls_made():
    manager = _manager([])
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
            {"id": "call_b", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}},
        ],
    }
    replies = manager.openai_messages(manager.run(message))
    TypeAdapter(list[_OpenAiToolMessage]).validate_python(replies)
    assert [r["tool_call_id"] for r in replies] == ["call_a", "call_b"]
    assert replies[0]["content"] == "3"
    assert replies[1]["content"].startswith("error: Arguments: ")
    # Streamed events work the same (the Ignored stretches are skipped); no call, no reply.
    events = list(manager.stream(["Sure:\n", "add(a=2, b=3)\n"]))
    [reply] = manager.openai_messages(events)
    assert reply["content"] == "5" and reply["tool_call_id"] == _outputs(events)[0].call_id
    assert manager.openai_messages(manager.run("Nothing to do.")) == []
    with pytest.raises(TypeError):
        manager.openai_messages("add(a=1, b=2)")


def test_anthropic_replies_are_valid_tool_result_blocks_for_the_calls_made():
    manager = _manager([])
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Adding."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 2}},
            {"type": "tool_use", "id": "toolu_2", "name": "record", "input": {"tag": 5}},
        ],
    }
    blocks = manager.anthropic_blocks(manager.run(message))
    TypeAdapter(list[_AnthropicToolResult]).validate_python(blocks)
    assert [(b["tool_use_id"], b["is_error"]) for b in blocks] == [("toolu_1", False), ("toolu_2", True)]
    assert blocks[0]["content"] == "3"
