r"""The bytes of a log file: one JSON record per line, each line checksummed, appended in all-or-nothing batches.

Format 2 (written since strandslike 0.1's durable sessions): each line is the record's compact JSON with one more
member at its end, ``"c"``, holding the CRC-32 of the record's own JSON (without that member) and a batch flag::

    {"k":"m","i":4,"t":"...","m":{...},"c":"5f1e09a2+"}     more records of the same append follow
    {"k":"s","t":"...","a":{...},"c":"0c4d77e1"}            the last record of an append: it commits the batch

The CRC covers the record's JSON followed by the flag, so a flipped byte anywhere (the content, the checksum or
the flag) is detected, and a record is never returned with changed content. One append is one ``write`` of
whole lines; a crash can only cut the file short, so reading keeps every committed batch and drops what follows
the last commit: a torn last line, or the complete lines of a batch whose commit line never made it. A last line
that verifies but lost its final newline (or had it damaged) is kept. Damage to any complete line is never
repaired: it is reported with its line number.

Format 1 (earlier versions): plain JSON lines without checksums or batches, first line a
``strandslike-agent-log/1`` header. Still read; rewritten in format 2 by the next claimed write.
"""

import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from .._json import MAX_DEPTH, json_problem
from ..types.exceptions import NotJSONSerializableError, SessionCorruptError

LEGACY_HEADER_FORMAT = "strandslike-agent-log/1"
_LEGACY_HEADER_KEYS = frozenset({"k", "format", "session_id", "agent_id", "t"})
_HEX = b"0123456789abcdef"
_VERSION_WINDOW = 64  # bytes before a log's end whose checksum is part of its version
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode_batch(records: list[dict[str, Any]]) -> bytes:
    """Encode records as format-2 lines: the last one commits the batch.

    Raises:
        NotJSONSerializableError: A record cannot be written as strict JSON.
        ValueError: A record is not a JSON object with a string ``"k"``.
    """
    lines = []
    last = len(records) - 1
    for index, record in enumerate(records):
        if type(record) is not dict or not isinstance(record.get("k"), str):
            raise ValueError(f"record {index} is {record!r:.80}; a log record must be a JSON object with a string 'k'")
        try:
            body = _ENCODER.encode(record).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
            raise NotJSONSerializableError("A session record", record, f"{type(exc).__name__}: {exc}") from None
        lines.append(encode_line(body, more=index != last))
    return b"".join(lines)


def encode_line(body: bytes, *, more: bool) -> bytes:
    """Return one format-2 line for a record's compact JSON ``body``."""
    flag = b"+" if more else b""
    return b'%s,"c":"%08x%s"}\n' % (body[:-1], zlib.crc32(body + flag), flag)


def _suffix(line: bytes) -> tuple[int, bytes] | None:
    """Return where a well-formed checksum member starts in ``line`` and its flag, or None (fixed offsets: fast)."""
    if line[-3:] == b'+"}':
        start, flag = len(line) - 17, b"+"
    elif line[-2:] == b'"}':
        start, flag = len(line) - 16, b""
    else:
        return None
    if start < 2 or line[start : start + 6] != b',"c":"' or line[start + 6 : start + 14].translate(None, _HEX):
        return None  # not `,"c":"` followed by 8 lowercase hex digits
    return start, flag


def _verify(line: bytes) -> tuple[bytes, bool] | None:
    """Return (record JSON, more-follow flag) if ``line`` carries a checksum that matches it, else None."""
    found = _suffix(line)
    if found is None:
        return None
    start, flag = found
    body = line[:start] + b"}"
    crc = zlib.crc32(body)
    if flag:
        crc = zlib.crc32(flag, crc)
    if crc != int(line[start + 6 : start + 14], 16):
        return None
    return body, bool(flag)


def _has_suffix(line: bytes) -> bool:
    return _suffix(line) is not None


def _is_object(data: bytes) -> bool:
    if not data.startswith(b"{") or not data.endswith(b"}"):
        return False
    try:
        return isinstance(json.loads(data), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False


@dataclass
class DecodedLog:
    """What a log file holds, as far as it can be trusted.

    Attributes:
        records: Every committed record, in order.
        record_end: Offset just past the last committed record's JSON (its newline excluded); 0 if none.
        newline_ok: Whether that record's newline is intact (False: missing or damaged; restored on next write).
        legacy: The file is in format 1 (no checksums); the next claimed write rewrites it in format 2.
        repairs: What was dropped or will be fixed, in words.
        window_crc: Checksum of the bytes just before ``record_end``, part of the version.
    """

    records: list[dict[str, Any]] = field(default_factory=list)
    record_end: int = 0
    newline_ok: bool = True
    legacy: bool = False
    repairs: list[str] = field(default_factory=list)
    window_crc: int = 0

    @property
    def clean_end(self) -> int:
        """Where the next append starts once the tail is repaired."""
        return self.record_end + 1 if self.records and self.newline_ok else self.record_end


def window_crc(data: bytes, end: int) -> int:
    """Return the checksum of the bytes of ``data`` just before ``end`` (the version's fingerprint of a log)."""
    return zlib.crc32(data[max(0, end - _VERSION_WINDOW) : end])


def version_window(end: int) -> tuple[int, int]:
    """Return (offset, length) of the bytes `window_crc` covers for a log whose records end at ``end``."""
    start = max(0, end - _VERSION_WINDOW)
    return start, end - start


def decode(data: bytes, where: str, label: str, *, allow_legacy: bool) -> DecodedLog:
    """Decode a whole log file.

    Args:
        data: The file's bytes.
        where: The file's path, for errors.
        label: What the log is (``"agent log"``), for errors.
        allow_legacy: Accept format-1 files (agent logs written by earlier versions).

    Raises:
        SessionCorruptError: A complete line is damaged or not a record, or the file is not a strandslike log.
    """
    if not data:
        return DecodedLog()
    newline = data.find(b"\n")
    first = data if newline < 0 else data[:newline]
    if _has_suffix(first) or (newline < 0 and _verify(first[:-1]) is not None):
        decoded = _decode_v2(data, where)
    elif newline < 0 and not _is_object(first) and not _is_object(first[:-1]):
        decoded = DecodedLog(repairs=[f"line 1: a torn first record ({len(data)} bytes) was dropped"])
    elif allow_legacy and _is_legacy_header(first if newline >= 0 or _is_object(first) else first[:-1]):
        decoded = _decode_legacy(data, where)
    else:
        expected = (
            f"a checksummed record or a {LEGACY_HEADER_FORMAT} header" if allow_legacy else "a checksummed record"
        )
        raise SessionCorruptError(
            where, f"is not a strandslike {label} (its first line is not {expected}, or it is damaged)"
        )
    decoded.window_crc = window_crc(data, decoded.record_end)
    return decoded


def _is_legacy_header(line: bytes) -> bool:
    try:
        header = json.loads(line)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return (
        isinstance(header, dict)
        and header.get("k") == "h"
        and header.get("format") == LEGACY_HEADER_FORMAT
        and set(header) <= _LEGACY_HEADER_KEYS
    )


def _decode_v2(data: bytes, where: str) -> DecodedLog:
    lines = data.split(b"\n")
    tail = lines.pop()
    decoded = DecodedLog()
    committed: list[bytes] = []
    batch: list[bytes] = []
    batch_start = 1
    position = 0
    number = 0
    crc32 = zlib.crc32
    for number, line in enumerate(lines, start=1):
        # `_verify`, inlined: this loop runs once per record of every log restored.
        more = line[-3:] == b'+"}'
        start = len(line) - (17 if more else 16)
        digits = line[start + 6 : start + 14]
        body = line[:start] + b"}"
        if (
            start < 2
            or line[-2:] != b'"}'
            or line[start : start + 6] != b',"c":"'
            or digits.translate(None, _HEX)
            or (crc32(b"+", crc32(body)) if more else crc32(body)) != int(digits, 16)
        ):
            detail = (
                "its checksum does not match its content: it was damaged"
                if _has_suffix(line)
                else "it has no checksum: it was not written by strandslike, or it was damaged"
            )
            raise SessionCorruptError(
                where, f"line {number} is not a valid record ({detail}; at byte {position}); nothing was repaired"
            )
        if not batch:
            batch_start = number
        batch.append(body)
        position += len(line)
        if not more:
            committed.extend(batch)
            batch = []
            decoded.record_end = position
        position += 1
    if tail:
        number += 1
        verified = _verify(tail)
        damaged_newline = False
        if verified is None:
            verified = _verify(tail[:-1])
            damaged_newline = verified is not None
        if verified is None:
            decoded.repairs.append(f"line {number}: a torn record of {len(tail)} bytes at the end was dropped")
        else:
            body, more = verified
            if not batch:
                batch_start = number
            batch.append(body)
            if not more:
                committed.extend(batch)
                batch = []
                decoded.record_end = position + len(tail) - damaged_newline
                decoded.newline_ok = False
                what = "had its final newline damaged" if damaged_newline else "had lost its final newline"
                decoded.repairs.append(f"line {number} {what}; the record was kept and the newline is restored")
    if batch:
        decoded.repairs.append(
            f"lines {batch_start}-{batch_start + len(batch) - 1}: an append that never completed "
            f"({len(batch)} records without their commit) was dropped"
        )
    decoded.records = _parse(committed, where, 1)
    return decoded


def _decode_legacy(data: bytes, where: str) -> DecodedLog:
    lines = data.split(b"\n")
    tail = lines.pop()
    decoded = DecodedLog(legacy=True)
    for number, line in enumerate(lines, start=1):
        if _has_suffix(line):
            raise SessionCorruptError(where, f"line {number} is not a valid record (a format-2 line in a format-1 log)")
    decoded.record_end = len(data) - len(tail) - 1 if lines else 0
    if tail:
        kept = tail if _is_object(tail) else tail[:-1] if _is_object(tail[:-1]) else None
        number = len(lines) + 1
        if kept is None:
            decoded.repairs.append(f"line {number}: a torn record of {len(tail)} bytes at the end was dropped")
        else:
            lines.append(kept)
            decoded.record_end = len(data) - len(tail) + len(kept)
            decoded.newline_ok = False
            what = "had lost its final newline" if kept is tail else "had its final newline damaged"
            decoded.repairs.append(f"line {number} {what}; the record was kept and the newline is restored")
    decoded.records = _parse(lines, where, 1)
    for number, record in enumerate(decoded.records, start=1):
        if "c" in record:
            raise SessionCorruptError(where, f"line {number} is not a valid record (it carries a damaged checksum)")
    return decoded


def _parse(bodies: list[bytes], where: str, first_number: int) -> list[dict[str, Any]]:
    if not bodies:
        return []
    try:  # one C-level parse of every record: the fast path
        parsed = json.loads(b"[" + b",".join(bodies) + b"]")
        if isinstance(parsed, list) and len(parsed) == len(bodies) and all(type(r) is dict for r in parsed):
            _check_storable(bodies, parsed, where, first_number)
            return parsed
    except (UnicodeDecodeError, ValueError, RecursionError):
        pass
    records = []
    for number, body in enumerate(bodies, start=first_number):
        try:
            record = json.loads(body)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise SessionCorruptError(
                where, f"line {number} is not a valid record ({type(exc).__name__}: {str(exc)[:120]})"
            ) from None
        if type(record) is not dict:
            raise SessionCorruptError(where, f"line {number} is not a valid record (not a JSON object)")
        records.append(record)
    _check_storable(bodies, records, where, first_number)
    return records


def _check_storable(bodies: list[bytes], records: list[dict[str, Any]], where: str, first_number: int) -> None:
    """Refuse a record strandslike could never have written (nested past `MAX_DEPTH`: planted, not damaged).

    Counting brackets is a cheap bound on the nesting; only records that may be too deep are walked.
    """
    for number, (body, record) in enumerate(zip(bodies, records, strict=True), start=first_number):
        if body.count(b"{") + body.count(b"[") > MAX_DEPTH:
            problem = json_problem(record)
            if problem is not None:
                raise SessionCorruptError(where, f"line {number} is not a valid record ({problem})")


def tail_has_commits(rest: bytes, *, after_record: bool, legacy: bool) -> bool:
    """Whether the bytes after a log's last known record hold anything but a torn, uncommitted append.

    Args:
        rest: The bytes from the known ``record_end`` to the end of the file.
        after_record: A record ends where ``rest`` starts (so its first byte is that record's newline).
        legacy: The log is in format 1.
    """
    body = rest[1:] if after_record else rest
    if not body:
        return False
    lines = body.split(b"\n")
    tail = lines.pop()
    if legacy:
        return bool(lines) or _is_object(tail) or _is_object(tail[:-1])
    for line in lines:
        verified = _verify(line)
        if verified is None or not verified[1]:
            return True  # a commit, or bytes no claimed writer wrote: either way the log changed
    verified = _verify(tail) or _verify(tail[:-1])
    return verified is not None and not verified[1]
