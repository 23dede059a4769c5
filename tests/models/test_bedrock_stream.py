"""Bedrock's ConverseStream body decoded by strandslike: the same events and errors as botocore, for any input.

botocore's own ``EventStream`` is the reference: every case decodes the same bytes both ways and compares.
"""

from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.eventstream import EventStream
from botocore.exceptions import ClientError, EventStreamError
from botocore.parsers import EventStreamJSONParser
from fake_llm import Failure, RawBody, Reply, bedrock_event_frame, event_frame, make_model, render_bedrock

from strandslike import Agent
from strandslike.models._bedrock_stream import ConverseStreamReader, read_events
from strandslike.models._streaming import process_stream
from strandslike.models.bedrock import EventStreamDecodeError
from strandslike.types.exceptions import ContextWindowOverflowException, ModelThrottledException

MESSAGES = [{"role": "user", "content": [{"text": "hi"}]}]


@pytest.fixture(scope="module")
def reader() -> ConverseStreamReader:
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    return ConverseStreamReader(client.meta.service_model)


class Body:
    """A raw HTTP body that hands out fixed-size chunks, as urllib3's ``stream()`` does."""

    def __init__(self, data: bytes, chunk: int = 65536) -> None:
        self.data, self.chunk = data, chunk

    def stream(self, amt: int = 65536) -> Any:
        for start in range(0, len(self.data), self.chunk):
            yield self.data[start : start + self.chunk]

    def close(self) -> None:
        pass


def ours(reader, data: bytes, chunk: int = 65536) -> tuple[list, BaseException | None]:
    events: list = []
    try:
        for batch in read_events(Body(data, chunk), reader):
            events += batch
    except Exception as error:
        return events, error
    return events, None


def botocores(reader, data: bytes, chunk: int = 65536) -> tuple[list, BaseException | None]:
    events: list = []
    try:
        for event in EventStream(Body(data, chunk), reader.stream_shape, EventStreamJSONParser(), "ConverseStream"):
            events.append(event)
    except Exception as error:
        return events, error
    return events, None


def assert_same(reader, data: bytes, chunk: int = 65536) -> tuple[list, BaseException | None]:
    mine, my_error = ours(reader, data, chunk)
    theirs, their_error = botocores(reader, data, chunk)
    assert mine == theirs
    assert type(my_error) is type(their_error)
    assert str(my_error) == str(their_error)
    if isinstance(their_error, ClientError):
        assert my_error.response == their_error.response  # type: ignore[union-attr]
    return mine, my_error


def raw_event(kind: str, payload: bytes, message_type: str | None = "event", **extra: str) -> bytes:
    """An event frame with an arbitrary (possibly invalid) payload."""
    import binascii
    import struct

    headers = {":event-type": kind, ":content-type": "application/json", **extra}
    if message_type is not None:
        headers[":message-type"] = message_type
    raw_headers = b""
    for name, value in headers.items():
        raw_headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack("!H", len(value.encode()))
        raw_headers += value.encode()
    total = 16 + len(raw_headers) + len(payload)
    prelude = struct.pack("!II", total, len(raw_headers))
    prelude += struct.pack("!I", binascii.crc32(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack("!I", binascii.crc32(body))


def exception_frame(code: str, payload: dict) -> bytes:
    return event_frame(
        {":exception-type": code, ":content-type": "application/json", ":message-type": "exception"}, payload
    )


# -- events ---------------------------------------------------------------------------------------------------------

REPLY = Reply("Hello there, how are you?", tools=[("t1", "add", {"a": 1, "b": 2}), ("t2", "add", {"a": 3})])


@pytest.mark.parametrize("chunk", [1, 7, 100, 65536])
def test_a_streamed_reply_decodes_as_botocore_decodes_it_without_botocore(reader, chunk):
    before = reader.fallbacks
    data = render_bedrock(REPLY)
    assert data.count(b'"p": "') == data.count(b":event-type")  # every event is padded, as Bedrock pads them
    events, error = assert_same(reader, data, chunk)
    assert error is None
    assert events[0] == {"messageStart": {"role": "assistant"}}
    assert {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hello "}}} in events  # "p" dropped
    assert events[-1] == {
        "metadata": {"usage": {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}, "metrics": {"latencyMs": 5}}
    }
    assert reader.fallbacks == before  # every event took the fast path


RICH_EVENTS = [
    ("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t", "name": "n", "type": "x"}}}),
    ("contentBlockStart", {"contentBlockIndex": 2, "start": {"toolResult": {"toolUseId": "t", "status": "success"}}}),
    (
        "contentBlockDelta",
        {"contentBlockIndex": 2, "delta": {"toolResult": [{"text": "a"}, {"json": {"k": [1, None]}}]}},
    ),
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "hmm"}}}),
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "c2ln"}}}),
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "AAEC"}}}),
    ("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"image": {"source": {"bytes": "iVBORw=="}}}}),
    ("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"image": {"error": {"message": "no"}}}}),
    (
        "contentBlockDelta",
        {
            "contentBlockIndex": 0,
            "delta": {
                "citation": {
                    "title": "doc",
                    "sourceContent": [{"text": "quoted"}],
                    "location": {"documentChar": {"documentIndex": 0, "start": 1, "end": 5}},
                }
            },
        },
    ),
    ("messageStop", {"stopReason": "end_turn", "additionalModelResponseFields": {"a": None, "b": [{"c": None}]}}),
    (
        "metadata",
        {
            "usage": {
                "inputTokens": 1,
                "outputTokens": 2,
                "totalTokens": 3,
                "cacheReadInputTokens": 4,
                "cacheDetails": [{"ttl": "5m", "inputTokens": 9}],
            },
            "metrics": {"latencyMs": 12},
            "trace": {
                "guardrail": {
                    "modelOutput": ["x"],
                    "inputAssessment": {
                        "g1": {
                            "contentPolicy": {"filters": [{"type": "HATE", "confidence": "LOW", "detected": False}]},
                            "contextualGroundingPolicy": {"filters": [{"threshold": 0.5, "score": 0.25}]},
                            "invocationMetrics": {"guardrailProcessingLatency": 3, "usage": {"topicPolicyUnits": 1}},
                        }
                    },
                    "outputAssessments": {"g1": [{"wordPolicy": {"customWords": [{"match": "m", "detected": True}]}}]},
                    "actionReason": "none",
                },
                "promptRouter": {"invokedModelId": "m"},
            },
            "performanceConfig": {"latency": "standard"},
            "serviceTier": {"type": "default"},
        },
    ),
]


@pytest.mark.parametrize(("kind", "payload"), RICH_EVENTS, ids=lambda value: str(value)[:40])
@pytest.mark.parametrize("pad", [False, True])
def test_every_kind_of_event_decodes_as_botocore_decodes_it(reader, kind, payload, pad):
    assert_same(reader, bedrock_event_frame(kind, payload, pad=pad))


def test_blobs_are_decoded_by_botocore_and_come_out_as_bytes(reader):
    if "reasoningContent" not in reader.stream_shape.members["contentBlockDelta"].members["delta"].members:
        pytest.skip("this botocore's service model has no reasoning content")
    frame = bedrock_event_frame(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "AAEC"}}}
    )
    before = reader.fallbacks
    events, _ = assert_same(reader, frame)
    assert events[0]["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"] == b"\x00\x01\x02"
    assert reader.fallbacks == before + 1


ODD_PAYLOADS = [
    (
        "members the model does not know, at every depth",
        "contentBlockDelta",
        b'{"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}", "new": 1}}, "z": {}}',
    ),
    ("a null member", "contentBlockDelta", b'{"contentBlockIndex": null, "delta": {"text": "x"}}'),
    ("an unknown union member", "contentBlockDelta", b'{"contentBlockIndex": 0, "delta": {"hologram": {"a": 1}}}'),
    ("two union members", "contentBlockDelta", b'{"contentBlockIndex": 0, "delta": {"text": "a", "toolUse": {}}}'),
    ("a null union member", "contentBlockDelta", b'{"contentBlockIndex": 0, "delta": {"text": null}}'),
    ("a union with __type", "contentBlockDelta", b'{"contentBlockIndex": 0, "delta": {"__type": "x", "text": "a"}}'),
    ("an empty union", "contentBlockDelta", b'{"contentBlockIndex": 0, "delta": {}}'),
    ("a null list item", "metadata", b'{"usage": {"cacheDetails": [null, {"ttl": "1h"}]}}'),
    ("a null map value", "metadata", b'{"trace": {"guardrail": {"inputAssessment": {"g": null}}}}'),
    ("a string where a structure belongs", "contentBlockDelta", b'{"contentBlockIndex": 0, "delta": "text"}'),
    ("a string where a list belongs", "metadata", b'{"usage": {"cacheDetails": "abc"}}'),
    ("a list where a map belongs", "metadata", b'{"trace": {"guardrail": {"inputAssessment": [1]}}}'),
    ("a number where a string belongs", "messageStart", b'{"role": 7}'),
    ("invalid JSON", "messageStart", b'{"role": '),
    ("a JSON array", "messageStart", b"[1, 2]"),
    ("a JSON string", "messageStart", b'"assistant"'),
    ("JSON null", "messageStart", b"null"),
    ("an empty payload", "messageStart", b""),
    ("leading whitespace", "messageStart", b' {"role": "assistant"}'),
    ("trailing whitespace", "messageStart", b'{"role": "assistant"}\n'),
    ("trailing data", "messageStart", b'{"role": "assistant"} {}'),
    ("invalid UTF-8", "messageStart", b'{"role": "\xff"}'),
    ("a UTF-8 BOM", "messageStart", b'\xef\xbb\xbf{"role": "assistant"}'),
    ("NaN", "metadata", b'{"metrics": {"latencyMs": NaN}}'),
    ("an event type the model does not know", "hologramEvent", b'{"a": 1}'),
    ("an exception name sent as an event", "throttlingException", b'{"message": "m", "x": 1}'),
]


@pytest.mark.parametrize(("case", "kind", "payload"), ODD_PAYLOADS, ids=[case for case, _, _ in ODD_PAYLOADS])
def test_unusual_payloads_give_what_botocore_gives(reader, case, kind, payload):
    start = bedrock_event_frame("messageStart", {"role": "assistant"})
    end = bedrock_event_frame("messageStop", {"stopReason": "end_turn"})
    assert_same(reader, start + raw_event(kind, payload) + end)


def test_a_frame_without_a_message_type_is_an_event(reader):
    events, _ = assert_same(reader, raw_event("messageStart", b'{"role": "assistant"}', message_type=None))
    assert events == [{"messageStart": {"role": "assistant"}}]


def test_a_frame_with_an_unknown_message_type_is_an_event(reader):
    assert_same(reader, raw_event("messageStart", b'{"role": "assistant"}', message_type="hologram"))


# -- exceptions -----------------------------------------------------------------------------------------------------

EXCEPTIONS = [
    ("throttlingException", {"message": "Too many requests, please wait before trying again."}),
    ("serviceUnavailableException", {"message": "The service is unavailable."}),
    ("validationException", {"message": "Input is too long for requested model."}),
    ("modelStreamErrorException", {"message": "boom", "originalStatusCode": 500, "originalMessage": "inner"}),
    ("internalServerException", {"Message": "capitalized key", "p": "abc"}),
    ("someFutureException", {"message": "unknown to the model"}),
]


@pytest.mark.parametrize(("code", "payload"), EXCEPTIONS, ids=[code for code, _ in EXCEPTIONS])
@pytest.mark.parametrize("chunk", [5, 65536])
def test_exception_messages_raise_what_botocore_raises_after_the_events_before_them(reader, code, payload, chunk):
    good = bedrock_event_frame("messageStart", {"role": "assistant"}) + bedrock_event_frame(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "partial"}}
    )
    after = bedrock_event_frame("contentBlockStop", {"contentBlockIndex": 0})
    events, error = assert_same(reader, good + exception_frame(code, payload) + after, chunk)
    assert len(events) == 2
    assert isinstance(error, EventStreamError)
    # A code the service model does not know is read from the :error-code header, absent here.
    assert error.response["Error"]["Code"] == (code if code in reader.stream_shape.members else "")


def test_error_messages_carry_their_code_and_message_in_headers(reader):
    frame = raw_event("", b"", message_type="error", **{":error-code": "Oops", ":error-message": "it broke"})
    _, error = assert_same(reader, frame)
    assert isinstance(error, EventStreamError)
    assert error.response["Error"] == {"Code": "Oops", "Message": "it broke"}


# -- the model, end to end through boto3 and the loopback fake ---------------------------------------------------


async def stream_all(model) -> list:
    return [event async for event in model.stream(MESSAGES)]


def botocore_error(fake, body: bytes) -> ClientError:
    """What a plain boto3 client raises for the same response body."""
    fake.add(RawBody(body))
    client = boto3.client("bedrock-runtime", endpoint_url=fake.url, region_name="us-east-1")
    with pytest.raises(ClientError) as caught:
        for _ in client.converse_stream(modelId="m", messages=MESSAGES)["stream"]:
            pass
    return caught.value


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        ("throttlingException", "Too many requests, please wait before trying again.", ModelThrottledException),
        ("serviceUnavailableException", "Bedrock is unavailable.", ModelThrottledException),
        ("validationException", "Input is too long for requested model.", ContextWindowOverflowException),
        ("modelStreamErrorException", "The model stream failed.", EventStreamError),
        ("validationException", "Malformed input request.", EventStreamError),
        ("internalServerException", "Something went wrong.", EventStreamError),
    ],
)
async def test_exceptions_in_the_stream_raise_what_the_provider_raised_before(reader, fake, code, message, expected):
    if code not in reader.stream_shape.members:
        pytest.skip(f"this botocore's service model does not know {code}")
    body = bedrock_event_frame("messageStart", {"role": "assistant"}) + exception_frame(code, {"message": message})
    reference = botocore_error(fake, body)
    fake.add(RawBody(body))
    model = make_model("bedrock", fake)
    with pytest.raises(expected) as caught:
        await stream_all(model)
    error = caught.value
    assert str(error) == str(reference)
    if expected is EventStreamError:
        assert error.response == reference.response
        assert error.__notes__ == ["└ Bedrock region: us-east-1", "└ Model id: anthropic.claude-fake"]
    else:
        assert error.__cause__.response == reference.response


async def test_a_corrupt_response_raises_a_decode_error_and_is_not_retried(fake):
    body = bytearray(render_bedrock(Reply("hello world")))
    body[40] ^= 0xFF
    fake.add(RawBody(bytes(body)))
    agent = Agent(model=make_model("bedrock", fake), callback_handler=None)
    with pytest.raises(EventStreamDecodeError, match="message CRC mismatch"):
        await agent.invoke_async("hi")
    assert len(fake.requests) == 1


async def test_a_response_cut_inside_a_message_raises_a_decode_error(fake):
    body = render_bedrock(Reply("hello world"))
    fake.add(RawBody(body[:-3]))
    with pytest.raises(EventStreamDecodeError, match="the stream ended inside a message"):
        await stream_all(make_model("bedrock", fake))


async def test_midstream_failures_of_the_fake_still_map_to_the_loop_errors(fake):
    fake.add(Failure("throttle", midstream=True), Failure("overflow", midstream=True))
    model = make_model("bedrock", fake)
    with pytest.raises(ModelThrottledException, match="throttlingException"):
        await stream_all(model)
    with pytest.raises(ContextWindowOverflowException, match="Input is too long"):
        await stream_all(model)


async def test_a_long_reply_streams_whole_through_the_model(fake):
    reply = Reply("word " * 3000, tools=[("t1", "add", {"a": 1, "b": 2})])
    fake.add(reply)
    result = await process_stream(make_model("bedrock", fake).stream(MESSAGES))
    assert result.message["content"][0]["text"] == reply.text
    assert result.message["content"][1]["toolUse"] == {"toolUseId": "t1", "name": "add", "input": {"a": 1, "b": 2}}
    assert result.stop_reason == "tool_use"


async def test_a_client_answered_without_http_falls_back_to_botocores_stream(fake):
    """A ``before-call`` handler (what botocore's Stubber uses) answers with no raw body: botocore's stream is read."""
    events = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "stubbed"}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]

    class Stream(list):
        closed = False

        def close(self) -> None:
            self.closed = True

    stream = Stream(events)
    model = make_model("bedrock", fake)
    model.client.meta.events.register(
        "before-call.bedrock-runtime.ConverseStream",
        lambda **kwargs: (AWSResponse("http://stub", 200, {}, None), {"stream": stream}),
    )
    assert await stream_all(model) == events
    assert stream.closed
    assert fake.requests == []


async def test_the_raw_body_is_only_taken_for_the_models_own_calls(fake):
    """Calling ``model.client.converse_stream`` directly still gives botocore's usual, readable stream."""
    fake.add(Reply("direct"), Reply("through the model"))
    model = make_model("bedrock", fake)
    direct = model.client.converse_stream(modelId="m", messages=MESSAGES)["stream"]
    texts = [e["contentBlockDelta"]["delta"]["text"] for e in direct if "contentBlockDelta" in e]
    assert "".join(texts) == "direct"
    result = await process_stream(model.stream(MESSAGES))
    assert result.message["content"][0]["text"] == "through the model"


async def test_two_concurrent_streams_on_one_model_keep_their_own_bodies(fake):
    import anyio

    fake.add(Reply("first " * 500), Reply("second " * 500))
    model = make_model("bedrock", fake)
    texts: list[str] = []

    async def run() -> None:
        texts.append((await process_stream(model.stream(MESSAGES))).message["content"][0]["text"])

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        group.start_soon(run)
    assert sorted(texts) == sorted(["first " * 500, "second " * 500])


async def test_a_consumer_that_stops_early_leaves_the_model_usable(fake):
    fake.add(Reply("word " * 20000), Reply("next answer"))
    model = make_model("bedrock", fake)
    stream = model.stream(MESSAGES)
    async for event in stream:
        assert event == {"messageStart": {"role": "assistant"}}
        break
    await stream.aclose()
    result = await process_stream(model.stream(MESSAGES))
    assert result.message["content"][0]["text"] == "next answer"


async def test_a_cancel_signal_stops_the_stream_between_batches(fake):
    import threading

    cancel = threading.Event()
    cancel.set()
    fake.add(Reply("word " * 20000))
    model = make_model("bedrock", fake)
    events = [event async for event in model.stream(MESSAGES, cancel_signal=cancel)]
    assert events == []  # cancelled before the first batch was handed over
