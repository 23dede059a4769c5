"""Read Bedrock's ConverseStream response body ourselves: the same events botocore would give, several times faster.

boto3 still signs and sends the request, retries it if so configured, and raises HTTP errors. Only the reading of
the event stream changes: botocore frames each message in pure Python and then walks the parsed JSON along the
service model (dropping members the model does not know, such as the padding ``"p"`` Bedrock adds to every event),
which is most of the time a streamed answer costs. Here the framing is `_aws_eventstream`, the JSON is decoded by
the ``json`` module's C scanner and then normalized in place by functions compiled once from the same service model.
These reproduce botocore's result exactly for what they accept, and hand anything else (blobs, timestamps, unknown
union members, nulls in lists, values of an unexpected type, invalid JSON) to botocore's own parser for that one
event. Exception messages are parsed by botocore too and raised as the same ``EventStreamError`` botocore raises.

The raw body comes from botocore's public ``after-call`` event (``http_response.raw``, the object botocore's
``EventStream`` reads). When it is not available (a stubbed client) or the service model is not the REST-JSON one
this was written for, the stream is read through botocore as before.
"""

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..types.streaming import StreamEvent
from ._aws_eventstream import Frame, iter_frames

_OPERATION = "ConverseStream"
_PROTOCOL = "rest-json"
_captured = threading.local()

Normalize = Callable[[Any], Any]


class _UseBotocore(Exception):
    """The value is one the compiled normalizers do not reproduce; botocore parses the whole event instead."""


def _use_botocore(value: Any) -> Any:
    raise _UseBotocore


_decode_json = json.JSONDecoder().raw_decode  # json.loads minus its two whitespace scans; see events()
_COMPILING: Any = object()  # marks a shape whose function is being compiled (recursive shapes meet it)


def _compile(shape: Any, memo: dict[str, list[Normalize | None]], parser_cls: Any) -> Normalize | None:
    """Return a function giving what ``parser_cls`` makes of a JSON value of ``shape``, or None if that is the value.

    The functions may modify the value in place (it is a fresh ``json.loads`` result) and raise `_UseBotocore`
    for anything they do not reproduce exactly.
    """
    seen = memo.get(shape.name)
    if seen is not None:
        if seen[0] is not _COMPILING:
            return seen[0]

        def later(value: Any) -> Any:  # a recursive shape: use its function once it is compiled
            fn = seen[0]
            return value if fn is None else fn(value)

        return later
    cell: list[Normalize | None] = [_COMPILING]
    memo[shape.name] = cell
    type_name = shape.type_name
    normalize: Normalize | None
    if type_name == "structure" and getattr(shape, "is_document_type", False):
        normalize = None  # documents are returned as they are
    elif type_name == "structure":
        normalize = _compile_structure(shape, memo, parser_cls)
    elif type_name == "list":
        normalize = _compile_list(shape, memo, parser_cls)
    elif type_name == "map":
        normalize = _compile_map(shape, memo, parser_cls)
    elif getattr(parser_cls, f"_handle_{type_name}", None) is None:
        normalize = None  # no handler: botocore returns the JSON value unchanged (strings, numbers, booleans)
    else:
        normalize = _use_botocore  # blobs, timestamps, or a conversion a newer botocore added
    cell[0] = normalize
    return normalize


def _compile_structure(shape: Any, memo: dict[str, list[Normalize | None]], parser_cls: Any) -> Normalize:
    members = shape.members
    if any(member.serialization.get("name", key) != key for key, member in members.items()):
        return _use_botocore  # a member renamed on the wire: not reproduced
    known = frozenset(members)
    nested = {key: _compile(member, memo, parser_cls) for key, member in members.items()}
    inner = tuple((key, fn) for key, fn in nested.items() if fn is not None)
    inner_map = dict(inner)

    if getattr(shape, "is_tagged_union", False):

        def union(value: Any) -> Any:
            # Exactly one known member set: botocore's result is the same dict. Anything else (several members,
            # a null, an unknown tag that botocore reports as SDK_UNKNOWN_MEMBER) is botocore's to handle.
            if type(value) is not dict or len(value) != 1:
                raise _UseBotocore
            ((key, item),) = value.items()
            if key not in known or item is None:
                raise _UseBotocore
            fn = inner_map.get(key)
            if fn is not None:
                value[key] = fn(item)
            return value

        return union

    def structure(value: Any) -> Any:
        if type(value) is not dict:
            raise _UseBotocore
        if not known.issuperset(value):  # members the model does not know (Bedrock's "p" padding): dropped
            for key in value.keys() - known:
                del value[key]
        if None in value.values():  # botocore leaves out null members
            for key in [key for key, item in value.items() if item is None]:
                del value[key]
        for key, fn in inner:
            if key in value:
                value[key] = fn(value[key])
        return value

    return structure


def _compile_list(shape: Any, memo: dict[str, list[Normalize | None]], parser_cls: Any) -> Normalize:
    fn = _compile(shape.member, memo, parser_cls)

    def items(value: Any) -> Any:
        if type(value) is not list or None in value:  # botocore versions differ on null items
            raise _UseBotocore
        if fn is not None:
            value[:] = [fn(item) for item in value]
        return value

    return items


def _compile_map(shape: Any, memo: dict[str, list[Normalize | None]], parser_cls: Any) -> Normalize:
    if _compile(shape.key, memo, parser_cls) is not None:
        return _use_botocore
    fn = _compile(shape.value, memo, parser_cls)

    def entries(value: Any) -> Any:
        if type(value) is not dict or None in value.values():
            raise _UseBotocore
        if fn is not None:
            for key, item in value.items():
                value[key] = fn(item)
        return value

    return entries


class ConverseStreamReader:
    """Turns verified event-stream frames into ConverseStream events, as botocore's ``EventStream`` yields them.

    Built once per client from its service model. ``fallbacks`` counts the events handed to botocore's parser.
    """

    def __init__(self, service_model: Any) -> None:
        from botocore.exceptions import EventStreamError  # type: ignore[import-untyped]
        from botocore.parsers import BaseJSONParser, ResponseParser, RestJSONParser  # type: ignore[import-untyped]

        operation = service_model.operation_model(_OPERATION)
        output = operation.output_shape
        self.stream_shape = output.members[output.serialization["payload"]]
        self.operation_name = operation.name
        parser_cls = RestJSONParser.EVENT_STREAM_PARSER_CLS
        self._parser = parser_cls()
        self._error_cls = EventStreamError
        self.fallbacks = 0
        # The normalizers reproduce these three handlers; a botocore that overrides them gets its own parser.
        reproducible = (
            parser_cls._handle_structure is BaseJSONParser._handle_structure
            and parser_cls._handle_list is ResponseParser._handle_list
            and parser_cls._handle_map is BaseJSONParser._handle_map
        )
        memo: dict[str, list[Normalize | None]] = {}
        self._normalizers: dict[str, Normalize] = {}
        for event_type, shape in self.stream_shape.members.items():
            # botocore reads the JSON body only of shapes marked as events (exception shapes sent as events come
            # out empty), and some members from headers or as the raw payload: those are its to parse.
            special = not shape.serialization.get("event") or any(
                member.serialization.get("eventheader") or member.serialization.get("eventpayload")
                for member in shape.members.values()
            )
            fn = _compile(shape, memo, parser_cls) if reproducible and not special else None
            self._normalizers[event_type] = fn or _use_botocore

    def events(self, frames: list[Frame]) -> tuple[list[StreamEvent], Exception | None]:
        """Return the events of ``frames`` in order, and the error of the first exception message if there is one.

        The error is botocore's ``EventStreamError`` for the message (throttling, validation, model stream error,
        ...), exactly as botocore raises it, or whatever botocore's parser raises on a malformed event; the events
        are those before it, and frames after it are ignored.
        """
        out: list[StreamEvent] = []
        decode = _decode_json
        normalizers = self._normalizers
        for headers, payload in frames:
            message_type = headers.get(":message-type")
            if message_type == "exception" or message_type == "error":
                return out, self._error(headers, payload)
            event_type = headers.get(":event-type")
            normalize = normalizers.get(event_type)  # type: ignore[arg-type]
            if normalize is None:
                continue  # botocore parses an event type its model does not know into nothing and skips it
            try:
                text = payload.decode("utf-8")
                body, end = decode(text) if text else ({}, 0)
                if end != len(text):
                    raise _UseBotocore  # whitespace or more after the value: json.loads decides
                event = {event_type: normalize(body)}
            except Exception:  # anything unusual: botocore's parser decides, as it always did
                self.fallbacks += 1
                try:
                    event = self._parser.parse(
                        {"status_code": 200, "headers": headers, "body": payload}, self.stream_shape
                    )
                except Exception as error:  # what botocore raises on this event, after the events before it
                    return out, error
                if not event:
                    continue
            out.append(event)  # type: ignore[arg-type]
        return out, None

    def _error(self, headers: dict[str, Any], payload: bytes) -> Exception:
        parsed = self._parser.parse({"status_code": 400, "headers": headers, "body": payload}, self.stream_shape)
        error: Exception = self._error_cls(parsed, self.operation_name)
        return error


def supports(client: Any) -> bool:
    """Whether ``client``'s service model is the REST-JSON ConverseStream this reader reproduces."""
    model = client.meta.service_model
    protocol = getattr(model, "resolved_protocol", None) or model.protocol
    return bool(protocol == _PROTOCOL and _OPERATION in model.operation_names)


def watch_raw_bodies(client: Any) -> None:
    """Make ``client`` hand the raw HTTP body of each ConverseStream call to `call_converse_stream`."""
    service_id = client.meta.service_model.service_id.hyphenize()
    client.meta.events.register(
        f"after-call.{service_id}.{_OPERATION}", _remember_raw_body, unique_id="strandslike-converse-stream-body"
    )


def _remember_raw_body(http_response: Any = None, **kwargs: Any) -> None:
    slot: list[Any] | None = getattr(_captured, "slot", None)
    if slot is not None:  # only for calls made by call_converse_stream in this thread
        slot.append(getattr(http_response, "raw", None))


def call_converse_stream(client: Any, request: dict[str, Any]) -> tuple[Any, Any]:
    """Call ``client.converse_stream(**request)``; return the response and the raw body (None if unavailable).

    The raw body is what the response's ``stream`` would read; read one or the other, and close the stream.
    """
    slot: list[Any] = []
    _captured.slot = slot
    try:
        response = client.converse_stream(**request)
    finally:
        _captured.slot = None
    raw = slot[-1] if slot else None
    return response, (raw if callable(getattr(raw, "stream", None)) else None)


def read_events(raw: Any, reader: ConverseStreamReader) -> Iterator[list[StreamEvent]]:
    """Yield the events of a raw ConverseStream body in batches (those completed by each chunk read).

    Reads as botocore does (``raw.stream()``: each HTTP chunk as it arrives, at most 64 KiB at a time).

    Raises:
        EventStreamDecodeError: The stream is corrupt or ends inside a message.
        botocore.exceptions.EventStreamError: Bedrock sent an exception message.
    """
    events_of = reader.events
    for frames in iter_frames(raw.stream()):
        events, error = events_of(frames)
        if events:
            yield events
        if error is not None:
            raise error
