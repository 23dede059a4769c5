import logging
import threading
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest

from strandslike.models import Model, ScriptedModel, text, tool_call
from strandslike.models._streaming import StreamResult, process_stream
from strandslike.types.content import Messages
from strandslike.types.streaming import StreamEvent
from strandslike.types.tools import ToolChoice, ToolSpec

START: StreamEvent = {"messageStart": {"role": "assistant"}}
TEXT_START: StreamEvent = {"contentBlockStart": {"start": {}}}
STOP: StreamEvent = {"contentBlockStop": {}}


def text_delta(value: str) -> StreamEvent:
    return {"contentBlockDelta": {"delta": {"text": value}}}


def tool_start(tool_use_id: str | None, name: str | None) -> StreamEvent:
    tool: dict[str, Any] = {}
    if tool_use_id is not None:
        tool["toolUseId"] = tool_use_id
    if name is not None:
        tool["name"] = name
    return {"contentBlockStart": {"start": {"toolUse": tool}}}


def tool_delta(fragment: str) -> StreamEvent:
    return {"contentBlockDelta": {"delta": {"toolUse": {"input": fragment}}}}


def message_stop(reason: str) -> StreamEvent:
    return {"messageStop": {"stopReason": reason}}


async def stream_of(*events: StreamEvent) -> AsyncGenerator[StreamEvent, None]:
    for event in events:
        yield event


async def parse(*events: StreamEvent, **kwargs: Any) -> StreamResult:
    return await process_stream(stream_of(*events), **kwargs)


async def test_text_deltas_are_joined_into_one_block() -> None:
    result = await parse(START, TEXT_START, text_delta("Hel"), text_delta("lo"), STOP, message_stop("end_turn"))
    assert result.message == {"role": "assistant", "content": [{"text": "Hello"}]}
    assert result.stop_reason == "end_turn"


async def test_consecutive_text_blocks_stay_separate_and_empty_text_is_dropped() -> None:
    result = await parse(TEXT_START, text_delta("a"), STOP, TEXT_START, text_delta(""), STOP, text_delta("b"), STOP)
    assert result.message["content"] == [{"text": "a"}, {"text": "b"}]


async def test_fragmented_tool_input_is_parsed_at_block_stop() -> None:
    result = await parse(
        START,
        tool_start("t1", "search"),
        tool_delta('{"query": "c'),
        tool_delta('ats", "limit"'),
        tool_delta(": 3}"),
        STOP,
        message_stop("tool_use"),
    )
    assert result.message["content"] == [
        {"toolUse": {"toolUseId": "t1", "name": "search", "input": {"query": "cats", "limit": 3}}}
    ]
    assert result.stop_reason == "tool_use"


async def test_tool_id_and_name_may_arrive_with_the_delta() -> None:
    delta: StreamEvent = {
        "contentBlockDelta": {"delta": {"toolUse": {"toolUseId": "t9", "name": "late", "input": "{}"}}}
    }
    result = await parse(delta, STOP)
    assert result.message["content"] == [{"toolUse": {"toolUseId": "t9", "name": "late", "input": {}}}]


@pytest.mark.parametrize("fragments", [[], [""], ["  ", "\n"]])
async def test_empty_tool_input_becomes_an_empty_dict(fragments: list[str]) -> None:
    result = await parse(tool_start("t1", "ping"), *(tool_delta(f) for f in fragments), STOP)
    assert result.message["content"] == [{"toolUse": {"toolUseId": "t1", "name": "ping", "input": {}}}]


async def test_invalid_tool_json_becomes_an_empty_dict_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="strandslike.models._streaming"):
        result = await parse(tool_start("t1", "broken"), tool_delta('{"a": '), STOP)
    assert result.message["content"] == [{"toolUse": {"toolUseId": "t1", "name": "broken", "input": {}}}]
    assert "tool_use_id=<t1>, tool_name=<broken>" in caplog.text
    assert "not valid JSON" in caplog.text


@pytest.mark.parametrize(("tool_use_id", "name"), [(None, "x"), ("t1", None), ("", "x")])
async def test_tool_block_without_id_or_name_is_skipped(tool_use_id: str | None, name: str | None) -> None:
    result = await parse(tool_start(tool_use_id, name), tool_delta("{}"), STOP, TEXT_START, text_delta("after"), STOP)
    assert result.message["content"] == [{"text": "after"}]
    assert result.stop_reason == "end_turn"


async def test_tool_start_extras_are_kept() -> None:
    start: StreamEvent = {
        "contentBlockStart": {"start": {"toolUse": {"toolUseId": "t1", "name": "x", "reasoningSignature": "rs"}}}
    }
    result = await parse(start, tool_delta("{}"), STOP)
    assert result.message["content"] == [
        {"toolUse": {"toolUseId": "t1", "name": "x", "input": {}, "reasoningSignature": "rs"}}
    ]


async def test_end_turn_with_tool_use_is_rewritten_to_tool_use() -> None:
    result = await parse(tool_start("t1", "x"), STOP, message_stop("end_turn"))
    assert result.stop_reason == "tool_use"


async def test_other_stop_reasons_are_kept_even_with_tool_use() -> None:
    result = await parse(tool_start("t1", "x"), STOP, message_stop("max_tokens"))
    assert result.stop_reason == "max_tokens"


async def test_missing_message_stop_means_end_turn_and_metadata_defaults_to_zeros() -> None:
    result = await parse(TEXT_START, text_delta("x"), STOP)
    assert result.stop_reason == "end_turn"
    assert result.usage == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
    assert result.metrics == {"latencyMs": 0}


async def test_metadata_is_captured_as_a_copy() -> None:
    usage = {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12, "cacheReadInputTokens": 2}
    metrics = {"latencyMs": 42, "timeToFirstByteMs": 3}
    result = await parse(START, {"metadata": {"usage": usage, "metrics": metrics}})
    assert result.usage == usage
    assert result.metrics == metrics
    assert result.usage is not usage
    assert result.metrics is not metrics


async def test_reasoning_text_and_signature_make_one_block() -> None:
    result = await parse(
        TEXT_START,
        {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "step 1, "}}}},
        {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "step 2"}}}},
        {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": "sig"}}}},
        STOP,
        TEXT_START,
        {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "unsigned"}}}},
        STOP,
    )
    assert result.message["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "step 1, step 2", "signature": "sig"}}},
        {"reasoningContent": {"reasoningText": {"text": "unsigned"}}},
    ]


async def test_redacted_reasoning_is_kept_as_bytes() -> None:
    result = await parse(
        {"contentBlockDelta": {"delta": {"reasoningContent": {"redactedContent": b"ab"}}}},
        {"contentBlockDelta": {"delta": {"reasoningContent": {"redactedContent": b"cd"}}}},
        STOP,
    )
    assert result.message["content"] == [{"reasoningContent": {"redactedContent": b"abcd"}}]


async def test_citations_wrap_the_text_block() -> None:
    result = await parse(
        TEXT_START,
        text_delta("cited"),
        {"contentBlockDelta": {"delta": {"citation": {"title": "doc"}}}},
        STOP,
    )
    assert result.message["content"] == [
        {"citationsContent": {"citations": [{"title": "doc"}], "content": [{"text": "cited"}]}}
    ]


async def test_assistant_redaction_replaces_the_final_content() -> None:
    result = await parse(
        TEXT_START,
        text_delta("secret"),
        STOP,
        tool_start("t1", "x"),
        STOP,
        message_stop("end_turn"),
        {"redactContent": {"redactUserContentMessage": "[user redacted]"}},
        {"redactContent": {"redactAssistantContentMessage": "[redacted]"}},
    )
    assert result.message == {"role": "assistant", "content": [{"text": "[redacted]"}]}
    assert result.stop_reason == "end_turn"


async def test_user_only_redaction_leaves_the_message_alone() -> None:
    result = await parse(TEXT_START, text_delta("fine"), STOP, {"redactContent": {"redactUserContentMessage": "x"}})
    assert result.message["content"] == [{"text": "fine"}]


async def test_returned_message_has_only_role_and_content() -> None:
    result = await parse({"messageStart": {"role": "assistant", "extra": 1}}, TEXT_START, text_delta("x"), STOP)
    assert set(result.message) == {"role", "content"}


class ClosingStream:
    """An async iterator that records how far it was read and whether it was closed."""

    def __init__(self, events: list[StreamEvent], cancel: threading.Event | None = None, set_after: int = -1) -> None:
        self.events = events
        self.cancel = cancel
        self.set_after = set_after
        self.read = 0
        self.closed = False

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self

    async def __anext__(self) -> StreamEvent:
        if self.read == self.set_after and self.cancel is not None:
            self.cancel.set()
        if self.read >= len(self.events):
            raise StopAsyncIteration
        self.read += 1
        return self.events[self.read - 1]

    async def aclose(self) -> None:
        self.closed = True


async def test_cancel_signal_stops_reading_and_closes_the_stream() -> None:
    cancel = threading.Event()
    events = [START, TEXT_START, text_delta("partial"), STOP, message_stop("end_turn")]
    stream = ClosingStream(events, cancel, set_after=3)
    result = await process_stream(stream, cancel_signal=cancel)
    assert result.message == {"role": "assistant", "content": [{"text": "Cancelled by user"}]}
    assert result.stop_reason == "cancelled"
    assert stream.read == 4
    assert stream.closed


async def test_cancel_signal_already_set_closes_a_generator() -> None:
    closed = []

    async def provider() -> AsyncGenerator[StreamEvent, None]:
        try:
            yield START
            yield TEXT_START
        finally:
            closed.append(True)

    cancel = threading.Event()
    cancel.set()
    result = await process_stream(provider(), cancel_signal=cancel)
    assert result.stop_reason == "cancelled"
    assert closed == [True]


async def test_unset_cancel_signal_changes_nothing() -> None:
    result = await process_stream(stream_of(TEXT_START, text_delta("x"), STOP), cancel_signal=threading.Event())
    assert result.message["content"] == [{"text": "x"}]


async def test_error_from_emit_closes_the_stream() -> None:
    stream = ClosingStream([START, TEXT_START])

    def emit(event: dict[str, Any]) -> None:
        raise RuntimeError("callback failed")

    with pytest.raises(RuntimeError, match="callback failed"):
        await process_stream(stream, emit)
    assert stream.closed


async def test_fully_read_stream_is_not_closed_again() -> None:
    stream = ClosingStream([TEXT_START, text_delta("x"), STOP])
    await process_stream(stream)
    assert not stream.closed


async def test_emit_receives_strands_shaped_events() -> None:
    seen: list[dict[str, Any]] = []
    events: list[StreamEvent] = [
        START,
        TEXT_START,
        text_delta("hi"),
        STOP,
        tool_start("t1", "add"),
        tool_delta('{"a":'),
        tool_delta(" 1}"),
        STOP,
        {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "hmm"}}}},
        {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": "s"}}}},
        STOP,
        message_stop("tool_use"),
    ]
    await process_stream(stream_of(*events), seen.append)

    assert [event["event"] for event in seen if "event" in event] == events
    derived = [event for event in seen if "event" not in event]
    assert derived == [
        {"data": "hi", "delta": {"text": "hi"}},
        {
            "current_tool_use": {"toolUseId": "t1", "name": "add", "input": '{"a":'},
            "delta": {"toolUse": {"input": '{"a":'}},
        },
        {
            "current_tool_use": {"toolUseId": "t1", "name": "add", "input": '{"a": 1}'},
            "delta": {"toolUse": {"input": " 1}"}},
        },
        {"reasoningText": "hmm", "delta": {"reasoningContent": {"text": "hmm"}}, "reasoning": True},
        {"reasoning_signature": "s", "delta": {"reasoningContent": {"signature": "s"}}, "reasoning": True},
    ]
    # Each derived event follows the raw chunk it came from.
    assert seen[seen.index({"event": events[2]}) + 1] == derived[0]


async def test_chunks_are_not_mutated() -> None:
    model = ScriptedModel([tool_call("t", a=1)], chunk_size=2)
    before = [event async for event in model.stream([])]
    snapshot = repr(before)
    model_again = ScriptedModel([tool_call("t", a=1)], chunk_size=2)
    await process_stream(stream_of(*before), lambda event: None)
    assert repr(before) == snapshot
    assert repr([event async for event in model_again.stream([])]) == snapshot


class EchoModel(Model):
    """A custom provider written the way a Strands user would write one."""

    def __init__(self, **config: Any) -> None:
        self.config = dict(config)

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        last = messages[-1]["content"][0].get("text", "")
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": f"echo: {last}"}}}
        yield {"contentBlockStop": {}}
        if tool_specs:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "c1", "name": tool_specs[0]["name"]}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"text": "' + last + '"}'}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        yield {
            "metadata": {"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}, "metrics": {"latencyMs": 9}}
        }


async def test_custom_provider_works_with_process_stream() -> None:
    model = EchoModel(model_id="echo")
    model.update_config(temperature=0)
    assert model.get_config() == {"model_id": "echo", "temperature": 0}
    assert model.stateful is False

    messages: Messages = [{"role": "user", "content": [{"text": "ping"}]}]
    specs: list[ToolSpec] = [{"name": "say", "description": "Say it.", "inputSchema": {"json": {}}}]
    stream = model.stream(
        messages, specs, "sys", tool_choice=None, model_state={}, invocation_state={}, cancel_signal=threading.Event()
    )
    result = await process_stream(stream)
    assert result.message == {
        "role": "assistant",
        "content": [
            {"text": "echo: ping"},
            {"toolUse": {"toolUseId": "c1", "name": "say", "input": {"text": "ping"}}},
        ],
    }
    assert result.stop_reason == "tool_use"
    assert result.usage == {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}
    assert result.metrics == {"latencyMs": 9}


def test_model_requires_the_abstract_methods() -> None:
    class Incomplete(Model):
        def get_config(self) -> Any:
            return {}

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()  # type: ignore[abstract]


async def test_scripted_model_events_parse_like_a_provider() -> None:
    result = await process_stream(ScriptedModel([text("hello")]).stream([]))
    assert result.message == {"role": "assistant", "content": [{"text": "hello"}]}
    assert result.usage == {"inputTokens": 0, "outputTokens": 1, "totalTokens": 1}
