"""Structured tool-call deltas streamed into ``stream``/``astream``: OpenAI Chat Completions
chunks, Responses API events and Anthropic Messages events, as dicts, as objects with
attributes and as the SDKs' own pydantic models (when installed). The first call runs before
the stream ends; ids are kept; bad events and cut-off calls are error outputs; the replies
``openai_messages``/``anthropic_blocks`` make from the events are a valid conversation."""

import asyncio
import json
import time
from types import SimpleNamespace

import pytest
from pydantic import TypeAdapter

import fexpr
from fexpr import ErrorKind, ToolManager


def _manager(ran=None):
    ran = [] if ran is None else ran

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        ran.append(("add", a, b))
        return a + b

    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(("get_weather", city))
        return f"sunny in {city}"

    return ToolManager(tools=[add, get_weather])


def _outputs(events):
    return [e for e in events if isinstance(e, fexpr.FunctionOutput)]


def _chunk(delta, finish_reason=None):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _frag(index, arguments, id=None, name=None):
    call = {"index": index, "function": {"arguments": arguments}}
    if id is not None:
        call.update(id=id, type="function")
        call["function"]["name"] = name
    return _chunk({"tool_calls": [call]})


def _chat_stream():
    """A Chat Completions response calling two tools, interleaved, with text first."""
    return [
        _chunk({"role": "assistant", "content": "Let me check."}),
        _frag(0, "", id="call_w", name="get_weather"),
        _frag(1, '{"a": 2', id="call_a", name="add"),
        _frag(0, '{"city": '),
        _frag(1, ', "b": 40}'),
        _frag(0, '"Paris"}'),
        _chunk({}, finish_reason="tool_calls"),
    ]


def test_chat_chunks_as_dicts_run_each_call_with_its_id():
    events = list(_manager().stream(iter(_chat_stream())))
    outs = sorted(_outputs(events), key=lambda o: o.call_id)
    assert [(o.call_id, o.name, o.output) for o in outs] == [
        ("call_a", "add", 42),
        ("call_w", "get_weather", "sunny in Paris"),
    ]
    assert [i.text for i in events if isinstance(i, fexpr.Ignored)] == ["Let me check."]
    # A list of events is read the same.
    assert len(_outputs(_manager().stream(_chat_stream()))) == 2


def _until(condition, seconds=20.0):
    """Wait (blocking) until ``condition()`` holds, at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_first_call_starts_before_the_stream_ends():
    ran = []
    manager = _manager(ran)
    seen_before_end = []

    def chunks():
        yield _frag(0, '{"a": 1, ', id="call_1", name="add")
        yield _frag(0, '"b": 2}')
        # The source is blocked here (a model still generating): the first call runs meanwhile.
        _until(lambda: ran)
        seen_before_end.append(list(ran))
        yield _frag(1, '{"a": 3, "b": 4}', id="call_2", name="add")
        yield _chunk({}, finish_reason="tool_calls")

    events = list(manager.stream(chunks()))
    assert seen_before_end == [[("add", 1, 2)]]
    assert [(o.call_id, o.output) for o in _outputs(events)] == [("call_1", 3), ("call_2", 7)]


def test_astream_takes_async_chat_chunks_and_starts_early():
    ran = []
    manager = _manager(ran)
    seen_before_end = []

    async def chunks():
        yield _frag(0, '{"a": 1, "b": 2}', id="call_1", name="add")
        for _ in range(2000):
            if ran:
                break
            await asyncio.sleep(0.01)
        seen_before_end.append(list(ran))
        yield _frag(1, '{"a": 5, "b": 5}', id="call_2", name="add")

    async def main():
        return [event async for event in manager.astream(chunks())]

    events = asyncio.run(main())
    assert seen_before_end == [[("add", 1, 2)]]
    assert [(o.call_id, o.output) for o in _outputs(events)] == [("call_1", 3), ("call_2", 10)]


def test_objects_with_attributes_and_model_dump_are_read():
    class Dumps:
        def __init__(self, data):
            self.data = data

        def model_dump(self):
            return self.data

    def ns(value):
        if isinstance(value, dict):
            return SimpleNamespace(**{k: ns(v) for k, v in value.items()})
        if isinstance(value, list):
            return [ns(v) for v in value]
        return value

    chunks = [Dumps(c) if i % 2 else ns(c) for i, c in enumerate(_chat_stream())]
    outs = sorted(_outputs(_manager().stream(chunks)), key=lambda o: o.call_id)
    assert [(o.call_id, o.output) for o in outs] == [("call_a", 42), ("call_w", "sunny in Paris")]


def test_responses_and_anthropic_events():
    responses = [
        {"type": "response.created", "response": {"id": "resp_1"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "function_call", "id": "fc_1", "call_id": "call_r", "name": "add", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": '{"a": 1,'},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": ' "b": 1}'},
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0,
         "arguments": '{"a": 1, "b": 1}'},
        {"type": "response.completed", "response": {"id": "resp_1"}},
    ]
    [out] = _outputs(_manager().stream(responses))
    assert (out.call_id, out.output) == ("call_r", 2)
    anthropic = [
        {"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Checking."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"ci'}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": 'ty": "Oslo"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_stop"},
    ]
    events = list(_manager().stream(anthropic))
    [out] = _outputs(events)
    assert (out.call_id, out.output) == ("toolu_1", "sunny in Oslo")
    assert [i.text for i in events if isinstance(i, fexpr.Ignored)] == ["Checking."]


def test_bad_events_and_cut_off_calls_are_error_outputs():
    chunks = [
        {"what": "is this"},
        _frag(7, '{"a": 1}'),
        _frag(0, '{"a": 1, "b": 2}', id="call_ok", name="add"),
        _frag(1, '{"city": "Ro', id="call_cut", name="get_weather"),
    ]
    outs = {o.name: o for o in _outputs(_manager().stream(chunks))}
    assert outs["add"].output == 3
    assert outs["event"].error.kind == ErrorKind.Unsupported
    assert outs["tool_calls"].error.kind == ErrorKind.Syntax
    cut = outs["get_weather"]
    assert cut.call_id == "call_cut" and cut.error.kind == ErrorKind.Syntax
    assert "cut off" in cut.error.message
    with pytest.raises(TypeError):
        list(_manager().stream(iter([_frag(0, "{}", id="c", name="add"), 5])))


def _assistant_message(chunks):
    """The assistant message a client builds from the streamed chunks (as the OpenAI SDK's
    stream helpers do)."""
    content, calls = "", {}
    for chunk in chunks:
        delta = chunk["choices"][0]["delta"]
        content += delta.get("content") or ""
        for frag in delta.get("tool_calls") or []:
            call = calls.setdefault(frag["index"], {"id": "", "type": "function",
                                                    "function": {"name": "", "arguments": ""}})
            call["id"] = frag.get("id") or call["id"]
            call["function"]["name"] += frag["function"].get("name") or ""
            call["function"]["arguments"] += frag["function"].get("arguments") or ""
    return {"role": "assistant", "content": content or None, "tool_calls": [calls[i] for i in sorted(calls)]}


def test_streamed_replies_make_a_valid_openai_conversation():
    manager = _manager()
    chunks = _chat_stream()
    events = list(manager.stream(iter(chunks)))
    replies = manager.openai_messages(events)
    assistant = _assistant_message(chunks)
    assert sorted(r["tool_call_id"] for r in replies) == sorted(c["id"] for c in assistant["tool_calls"])
    assert all(r["role"] == "tool" and isinstance(r["content"], str) for r in replies)
    conversation = [{"role": "user", "content": "Weather in Paris, and 2 + 40?"}, assistant, *replies]
    json.dumps(conversation)
    openai = pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionMessageParam

    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(conversation)
    # The SDK's own chunk models go in as they come from `client.chat.completions.create(stream=True)`.
    from openai.types.chat import ChatCompletionChunk

    typed = [ChatCompletionChunk.model_validate({**c, "created": 0, "model": "m"}) for c in chunks]
    again = manager.openai_messages(list(manager.stream(iter(typed))))
    assert sorted(r["tool_call_id"] for r in again) == ["call_a", "call_w"]
    assert openai is not None


def test_streamed_replies_make_valid_anthropic_tool_results():
    manager = _manager()
    events = [
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"a": 1, "b": 2}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"a": "x"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_stop"},
    ]
    blocks = manager.anthropic_blocks(list(manager.stream(events)))
    assert sorted((b["tool_use_id"], b["is_error"]) for b in blocks) == [("toolu_1", False), ("toolu_2", True)]
    anthropic = pytest.importorskip("anthropic")
    from anthropic.types import MessageParam, RawMessageStreamEvent

    assistant = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 2}},
        {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {"a": "x"}},
    ]}
    TypeAdapter(list[MessageParam]).validate_python([assistant, {"role": "user", "content": blocks}])
    # The SDK's own event models, as `client.messages.create(stream=True)` yields them.
    typed = [TypeAdapter(RawMessageStreamEvent).validate_python(e) for e in events]
    again = manager.anthropic_blocks(list(manager.stream(iter(typed))))
    assert sorted(b["tool_use_id"] for b in again) == ["toolu_1", "toolu_2"]
    assert anthropic is not None


def test_bare_sdk_deltas_are_read():
    """``chunk.choices[0].delta for chunk in stream``: each delta alone, as the SDK's model."""
    pytest.importorskip("openai")
    from openai.types.chat.chat_completion_chunk import ChoiceDelta

    deltas = [ChoiceDelta.model_validate(c["choices"][0]["delta"]) for c in _chat_stream()]
    outs = sorted(_outputs(_manager().stream(iter(deltas))), key=lambda o: o.call_id)
    assert [(o.call_id, o.output) for o in outs] == [("call_a", 42), ("call_w", "sunny in Paris")]
