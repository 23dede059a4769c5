"""The AWS event-stream framing decoder: valid messages, any chunking, and every kind of corruption."""

import binascii
import struct

import pytest
from botocore.eventstream import EventStreamBuffer

from strandslike.models._aws_eventstream import (
    MAX_HEADERS_LENGTH,
    MAX_PAYLOAD_LENGTH,
    EventStreamDecodeError,
    EventStreamDecoder,
    iter_frames,
    parse_headers,
)
from strandslike.models.bedrock import EventStreamDecodeError as PublicEventStreamDecodeError


def header(name: str, kind: int, value: object = None) -> bytes:
    """Encode one header (independently of the decoder under test)."""
    raw_name = name.encode()
    out = struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!B", kind)
    if kind in (0, 1) or kind > 9:
        return out
    if kind in (6, 7):
        raw = value if isinstance(value, bytes) else str(value).encode()
        return out + struct.pack("!H", len(raw)) + raw
    if kind == 9:
        assert isinstance(value, bytes)
        return out + value
    fmt = {2: "!b", 3: "!h", 4: "!i", 5: "!q", 8: "!q"}[kind]
    return out + struct.pack(fmt, value)


def message(headers: bytes, payload: bytes) -> bytes:
    total = 16 + len(headers) + len(payload)
    prelude = struct.pack("!II", total, len(headers))
    prelude += struct.pack("!I", binascii.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack("!I", binascii.crc32(body))


def event(kind: str, payload: bytes) -> bytes:
    headers = header(":event-type", 7, kind) + header(":content-type", 7, "application/json")
    return message(headers + header(":message-type", 7, "event"), payload)


ALL_TYPES = (
    header("true", 0)
    + header("false", 1)
    + header("byte", 2, -7)
    + header("short", 3, -300)
    + header("int", 4, -70000)
    + header("long", 5, -(2**40))
    + header("bytes", 6, b"\x00\xff\x10")
    + header("string", 7, "héllo")
    + header("timestamp", 8, 1_700_000_000_123)
    + header("uuid", 9, bytes(range(16)))
)
ALL_TYPES_PARSED = {
    "true": True,
    "false": False,
    "byte": -7,
    "short": -300,
    "int": -70000,
    "long": -(2**40),
    "bytes": b"\x00\xff\x10",
    "string": "héllo",
    "timestamp": 1_700_000_000_123,
    "uuid": bytes(range(16)),
}
STREAM = b"".join(
    [
        event("messageStart", b'{"role": "assistant"}'),
        message(ALL_TYPES, b"\x00binary\xffpayload"),
        event("contentBlockDelta", b'{"contentBlockIndex": 0, "delta": {"text": "hi"}}'),
        message(b"", b""),  # no headers, no payload: the smallest message (16 bytes)
        event("contentBlockDelta", b'{"contentBlockIndex": 0, "delta": {"text": " there"}}'),
    ]
)


def botocore_frames(data: bytes) -> list[tuple[dict, bytes]]:
    """What botocore's own decoder makes of the same bytes (the reference)."""
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(m.headers, m.payload) for m in buffer]


def decode_all(chunks: list[bytes]) -> list[tuple[dict, bytes]]:
    return [frame for frames in iter_frames(chunks) for frame in frames]


def test_valid_messages_decode_as_botocore_decodes_them():
    frames = decode_all([STREAM])
    assert frames == botocore_frames(STREAM)
    assert len(frames) == 5
    assert frames[0] == (
        {":event-type": "messageStart", ":content-type": "application/json", ":message-type": "event"},
        b'{"role": "assistant"}',
    )
    assert frames[1] == (ALL_TYPES_PARSED, b"\x00binary\xffpayload")
    assert frames[3] == ({}, b"")


def test_the_public_error_is_the_decoder_error():
    assert PublicEventStreamDecodeError is EventStreamDecodeError
    assert issubclass(EventStreamDecodeError, ValueError)
    assert EventStreamDecodeError.code == "EVENT_STREAM_CORRUPT"


def test_a_stream_split_in_two_at_any_byte_decodes_the_same():
    expected = botocore_frames(STREAM)
    for split in range(1, len(STREAM)):
        assert decode_all([STREAM[:split], STREAM[split:]]) == expected, split


def test_a_stream_split_in_three_anywhere_decodes_the_same():
    expected = botocore_frames(STREAM)
    for first in range(1, len(STREAM), 3):
        for second in range(first, len(STREAM), 7):
            assert decode_all([STREAM[:first], STREAM[first:second], STREAM[second:]]) == expected, (first, second)


def test_a_stream_fed_one_byte_at_a_time_decodes_the_same():
    decoder = EventStreamDecoder()
    frames = []
    for i in range(len(STREAM)):
        frames += decoder.feed(STREAM[i : i + 1])
    decoder.finish()
    assert frames == botocore_frames(STREAM)


def test_empty_chunks_are_ignored():
    assert decode_all([b"", STREAM[:5], b"", STREAM[5:], b""]) == botocore_frames(STREAM)


def test_bytearray_and_memoryview_chunks_are_accepted():
    assert decode_all([bytearray(STREAM[:30]), memoryview(STREAM[30:])]) == botocore_frames(STREAM)


def test_a_large_payload_split_over_many_chunks_is_joined_intact():
    payload = bytes(range(256)) * 4096  # 1 MiB
    data = message(header("k", 7, "v"), payload) + event("x", b"{}")
    chunks = [data[i : i + 1000] for i in range(0, len(data), 1000)]
    frames = decode_all(chunks)
    assert frames == [
        ({"k": "v"}, payload),
        ({":event-type": "x", ":content-type": "application/json", ":message-type": "event"}, b"{}"),
    ]


def test_identical_header_bytes_give_equal_headers_for_each_message():
    frames = decode_all([event("a", b"1") * 3 + event("b", b"2")])
    assert [headers[":event-type"] for headers, _ in frames] == ["a", "a", "a", "b"]
    assert [payload for _, payload in frames] == [b"1", b"1", b"1", b"2"]


def test_many_distinct_headers_stay_correct_past_the_header_cache():
    data = b"".join(event(f"kind{i}", str(i).encode()) for i in range(300))
    frames = decode_all([data])
    assert [(h[":event-type"], p) for h, p in frames] == [(f"kind{i}", str(i).encode()) for i in range(300)]


# -- corruption ------------------------------------------------------------------------------------------------


def first_message_length() -> int:
    return struct.unpack("!I", STREAM[:4])[0]


def flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


@pytest.mark.parametrize("index", range(8))
def test_a_damaged_prelude_fails_its_crc_at_once(index):
    damaged = flip(STREAM, index)
    with pytest.raises(EventStreamDecodeError, match="prelude CRC mismatch") as caught:
        EventStreamDecoder().feed(damaged[:12])  # before the rest of the message has even arrived
    assert caught.value.offset == 0


def test_a_damaged_prelude_crc_fails():
    with pytest.raises(EventStreamDecodeError, match="prelude CRC mismatch"):
        decode_all([flip(STREAM, 9)])


@pytest.mark.parametrize("index", range(12, 42))
def test_a_damaged_header_or_payload_byte_fails_the_message_crc(index):
    with pytest.raises(EventStreamDecodeError, match="message CRC mismatch"):
        decode_all([flip(STREAM, index)])


def test_a_damaged_message_crc_fails():
    end = first_message_length()
    with pytest.raises(EventStreamDecodeError, match="message CRC mismatch") as caught:
        decode_all([flip(STREAM, end - 1)])
    assert caught.value.offset == 0


def decode_until_error(data: bytes) -> tuple[list, EventStreamDecodeError | None]:
    decoder = EventStreamDecoder()
    frames: list = []
    try:
        frames += decoder.feed(data)
        decoder.finish()
    except EventStreamDecodeError as error:
        return frames, error
    return frames, None


def test_no_single_bit_flip_anywhere_yields_wrong_frames():
    good = botocore_frames(STREAM)
    for index in range(len(STREAM)):
        for bit in (0x01, 0x80):
            damaged = STREAM[:index] + bytes([STREAM[index] ^ bit]) + STREAM[index + 1 :]
            frames, error = decode_until_error(damaged)
            assert error is not None, (index, bit)
            assert frames == good[: len(frames)], (index, bit)  # what came out before the error is what was sent


def test_good_messages_before_a_corrupt_one_are_delivered_then_the_error_raised():
    second = first_message_length()
    damaged = flip(STREAM, second + 20)
    decoder = EventStreamDecoder()
    frames = decoder.feed(damaged)
    assert frames == botocore_frames(STREAM)[:1]
    with pytest.raises(EventStreamDecodeError, match=f"corrupt at byte {second}:"):
        decoder.finish()
    with pytest.raises(EventStreamDecodeError):  # and on any later feed: nothing after it can be framed
        decoder.feed(STREAM)


def test_the_error_offset_counts_from_the_start_of_the_stream():
    second = first_message_length()
    decoder = EventStreamDecoder()
    decoder.feed(STREAM[:second])
    with pytest.raises(EventStreamDecodeError) as caught:
        decoder.feed(flip(STREAM[second:], 3))
    assert caught.value.offset == second
    assert "retry the request" in str(caught.value)


def test_a_stream_truncated_anywhere_inside_a_message_is_an_error():
    boundaries = {0}
    pos = 0
    while pos < len(STREAM):
        pos += struct.unpack("!I", STREAM[pos : pos + 4])[0]
        boundaries.add(pos)
    for cut in range(1, len(STREAM)):
        if cut in boundaries:  # a stream may end between messages
            assert decode_all([STREAM[:cut]]) == botocore_frames(STREAM[:cut])
            continue
        with pytest.raises(EventStreamDecodeError, match="the stream ended inside a message"):
            decode_all([STREAM[:cut]])


def test_a_truncated_prelude_says_so():
    with pytest.raises(EventStreamDecodeError, match="inside a message prelude: 5 of its 12 bytes"):
        decode_all([STREAM[:5]])


def test_a_truncated_message_says_how_much_arrived():
    total = first_message_length()
    with pytest.raises(EventStreamDecodeError, match=f"20 of its {total} bytes arrived"):
        decode_all([STREAM[:20]])


def prelude(total: int, headers_length: int) -> bytes:
    raw = struct.pack("!II", total, headers_length)
    return raw + struct.pack("!I", binascii.crc32(raw))


def test_headers_longer_than_the_maximum_are_refused():
    with pytest.raises(EventStreamDecodeError, match="headers length 131073 exceeds"):
        EventStreamDecoder().feed(prelude(200_000, MAX_HEADERS_LENGTH + 1))


def test_a_payload_longer_than_the_maximum_is_refused_before_it_is_buffered():
    with pytest.raises(EventStreamDecodeError, match=r"payload length \d+ exceeds the maximum"):
        EventStreamDecoder().feed(prelude(MAX_PAYLOAD_LENGTH + 17, 0))


@pytest.mark.parametrize(("total", "headers_length"), [(0, 0), (15, 0), (20, 5)])
def test_a_total_length_too_small_for_the_message_is_refused(total, headers_length):
    with pytest.raises(EventStreamDecodeError, match="too small"):
        EventStreamDecoder().feed(prelude(total, headers_length) + bytes(32))


# -- headers ------------------------------------------------------------------------------------------------------


def test_headers_of_every_type_parse_as_botocore_parses_them():
    assert parse_headers(ALL_TYPES) == ALL_TYPES_PARSED


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (header("a", 7, "x") + header("a", 7, "y"), "header 'a' appears twice"),
        (header("a", 10), "header 'a' has unknown type 10"),
        (header("a", 7, "xyz")[:-1], "runs past the end"),
        (header("a", 4, 5)[:-2], "runs past the end"),
        (header("a", 9, bytes(16))[:-1], "runs past the end"),
        (b"\x05ab", "runs past the end"),
        (b"\x01\xff\x07\x00\x00", "not valid UTF-8"),
        (header("a", 7, b"\xff\xfe"), "not valid UTF-8"),
    ],
)
def test_malformed_headers_are_refused(raw, problem):
    with pytest.raises(EventStreamDecodeError, match=problem):
        parse_headers(raw)
    with pytest.raises(EventStreamDecodeError, match=problem):  # also inside a message with valid CRCs
        decode_all([message(raw, b"{}")])
