"""A fake LLM server on loopback that speaks the OpenAI, Anthropic and Bedrock protocols.

Tests and benchmarks script provider-neutral replies (`Reply`, `Failure`); the server renders each one in the wire
format of the protocol the request came in on (chosen by the request path): OpenAI chat-completions SSE, Anthropic
Messages SSE, or Bedrock ConverseStream in the AWS event-stream binary framing. Every request body is recorded.
Importable as ``fake_llm`` (pytest's ``pythonpath`` includes ``tests/``).
"""

import binascii
import json
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROTOCOLS = ("openai", "anthropic", "bedrock")


@dataclass
class Reply:
    """One assistant turn.

    Attributes:
        text: The answer text, streamed in ``pieces`` deltas (default: one per word).
        tools: Tool calls ``(id, name, input)``; OpenAI streams their argument fragments interleaved.
        stop: Provider-neutral stop reason: end_turn, tool_use, max_tokens or content_filtered (default: from tools).
        usage: (input tokens, output tokens).
        pieces: How many deltas the text is split into.
    """

    text: str = ""
    tools: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    stop: str | None = None
    usage: tuple[int, int] = (11, 7)
    pieces: int | None = None

    @property
    def stop_reason(self) -> str:
        return self.stop or ("tool_use" if self.tools else "end_turn")

    def text_pieces(self) -> list[str]:
        if not self.text:
            return []
        if self.pieces is None:
            words = self.text.split(" ")
            return [word + (" " if i < len(words) - 1 else "") for i, word in enumerate(words)]
        size = max(1, -(-len(self.text) // self.pieces))
        return [self.text[i : i + size] for i in range(0, len(self.text), size)]


@dataclass
class Failure:
    """A failed request: kind is throttle, overflow, auth or bad_request; ``midstream`` fails after some events."""

    kind: str
    message: str = ""
    midstream: bool = False


@dataclass
class RawBody:
    """A 200 response whose body is exactly these bytes (hand-made or damaged streams)."""

    body: bytes
    content_type: str = "application/vnd.amazon.eventstream"


def _fragments(value: dict[str, Any], parts: int = 3) -> list[str]:
    encoded = json.dumps(value)
    size = max(1, -(-len(encoded) // parts))
    return [encoded[i : i + size] for i in range(0, len(encoded), size)]


# -- OpenAI ---------------------------------------------------------------------------------------------------

_OPENAI_STOP = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "content_filtered": "content_filter",
}


def _openai_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def render_openai(reply: Reply) -> bytes:
    out = [_openai_chunk({"role": "assistant", "content": ""})]
    out += [_openai_chunk({"content": piece}) for piece in reply.text_pieces()]
    for index, (tool_id, name, _) in enumerate(reply.tools):
        out.append(
            _openai_chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": tool_id, "type": "function", "function": {"name": name, "arguments": ""}}
                    ]
                }
            )
        )
    fragments = [_fragments(tool_input) for _, _, tool_input in reply.tools]
    for step in range(max((len(f) for f in fragments), default=0)):  # interleave the calls' arguments
        for index, parts in enumerate(fragments):
            if step < len(parts):
                out.append(_openai_chunk({"tool_calls": [{"index": index, "function": {"arguments": parts[step]}}]}))
    out.append(_openai_chunk({}, _OPENAI_STOP[reply.stop_reason]))
    usage = {
        "prompt_tokens": reply.usage[0],
        "completion_tokens": reply.usage[1],
        "total_tokens": reply.usage[0] + reply.usage[1],
    }
    final = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "fake",
        "choices": [],
        "usage": usage,
    }
    out.append(b"data: " + json.dumps(final).encode() + b"\n\n")
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def render_openai_json(reply: Reply) -> bytes:
    """A non-streaming chat.completion (what ``stream=False`` and ``parse`` receive)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tools:
        message["tool_calls"] = [
            {"id": tool_id, "type": "function", "function": {"name": name, "arguments": json.dumps(tool_input)}}
            for tool_id, name, tool_input in reply.tools
        ]
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": _OPENAI_STOP[reply.stop_reason]}],
        "usage": {
            "prompt_tokens": reply.usage[0],
            "completion_tokens": reply.usage[1],
            "total_tokens": reply.usage[0] + reply.usage[1],
        },
    }
    return json.dumps(body).encode()


def openai_failure(failure: Failure) -> tuple[int, dict[str, str], bytes]:
    status, code, kind, default = {
        "throttle": (429, "rate_limit_exceeded", "requests", "Rate limit reached for requests"),
        "overflow": (
            400,
            "context_length_exceeded",
            "invalid_request_error",
            "This model's maximum context length is 8192 tokens.",
        ),
        "auth": (401, "invalid_api_key", "invalid_request_error", "Incorrect API key provided: sk-fake."),
        "bad_request": (400, None, "invalid_request_error", "Invalid value for 'messages'."),
    }[failure.kind]
    body = {"error": {"message": failure.message or default, "type": kind, "param": None, "code": code}}
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()


# -- Anthropic ------------------------------------------------------------------------------------------------

_ANTHROPIC_STOP = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "content_filtered": "refusal",
}


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def render_anthropic(reply: Reply) -> bytes:
    out = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "fake",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": reply.usage[0], "output_tokens": 1},
                },
            },
        ),
    ]
    index = 0
    if reply.text:
        out.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            )
        )
        out += [
            _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
            )
            for piece in reply.text_pieces()
        ]
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    for tool_id, name, tool_input in reply.tools:
        out.append(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
                },
            )
        )
        out += [
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": part},
                },
            )
            for part in _fragments(tool_input)
        ]
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _ANTHROPIC_STOP[reply.stop_reason], "stop_sequence": None},
                "usage": {"output_tokens": reply.usage[1]},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def anthropic_failure(failure: Failure) -> tuple[int, dict[str, str], bytes]:
    status, kind, default = {
        "throttle": (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
        "overflow": (400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"),
        "auth": (401, "authentication_error", "invalid x-api-key"),
        "bad_request": (400, "invalid_request_error", "messages: roles must alternate"),
        "overloaded": (529, "overloaded_error", "Overloaded"),
    }[failure.kind]
    body = {"type": "error", "error": {"type": kind, "message": failure.message or default}}
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()


# -- Bedrock (AWS event stream) -------------------------------------------------------------------------------


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack("!B", len(raw_name)) + raw_name + b"\x07" + struct.pack("!H", len(raw_value)) + raw_value


def event_frame(headers: dict[str, str], payload: dict[str, Any]) -> bytes:
    """Frame one message of the AWS event-stream encoding (prelude, headers, payload, two CRC32s)."""
    header_bytes = b"".join(_header(name, value) for name, value in headers.items())
    body = json.dumps(payload).encode()
    total = 12 + len(header_bytes) + len(body) + 4
    prelude = struct.pack("!II", total, len(header_bytes))
    prelude += struct.pack("!I", binascii.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + header_bytes + body
    return message + struct.pack("!I", binascii.crc32(message) & 0xFFFFFFFF)


_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def bedrock_event_frame(kind: str, payload: dict[str, Any], *, pad: bool = True) -> bytes:
    """One ConverseStream event message, padded as Bedrock pads every event.

    Bedrock adds a member ``"p"`` of varying length to each event (it hides the token lengths); the member is not
    in the service model, so SDKs drop it.
    """
    if pad:
        payload = {**payload, "p": _PADDING[: 1 + len(repr(payload)) % len(_PADDING)]}
    return event_frame({":event-type": kind, ":content-type": "application/json", ":message-type": "event"}, payload)


def bedrock_events(reply: Reply) -> Iterator[bytes]:
    yield bedrock_event_frame("messageStart", {"role": "assistant"})
    index = 0
    if reply.text:
        for piece in reply.text_pieces():
            yield bedrock_event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
        yield bedrock_event_frame("contentBlockStop", {"contentBlockIndex": 0})
        index = 1
    for tool_id, name, tool_input in reply.tools:
        yield bedrock_event_frame(
            "contentBlockStart",
            {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": tool_id, "name": name}}},
        )
        for part in _fragments(tool_input):
            yield bedrock_event_frame(
                "contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": part}}}
            )
        yield bedrock_event_frame("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    yield bedrock_event_frame("messageStop", {"stopReason": reply.stop_reason})
    usage = {
        "inputTokens": reply.usage[0],
        "outputTokens": reply.usage[1],
        "totalTokens": reply.usage[0] + reply.usage[1],
    }
    yield bedrock_event_frame("metadata", {"usage": usage, "metrics": {"latencyMs": 5}})


def render_bedrock(reply: Reply) -> bytes:
    return b"".join(bedrock_events(reply))


_BEDROCK_ERRORS = {
    "throttle": (429, "ThrottlingException", "Too many requests, please wait before trying again."),
    "overflow": (400, "ValidationException", "Input is too long for requested model."),
    "auth": (403, "UnrecognizedClientException", "The security token included in the request is invalid."),
    "bad_request": (400, "ValidationException", "Malformed input request, please reformat your input and try again."),
}


def bedrock_failure(failure: Failure) -> tuple[int, dict[str, str], bytes]:
    status, code, default = _BEDROCK_ERRORS[failure.kind]
    headers = {"Content-Type": "application/json", "x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/"}
    return status, headers, json.dumps({"message": failure.message or default}).encode()


def bedrock_midstream_failure(failure: Failure) -> bytes:
    _, code, default = _BEDROCK_ERRORS[failure.kind]
    code = code[0].lower() + code[1:]
    return bedrock_event_frame("messageStart", {"role": "assistant"}) + event_frame(
        {":exception-type": code, ":content-type": "application/json", ":message-type": "exception"},
        {"message": failure.message or default},
    )


# -- the server -----------------------------------------------------------------------------------------------


def protocol_of(path: str) -> str:
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/messages"):
        return "anthropic"
    if "/converse" in path:
        return "bedrock"
    raise ValueError(f"unknown path {path}")


class FakeLLM:
    """A threaded HTTP server on 127.0.0.1 (ephemeral port) that plays a script of replies, one per request.

    Attributes:
        requests: ``(protocol, path, parsed JSON body)`` of every request, in order.
    """

    def __init__(self, script: list[Reply | Failure | RawBody] | None = None, *, repeat: Reply | None = None) -> None:
        self.script: list[Reply | Failure | RawBody] = list(script or [])
        self.repeat = repeat
        self.requests: list[tuple[str, str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._cache: dict[tuple[int, str], bytes] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                fake._serve(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "FakeLLM":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "FakeLLM":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def add(self, *entries: Reply | Failure | RawBody) -> None:
        with self._lock:
            self.script.extend(entries)

    def _next(self) -> Reply | Failure | RawBody:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        if self.repeat is not None:
            return self.repeat
        return Failure("bad_request", "fake_llm: the script is exhausted")

    def _serve(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        protocol = protocol_of(handler.path)
        try:
            parsed = json.loads(body or b"{}")
        except ValueError:
            parsed = {"raw": body.decode(errors="replace")}
        with self._lock:
            self.requests.append((protocol, handler.path, parsed))
        entry = self._next()
        if isinstance(entry, RawBody):
            self._send(handler, 200, {"Content-Type": entry.content_type}, entry.body)
            return
        if isinstance(entry, Failure) and not (entry.midstream and protocol == "bedrock"):
            status, headers, payload = {
                "openai": openai_failure,
                "anthropic": anthropic_failure,
                "bedrock": bedrock_failure,
            }[protocol](entry)
            self._send(handler, status, headers, payload)
            return
        if isinstance(entry, Failure):
            payload = bedrock_midstream_failure(entry)
        elif protocol == "openai" and not parsed.get("stream"):
            self._send(handler, 200, {"Content-Type": "application/json"}, render_openai_json(entry))
            return
        else:
            key = (id(entry), protocol)
            payload = self._cache.get(key) or b""
            if not payload:
                payload = {"openai": render_openai, "anthropic": render_anthropic, "bedrock": render_bedrock}[protocol](
                    entry
                )
                if entry is self.repeat:
                    self._cache[key] = payload
        content_type = {
            "openai": "text/event-stream",
            "anthropic": "text/event-stream",
            "bedrock": "application/vnd.amazon.eventstream",
        }[protocol]
        self._send(handler, 200, {"Content-Type": content_type}, payload)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], payload: bytes) -> None:
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


def make_model(protocol: str, fake: FakeLLM, **config: Any) -> Any:
    """Build the strandslike provider for ``protocol`` pointed at ``fake`` (dummy credentials)."""
    if protocol == "openai":
        from strandslike.models.openai import OpenAIModel

        return OpenAIModel(
            client_args={"base_url": f"{fake.url}/v1", "api_key": "sk-fake"},
            model_id=config.pop("model_id", "gpt-fake"),
            **config,
        )
    if protocol == "anthropic":
        from strandslike.models.anthropic import AnthropicModel

        return AnthropicModel(
            client_args={"base_url": fake.url, "api_key": "sk-ant-fake"},
            model_id=config.pop("model_id", "claude-fake"),
            max_tokens=config.pop("max_tokens", 1024),
            **config,
        )
    if protocol == "bedrock":
        from strandslike.models.bedrock import BedrockModel

        return BedrockModel(
            endpoint_url=fake.url,
            region_name="us-east-1",
            model_id=config.pop("model_id", "anthropic.claude-fake"),
            **config,
        )
    raise ValueError(protocol)
