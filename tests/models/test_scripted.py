import time
from typing import Any

import pytest

from strandslike.models import (
    Model,
    ScriptedModel,
    ScriptedRequest,
    ScriptExhaustedError,
    structured_output_call,
    text,
    tool_call,
    turn,
)
from strandslike.models._streaming import process_stream
from strandslike.models.scripted import ScriptedTurn
from strandslike.types.content import Message
from strandslike.types.exceptions import NotJSONSerializableError, StrandslikeError
from strandslike.types.streaming import StreamEvent, Usage
from strandslike.types.tools import ToolSpec

USER: list[Message] = [{"role": "user", "content": [{"text": "hi"}]}]


async def collect(model: Model, messages: list[Message] | None = None, **kwargs: Any) -> list[StreamEvent]:
    return [event async for event in model.stream(messages if messages is not None else USER, **kwargs)]


# --- turn helpers


def test_text_builds_one_text_block() -> None:
    assert text("hello") == ScriptedTurn([{"text": "hello"}], "end_turn", None, 0)
    usage: Usage = {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}
    assert text("x", stop_reason="max_tokens", usage=usage, delay=0.5) == ScriptedTurn(
        [{"text": "x"}], "max_tokens", usage, 0.5
    )


def test_tool_call_keywords_form_the_input_including_a_name_key() -> None:
    scripted = tool_call("lookup", name="Ada", limit=3)
    assert scripted.content == [{"toolUse": {"toolUseId": "", "name": "lookup", "input": {"name": "Ada", "limit": 3}}}]
    assert scripted.stop_reason == "tool_use"


def test_tool_call_input_dict_is_the_whole_input() -> None:
    scripted = tool_call("run", input={"delay": 5, "tool_use_id": "x"}, tool_use_id="t1")
    assert scripted.content == [
        {"toolUse": {"toolUseId": "t1", "name": "run", "input": {"delay": 5, "tool_use_id": "x"}}}
    ]


def test_tool_call_non_dict_input_is_an_ordinary_key() -> None:
    assert tool_call("echo", input="hello").content[0]["toolUse"]["input"] == {"input": "hello"}


def test_tool_call_rejects_input_dict_mixed_with_keywords() -> None:
    with pytest.raises(TypeError, match="pass the whole input one way"):
        tool_call("run", input={"a": 1}, b=2)


def test_tool_call_rejects_unserializable_input() -> None:
    with pytest.raises(NotJSONSerializableError, match="tool_call\\('bad'\\)"):
        tool_call("bad", value=object())


def test_tool_call_with_no_arguments_has_empty_input() -> None:
    assert tool_call("ping").content[0]["toolUse"]["input"] == {}


def test_turn_combines_blocks_and_infers_tool_use() -> None:
    combined = turn(text("checking"), tool_call("a", x=1), tool_call("b", y=2))
    assert [next(iter(block)) for block in combined.content] == ["text", "toolUse", "toolUse"]
    assert combined.stop_reason == "tool_use"


def test_turn_stop_reason_override_delay_and_raw_blocks() -> None:
    reasoning = {"reasoningContent": {"reasoningText": {"text": "hmm"}}}
    combined = turn(reasoning, text("a", delay=0.2), tool_call("t"), stop_reason="end_turn")  # type: ignore[arg-type]
    assert combined.content[0] == reasoning
    assert combined.stop_reason == "end_turn"
    assert combined.delay == 0.2
    assert turn(text("a"), delay=1).delay == 1


def test_turn_without_tools_keeps_the_last_helper_stop_reason() -> None:
    assert turn(text("a"), text("b", stop_reason="max_tokens")).stop_reason == "max_tokens"
    assert turn({"text": "raw"}).stop_reason == "end_turn"


# --- events


async def test_text_turn_streams_bedrock_events() -> None:
    events = await collect(ScriptedModel([text("hello world")]))
    assert events == [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": "hello world"}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}, "metrics": {"latencyMs": 0}}},
    ]


async def test_tool_call_streams_start_input_and_stop() -> None:
    events = await collect(ScriptedModel([tool_call("add", a=1, b=2)]))
    assert events[1:5] == [
        {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tooluse_1", "name": "add"}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"a": 1, "b": 2}'}}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "tool_use"}},
    ]


async def test_chunk_size_splits_text_and_tool_input() -> None:
    model = ScriptedModel([turn(text("abcdefg"), tool_call("t", k="v"))], chunk_size=3)
    deltas = [event["contentBlockDelta"]["delta"] for event in await collect(model) if "contentBlockDelta" in event]
    assert deltas[:3] == [{"text": "abc"}, {"text": "def"}, {"text": "g"}]
    fragments = [delta["toolUse"]["input"] for delta in deltas[3:]]
    assert all(len(fragment) <= 3 for fragment in fragments)
    assert "".join(fragments) == '{"k": "v"}'


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        ScriptedModel([], chunk_size=0)


async def test_reasoning_blocks_stream_as_reasoning_deltas() -> None:
    model = ScriptedModel(
        [
            turn(
                {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig"}}},
                {"reasoningContent": {"redactedContent": b"\x00secret"}},
                text("answer"),
            )
        ]
    )
    deltas = [event["contentBlockDelta"]["delta"] for event in await collect(model) if "contentBlockDelta" in event]
    assert deltas == [
        {"reasoningContent": {"text": "think"}},
        {"reasoningContent": {"signature": "sig"}},
        {"reasoningContent": {"redactedContent": b"\x00secret"}},
        {"text": "answer"},
    ]


async def test_scripted_usage_is_reported_verbatim() -> None:
    usage: Usage = {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30}
    events = await collect(ScriptedModel([text("x", usage=usage)]))
    assert events[-1] == {"metadata": {"usage": usage, "metrics": {"latencyMs": 0}}}


async def test_estimated_usage_is_deterministic() -> None:
    messages: list[Message] = [*USER, {"role": "assistant", "content": [{"text": "a"}]}, *USER]
    events = await collect(ScriptedModel([text("x" * 40)]), messages)
    assert events[-1]["metadata"]["usage"] == {"inputTokens": 3, "outputTokens": 10, "totalTokens": 13}


# --- tool use ids


def _tool_ids(events: list[StreamEvent]) -> list[str]:
    return [
        event["contentBlockStart"]["start"]["toolUse"]["toolUseId"]
        for event in events
        if "contentBlockStart" in event and "toolUse" in event["contentBlockStart"]["start"]
    ]


async def test_tool_use_ids_count_across_the_whole_script() -> None:
    model = ScriptedModel(
        [
            turn(tool_call("a"), tool_call("b", tool_use_id="explicit")),
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "", "name": "c", "input": {}}}]},
            tool_call("d"),
        ]
    )
    ids = [_tool_ids(await collect(model)) for _ in range(3)]
    assert ids == [["tooluse_1", "explicit"], ["tooluse_3"], ["tooluse_4"]]


async def test_tool_use_ids_are_stable_per_script() -> None:
    script = [tool_call("a"), tool_call("b")]
    first, second = ScriptedModel(script), ScriptedModel(script)
    assert _tool_ids(await collect(first)) == _tool_ids(await collect(second)) == ["tooluse_1"]


# --- raw messages and exceptions


async def test_raw_assistant_message_turn() -> None:
    message: Message = {
        "role": "assistant",
        "content": [{"text": "calling"}, {"toolUse": {"toolUseId": "id-9", "name": "t", "input": {"q": [1, 2]}}}],
    }
    result = await process_stream(ScriptedModel([message]).stream(USER))
    assert result.message == message
    assert result.stop_reason == "tool_use"


def test_raw_message_must_be_from_the_assistant() -> None:
    with pytest.raises(ValueError, match="turn 0 is a 'user' message"):
        ScriptedModel([{"role": "user", "content": [{"text": "x"}]}])


def test_unstreamable_block_is_rejected() -> None:
    with pytest.raises(ValueError, match="'image' block"):
        ScriptedModel([{"role": "assistant", "content": [{"image": {"format": "png", "source": {"bytes": b""}}}]}])


def test_unsupported_turn_type_is_rejected_with_a_hint() -> None:
    with pytest.raises(TypeError, match=r"turn 1 is 'plain'; use text\('...'\)"):
        ScriptedModel([text("ok"), "plain"])  # type: ignore[list-item]


async def test_exception_turn_is_raised_then_the_script_continues() -> None:
    boom = ConnectionError("throttled")
    model = ScriptedModel([boom, text("recovered")])
    with pytest.raises(ConnectionError) as caught:
        await collect(model)
    assert caught.value is boom
    result = await process_stream(model.stream(USER))
    assert result.message["content"] == [{"text": "recovered"}]
    assert model.calls == 2
    assert model.remaining == 0


# --- requests, counters and config


async def test_requests_record_arguments_as_a_shallow_copy() -> None:
    model = ScriptedModel([text("a")])
    messages: list[Message] = [{"role": "user", "content": [{"text": "q"}]}]
    specs: list[ToolSpec] = [{"name": "t", "description": "d", "inputSchema": {"json": {}}}]
    state: dict[str, Any] = {}
    await collect(model, messages, tool_specs=specs, system_prompt="sys", tool_choice={"auto": {}}, model_state=state)
    messages.append({"role": "assistant", "content": [{"text": "later"}]})

    request = model.requests[0]
    assert isinstance(request, ScriptedRequest)
    assert request.messages == [{"role": "user", "content": [{"text": "q"}]}]
    assert request.messages is not messages
    assert request.messages[0] is messages[0]  # shallow: the history is never deep-copied
    assert request.tool_specs is specs
    assert request.system_prompt == "sys"
    assert request.kwargs == {"tool_choice": {"auto": {}}, "model_state": state}


async def test_tool_choice_is_not_recorded_when_absent() -> None:
    model = ScriptedModel([text("a")])
    await collect(model)
    assert model.requests[0].kwargs == {}
    assert model.requests[0].tool_specs is None
    assert model.requests[0].system_prompt is None


async def test_calls_and_remaining_track_progress() -> None:
    model = ScriptedModel([text("a"), text("b")])
    assert (model.calls, model.remaining) == (0, 2)
    await collect(model)
    assert (model.calls, model.remaining) == (1, 1)
    await collect(model)
    assert (model.calls, model.remaining) == (2, 0)


async def test_exhausted_script_explains_what_happened_and_how_to_fix_it() -> None:
    model = ScriptedModel([text("only")])
    await collect(model)
    messages: list[Message] = [
        *USER,
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "x", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": []}}]},
    ]
    with pytest.raises(ScriptExhaustedError) as caught:
        await collect(model, messages)
    message = str(caught.value)
    assert "had 1 turn and all were used" in message
    assert "request 2 was received" in message
    assert "toolResult(toolUseId='t1', status='success')" in message
    assert "ScriptedModel([...])" in message
    assert isinstance(caught.value, StrandslikeError)
    assert isinstance(caught.value, RuntimeError)
    assert model.calls == 2


async def test_exhausted_empty_script_summarises_long_text() -> None:
    with pytest.raises(ScriptExhaustedError, match=r"had 0 turns.*request 1.*user: 'xxx.*\.\.\.'") as caught:
        await collect(ScriptedModel([]), [{"role": "user", "content": [{"text": "x" * 200}]}])
    assert len(str(caught.value)) < 400
    with pytest.raises(ScriptExhaustedError, match="no user message"):
        await collect(ScriptedModel([]), [])


def test_update_and_get_config() -> None:
    model = ScriptedModel([], model_id="m1")
    assert model.get_config() == {"model_id": "m1"}
    model.update_config(temperature=0.2, model_id="m2")
    assert model.get_config() == {"model_id": "m2", "temperature": 0.2}
    model.get_config()["model_id"] = "changed"
    assert model.get_config()["model_id"] == "m2"


def test_scripted_model_is_a_stateless_model() -> None:
    model = ScriptedModel([])
    assert isinstance(model, Model)
    assert model.stateful is False


async def test_structured_output_reads_the_forced_tool_call() -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        value: int

    model = ScriptedModel([structured_output_call(Answer, value=7)])
    events = [event async for event in model.structured_output(Answer, USER)]
    assert events[-1] == {"output": Answer(value=7)}
    request = model.requests[0]
    assert request.kwargs["tool_choice"] == {"any": {}}
    assert [spec["name"] for spec in request.tool_specs or []] == ["Answer"]


async def test_structured_output_without_the_tool_call_is_a_value_error() -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        value: int

    model = ScriptedModel([text("no idea")])
    with pytest.raises(ValueError, match='instead of "tool_use"'):
        [event async for event in model.structured_output(Answer, USER)]


# --- delay


async def test_model_delay_waits_before_the_first_event() -> None:
    model = ScriptedModel([text("a")], delay=0.05)
    start = time.monotonic()
    await collect(model)
    assert time.monotonic() - start >= 0.04


async def test_turn_delay_overrides_the_model_delay() -> None:
    model = ScriptedModel([text("a", delay=0.05)], delay=5)
    start = time.monotonic()
    await collect(model)
    assert 0.04 <= time.monotonic() - start < 2


# --- round trip through the parser


@pytest.mark.parametrize("chunk_size", [None, 1, 4])
async def test_round_trip_reproduces_the_scripted_message(chunk_size: int | None) -> None:
    scripted = turn(
        {"reasoningContent": {"reasoningText": {"text": "let me think", "signature": "s1"}}},
        {"reasoningContent": {"redactedContent": b"hidden"}},
        text("Checking both."),
        tool_call("a", x=1, nested={"list": [1, "two", None], "ok": True}),
        tool_call("b", tool_use_id="mine", input={"name": "ünïcode ✓"}),
        {"citationsContent": {"citations": [{"title": "doc"}], "content": [{"text": "cited"}]}},
    )
    model = ScriptedModel([scripted, text("done", stop_reason="max_tokens")], chunk_size=chunk_size)

    first = await process_stream(model.stream(USER))
    expected = [dict(block) for block in scripted.content]
    expected[3] = {
        "toolUse": {
            "toolUseId": "tooluse_1",
            "name": "a",
            "input": {"x": 1, "nested": {"list": [1, "two", None], "ok": True}},
        }
    }
    assert first.message == {"role": "assistant", "content": expected}
    assert first.stop_reason == "tool_use"

    second = await process_stream(model.stream(USER))
    assert second.message == {"role": "assistant", "content": [{"text": "done"}]}
    assert second.stop_reason == "max_tokens"
