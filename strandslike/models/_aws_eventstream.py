"""Decode the AWS event-stream binary framing (``application/vnd.amazon.eventstream``), fast and strictly.

Each message is ``[total length][headers length][prelude CRC32]`` (three big-endian uint32), the headers, the
payload and a CRC32 of everything before it. botocore decodes this in pure Python, a few dozen function calls per
header; here a message costs one ``struct`` unpack, two ``zlib.crc32`` calls and two slices, and the headers (the
same few bytes for every event of a kind) are parsed once per distinct value.

Every CRC is checked and every length bounded before anything is trusted, so corrupt input raises
`EventStreamDecodeError` instead of producing events; so does a stream that ends inside a message (botocore
silently drops such a tail). This module knows nothing about any AWS service: `EventStreamDecoder.feed` turns
bytes into ``(headers, payload)`` frames.
"""

import struct
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

from ..types.exceptions import StrandslikeError

# The limits botocore enforces (botocore/eventstream.py), so nothing botocore accepts is refused here.
MAX_HEADERS_LENGTH = 128 * 1024
MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024
_PRELUDE_LENGTH = 12
_OVERHEAD = _PRELUDE_LENGTH + 4  # prelude + message CRC
_HEADERS_CACHE_SIZE = 64

_prelude = struct.Struct("!III").unpack_from
_uint32 = struct.Struct("!I").unpack_from
_uint16 = struct.Struct("!H").unpack_from
_INTEGERS = {2: struct.Struct("!b"), 3: struct.Struct("!h"), 4: struct.Struct("!i"), 5: struct.Struct("!q")}
_TIMESTAMP = struct.Struct("!q")  # header type 8: milliseconds since the epoch, returned as an int (as botocore)

Frame = tuple[dict[str, Any], bytes]
"""One message: its headers (shared between frames with identical header bytes: do not modify) and payload."""


class EventStreamDecodeError(StrandslikeError, ValueError):
    """An AWS event stream is corrupt: a CRC does not match, a length is impossible, or the stream ends mid-message.

    The events before the bad message were delivered; nothing after it is trusted. The usual cause is a connection
    or proxy that damaged or cut the response; retrying the request normally succeeds.
    """

    code = "EVENT_STREAM_CORRUPT"

    def __init__(self, problem: str, offset: int) -> None:
        self.problem = problem
        self.offset = offset
        super().__init__(
            f"The AWS event stream is corrupt at byte {offset}: {problem}. The events before it were delivered and "
            "nothing after it is trusted; retry the request (a proxy or a broken connection usually causes this)."
        )


def parse_headers(data: bytes, offset: int = 0) -> dict[str, Any]:
    """Parse the headers section of one message into a dict, typed as botocore types them.

    Args:
        data: The headers bytes (already covered by a verified message CRC).
        offset: Where ``data`` starts in the stream, for error messages.

    Raises:
        EventStreamDecodeError: A header runs past the end, has an unknown type, is not UTF-8, or is repeated.
    """
    headers: dict[str, Any] = {}
    end = len(data)
    pos = 0
    try:
        while pos < end:
            name_end = pos + 1 + data[pos]
            name = data[pos + 1 : name_end].decode("utf-8")
            kind = data[name_end]
            pos = name_end + 1
            if kind == 7 or kind == 6:  # string, byte array: uint16 length, then the bytes
                value_end = pos + 2 + _uint16(data, pos)[0]
                if value_end > end:
                    raise IndexError
                raw = data[pos + 2 : value_end]
                value: Any = raw.decode("utf-8") if kind == 7 else raw
                pos = value_end
            elif kind == 0 or kind == 1:
                value = kind == 0
            elif kind in _INTEGERS:
                codec = _INTEGERS[kind]
                value = codec.unpack_from(data, pos)[0]
                pos += codec.size
            elif kind == 8:
                value = _TIMESTAMP.unpack_from(data, pos)[0]
                pos += 8
            elif kind == 9:  # uuid: 16 raw bytes
                value = data[pos : pos + 16]
                pos += 16
                if pos > end:
                    raise IndexError
            else:
                raise EventStreamDecodeError(f"header {name!r} has unknown type {kind}", offset + name_end)
            if name in headers:
                raise EventStreamDecodeError(f"header {name!r} appears twice", offset + name_end)
            headers[name] = value
    except (IndexError, struct.error):
        raise EventStreamDecodeError("a header runs past the end of the headers section", offset + pos) from None
    except UnicodeDecodeError as error:
        raise EventStreamDecodeError(f"a header is not valid UTF-8 ({error.reason})", offset + pos) from None
    return headers


class EventStreamDecoder:
    """Turn the bytes of an event stream, in chunks of any size, into verified ``(headers, payload)`` frames.

    ``feed`` returns the messages completed by each chunk; ``finish`` checks that the stream did not stop inside
    a message. A large message split over many chunks is joined once, when its last byte arrives.
    """

    __slots__ = ("_consumed", "_error", "_headers", "_need", "_parts", "_size")

    def __init__(self) -> None:
        self._parts: list[bytes] = []  # bytes received but not yet decoded
        self._size = 0  # their total length
        self._need = _PRELUDE_LENGTH  # bytes needed before decoding can make progress
        self._consumed = 0  # stream offset of the first byte in _parts (for error messages)
        self._headers: dict[bytes, dict[str, Any]] = {}
        self._error: EventStreamDecodeError | None = None  # once corrupt, always corrupt

    def feed(self, data: bytes) -> list[Frame]:
        """Add ``data`` and return the messages it completes (possibly none), in order.

        When ``data`` completes good messages and then a corrupt one, the good ones are returned and the error is
        raised by the next call (``feed`` or `finish`), as botocore delivers events up to the corrupt one.

        Raises:
            EventStreamDecodeError: A prelude or message CRC does not match, or a length is out of bounds (and
                again on every later call: nothing after a corrupt message can be framed).
        """
        if self._error is not None:
            raise self._error
        if not data:
            return []
        if self._parts:
            self._parts.append(data)
            self._size += len(data)
            if self._size < self._need:
                return []
            buffer = b"".join(self._parts)
            self._parts = []
        else:
            buffer = bytes(data)
        frames: list[Frame] = []
        try:
            pos = self._decode(buffer, frames)
        except EventStreamDecodeError as error:
            self._parts, self._size, self._error = [], 0, error
            if not frames:
                raise
            return frames  # the good messages before the corrupt one; the next call raises
        self._consumed += pos
        rest = len(buffer) - pos
        if rest:
            self._parts = [buffer[pos:] if pos else buffer]
        self._size = rest
        return frames

    def finish(self) -> None:
        """Check that the stream ended between messages.

        Raises:
            EventStreamDecodeError: Bytes of an incomplete message are left over.
        """
        if self._error is not None:
            raise self._error
        if self._size:
            part = "message" if self._size >= _PRELUDE_LENGTH else "message prelude"
            problem = f"the stream ended inside a {part}: {self._size} of its {self._need} bytes arrived"
            raise EventStreamDecodeError(problem, self._consumed + self._size)

    def _decode(self, buffer: bytes, frames: list[Frame]) -> int:
        """Append the complete messages at the start of ``buffer`` to ``frames``; return the bytes consumed."""
        crc32 = zlib.crc32
        view = memoryview(buffer)
        cache = self._headers
        size = len(buffer)
        pos = 0
        while size - pos >= _PRELUDE_LENGTH:
            total, headers_length, prelude_crc = _prelude(buffer, pos)
            if crc32(view[pos : pos + 8]) != prelude_crc:
                self._fail(f"prelude CRC mismatch (expected 0x{prelude_crc:08x})", pos)
            payload_length = total - headers_length - _OVERHEAD
            if headers_length > MAX_HEADERS_LENGTH:
                self._fail(f"headers length {headers_length} exceeds the maximum of {MAX_HEADERS_LENGTH}", pos)
            if payload_length > MAX_PAYLOAD_LENGTH:
                self._fail(f"payload length {payload_length} exceeds the maximum of {MAX_PAYLOAD_LENGTH}", pos)
            if payload_length < 0:
                self._fail(f"total length {total} is too small for {headers_length} bytes of headers", pos)
            end = pos + total
            if end > size:
                self._need = total
                return pos
            crc_at = end - 4
            message_crc = _uint32(buffer, crc_at)[0]
            if crc32(view[pos:crc_at]) != message_crc:
                self._fail(f"message CRC mismatch (expected 0x{message_crc:08x})", pos)
            headers_end = pos + _PRELUDE_LENGTH + headers_length
            raw_headers = buffer[pos + _PRELUDE_LENGTH : headers_end]
            headers = cache.get(raw_headers)
            if headers is None:
                headers = parse_headers(raw_headers, self._consumed + pos + _PRELUDE_LENGTH)
                if len(cache) >= _HEADERS_CACHE_SIZE:
                    cache.clear()
                cache[raw_headers] = headers
            frames.append((headers, buffer[headers_end:crc_at]))
            pos = end
        self._need = _PRELUDE_LENGTH
        return pos

    def _fail(self, problem: str, pos: int) -> None:
        raise EventStreamDecodeError(problem, self._consumed + pos)


def iter_frames(chunks: Iterable[bytes]) -> Iterator[list[Frame]]:
    """Yield the frames completed by each chunk of ``chunks`` (only non-empty lists), then check the ending.

    Raises:
        EventStreamDecodeError: The stream is corrupt or ends inside a message.
    """
    decoder = EventStreamDecoder()
    feed = decoder.feed
    for chunk in chunks:
        frames = feed(chunk)
        if frames:
            yield frames
    decoder.finish()
